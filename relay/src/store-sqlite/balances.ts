import type { DatabaseSync } from 'node:sqlite';
import { snapshotOf, traceOf } from '../store/balances.ts';
import type { BalanceSnapshot, MovementTrace } from '../store/balances.ts';

/**
 * The statement's bookkeeping in the SQLite file (schema version 10): balance snapshots, and what
 * the store holds of the movements a statement looks for. Run by the engine in its transaction.
 */

const KEEP = `INSERT INTO balance_snapshots (time_zone, day, kind, taken_at, balances_json)
	VALUES (?, ?, ?, ?, ?) ON CONFLICT (time_zone, day, kind) DO NOTHING`;
const IN_RANGE = `SELECT time_zone, day, kind, taken_at, balances_json FROM balance_snapshots
	WHERE time_zone = ? AND day >= ? AND day <= ? ORDER BY day, kind`;
const FIRST = 'SELECT MIN(day) AS day FROM balance_snapshots WHERE time_zone = ?';
// Two probes, each on its own index (the TrsId expression index, the dedupe key's unique index).
const TRACES = `SELECT e.kind, json_extract(e.fields_json, '$.TrsId') AS trs_id, e.dedupe_key,
		COUNT(d.id) AS deliveries, COALESCE(SUM(d.status = 'delivered'), 0) AS delivered
	FROM events e LEFT JOIN deliveries d ON d.event_id = e.id
	WHERE e.id IN (
		SELECT id FROM events WHERE json_extract(fields_json, '$.TrsId') IN (SELECT value FROM json_each(?))
		UNION SELECT id FROM events WHERE dedupe_key IN (SELECT value FROM json_each(?)))
	GROUP BY e.id`;

export class SqliteBalances {
	readonly #db: DatabaseSync;

	constructor(db: DatabaseSync) {
		this.#db = db;
	}

	keepBalanceSnapshot(s: BalanceSnapshot): boolean {
		const r = this.#db
			.prepare(KEEP)
			.run(s.timeZone, s.day, s.kind, s.takenAt, JSON.stringify(s.balances));
		return Number(r.changes) > 0;
	}

	balanceSnapshots(timeZone: string, from: string, to: string): BalanceSnapshot[] {
		return this.#db.prepare(IN_RANGE).all(timeZone, from, to).map(snapshotOf);
	}

	firstSnapshotDay(timeZone: string): string | null {
		const row = this.#db.prepare(FIRST).get(timeZone) as { day: string | null } | undefined;
		return row?.day ?? null;
	}

	movementTraces(trsIds: string[], dedupeKeys: string[]): MovementTrace[] {
		return this.#db
			.prepare(TRACES)
			.all(JSON.stringify(trsIds), JSON.stringify(dedupeKeys))
			.map((row) => traceOf(row as Record<string, unknown>));
	}
}
