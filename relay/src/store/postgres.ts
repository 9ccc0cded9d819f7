import pg from 'pg';
import type { Pool, PoolConfig, QueryResultRow } from 'pg';
import type { PostbackEvent } from '../../../dist/nodes/shared/index.js';
import { uuidV7 } from './ids.ts';
import { migrate } from './pg-schema.ts';
import { PgWaker } from './pg-waker.ts';
import { toAttempt, toDelivery, toEvent } from './rows.ts';
import {
	ACTIVITY_QUERIES,
	COUNTS,
	GET_EVENT,
	HEARTBEAT,
	OLDEST_UNDELIVERED,
	PRUNABLE,
	TARGET_ATTEMPTS,
	TARGET_LAST_ERROR,
	TARGET_STATES,
	activityParams,
	assembleActivity,
	assembleCounts,
	assembleHealth,
	attemptsQuery,
	checkActivityRange,
	deliveriesQuery,
	eventIdsQuery,
	eventsQuery,
	numbered,
	pruneStatements,
} from './sql.ts';
import type { FieldExpr, Param, Row } from './sql.ts';
import type {
	ActivityBucket,
	AttemptTiming,
	ClaimedDelivery,
	Delivery,
	DeliveryAttempt,
	DeliveryCounts,
	DeliveryFilter,
	EventFilter,
	InsertResult,
	NewEvent,
	Store,
	StoredEvent,
	TargetHealth,
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

/** The stored field as PostgreSQL reads it (the same expression as the events_trs_id / events_inv_id indexes). */
const field: FieldExpr = (name) => `(fields_json ->> '${name}')`;

/** bigint columns (epoch milliseconds, ids, counts) as numbers: every value stays below 2^53. */
const INT8 = 20;
const types = {
	getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
		oid === INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const INSERT_EVENT = `WITH e AS (
		INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (dedupe_key) DO NOTHING RETURNING id
	), d AS (
		INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at)
		SELECT e.id, t.target, 'pending', 0, $7, $7, $7 FROM e, unnest($8::text[]) WITH ORDINALITY AS t (target, n)
		ORDER BY t.n RETURNING id
	)
	SELECT (SELECT id FROM e) AS id, (SELECT COUNT(*) FROM d) AS deliveries`;

/**
 * The `FOR UPDATE SKIP LOCKED` sub-select takes rows no other instance is claiming at this moment,
 * from the partial index of due deliveries; the lease (lease_until, lease_owner) then keeps them
 * out of every other claim until it expires, when they are due again (next_attempt_at = lease end).
 */
const CLAIM = `WITH c AS (
		UPDATE deliveries SET status = 'delivering', attempts = attempts + 1, lease_until = $1, lease_owner = $2, next_attempt_at = $1
		WHERE id IN (
			SELECT id FROM deliveries WHERE status IN ('pending', 'delivering') AND next_attempt_at <= $3
			ORDER BY next_attempt_at LIMIT $4 FOR UPDATE SKIP LOCKED)
		RETURNING *
	)
	SELECT c.*, e.kind, e.content_type, e.body, e.received_at FROM c JOIN events e ON e.id = c.event_id ORDER BY c.id`;

/** Parameters 1–3 of every attempt insert: attempt, started_at, duration_ms. */
const ATTEMPT_COLUMNS = 'delivery_id, target, attempt, started_at, duration_ms, http_status, error, outcome';

const MARK_DELIVERED = `WITH u AS (
		UPDATE deliveries SET status = 'delivered', delivered_at = $4, last_status = $5, last_error = NULL, lease_until = NULL, lease_owner = NULL
		WHERE id = $6 AND status <> 'delivered'
	)
	INSERT INTO attempts (${ATTEMPT_COLUMNS}) SELECT id, target, $1, $2, $3, $5, NULL, 'delivered' FROM deliveries WHERE id = $6`;

const MARK_RETRY = `WITH u AS (
		UPDATE deliveries SET status = 'pending', next_attempt_at = $4, last_status = $5, last_error = $6, lease_until = NULL, lease_owner = NULL
		WHERE id = $7 AND status = 'delivering' AND lease_owner = $8 RETURNING id, target
	)
	INSERT INTO attempts (${ATTEMPT_COLUMNS}) SELECT id, target, $1, $2, $3, $5, $6, 'retry' FROM u`;

const MARK_DEAD = `WITH u AS (
		UPDATE deliveries SET status = 'dead', last_status = $4, last_error = $5, lease_until = NULL, lease_owner = NULL
		WHERE id = $6 AND status = 'delivering' AND lease_owner = $7 RETURNING id, target
	)
	INSERT INTO attempts (${ATTEMPT_COLUMNS}) SELECT id, target, $1, $2, $3, $4, $5, 'dead' FROM u`;

const RELEASE = `UPDATE deliveries SET status = 'pending', attempts = GREATEST(attempts - 1, 0), next_attempt_at = $1,
		lease_until = NULL, lease_owner = NULL
	WHERE id = $2 AND status = 'delivering' AND lease_owner = $3`;

const REPLAY = `INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at)
	SELECT e.id, t.target, 'pending', 0, $3, $3, $3
	FROM events e CROSS JOIN unnest($2::text[]) WITH ORDINALITY AS t (target, n)
	WHERE e.id = ANY($1::text[]) AND e.kind = $4 ORDER BY e.received_at, e.id, t.n`;

const REQUEUE = `UPDATE deliveries SET status = 'pending', attempts = 0, budget_start = $1, next_attempt_at = $1, last_error = NULL
	WHERE status = 'dead'`;

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
export class PostgresStore implements Store {
	#durable: Pool;
	#book: Pool;
	#waker: PgWaker;
	#closed = false;

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
		this.#book = new pg.Pool({ ...base, options: '-c synchronous_commit=off' });
		// An idle client whose server went away emits 'error' on its pool; unhandled, it would end the process.
		this.#durable.on('error', (error) => onError(error, 'idle connection'));
		this.#book.on('error', (error) => onError(error, 'idle connection'));
		this.#waker = new PgWaker(base, this.#book, onError);
	}

	/** Connects, applies the schema migrations and starts listening for new work. */
	static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
		const store = new PostgresStore(url, options);
		try {
			const client = await store.#durable.connect();
			try {
				await migrate(client);
			} finally {
				client.release();
			}
			await store.#waker.start();
		} catch (error) {
			await store.close();
			throw error;
		}
		return store;
	}

	async #rows<T extends QueryResultRow = Row>(pool: Pool, sql: string, params: Param[] | unknown[] = []): Promise<T[]> {
		if (this.#closed) throw new Error('store is closed');
		return (await pool.query<T>(sql, params)).rows;
	}

	/** Calls `listener` when another instance (or this one) stored new work. Returns the unsubscribe. */
	onNewWork(listener: () => void): () => void {
		return this.#waker.subscribe(listener);
	}

	async insertEvent(event: NewEvent): Promise<InsertResult> {
		const id = uuidV7(event.receivedAt);
		const [row] = await this.#rows<{ id: string | null; deliveries: number }>(this.#durable, INSERT_EVENT, [
			id,
			event.kind,
			event.dedupeKey,
			event.contentType,
			event.body,
			JSON.stringify(event.fields),
			event.receivedAt,
			[...event.targets],
		]);
		if (row.id === null) {
			const [existing] = await this.#rows<{ id: string }>(this.#durable, 'SELECT id FROM events WHERE dedupe_key = $1', [event.dedupeKey]);
			return { eventId: existing.id, duplicate: true, deliveries: 0 };
		}
		if (row.deliveries > 0) this.#waker.notify();
		return { eventId: row.id, duplicate: false, deliveries: row.deliveries };
	}

	async claimDue(now: number, limit: number, leaseMs: number, owner: string): Promise<ClaimedDelivery[]> {
		const rows = await this.#rows(this.#book, CLAIM, [now + leaseMs, owner, now, limit]);
		return rows.map((row) => ({
			...toDelivery(row),
			kind: row.kind as PostbackEvent,
			contentType: String(row.content_type),
			body: String(row.body),
			receivedAt: Number(row.received_at),
		}));
	}

	async markDelivered(id: number, now: number, httpStatus: number, t: AttemptTiming): Promise<void> {
		await this.#rows(this.#book, MARK_DELIVERED, [t.attempt, t.startedAt, t.durationMs, now, httpStatus, id]);
	}

	async markRetry(
		id: number,
		owner: string,
		nextAttemptAt: number,
		httpStatus: number | null,
		error: string,
		t: AttemptTiming,
	): Promise<void> {
		await this.#rows(this.#book, MARK_RETRY, [t.attempt, t.startedAt, t.durationMs, nextAttemptAt, httpStatus, error, id, owner]);
	}

	async markDead(id: number, owner: string, httpStatus: number | null, error: string, t: AttemptTiming): Promise<void> {
		await this.#rows(this.#book, MARK_DEAD, [t.attempt, t.startedAt, t.durationMs, httpStatus, error, id, owner]);
	}

	async releaseLease(id: number, owner: string, now: number): Promise<void> {
		await this.#rows(this.#book, RELEASE, [now, id, owner]);
	}

	async listEvents(filter: EventFilter): Promise<StoredEvent[]> {
		const q = eventsQuery(filter, field);
		return (await this.#rows(this.#durable, numbered(q.sql), q.params)).map(toEvent);
	}

	async getEvent(id: string): Promise<StoredEvent | undefined> {
		const [row] = await this.#rows(this.#durable, numbered(GET_EVENT), [id]);
		return row ? toEvent(row) : undefined;
	}

	async listDeliveries(filter: DeliveryFilter): Promise<Delivery[]> {
		const q = deliveriesQuery(filter);
		return (await this.#rows(this.#durable, numbered(q.sql), q.params)).map(toDelivery);
	}

	async replayEvents(eventIds: readonly string[], targets: TargetsByKind, now: number): Promise<number> {
		if (this.#closed) throw new Error('store is closed');
		const client = await this.#durable.connect();
		let created = 0;
		try {
			await client.query('BEGIN');
			for (const [kind, list] of Object.entries(targets)) {
				if (!list || list.length === 0) continue;
				const r = await client.query(REPLAY, [[...eventIds], [...list], now, kind]);
				created += r.rowCount ?? 0;
			}
			await client.query('COMMIT');
		} catch (error) {
			await client.query('ROLLBACK').catch(() => {});
			throw error;
		} finally {
			client.release();
		}
		if (created > 0) this.#waker.notify();
		return created;
	}

	async eventIdsInRange(from: number, to: number, kind?: PostbackEvent): Promise<string[]> {
		const q = eventIdsQuery(from, to, kind);
		return (await this.#rows(this.#durable, numbered(q.sql), q.params)).map((r) => String(r.id));
	}

	async requeueDead(ids: readonly number[] | undefined, now: number): Promise<number> {
		if (this.#closed) throw new Error('store is closed');
		const r =
			ids === undefined
				? await this.#durable.query(REQUEUE, [now])
				: await this.#durable.query(`${REQUEUE} AND id = ANY($2::bigint[])`, [now, [...ids]]);
		const n = r.rowCount ?? 0;
		if (n > 0) this.#waker.notify();
		return n;
	}

	async counts(): Promise<DeliveryCounts> {
		return assembleCounts(await this.#rows(this.#durable, COUNTS));
	}

	async listAttempts(deliveryIds: readonly number[]): Promise<DeliveryAttempt[]> {
		if (deliveryIds.length === 0) return [];
		const q = attemptsQuery(deliveryIds);
		return (await this.#rows(this.#durable, numbered(q.sql), q.params)).map(toAttempt);
	}

	async activity(from: number, to: number, bucketMs: number): Promise<ActivityBucket[]> {
		const buckets = checkActivityRange(from, to, bucketMs);
		const params = activityParams(from, to, bucketMs);
		const [received, delivered, failed] = await Promise.all(
			[ACTIVITY_QUERIES.received, ACTIVITY_QUERIES.delivered, ACTIVITY_QUERIES.failed].map((sql) =>
				this.#rows(this.#durable, numbered(sql), params),
			),
		);
		return assembleActivity(from, bucketMs, buckets, received, delivered, failed);
	}

	async targetHealth(since: number): Promise<TargetHealth[]> {
		const [states, attempts] = await Promise.all([
			this.#rows(this.#durable, TARGET_STATES),
			this.#rows(this.#durable, numbered(TARGET_ATTEMPTS), [since]),
		]);
		const lastErrors = new Map<string, Row>();
		for (const s of states) {
			const [row] = await this.#rows(this.#durable, numbered(TARGET_LAST_ERROR), [String(s.target)]);
			if (row) lastErrors.set(String(s.target), row);
		}
		return assembleHealth(states, attempts, lastErrors);
	}

	async oldestUndelivered(): Promise<number | null> {
		const [row] = await this.#rows(this.#durable, OLDEST_UNDELIVERED);
		return row?.t === null || row?.t === undefined ? null : Number(row.t);
	}

	/**
	 * In one transaction: lock the candidates (SKIP LOCKED: another instance pruning takes others),
	 * which also holds off a replay adding a delivery to them (its foreign-key check waits for the
	 * lock); then check them again with a fresh snapshot, and delete what is still prunable.
	 */
	async prune(before: number, limit: number): Promise<number> {
		if (this.#closed) throw new Error('store is closed');
		const client = await this.#book.connect();
		try {
			await client.query('BEGIN');
			const locked = await client.query<{ id: string }>(`${numbered(PRUNABLE)} FOR UPDATE SKIP LOCKED`, [before, limit]);
			let ids = locked.rows.map((r) => r.id);
			if (ids.length > 0) {
				const still = await client.query<{ id: string }>(
					`SELECT id FROM events e WHERE id = ANY($1::text[])
					 AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status <> 'delivered')`,
					[ids],
				);
				ids = still.rows.map((r) => r.id);
			}
			if (ids.length > 0) {
				for (const q of pruneStatements(ids)) await client.query(numbered(q.sql), q.params);
			}
			await client.query('COMMIT');
			return ids.length;
		} catch (error) {
			await client.query('ROLLBACK').catch(() => {});
			throw error;
		} finally {
			client.release();
		}
	}

	/** A committed write on the durable pool: fails when the server is down or read-only. */
	async ping(): Promise<void> {
		await this.#rows(this.#durable, numbered(HEARTBEAT), [Date.now()]);
	}

	async close(): Promise<void> {
		if (this.#closed) return;
		this.#closed = true;
		await this.#waker.stop();
		await Promise.all([this.#durable.end(), this.#book.end()]);
	}
}
