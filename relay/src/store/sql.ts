// SQL shared by both stores. Written with `?` placeholders in the common subset of SQLite and
// PostgreSQL; the PostgreSQL store numbers them ($1, $2, …) with `numbered`. No value import of
// the contract: the SQLite writer thread loads this module from source, where Node cannot load it.
import type { PostbackEvent } from '../contract.ts';
import { MAX_ACTIVITY_BUCKETS } from './types.ts';
import { clipResponse, type Row } from './rows.ts';
import type {
	ActivityBucket,
	AttemptOutcome,
	AttemptTiming,
	DeliveryCounts,
	DeliveryFilter,
	DeliveryStatus,
	EventFilter,
	TargetHealth,
} from './types.ts';

export type { Row } from './rows.ts';
export type Param = string | number | null;

export interface Query {
	sql: string;
	params: Param[];
}

/** How a store reads one field of an event's stored fields (an indexed expression in both). */
export type FieldExpr = (name: 'TrsId' | 'InvId') => string;

/** `?` → `$1`, `$2`, … (the shared SQL has no `?` inside string literals). */
export function numbered(sql: string): string {
	let n = 0;
	return sql.replace(/\?/g, () => `$${++n}`);
}

export const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

class Where {
	readonly parts: string[] = [];
	readonly params: Param[] = [];
	add(sql: string, value: Param | undefined): void {
		if (value === undefined) return;
		this.parts.push(sql);
		this.params.push(value);
	}
	addAll(sql: string, values: Param[] | undefined): void {
		if (values === undefined) return;
		this.parts.push(sql);
		this.params.push(...values);
	}
	get sql(): string {
		return this.parts.length ? `WHERE ${this.parts.join(' AND ')}` : '';
	}
}

export const EVENT_COLUMNS = 'id, kind, source, dedupe_key, content_type, fields_json, received_at';

export const GET_EVENT = `SELECT ${EVENT_COLUMNS} FROM events WHERE id = ?`;

export function eventIdsQuery(from: number, to: number, kind?: PostbackEvent): Query {
	return kind
		? {
				sql: 'SELECT id FROM events WHERE received_at >= ? AND received_at < ? AND kind = ? ORDER BY received_at, id',
				params: [from, to, kind],
			}
		: {
				sql: 'SELECT id FROM events WHERE received_at >= ? AND received_at < ? ORDER BY received_at, id',
				params: [from, to],
			};
}

/** Readiness: a write the store must commit (parameter: now). */
export const HEARTBEAT =
	'INSERT INTO heartbeat (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at';

export const COUNTS = `SELECT status, CASE WHEN attempts > attempt_base THEN 1 ELSE 0 END AS retried, COUNT(*) AS n
	FROM deliveries GROUP BY status, CASE WHEN attempts > attempt_base THEN 1 ELSE 0 END`;

/** Pending deliveries that had an attempt in their current budget count as retrying. */
export function assembleCounts(rows: Row[]): DeliveryCounts {
	const c: DeliveryCounts = { pending: 0, retrying: 0, delivering: 0, delivered: 0, dead: 0 };
	for (const r of rows) {
		const status = r.status as DeliveryStatus;
		const n = Number(r.n);
		if (status === 'pending' && Number(r.retried) === 1) c.retrying += n;
		else c[status] += n;
	}
	return c;
}

export function eventsQuery(filter: EventFilter, field: FieldExpr): Query {
	const w = new Where();
	w.add('kind = ?', filter.kind);
	w.add('source = ?', filter.source);
	w.add(`${field('TrsId')} = ?`, filter.trsId);
	w.add(`${field('InvId')} = ?`, filter.invId);
	w.add(
		'EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id AND d.status = ?)',
		filter.status,
	);
	w.add('received_at >= ?', filter.from);
	w.add('received_at < ?', filter.to);
	w.add('received_at < ?', filter.before);
	w.addAll(
		'(received_at < ? OR (received_at = ? AND id < ?))',
		filter.cursor && [filter.cursor.receivedAt, filter.cursor.receivedAt, filter.cursor.id],
	);
	return {
		sql: `SELECT ${EVENT_COLUMNS} FROM events ${w.sql} ORDER BY received_at DESC, id DESC LIMIT ?`,
		params: [...w.params, filter.limit],
	};
}

export function deliveriesQuery(filter: DeliveryFilter): Query {
	const w = new Where();
	w.add('status = ?', filter.status);
	w.add('target = ?', filter.target);
	w.add('event_id = ?', filter.eventId);
	w.add('created_at >= ?', filter.from);
	w.add('created_at < ?', filter.to);
	w.add('id < ?', filter.beforeId);
	return {
		sql: `SELECT * FROM deliveries ${w.sql} ORDER BY id DESC LIMIT ?`,
		params: [...w.params, filter.limit],
	};
}

export const GET_DELIVERY = 'SELECT * FROM deliveries WHERE id = ?';

/** Every delivery of these events in one query, by event then newest first. */
export function deliveriesOfEventsQuery(eventIds: readonly string[]): Query {
	return {
		sql: `SELECT * FROM deliveries WHERE event_id IN (${placeholders(eventIds.length)}) ORDER BY event_id, id DESC`,
		params: [...eventIds],
	};
}

/** Every dead delivery, of one target or all, newest first (index deliveries_target or deliveries_status). */
export function deadDeliveriesQuery(target: string | undefined): Query {
	return target === undefined
		? { sql: "SELECT * FROM deliveries WHERE status = 'dead' ORDER BY id DESC", params: [] }
		: {
				sql: "SELECT * FROM deliveries WHERE target = ? AND status = 'dead' ORDER BY id DESC",
				params: [target],
			};
}

export function attemptsQuery(deliveryIds: readonly number[]): Query {
	return {
		sql: `SELECT * FROM attempts WHERE delivery_id IN (${placeholders(deliveryIds.length)}) ORDER BY delivery_id, attempt, id`,
		params: [...deliveryIds],
	};
}

/**
 * Records one attempt, taking the target from the delivery row. Parameters: attempt, started_at,
 * duration_ms, http_status, error, outcome, origin, response, delivery id.
 */
export const INSERT_ATTEMPT = `INSERT INTO attempts (delivery_id, target, attempt, started_at, duration_ms, http_status, error, outcome, origin, response)
	SELECT id, target, ?, ?, ?, ?, ?, ?, ?, ? FROM deliveries WHERE id = ?`;

/** The columns of an attempt after its timing, as both stores insert them. */
export function attemptParams(
	t: AttemptTiming,
	httpStatus: number | null,
	error: string | null,
	outcome: AttemptOutcome,
): Param[] {
	return [
		t.attempt,
		t.startedAt,
		t.durationMs,
		httpStatus,
		error,
		outcome,
		t.origin ?? 'scheduled',
		clipResponse(t.response),
	];
}

/** A new delivery; parameters: event id, target, now (creation, budget start, first due time), manual (0 or 1). */
export const INSERT_DELIVERY = `INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at, manual)
	VALUES (?, ?, 'pending', 0, ?, ?, ?, ?)`;

/** A delivery stored already claimed (NewEvent.lease): event id, target, created, lease until, owner. */
export const INSERT_LEASED_DELIVERY = `INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at, lease_until, lease_owner)
	VALUES (?1, ?2, 'delivering', 1, ?3, ?3, ?4, ?4, ?5)`;

/** Delivered; parameters: now, http status, id. */
export const MARK_DELIVERED = `UPDATE deliveries SET status = 'delivered', delivered_at = ?, last_status = ?, last_error = NULL,
		last_response = NULL, manual = 0, lease_until = NULL, lease_owner = NULL
	WHERE id = ? AND status <> 'delivered'`;

/** Another attempt later; parameters: next attempt, http status, error, response, id, owner. */
export const MARK_RETRY = `UPDATE deliveries SET status = 'pending', next_attempt_at = ?, last_status = ?, last_error = ?,
		last_response = ?, manual = 0, lease_until = NULL, lease_owner = NULL
	WHERE id = ? AND status = 'delivering' AND lease_owner = ?`;

/** Dead; parameters: http status, error, response, id, owner. */
export const MARK_DEAD = `UPDATE deliveries SET status = 'dead', last_status = ?, last_error = ?, last_response = ?,
		manual = 0, lease_until = NULL, lease_owner = NULL
	WHERE id = ? AND status = 'delivering' AND lease_owner = ?`;

/**
 * Dead deliveries back to pending with a fresh budget; parameters: now, now. Attempt numbers go
 * on (attempt_base marks where the new budget starts) and the next attempt is a manual one.
 */
export const REQUEUE_DEAD = `UPDATE deliveries SET status = 'pending', attempt_base = attempts, manual = 1, budget_start = ?,
		next_attempt_at = ?, last_error = NULL, last_response = NULL
	WHERE status = 'dead'`;

export const OLDEST_UNDELIVERED = `SELECT MIN(e.received_at) AS t FROM deliveries d JOIN events e ON e.id = d.event_id
	WHERE d.status IN ('pending', 'delivering', 'dead')`;

/** The bucket index of a time column, for the activity queries (integer in both stores). */
const bucket = (column: string) => `CAST((${column} - ?) / ? AS INTEGER)`;

/** Three grouped counts over [from, to); each query takes (from, bucketMs, from, to). */
export const ACTIVITY_QUERIES = {
	received: `SELECT ${bucket('received_at')} AS b, kind, COUNT(*) AS received FROM events
		WHERE received_at >= ? AND received_at < ? GROUP BY 1, kind`,
	delivered: `SELECT ${bucket('d.delivered_at')} AS b, e.kind, COUNT(*) AS delivered
		FROM deliveries d JOIN events e ON e.id = d.event_id
		WHERE d.delivered_at >= ? AND d.delivered_at < ? GROUP BY 1, e.kind`,
	failed: `SELECT ${bucket('a.started_at')} AS b, e.kind, COUNT(*) AS failed,
			COUNT(DISTINCT CASE WHEN a.outcome = 'dead' THEN a.delivery_id END) AS died
		FROM attempts a JOIN deliveries d ON d.id = a.delivery_id JOIN events e ON e.id = d.event_id
		WHERE a.started_at >= ? AND a.started_at < ? AND a.outcome IN ('retry', 'dead') GROUP BY 1, e.kind`,
} as const;

export function activityParams(from: number, to: number, bucketMs: number): Param[] {
	return [from, bucketMs, from, to];
}

/** Bad activity arguments get a clear error before any query runs. */
export function checkActivityRange(from: number, to: number, bucketMs: number): number {
	for (const [name, v] of [
		['from', from],
		['to', to],
		['bucketMs', bucketMs],
	] as const) {
		if (!Number.isSafeInteger(v))
			throw new RangeError(`activity: ${name} must be an integer (epoch ms), got ${v}`);
	}
	if (bucketMs <= 0) throw new RangeError('activity: bucketMs must be positive');
	if (to <= from) throw new RangeError('activity: from must be before to');
	const buckets = Math.ceil((to - from) / bucketMs);
	if (buckets > MAX_ACTIVITY_BUCKETS)
		throw new RangeError(`activity: ${buckets} buckets asked for; at most ${MAX_ACTIVITY_BUCKETS}`);
	return buckets;
}

/** Every bucket × every kind (`kinds`: the contract's POSTBACK_EVENTS), zeros included, filled from the three grouped queries' rows. */
export function assembleActivity(
	kinds: readonly PostbackEvent[],
	from: number,
	bucketMs: number,
	buckets: number,
	received: Row[],
	delivered: Row[],
	failed: Row[],
): ActivityBucket[] {
	const out: ActivityBucket[] = [];
	const index = new Map<string, ActivityBucket>();
	for (let i = 0; i < buckets; i++) {
		for (const kind of kinds) {
			const b: ActivityBucket = {
				start: from + i * bucketMs,
				kind,
				received: 0,
				delivered: 0,
				failedAttempts: 0,
				died: 0,
			};
			out.push(b);
			index.set(`${i}:${kind}`, b);
		}
	}
	const at = (r: Row) => index.get(`${Number(r.b)}:${String(r.kind)}`);
	for (const r of received) {
		const b = at(r);
		if (b) b.received = Number(r.received);
	}
	for (const r of delivered) {
		const b = at(r);
		if (b) b.delivered = Number(r.delivered);
	}
	for (const r of failed) {
		const b = at(r);
		if (!b) continue;
		b.failedAttempts = Number(r.failed);
		b.died = Number(r.died);
	}
	return out;
}

/**
 * Target health in one query: deliveries per target and state (every target that has a
 * delivery), its attempts since ? and its latest failed attempt (partial index
 * attempts_target_error).
 */
export const TARGET_HEALTH = `SELECT s.target, s.pending, s.delivering, s.dead,
		COALESCE(a.attempts, 0) AS attempts, COALESCE(a.succeeded, 0) AS succeeded,
		(SELECT x.error FROM attempts x WHERE x.target = s.target AND x.error IS NOT NULL
			ORDER BY x.started_at DESC, x.id DESC LIMIT 1) AS last_error,
		(SELECT x.started_at FROM attempts x WHERE x.target = s.target AND x.error IS NOT NULL
			ORDER BY x.started_at DESC, x.id DESC LIMIT 1) AS last_error_at
	FROM (SELECT target,
			SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS pending,
			SUM(CASE WHEN status = 'delivering' THEN 1 ELSE 0 END) AS delivering,
			SUM(CASE WHEN status = 'dead' THEN 1 ELSE 0 END) AS dead
		FROM deliveries GROUP BY target) s
	LEFT JOIN (SELECT target, COUNT(*) AS attempts,
			SUM(CASE WHEN outcome = 'delivered' THEN 1 ELSE 0 END) AS succeeded
		FROM attempts WHERE started_at >= ? GROUP BY target) a ON a.target = s.target
	ORDER BY s.target`;

export function toHealth(r: Row): TargetHealth {
	return {
		target: String(r.target),
		attempts: Number(r.attempts ?? 0),
		succeeded: Number(r.succeeded ?? 0),
		pending: Number(r.pending ?? 0),
		delivering: Number(r.delivering ?? 0),
		dead: Number(r.dead ?? 0),
		lastError: r.last_error === null || r.last_error === undefined ? null : String(r.last_error),
		lastErrorAt:
			r.last_error_at === null || r.last_error_at === undefined ? null : Number(r.last_error_at),
	};
}

/**
 * Events that may be pruned: received before ? and with no delivery still pending or delivering
 * (dead ones go too: the console shows them until then, and an operator requeues them in time);
 * oldest first, at most ? of them.
 */
export const PRUNABLE = `SELECT id FROM events e WHERE received_at < ?
	AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status IN ('pending', 'delivering'))
	ORDER BY received_at LIMIT ?`;

/** Deletes the listed events with their deliveries and attempts, in foreign-key order. */
export function pruneStatements(eventIds: readonly string[]): Query[] {
	const list = placeholders(eventIds.length);
	const params = [...eventIds];
	return [
		{
			sql: `DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id IN (${list}))`,
			params,
		},
		{ sql: `DELETE FROM deliveries WHERE event_id IN (${list})`, params },
		{ sql: `DELETE FROM events WHERE id IN (${list})`, params },
	];
}

/** Payment and payout events received since ? stored without a pair key, at most ? (see fillPairKeys). */
export const EVENTS_WITHOUT_PAIR_KEY = `SELECT id, kind, fields_json FROM events
	WHERE pair_key IS NULL AND kind IN ('payment', 'payout') AND received_at >= ? LIMIT ?`;

export const REVOKE_SESSION = `INSERT INTO console_revocations (session_id, expires_at) VALUES (?, ?)
	ON CONFLICT (session_id) DO NOTHING`;
export const DROP_EXPIRED_REVOCATIONS = 'DELETE FROM console_revocations WHERE expires_at < ?';
export const SESSION_REVOKED = 'SELECT 1 AS revoked FROM console_revocations WHERE session_id = ?';
