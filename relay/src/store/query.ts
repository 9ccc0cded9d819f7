// The parts of a statement an engine builds at call time (a list's filters, a list of ids): the
// statements themselves are each engine's (store-sqlite/statements.ts, store-postgres/statements.ts).

/** A value bound to a placeholder. */
export type Param = string | number | null;

/** A statement built for one call, and its values in placeholder order. */
export interface Query {
	sql: string;
	params: Param[];
}

/** How an engine reads one field of an event's stored fields (an indexed expression in both). */
export type FieldExpr = (name: 'TrsId' | 'InvId') => string;

/**
 * The conditions of a list's filters, each added only when its value is given, with `?` for the
 * value; `placeholder` writes the n-th (1-based) as the engine spells it.
 */
export class Conditions {
	readonly #parts: string[] = [];
	readonly params: Param[] = [];
	readonly #placeholder: (n: number) => string;

	constructor(placeholder: (n: number) => string) {
		this.#placeholder = placeholder;
	}

	/** `condition` with one `?` for each of `values`; nothing when one of them is undefined. */
	add(condition: string, ...values: Array<Param | undefined>): void {
		if (values.some((v) => v === undefined)) return;
		const base = this.params.length;
		let i = 0;
		this.#parts.push(condition.replace(/\?/g, () => this.#placeholder(base + ++i)));
		this.params.push(...(values as Param[]));
	}

	/** The next placeholder after the conditions' own (a LIMIT's). */
	next(): string {
		return this.#placeholder(this.params.length + 1);
	}

	/** ` WHERE a AND b`, or nothing without a condition. */
	get clause(): string {
		return this.#parts.length ? `WHERE ${this.#parts.join(' AND ')}` : '';
	}
}
