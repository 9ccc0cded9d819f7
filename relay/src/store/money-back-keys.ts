import { canonicalStatus, moneyBackKey, moneyBackKeyOf, textOf } from '../contract.ts';

/**
 * The store's rewrite to the one money-back identity (moneyBackKey: kind, Id, canonical Status),
 * a schema migration of both engines (SQLite version 9, PostgreSQL version 9):
 * - a chargeback event stored under the key of before, JSON `["chargeback", Id]`, gets the key
 *   the intake now gives its postback, `["chargeback", Id, STATUS]` from its stored fields (an
 *   event stored without a Status keeps `["chargeback", Id, ""]`), so the genuine postback arriving
 *   again, or the catch-up finding it again, is its duplicate; a refund's key is unchanged;
 * - the catch-up's marks of before, `refund:<Id>:<STATUS>` and `chargeback:<Id>`, become the same
 *   keys: a refund's at once; a chargeback's with the Status of the chargeback event the store holds
 *   under that Id, or, when it holds none any more (pruned), with each status a chargeback ends in
 *   (its old mark stood for the chargeback whatever its status), so the catch-up does not forward
 *   again what it once forwarded.
 * The keys are computed here, with the wire contract, on the relay's own thread (SQLite's writer
 * thread does not load it); each engine reads and writes the rows in one transaction.
 */

/** A chargeback event as the rewrite reads it. */
export interface KeyedEvent {
	id: string;
	dedupeKey: string | null;
	fields: Record<string, string>;
}

/** A catch-up mark of before (`refund:…`, `chargeback:…`) and its time. */
export interface OldMark {
	mark: string;
	at: number;
}

/** What the rewrite writes: the events' new keys, and each old mark's new marks (at its time). */
export interface MoneyBackRewrite {
	events: Array<{ id: string; key: string }>;
	marks: Array<{ old: string; marks: string[]; at: number }>;
}

/** The statuses a chargeback ends in (the service's records: NEW, PROCESS, SUCCESS, FAIL). */
export const CHARGEBACK_END_STATUSES: readonly string[] = ['SUCCESS', 'FAIL'];

/** The Id of a chargeback key of before (`["chargeback", Id]`), or undefined for any other key. */
export function oldChargebackId(key: string | null): string | undefined {
	if (key === null || !key.startsWith('["chargeback",')) return undefined;
	try {
		const parts: unknown = JSON.parse(key);
		return Array.isArray(parts) && parts.length === 2 && typeof parts[1] === 'string'
			? parts[1]
			: undefined;
	} catch {
		return undefined;
	}
}

/**
 * The rewrite of `events` (every chargeback event of the store) and `marks` (the old marks): keys
 * for those stored under a key of before, marks for the old marks. Nothing for a row already in the
 * new form: run twice, it writes nothing the second time.
 */
export function moneyBackRewrite(
	events: readonly KeyedEvent[],
	marks: readonly OldMark[],
): MoneyBackRewrite {
	const statuses = new Map<string, Set<string>>();
	const rekeyed: MoneyBackRewrite['events'] = [];
	for (const event of events) {
		const old = oldChargebackId(event.dedupeKey);
		const id = textOf(old ?? event.fields.Id);
		const key = moneyBackKeyOf('chargeback', { ...event.fields, Id: id });
		statuses.set(id, (statuses.get(id) ?? new Set()).add(canonicalStatus(event.fields.Status)));
		if (old !== undefined) rekeyed.push({ id: event.id, key });
	}
	const remarked: MoneyBackRewrite['marks'] = [];
	for (const { mark, at } of marks) {
		if (mark.startsWith('refund:')) {
			const cut = mark.lastIndexOf(':');
			if (cut < 'refund:'.length) continue;
			const id = mark.slice('refund:'.length, cut);
			remarked.push({ old: mark, marks: [moneyBackKey('refund', id, mark.slice(cut + 1))], at });
		} else if (mark.startsWith('chargeback:')) {
			const id = textOf(mark.slice('chargeback:'.length));
			const known = statuses.get(id);
			const ends = known && known.size > 0 ? [...known] : CHARGEBACK_END_STATUSES;
			remarked.push({ old: mark, marks: ends.map((s) => moneyBackKey('chargeback', id, s)), at });
		}
	}
	return { events: rekeyed, marks: remarked };
}
