import pg from 'pg';
import type { Pool, PoolConfig, QueryResultRow } from 'pg';
import { POSTBACK_EVENTS } from '../contract.ts';
import type { PostbackEvent } from '../contract.ts';
import { uuidV7 } from './ids.ts';
import { migrate } from './pg-schema.ts';
import { PgWaker } from './pg-waker.ts';
import { toAttempt, toClaimed, toDelivery, toEvent } from './rows.ts';
import {
	ACTIVITY_QUERIES,
	COUNTS,
	GET_EVENT,
	HEARTBEAT,
	OLDEST_UNDELIVERED,
	PRUNABLE,
	REQUEUE_DEAD,
	attemptParams,
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
	DROP_EXPIRED_REVOCATIONS,
	REVOKE_SESSION,
	SESSION_REVOKED,
	signedFields,
	signedPairQuery,
} from './sql.ts';
import { checkCall } from './input.ts';
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
		oid === INT8
			? (v: string) => Number(v)
			: pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

const INSERT_EVENT = `WITH e AS (
		INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at, source)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $9) ON CONFLICT (dedupe_key) DO NOTHING RETURNING id
	), d AS (
		INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at)
		SELECT e.id, t.target, 'pending', 0, $7, $7, $7 FROM e, unnest($8::text[]) WITH ORDINALITY AS t (target, n)
		ORDER BY t.n RETURNING id
	)
	SELECT (SELECT id FROM e) AS id, (SELECT COUNT(*) FROM d) AS deliveries`;

/**
 * Many events in one statement (group commit): parallel arrays, one element per event; targets as
 * a JSON array per event. Returns the ids of the events inserted; the others were duplicates
 * (also of each other: the second of two rows with one key conflicts with the first).
 */
const INSERT_EVENTS = `WITH input AS (
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::bigint[], $8::jsonb[], $9::text[])
			AS i (id, kind, dedupe_key, content_type, body, fields_json, received_at, targets, source)
	), e AS (
		INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at, source)
		SELECT id, kind, dedupe_key, content_type, body, fields_json, received_at, source FROM input
		ON CONFLICT (dedupe_key) DO NOTHING RETURNING id
	), d AS (
		INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at)
		SELECT i.id, t.target, 'pending', 0, i.received_at, i.received_at, i.received_at
		FROM e JOIN input i ON i.id = e.id CROSS JOIN LATERAL jsonb_array_elements_text(i.targets) WITH ORDINALITY AS t (target, n)
		ORDER BY i.received_at, i.id, t.n RETURNING id
	)
	SELECT e.id, (SELECT COUNT(*) FROM d) AS deliveries FROM e`;

const DEDUPE_LOOKUP_MANY = 'SELECT id, dedupe_key FROM events WHERE dedupe_key = ANY($1::text[])';

/** Inserts in flight at once; the calls made meanwhile wait and share the next statement. */
const INSERTS_IN_FLIGHT = 4;
/** Most events in one statement. */
const INSERT_BATCH = 200;

interface QueuedInsert {
	id: string;
	event: NewEvent;
	resolve: (result: InsertResult) => void;
	reject: (error: Error) => void;
}

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

/** Parameters 1–8 of every result: the attempt's columns in attemptParams' order. */
const INSERT_ATTEMPT_FROM = `INSERT INTO attempts (delivery_id, target, attempt, started_at, duration_ms, http_status, error, outcome, origin, response)
	SELECT id, target, $1, $2, $3, $4, $5, $6, $7, $8`;

/** …then now ($9) and id ($10). */
const MARK_DELIVERED = `WITH u AS (
		UPDATE deliveries SET status = 'delivered', delivered_at = $9, last_status = $4, last_error = NULL, last_response = NULL,
			manual = 0, lease_until = NULL, lease_owner = NULL
		WHERE id = $10 AND status <> 'delivered'
	)
	${INSERT_ATTEMPT_FROM} FROM deliveries WHERE id = $10`;

/** …then the next attempt's time ($9), id ($10) and owner ($11). */
const MARK_RETRY = `WITH u AS (
		UPDATE deliveries SET status = 'pending', next_attempt_at = $9, last_status = $4, last_error = $5, last_response = $8,
			manual = 0, lease_until = NULL, lease_owner = NULL
		WHERE id = $10 AND status = 'delivering' AND lease_owner = $11 RETURNING id, target
	)
	${INSERT_ATTEMPT_FROM} FROM u`;

/** …then id ($9) and owner ($10). */
const MARK_DEAD = `WITH u AS (
		UPDATE deliveries SET status = 'dead', last_status = $4, last_error = $5, last_response = $8,
			manual = 0, lease_until = NULL, lease_owner = NULL
		WHERE id = $9 AND status = 'delivering' AND lease_owner = $10 RETURNING id, target
	)
	${INSERT_ATTEMPT_FROM} FROM u`;

const RELEASE = `UPDATE deliveries SET status = 'pending', attempts = GREATEST(attempts - 1, attempt_base), next_attempt_at = $1,
		lease_until = NULL, lease_owner = NULL
	WHERE id = $2 AND status = 'delivering' AND lease_owner = $3`;

/** A replay's deliveries: their first attempt is a manual one. */
const REPLAY = `INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at, manual)
	SELECT e.id, t.target, 'pending', 0, $3, $3, $3, 1
	FROM events e CROSS JOIN unnest($2::text[]) WITH ORDINALITY AS t (target, n)
	WHERE e.id = ANY($1::text[]) AND e.kind = $4 ORDER BY e.received_at, e.id, t.n`;

const REQUEUE = numbered(REQUEUE_DEAD);

const DEDUPE_LOOKUP = 'SELECT id FROM events WHERE dedupe_key = $1';
/** The advisory lock one catch-up holds at a time (any constant other than the migration lock). */
const CATCHUP_LOCK = 0x70617963; // 'payc'
const PING = numbered(HEARTBEAT);

/**
 * The statements of the hot paths run as named prepared statements: parsed and planned once per
 * connection instead of on every call (the insert and claim CTEs cost more to plan than to run).
 */
const PREPARED = new Map(
	[
		INSERT_EVENT,
		INSERT_EVENTS,
		DEDUPE_LOOKUP,
		DEDUPE_LOOKUP_MANY,
		CLAIM,
		MARK_DELIVERED,
		MARK_RETRY,
		MARK_DEAD,
		RELEASE,
		PING,
	].map((sql, i) => [sql, `relay_${i}`]),
);

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
	#queue: QueuedInsert[] = [];
	#insertsInFlight = 0;

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

	/** Calls `listener` when another instance (or this one) stored new work. Returns the unsubscribe. */
	onNewWork(listener: () => void): () => void {
		return this.#waker.subscribe(listener);
	}

	/**
	 * Group commit: up to INSERTS_IN_FLIGHT statements at once; events that arrive meanwhile queue
	 * and go together in the next statement (one round trip, one commit). Each promise resolves
	 * after the commit that carried its event. If a batch fails, its events are inserted one by one,
	 * so one bad event fails alone.
	 */
	insertEvent(event: NewEvent): Promise<InsertResult> {
		if (this.#closed) return Promise.reject(new Error('store is closed'));
		try {
			checkCall('insertEvent', [event]);
		} catch (error) {
			return Promise.reject(error as Error);
		}
		return new Promise<InsertResult>((resolve, reject) => {
			this.#queue.push({ id: uuidV7(event.receivedAt), event, resolve, reject });
			this.#pump();
		});
	}

	#pump(): void {
		while (this.#insertsInFlight < INSERTS_IN_FLIGHT && this.#queue.length > 0) {
			const batch = this.#queue.splice(0, INSERT_BATCH);
			this.#insertsInFlight += 1;
			const done = batch.length === 1 ? this.#insertOne(batch[0]) : this.#insertMany(batch);
			void done.finally(() => {
				this.#insertsInFlight -= 1;
				this.#pump();
			});
		}
	}

	async #insertOne(q: QueuedInsert): Promise<void> {
		const { event } = q;
		try {
			const [row] = await this.#rows<{ id: string | null; deliveries: number }>(
				this.#durable,
				INSERT_EVENT,
				[
					q.id,
					event.kind,
					event.dedupeKey,
					event.contentType,
					event.body,
					JSON.stringify(event.fields),
					event.receivedAt,
					[...event.targets],
					event.source ?? 'postback',
				],
			);
			if (row.id === null) {
				const [existing] = await this.#rows<{ id: string }>(this.#durable, DEDUPE_LOOKUP, [
					event.dedupeKey,
				]);
				q.resolve({ eventId: existing.id, duplicate: true, deliveries: 0 });
				return;
			}
			if (row.deliveries > 0) this.#waker.notify();
			q.resolve({ eventId: row.id, duplicate: false, deliveries: row.deliveries });
		} catch (error) {
			q.reject(error as Error);
		}
	}

	async #insertMany(batch: QueuedInsert[]): Promise<void> {
		let inserted: Set<string>;
		let existing = new Map<string, string>();
		try {
			const rows = await this.#rows<{ id: string }>(this.#durable, INSERT_EVENTS, [
				batch.map((q) => q.id),
				batch.map((q) => q.event.kind),
				batch.map((q) => q.event.dedupeKey),
				batch.map((q) => q.event.contentType),
				batch.map((q) => q.event.body),
				batch.map((q) => JSON.stringify(q.event.fields)),
				batch.map((q) => q.event.receivedAt),
				batch.map((q) => JSON.stringify(q.event.targets)),
				batch.map((q) => q.event.source ?? 'postback'),
			]);
			inserted = new Set(rows.map((r) => r.id));
			const duplicateKeys = batch.filter((q) => !inserted.has(q.id)).map((q) => q.event.dedupeKey);
			if (duplicateKeys.length > 0) {
				const found = await this.#rows<{ id: string; dedupe_key: string }>(
					this.#durable,
					DEDUPE_LOOKUP_MANY,
					[duplicateKeys],
				);
				existing = new Map(found.map((r) => [r.dedupe_key, r.id]));
			}
		} catch {
			// One bad event (or a lost connection) failed the statement: each event on its own, in
			// order (of two with one key, the first is the event and the second its duplicate).
			for (const q of batch) await this.#insertOne(q);
			return;
		}
		let notify = false;
		for (const q of batch) {
			if (inserted.has(q.id)) {
				notify ||= q.event.targets.length > 0;
				q.resolve({ eventId: q.id, duplicate: false, deliveries: q.event.targets.length });
				continue;
			}
			const id = q.event.dedupeKey === null ? undefined : existing.get(q.event.dedupeKey);
			if (id) q.resolve({ eventId: id, duplicate: true, deliveries: 0 });
			else q.reject(new Error('the event was neither stored nor found as a duplicate'));
		}
		if (notify) this.#waker.notify();
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

	async markDelivered(
		id: number,
		now: number,
		httpStatus: number,
		t: AttemptTiming,
	): Promise<void> {
		await this.#rows(this.#book, MARK_DELIVERED, [
			...attemptParams(t, httpStatus, null, 'delivered'),
			now,
			id,
		]);
	}

	async markRetry(
		id: number,
		owner: string,
		nextAttemptAt: number,
		httpStatus: number | null,
		error: string,
		t: AttemptTiming,
	): Promise<void> {
		await this.#rows(this.#book, MARK_RETRY, [
			...attemptParams(t, httpStatus, error, 'retry'),
			nextAttemptAt,
			id,
			owner,
		]);
	}

	async markDead(
		id: number,
		owner: string,
		httpStatus: number | null,
		error: string,
		t: AttemptTiming,
	): Promise<void> {
		await this.#rows(this.#book, MARK_DEAD, [
			...attemptParams(t, httpStatus, error, 'dead'),
			id,
			owner,
		]);
	}

	async releaseLease(id: number, owner: string, now: number): Promise<void> {
		await this.#rows(this.#book, RELEASE, [now, id, owner]);
	}

	async listEvents(filter: EventFilter): Promise<StoredEvent[]> {
		checkCall('listEvents', [filter]);
		const q = eventsQuery(filter, field);
		return (await this.#rows(this.#durable, numbered(q.sql), q.params)).map(toEvent);
	}

	async getEvent(id: string): Promise<StoredEvent | undefined> {
		checkCall('getEvent', [id]);
		const [row] = await this.#rows(this.#durable, numbered(GET_EVENT), [id]);
		return row ? toEvent(row) : undefined;
	}

	async listDeliveries(filter: DeliveryFilter): Promise<Delivery[]> {
		checkCall('listDeliveries', [filter]);
		const q = deliveriesQuery(filter);
		return (await this.#rows(this.#durable, numbered(q.sql), q.params)).map(toDelivery);
	}

	async replayEvents(
		eventIds: readonly string[],
		targets: TargetsByKind,
		now: number,
	): Promise<number> {
		checkCall('replayEvents', [eventIds, targets, now]);
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
		checkCall('eventIdsInRange', [from, to, kind]);
		const q = eventIdsQuery(from, to, kind);
		return (await this.#rows(this.#durable, numbered(q.sql), q.params)).map((r) => String(r.id));
	}

	async requeueDead(ids: readonly number[] | undefined, now: number): Promise<number> {
		checkCall('requeueDead', [ids, now]);
		if (this.#closed) throw new Error('store is closed');
		const r =
			ids === undefined
				? await this.#durable.query(REQUEUE, [now, now])
				: await this.#durable.query(`${REQUEUE} AND id = ANY($3::bigint[])`, [now, now, [...ids]]);
		const n = r.rowCount ?? 0;
		if (n > 0) this.#waker.notify();
		return n;
	}

	async counts(): Promise<DeliveryCounts> {
		return assembleCounts(await this.#rows(this.#durable, COUNTS));
	}

	async listAttempts(deliveryIds: readonly number[]): Promise<DeliveryAttempt[]> {
		checkCall('listAttempts', [deliveryIds]);
		if (deliveryIds.length === 0) return [];
		const q = attemptsQuery(deliveryIds);
		return (await this.#rows(this.#durable, numbered(q.sql), q.params)).map(toAttempt);
	}

	async activity(from: number, to: number, bucketMs: number): Promise<ActivityBucket[]> {
		checkCall('activity', [from, to, bucketMs]);
		const buckets = checkActivityRange(from, to, bucketMs);
		const params = activityParams(from, to, bucketMs);
		const [received, delivered, failed] = await Promise.all(
			[ACTIVITY_QUERIES.received, ACTIVITY_QUERIES.delivered, ACTIVITY_QUERIES.failed].map((sql) =>
				this.#rows(this.#durable, numbered(sql), params),
			),
		);
		return assembleActivity(POSTBACK_EVENTS, from, bucketMs, buckets, received, delivered, failed);
	}

	async targetHealth(since: number): Promise<TargetHealth[]> {
		checkCall('targetHealth', [since]);
		const [states, attempts] = await Promise.all([
			this.#rows(this.#durable, TARGET_STATES),
			this.#rows(this.#durable, numbered(TARGET_ATTEMPTS), [since]),
		]);
		const lastErrors = new Map<string, Row>();
		for (const s of states) {
			const [row] = await this.#rows(this.#durable, numbered(TARGET_LAST_ERROR), [
				String(s.target),
			]);
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
		checkCall('prune', [before, limit]);
		if (this.#closed) throw new Error('store is closed');
		const client = await this.#book.connect();
		try {
			await client.query('BEGIN');
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
			await client.query('COMMIT');
			return ids.length;
		} catch (error) {
			await client.query('ROLLBACK').catch(() => {});
			throw error;
		} finally {
			client.release();
		}
	}

	async signedPairEvents(
		kind: PostbackEvent,
		signedId: string,
		since: number,
	): Promise<Array<{ amount: string; dedupeKey: string | null }>> {
		checkCall('signedPairEvents', [kind, signedId, since]);
		const amount = `(fields_json ->> '${signedFields(kind).amount}')`;
		const q = signedPairQuery(kind, signedId, since, field, amount);
		return (await this.#rows(this.#durable, numbered(q.sql), q.params)).map((r) => ({
			amount: r.amount === null ? '' : String(r.amount),
			dedupeKey: r.dedupe_key === null ? null : String(r.dedupe_key),
		}));
	}

	async revokeSession(id: string, expiresAt: number, now: number): Promise<void> {
		checkCall('revokeSession', [id, expiresAt, now]);
		await this.#rows(this.#durable, numbered(DROP_EXPIRED_REVOCATIONS), [now]);
		await this.#rows(this.#durable, numbered(REVOKE_SESSION), [id, expiresAt]);
	}

	async sessionRevoked(id: string): Promise<boolean> {
		checkCall('sessionRevoked', [id]);
		return (await this.#rows(this.#durable, numbered(SESSION_REVOKED), [id])).length > 0;
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
		while (this.#insertsInFlight > 0 || this.#queue.length > 0)
			await new Promise((r) => setTimeout(r, 5));
		await this.#waker.stop();
		await Promise.all([this.#durable.end(), this.#book.end()]);
	}
}
