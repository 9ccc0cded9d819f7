import pg from 'pg';
import type { PostbackEvent } from '../contract.ts';
import type { Pool, PoolClient, PoolConfig, QueryResultRow } from 'pg';
import { migrate } from './pg-schema.ts';
import { fillPairKeys } from './pair-key.ts';
import { PostgresReads } from './pg-reads.ts';
import { GroupInserter } from './pg-inserts.ts';
import { PgWaker } from './pg-waker.ts';
import {
	CLAIM,
	RECORD_RESULTS,
	RELEASE,
	REPLAY,
	REQUEUE,
	CATCHUP_LOCK,
	PING,
	PREPARED,
	resultParams,
} from './pg-statements.ts';
import { runsWithoutRepeats } from './results.ts';

import { storableResult, toClaimed } from './rows.ts';
import {
	PRUNABLE,
	numbered,
	EVENTS_WITHOUT_PAIR_KEY,
	pruneStatements,
	DROP_EXPIRED_REVOCATIONS,
	REVOKE_SESSION,
} from './sql.ts';
import { checkedAtEdge } from './input.ts';
import type { Param, Row } from './sql.ts';
import type {
	ClaimedDelivery,
	DeliveryResult,
	InsertResult,
	NewEvent,
	Store,
	TargetsByKind,
} from './types.ts';

export interface PostgresStoreOptions {
	/** Connections of each of the two pools (durable and bookkeeping). Default 8. */
	poolSize?: number;
	/** Gives up connecting after this long (the caller gets an error, the service a 503). Default 5000. */
	connectTimeoutMs?: number;
	/** Server-side limit of one statement. Default 15000. */
	statementTimeoutMs?: number;
	/** Receives connection errors that no caller sees (idle clients, the listener). */
	onError?: (error: Error, where: string) => void;
}

/** bigint columns (epoch milliseconds, ids, counts) as numbers: every value stays below 2^53. */
const INT8 = 20;
const types = {
	getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
		oid === INT8
			? (v: string) => Number(v)
			: pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** fillPairKeys on one connection (at open, after the migrations). */
function fillPairKeysOn(client: PoolClient): Promise<number> {
	return fillPairKeys(
		Date.now(),
		async (since, limit) => {
			const { rows } = await client.query<{
				id: string;
				kind: PostbackEvent;
				fields_json: Record<string, string>;
			}>(numbered(EVENTS_WITHOUT_PAIR_KEY), [since, limit]);
			return rows.map((r) => ({ id: r.id, kind: r.kind, fields: r.fields_json }));
		},
		async (ids, keys) => {
			await client.query(
				'UPDATE events e SET pair_key = u.k FROM unnest($1::text[], $2::text[]) AS u (id, k) WHERE e.id = u.id',
				[ids, keys],
			);
		},
	);
}

/**
 * The scale-out store: one PostgreSQL database shared by several relay instances.
 *
 * - Every call is one statement (or one transaction) that has committed when its promise
 *   resolves: an acknowledged postback is in the database (synchronous_commit as configured on
 *   the server, `on` by default: flushed to its WAL).
 * - Two pools: the durable one carries what the relay acknowledges (events, replays, requeues,
 *   the readiness write); the bookkeeping one (claims, results, leases) runs with
 *   synchronous_commit=off, like the SQLite store's unsynced commits: after a crash of the
 *   database server a delivery may only be sent again, never lost.
 * - New work wakes every instance through LISTEN/NOTIFY (see PgWaker); polling stays as the net.
 * - When the server is down, calls fail at once or after `connectTimeoutMs` (the routes answer
 *   503, readiness fails); the pools open new connections on the next call, so the relay
 *   recovers by itself when the server is back.
 */
/**
 * The bookkeeping connections' settings. synchronous_commit=off: see the class. No bitmap scans:
 * the claim must walk the due index in order and stop after its batch, whatever the statistics
 * say. Left to them, the planner reads every due delivery on every claim (a bitmap scan of
 * deliveries_due, which also visits every dead entry since the last vacuum, then a sort) whenever
 * its statistics were taken while few deliveries were due: a new store, or one whose last analyze
 * saw delivered rows only, when a backlog forms (relay/README.md, performance: a store that
 * fills). The other statements of this pool find their rows by primary key.
 */
export const BOOKKEEPING_OPTIONS = '-c synchronous_commit=off -c enable_bitmapscan=off';

export class PostgresStore extends PostgresReads implements Store {
	#durable: Pool;
	#book: Pool;
	#waker: PgWaker;
	#closed = false;
	#inserts: GroupInserter;

	private constructor(url: string, options: PostgresStoreOptions) {
		super();
		const onError = options.onError ?? (() => {});
		const base: PoolConfig = {
			connectionString: url,
			max: options.poolSize ?? 8,
			connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
			statement_timeout: options.statementTimeoutMs ?? 15_000,
			keepAlive: true,
			application_name: 'paypalych-relay',
			types,
		};
		this.#durable = new pg.Pool(base);
		this.#book = new pg.Pool({ ...base, options: BOOKKEEPING_OPTIONS });
		// An idle client whose server went away emits 'error' on its pool; unhandled, it would end the process.
		this.#durable.on('error', (error) => onError(error, 'idle connection'));
		this.#book.on('error', (error) => onError(error, 'idle connection'));
		this.#waker = new PgWaker(base, this.#book, onError);
		this.#inserts = new GroupInserter(
			(sql, params) => this.#rows(this.#durable, sql, params),
			() => this.#waker.notify(),
		);
	}

	/**
	 * Connects, applies the schema migrations and starts listening for new work; resolves with the
	 * store's input checked at its edge (checkedAtEdge).
	 */
	static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
		const store = new PostgresStore(url, options);
		try {
			const client = await store.#durable.connect();
			try {
				await migrate(client);
				await fillPairKeysOn(client);
			} finally {
				client.release();
			}
			await store.#waker.start();
		} catch (error) {
			await store.close();
			throw error;
		}
		return checkedAtEdge(store);
	}

	async #rows<T extends QueryResultRow = Row>(
		pool: Pool,
		sql: string,
		params: Param[] | unknown[] = [],
	): Promise<T[]> {
		if (this.#closed) throw new Error('store is closed');
		const name = PREPARED.get(sql);
		return (
			await (name ? pool.query<T>({ name, text: sql, values: params }) : pool.query<T>(sql, params))
		).rows;
	}

	/** Runs `fn` in one transaction on a connection of `pool`: committed, or rolled back if it throws. */
	async #inTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
		if (this.#closed) throw new Error('store is closed');
		const client = await pool.connect();
		try {
			await client.query('BEGIN');
			const value = await fn(client);
			await client.query('COMMIT');
			return value;
		} catch (error) {
			await client.query('ROLLBACK').catch(() => {});
			throw error;
		} finally {
			client.release();
		}
	}

	protected read(sql: string, params: Param[] | unknown[] = []): Promise<Row[]> {
		return this.#rows(this.#durable, sql, params);
	}

	/** Calls `listener` when another instance (or this one) stored new work. Returns the unsubscribe. */
	onNewWork(listener: () => void): () => void {
		return this.#waker.subscribe(listener);
	}

	/** Group commit (see GroupInserter): resolves after the commit that carried the event. */
	insertEvent(event: NewEvent): Promise<InsertResult> {
		if (this.#closed) return Promise.reject(new Error('store is closed'));
		return this.#inserts.insert(event);
	}

	async claimDue(
		now: number,
		limit: number,
		leaseMs: number,
		owner: string,
	): Promise<ClaimedDelivery[]> {
		const rows = await this.#rows(this.#book, CLAIM, [now + leaseMs, owner, now, limit]);
		return rows.map((row) => toClaimed(row));
	}

	/**
	 * One statement on the bookkeeping pool for the whole batch; a batch in which a delivery comes
	 * twice runs as consecutive statements (one per run without repeats) in one transaction.
	 */
	async recordResults(given: readonly DeliveryResult[]): Promise<void> {
		if (given.length === 0) return;
		const results = given.map(storableResult);
		const runs = runsWithoutRepeats(results);
		if (runs.length === 1) {
			await this.#rows(this.#book, RECORD_RESULTS, resultParams(results));
			return;
		}
		await this.#inTransaction(this.#book, async (client) => {
			for (const run of runs)
				await client.query({
					name: PREPARED.get(RECORD_RESULTS),
					text: RECORD_RESULTS,
					values: resultParams(run),
				});
		});
	}

	async releaseLease(id: number, owner: string, now: number): Promise<void> {
		await this.#rows(this.#book, RELEASE, [now, id, owner]);
	}

	async replayEvents(
		eventIds: readonly string[],
		targets: TargetsByKind,
		now: number,
	): Promise<number> {
		const created = await this.#inTransaction(this.#durable, async (client) => {
			let n = 0;
			for (const [kind, list] of Object.entries(targets)) {
				if (!list || list.length === 0) continue;
				const r = await client.query(REPLAY, [[...eventIds], [...list], now, kind]);
				n += r.rowCount ?? 0;
			}
			return n;
		});
		if (created > 0) this.#waker.notify();
		return created;
	}

	async requeueDead(ids: readonly number[] | undefined, now: number): Promise<number> {
		if (this.#closed) throw new Error('store is closed');
		const r =
			ids === undefined
				? await this.#durable.query(REQUEUE, [now, now])
				: await this.#durable.query(`${REQUEUE} AND id = ANY($3::bigint[])`, [now, now, [...ids]]);
		const n = r.rowCount ?? 0;
		if (n > 0) this.#waker.notify();
		return n;
	}

	/**
	 * In one transaction: lock the candidates (SKIP LOCKED: another instance pruning takes others),
	 * which also holds off a replay adding a delivery to them (its foreign-key check waits for the
	 * lock); then check them again with a fresh snapshot, and delete what is still prunable.
	 */
	async prune(before: number, limit: number): Promise<number> {
		return this.#inTransaction(this.#book, async (client) => {
			const locked = await client.query<{ id: string }>(
				`${numbered(PRUNABLE)} FOR UPDATE SKIP LOCKED`,
				[before, limit],
			);
			let ids = locked.rows.map((r) => r.id);
			if (ids.length > 0) {
				const still = await client.query<{ id: string }>(
					`SELECT id FROM events e WHERE id = ANY($1::text[])
					 AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status IN ('pending', 'delivering'))`,
					[ids],
				);
				ids = still.rows.map((r) => r.id);
			}
			if (ids.length > 0) {
				for (const q of pruneStatements(ids)) await client.query(numbered(q.sql), q.params);
			}
			return ids.length;
		});
	}

	async revokeSession(id: string, expiresAt: number, now: number): Promise<void> {
		await this.#rows(this.#durable, numbered(DROP_EXPIRED_REVOCATIONS), [now]);
		await this.#rows(this.#durable, numbered(REVOKE_SESSION), [id, expiresAt]);
	}

	/** A committed write on the durable pool: fails when the server is down or read-only. */
	async catchupMarks(marks: readonly string[]): Promise<string[]> {
		if (marks.length === 0) return [];
		const rows = await this.#rows<{ mark: string }>(
			this.#durable,
			'SELECT mark FROM catchup_marks WHERE mark = ANY($1::text[])',
			[[...marks]],
		);
		return rows.map((r) => r.mark);
	}

	async addCatchupMarks(marks: readonly string[], now: number, pruneBefore: number): Promise<void> {
		await this.#rows(
			this.#durable,
			`WITH d AS (DELETE FROM catchup_marks WHERE at < $3)
			INSERT INTO catchup_marks (mark, at) SELECT m, $2 FROM unnest($1::text[]) AS m
			ON CONFLICT (mark) DO UPDATE SET at = excluded.at`,
			[[...marks], now, pruneBefore],
		);
	}

	/**
	 * A session-level advisory lock on a connection of its own, held while `fn` runs: one catch-up
	 * at a time among every relay on this database. The lock goes with the connection if this
	 * process dies.
	 */
	async withCatchupLock<T>(
		fn: () => Promise<T>,
	): Promise<{ ran: true; value: T } | { ran: false }> {
		if (this.#closed) throw new Error('store is closed');
		const client = await this.#durable.connect();
		let broken = false;
		try {
			const { rows } = await client.query<{ ok: boolean }>(
				'SELECT pg_try_advisory_lock($1) AS ok',
				[CATCHUP_LOCK],
			);
			if (!rows[0]?.ok) return { ran: false };
			try {
				return { ran: true, value: await fn() };
			} finally {
				await client.query('SELECT pg_advisory_unlock($1)', [CATCHUP_LOCK]).catch(() => {
					broken = true;
				});
			}
		} catch (error) {
			broken = true;
			throw error;
		} finally {
			client.release(broken);
		}
	}

	async ping(): Promise<void> {
		await this.#rows(this.#durable, PING, [Date.now()]);
	}

	async close(): Promise<void> {
		if (this.#closed) return;
		this.#closed = true;
		// Inserts already accepted finish before the pools end.
		while (!this.#inserts.idle) await new Promise((r) => setTimeout(r, 5));
		await this.#waker.stop();
		await Promise.all([this.#durable.end(), this.#book.end()]);
	}
}
