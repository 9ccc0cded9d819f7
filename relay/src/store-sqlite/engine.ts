import type { DatabaseSync } from 'node:sqlite';
import { SqliteBalances } from './balances.ts';
import { SqliteQueries } from './queries.ts';
import { SqliteRewrites } from './rewrites.ts';
import { openSqlite } from './schema.ts';

/**
 * The operations a batch can carry: every store operation, the rewrites a schema version leaves
 * due (rewrites.ts), and the engine's own counters.
 */
export type EngineOp =
	| Exclude<keyof SqliteQueries, symbol>
	| Exclude<keyof SqliteRewrites, symbol>
	| Exclude<keyof SqliteBalances, symbol>
	| 'stats';

export interface EngineCall {
	op: EngineOp;
	args: unknown[];
}

/**
 * Calls whose commit must reach the disk before they resolve: what the relay acknowledges to the
 * service or to an operator. The forwarder's bookkeeping (claims, leases, results) may be lost
 * on power loss without breaking at-least-once (the delivery is only sent again), so a batch of
 * nothing but bookkeeping commits without an fsync; the next durable commit syncs the WAL with
 * everything before it (WAL frames are appended in order, so consistency never depends on it).
 */
export const DURABLE_OPS: ReadonlySet<EngineOp> = new Set<EngineOp>([
	'insertEvent',
	'replayEvents',
	'requeueDead',
	'revokeSession',
	'catchupBaseline',
	'backfillCatchup',
	'rewriteMoneyBack',
	'keepBalanceSnapshot',
	'ping',
]);

export type EngineResult = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * The synchronous SQLite engine behind SqliteStore: one file through node:sqlite, WAL journal,
 * synchronous=FULL (the WAL is fsynced at every commit, so a committed event survives power loss).
 * `runBatch` carries many calls in one transaction: one COMMIT, one fsync for all of them (group
 * commit). It runs in the store's writer thread so that the fsync never blocks the HTTP loop.
 */
export class SqliteEngine {
	#db: DatabaseSync;
	#queries: SqliteQueries;
	#rewrites: SqliteRewrites;
	#balances: SqliteBalances;
	#stats = { commits: 0, calls: 0, syncedCommits: 0, messages: 0 };
	#synchronous: 'FULL' | 'NORMAL' = 'FULL';

	constructor(path: string) {
		this.#db = openSqlite(path);
		this.#queries = new SqliteQueries(this.#db);
		this.#rewrites = new SqliteRewrites(this.#db);
		this.#balances = new SqliteBalances(this.#db);
	}

	#call(c: EngineCall): unknown {
		if (c.op === 'stats') return this.stats();
		const owner =
			c.op === 'moneyBackRows' || c.op === 'rewriteMoneyBack'
				? this.#rewrites
				: c.op in this.#balances
					? this.#balances
					: this.#queries;
		const fn = (owner as unknown as Record<string, unknown>)[c.op];
		if (typeof fn !== 'function') throw new Error(`unknown store operation ${String(c.op)}`);
		return (fn as (...args: unknown[]) => unknown).apply(owner, c.args);
	}

	/**
	 * Runs the calls in one transaction and commits once. If a call throws, the batch is rolled
	 * back and every call runs again in a transaction of its own, so one bad call fails alone.
	 */
	runBatch(calls: readonly EngineCall[]): EngineResult[] {
		const durable = calls.some((c) => DURABLE_OPS.has(c.op));
		const mode = durable ? 'FULL' : 'NORMAL';
		if (mode !== this.#synchronous) {
			this.#db.exec(`PRAGMA synchronous = ${mode}`);
			this.#synchronous = mode;
		}
		if (durable) this.#stats.syncedCommits += 1;
		try {
			this.#db.exec('BEGIN IMMEDIATE');
			const values = calls.map((c) => this.#call(c));
			this.#db.exec('COMMIT');
			this.#stats.commits += 1;
			this.#stats.calls += calls.length;
			return values.map((value) => ({ ok: true, value }));
		} catch {
			if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
		}
		return calls.map((c) => {
			try {
				this.#db.exec('BEGIN IMMEDIATE');
				const value = this.#call(c);
				this.#db.exec('COMMIT');
				this.#stats.commits += 1;
				this.#stats.calls += 1;
				return { ok: true, value };
			} catch (error) {
				if (this.#db.isTransaction) this.#db.exec('ROLLBACK');
				return { ok: false, error: error instanceof Error ? error.message : String(error) };
			}
		});
	}

	close(): void {
		this.#db.close();
	}

	/** The writer thread received a message of calls (SqliteStore posts one per commit). */
	noteMessage(): void {
		this.#stats.messages += 1;
	}

	stats(): { commits: number; calls: number; syncedCommits: number; messages: number } {
		return { ...this.#stats };
	}
}
