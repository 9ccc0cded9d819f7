import type { DatabaseSync } from 'node:sqlite';
import type { KeyedEvent, MoneyBackRewrite, OldMark } from '../store/money-back-keys.ts';

/**
 * The rewrites a schema version leaves due (schema.ts, version 9): the rows they read, and their
 * writes in the engine's transaction, with the row that says the rewrite is due deleted in it.
 * The keys are computed on the relay's thread (store/money-back-keys.ts), not here.
 */

const DUE = "SELECT 1 AS due FROM store_rewrites WHERE name = 'money-back-keys'";
const CHARGEBACK_EVENTS =
	"SELECT id, dedupe_key, fields_json FROM events WHERE kind = 'chargeback'";
const OLD_MARKS = `SELECT mark, at FROM catchup_marks
	WHERE substr(mark, 1, 7) = 'refund:' OR substr(mark, 1, 11) = 'chargeback:'`;
const SET_KEY = 'UPDATE events SET dedupe_key = ? WHERE id = ?';
const DROP_MARK = 'DELETE FROM catchup_marks WHERE mark = ?';
const ADD_MARK = 'INSERT INTO catchup_marks (mark, at) VALUES (?, ?) ON CONFLICT (mark) DO NOTHING';
const DONE = "DELETE FROM store_rewrites WHERE name = 'money-back-keys'";

export class SqliteRewrites {
	readonly #db: DatabaseSync;

	constructor(db: DatabaseSync) {
		this.#db = db;
	}

	/** The rows the money-back rewrite reads, or null when it is not due. */
	moneyBackRows(): [events: KeyedEvent[], marks: OldMark[]] | null {
		if (this.#db.prepare(DUE).get() === undefined) return null;
		const events = this.#db
			.prepare(CHARGEBACK_EVENTS)
			.all()
			.map((r) => ({
				id: String(r.id),
				dedupeKey: r.dedupe_key === null ? null : String(r.dedupe_key),
				fields: JSON.parse(String(r.fields_json)) as Record<string, string>,
			}));
		const marks = this.#db
			.prepare(OLD_MARKS)
			.all()
			.map((r) => ({ mark: String(r.mark), at: Number(r.at) }));
		return [events, marks];
	}

	/** Writes the rewrite and marks it done (one transaction: the engine's). */
	rewriteMoneyBack(rewrite: MoneyBackRewrite): void {
		const setKey = this.#db.prepare(SET_KEY);
		for (const { id, key } of rewrite.events) setKey.run(key, id);
		const drop = this.#db.prepare(DROP_MARK);
		const add = this.#db.prepare(ADD_MARK);
		for (const { old, marks, at } of rewrite.marks) {
			drop.run(old);
			for (const mark of marks) add.run(mark, at);
		}
		this.#db.prepare(DONE).run();
	}
}
