import pg from 'pg';
import type { Pool, PoolClient, PoolConfig, QueryResultRow } from 'pg';
import type { PostbackEvent } from '../contract.ts';
import type { BalanceBook } from '../store/balances.ts';
import { checkedAtEdge } from '../store/input.ts';
import { runsWithoutRepeats } from '../store/results.ts';
import { storableResult, toClaimed } from '../store/rows.ts';
import type { Row } from '../store/rows.ts';
import type {
	ActivityBucket,
	ClaimedDelivery,
	Delivery,
	DeliveryAttempt,
	DeliveryCounts,
	DeliveryFilter,
	DeliveryResult,
	EventFilter,
	InsertResult,
	NewEvent,
	Store,
	StoredEvent,
	TargetHealth,
	TargetsByKind,
} from '../store/types.ts';
import { GroupInserter } from './inserts.ts';
import { postgresReads } from './reads.ts';
import { postgresBalanceBook, postgresCatchupBook } from './catchup-book.ts';
import { fillPairKeysOn } from './pair-keys.ts';
import type { CatchupBook as Book } from '../store/catchup-book.ts';
import type { PostgresReadsPort } from './reads.ts';
import { migrate } from './schema.ts';
import {
	CATCHUP_LOCK,
	CATCHUP_UNLOCK,
	CLAIM,
	DROP_EXPIRED_REVOCATIONS,
	PING,
	PREPARED,
	PRUNABLE_LOCKED,
	PRUNE,
	RECORD_RESULTS,
	RELEASE,
	REPLAY,
	REQUEUE,
	REQUEUE_SOME,
	REVOKE_SESSION,
	STILL_PRUNABLE,
	TRY_CATCHUP_LOCK,
	resultParams,
} from './statements.ts';
import { PgWaker } from './waker.ts';

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
 * say (else a bitmap scan of every due delivery and a sort, whenever the statistics were taken
 * while few were due: docs/developer/relay-performance.md, a store that fills). The others of
 * this pool find their rows by primary key.
 * A plan per execution (force_custom_plan): the statements are prepared, and a generic plan kept
 * from a nearly empty store (until the next analyze) read the whole deliveries table for each
 * batch of results (6-13 ms a batch at 20,000 deliveries, auto_explain under bench:profile).
 */
export const BOOKKEEPING_OPTIONS =
	'-c synchronous_commit=off -c enable_bitmapscan=off -c plan_cache_mode=force_custom_plan';

export class PostgresStore implements Store {
	#durable: Pool;
	#book: Pool;
	#waker: PgWaker;
	#closed = false;
	#inserts: GroupInserter;
	#reads: PostgresReadsPort;
	#catchup: Book;
	// The catch-up's marks and remembered links (catchup-book.ts).
	readonly catchupBaseline: Book['catchupBaseline'] = (...a) => this.#catchup.catchupBaseline(...a);
	readonly backfillCatchup: Book['backfillCatchup'] = (...a) => this.#catchup.backfillCatchup(...a);
	readonly catchupMarks: Book['catchupMarks'] = (...a) => this.#catchup.catchupMarks(...a);
	readonly addCatchupMarks: Book['addCatchupMarks'] = (...a) => this.#catchup.addCatchupMarks(...a);
	readonly rememberLinks: Book['rememberLinks'] = (...a) => this.#catchup.rememberLinks(...a);
	readonly linksToRead: Book['linksToRead'] = (...a) => this.#catchup.linksToRead(...a);
	readonly markLinksRead: Book['markLinksRead'] = (...a) => this.#catchup.markLinksRead(...a);
	// The statement's balance snapshots and movement traces (catchup-book.ts).
	#balances!: BalanceBook;
	readonly keepBalanceSnapshot: BalanceBook['keepBalanceSnapshot'] = (s) =>
		this.#balances.keepBalanceSnapshot(s);
	readonly balanceSnapshots: BalanceBook['balanceSnapshots'] = (...a) =>
		this.#balances.balanceSnapshots(...a);
	readonly firstSnapshotDay: BalanceBook['firstSnapshotDay'] = (z) =>
		this.#balances.firstSnapshotDay(z);
	readonly movementTraces: BalanceBook['movementTraces'] = (...a) =>
		this.#balances.movementTraces(...a);

	private constructor(url: string, options: PostgresStoreOptions) {
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
		this.#reads = postgresReads((sql, params) => this.#rows(this.#durable, sql, params));
		this.#catchup = postgresCatchupBook((sql, params) => this.#rows(this.#durable, sql, params));
		this.#balances = postgresBalanceBook((sql, params) => this.#rows(this.#durable, sql, params));
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
		params: readonly unknown[] = [],
	): Promise<T[]> {
		if (this.#closed) throw new Error('store is closed');
		const name = PREPARED.get(sql);
		return (
			await (name
				? pool.query<T>({ name, text: sql, values: [...params] })
				: pool.query<T>(sql, [...params]))
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
				: await this.#durable.query(REQUEUE_SOME, [now, now, [...ids]]);
		const n = r.rowCount ?? 0;
		if (n > 0) this.#waker.notify();
		return n;
	}

	/**
	 * In one transaction: lock the candidates (SKIP LOCKED: another instance pruning takes others),
	 * which also holds off a replay adding a delivery to them (REPLAY locks its events, waits, and
	 * skips those deleted); then check them again with a fresh snapshot, and delete what is still
	 * prunable.
	 */
	async prune(before: number, limit: number): Promise<number> {
		return this.#inTransaction(this.#book, async (client) => {
			const locked = await client.query<{ id: string }>(PRUNABLE_LOCKED, [before, limit]);
			let ids = locked.rows.map((r) => r.id);
			if (ids.length > 0) {
				const still = await client.query<{ id: string }>(STILL_PRUNABLE, [ids]);
				ids = still.rows.map((r) => r.id);
			}
			if (ids.length > 0) {
				for (const sql of PRUNE) await client.query(sql, [ids]);
			}
			return ids.length;
		});
	}

	async revokeSession(id: string, expiresAt: number, now: number): Promise<void> {
		await this.#rows(this.#durable, DROP_EXPIRED_REVOCATIONS, [now]);
		await this.#rows(this.#durable, REVOKE_SESSION, [id, expiresAt]);
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
			const { rows } = await client.query<{ ok: boolean }>(TRY_CATCHUP_LOCK, [CATCHUP_LOCK]);
			if (!rows[0]?.ok) return { ran: false };
			try {
				return { ran: true, value: await fn() };
			} finally {
				await client.query(CATCHUP_UNLOCK, [CATCHUP_LOCK]).catch(() => {
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

	// The reads: one statement each (reads.ts).
	listEvents(filter: EventFilter): Promise<StoredEvent[]> {
		return this.#reads.listEvents(filter);
	}
	getEvent(id: string): Promise<StoredEvent | undefined> {
		return this.#reads.getEvent(id);
	}
	listDeliveries(filter: DeliveryFilter): Promise<Delivery[]> {
		return this.#reads.listDeliveries(filter);
	}
	getDelivery(id: number): Promise<Delivery | undefined> {
		return this.#reads.getDelivery(id);
	}
	deliveriesOfEvents(eventIds: readonly string[]): Promise<Delivery[]> {
		return this.#reads.deliveriesOfEvents(eventIds);
	}
	deadDeliveries(target?: string): Promise<Delivery[]> {
		return this.#reads.deadDeliveries(target);
	}
	eventIdsInRange(from: number, to: number, kind?: PostbackEvent): Promise<string[]> {
		return this.#reads.eventIdsInRange(from, to, kind);
	}
	counts(): Promise<DeliveryCounts> {
		return this.#reads.counts();
	}
	listAttempts(deliveryIds: readonly number[]): Promise<DeliveryAttempt[]> {
		return this.#reads.listAttempts(deliveryIds);
	}
	activity(from: number, to: number, bucketMs: number): Promise<ActivityBucket[]> {
		return this.#reads.activity(from, to, bucketMs);
	}
	targetHealth(since: number): Promise<TargetHealth[]> {
		return this.#reads.targetHealth(since);
	}
	oldestUndelivered(): Promise<number | null> {
		return this.#reads.oldestUndelivered();
	}
	sessionRevoked(id: string): Promise<boolean> {
		return this.#reads.sessionRevoked(id);
	}

	/** A committed write on the durable pool: fails when the server is down or read-only. */
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
