// Every statement of the SQLite store but its migrations (schema.ts): the queue, the reads and the
// housekeeping, with `?` placeholders. The writer thread loads this module from source: no value
// import of the contract (Node cannot load it there).
import type { PostbackEvent } from '../contract.ts';
import { Conditions } from '../store/query.ts';
import type { FieldExpr, Query } from '../store/query.ts';
import type { DeliveryFilter, EventFilter } from '../store/types.ts';

const placeholder = () => '?';
const list = (n: number) => Array.from({ length: n }, placeholder).join(', ');

// The queue.

/**
 * An event; parameters: id, kind, source, dedupe key, content type, body, fields (JSON), received
 * at, pair key. A duplicate (same dedupe key) changes nothing.
 */
export const INSERT_EVENT = `INSERT INTO events (id, kind, source, dedupe_key, content_type, body, fields_json, received_at, pair_key)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dedupe_key) DO NOTHING`;

export const DEDUPE_LOOKUP = 'SELECT id FROM events WHERE dedupe_key = ?';

/** A twin (NewEvent.twinCheck): the events_trs_id index, then kind and another dedupe key. */
export const TWIN_LOOKUP = `SELECT 1 FROM events WHERE json_extract(fields_json, '$.TrsId') = ? AND kind = ?
	AND dedupe_key IS NOT ? LIMIT 1`;

/** Up to `max` events of one signed pair since a time (events_pair index). */
export const PAIR_COUNT = 'SELECT 1 FROM events WHERE pair_key = ? AND received_at >= ? LIMIT ?';

/** A new delivery; parameters: event id, target, now (creation, budget start, first due time), manual (0 or 1). */
export const INSERT_DELIVERY = `INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at, manual)
	VALUES (?, ?, 'pending', 0, ?, ?, ?, ?)`;

/** A delivery stored already claimed (NewEvent.lease): event id, target, created, lease until, owner. */
export const INSERT_LEASED_DELIVERY = `INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at, lease_until, lease_owner)
	VALUES (?1, ?2, 'delivering', 1, ?3, ?3, ?4, ?4, ?5)`;

/**
 * The claim: (lease until, owner, lease until, now, limit). The due deliveries come from the
 * partial index `deliveries_due`, in `next_attempt_at` order, so a claim reads `limit` index
 * entries however large the backlog is. Without INDEXED BY, SQLite (no ANALYZE statistics) picked
 * `deliveries_status` (schemas 1-9) and sorted every pending row on every claim: 6 ms per claim
 * at 30,000 pending deliveries, 0.03 ms with the index.
 */
export const SQLITE_CLAIM = `UPDATE deliveries SET status = 'delivering', attempts = attempts + 1, lease_until = ?, lease_owner = ?,
	next_attempt_at = ?
	WHERE id IN (SELECT id FROM deliveries INDEXED BY deliveries_due
		WHERE status IN ('pending', 'delivering') AND next_attempt_at <= ?
		ORDER BY next_attempt_at LIMIT ?)
	RETURNING *`;

/** What a claimed delivery sends, from its event; parameter: event id. */
export const CLAIMED_EVENT =
	'SELECT kind, content_type, body, received_at FROM events WHERE id = ?';

/**
 * Records one attempt, taking the target from the delivery row. Parameters: attempt, started_at,
 * duration_ms, http_status, error, outcome, origin, response, receipt, delivery id.
 */
export const INSERT_ATTEMPT = `INSERT INTO attempts (delivery_id, target, attempt, started_at, duration_ms, http_status, error, outcome, origin, response, receipt)
	SELECT id, target, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM deliveries WHERE id = ?`;

/** Delivered; parameters: now, http status, receipt, id. */
export const MARK_DELIVERED = `UPDATE deliveries SET status = 'delivered', delivered_at = ?, last_status = ?, last_receipt = ?,
		last_error = NULL, last_response = NULL, manual = 0, lease_until = NULL, lease_owner = NULL
	WHERE id = ? AND status <> 'delivered'`;

/** Another attempt later; parameters: next attempt, http status, receipt, error, response, id, owner. */
export const MARK_RETRY = `UPDATE deliveries SET status = 'pending', next_attempt_at = ?, last_status = ?, last_receipt = ?,
		last_error = ?, last_response = ?, manual = 0, lease_until = NULL, lease_owner = NULL
	WHERE id = ? AND status = 'delivering' AND lease_owner = ?`;

/** Dead; parameters: http status, receipt, error, response, id, owner. */
export const MARK_DEAD = `UPDATE deliveries SET status = 'dead', last_status = ?, last_receipt = ?, last_error = ?,
		last_response = ?, manual = 0, lease_until = NULL, lease_owner = NULL
	WHERE id = ? AND status = 'delivering' AND lease_owner = ?`;

/** A claimed delivery given back without counting an attempt; parameters: now, id, owner. */
export const RELEASE = `UPDATE deliveries SET status = 'pending', attempts = MAX(attempts - 1, attempt_base), next_attempt_at = ?,
		lease_until = NULL, lease_owner = NULL
	WHERE id = ? AND status = 'delivering' AND lease_owner = ?`;

/** An event's kind (a replay's targets); parameter: event id. */
export const EVENT_KIND = 'SELECT kind FROM events WHERE id = ?';

/**
 * Dead deliveries back to pending with a fresh budget; parameters: now, now. Attempt numbers go
 * on (attempt_base marks where the new budget starts) and the next attempt is a manual one.
 */
export const REQUEUE_DEAD = `UPDATE deliveries SET status = 'pending', attempt_base = attempts, manual = 1, budget_start = ?,
		next_attempt_at = ?, last_error = NULL, last_response = NULL
	WHERE status = 'dead'`;
/** REQUEUE_DEAD of one delivery (its id, a third parameter). */
export const REQUEUE_ONE = `${REQUEUE_DEAD} AND id = ?`;

// The reads.

/** The stored field as SQLite reads it (the same expression as the events_trs_id / events_inv_id indexes). */
export const field: FieldExpr = (name) => `json_extract(fields_json, '$.${name}')`;

const EVENT_COLUMNS = 'id, kind, source, dedupe_key, content_type, fields_json, received_at';

export const GET_EVENT = `SELECT ${EVENT_COLUMNS} FROM events WHERE id = ?`;
export const GET_DELIVERY = 'SELECT * FROM deliveries WHERE id = ?';

/** Newest first, paged on (received_at, id). */
export function eventsQuery(filter: EventFilter): Query {
	const w = new Conditions(placeholder);
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
	const c = filter.cursor;
	w.add('(received_at < ? OR (received_at = ? AND id < ?))', c?.receivedAt, c?.receivedAt, c?.id);
	return {
		sql: `SELECT ${EVENT_COLUMNS} FROM events ${w.clause} ORDER BY received_at DESC, id DESC LIMIT ?`,
		params: [...w.params, filter.limit],
	};
}

export function deliveriesQuery(filter: DeliveryFilter): Query {
	const w = new Conditions(placeholder);
	// The dead as a literal: the partial index deliveries_dead serves `status = 'dead'`, not a
	// parameter (the alert monitor reads this list every 15 s; no other status has an index).
	if (filter.status === 'dead') w.add("status = 'dead'");
	else w.add('status = ?', filter.status);
	w.add('target = ?', filter.target);
	w.add('event_id = ?', filter.eventId);
	w.add('created_at >= ?', filter.from);
	w.add('created_at < ?', filter.to);
	w.add('id < ?', filter.beforeId);
	// SQLite has no statistics and would rather walk the whole table backwards by id.
	const dead = filter.status === 'dead' ? ' INDEXED BY deliveries_dead' : '';
	return {
		sql: `SELECT * FROM deliveries${dead} ${w.clause} ORDER BY id DESC LIMIT ?`,
		params: [...w.params, filter.limit],
	};
}

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

/** Every delivery of these events in one query, by event then newest first. */
export function deliveriesOfEventsQuery(eventIds: readonly string[]): Query {
	return {
		sql: `SELECT * FROM deliveries WHERE event_id IN (${list(eventIds.length)}) ORDER BY event_id, id DESC`,
		params: [...eventIds],
	};
}

/** Every dead delivery, newest first; DEAD_OF_TARGET: of one target (both read the partial index deliveries_dead). */
export const DEAD =
	"SELECT * FROM deliveries INDEXED BY deliveries_dead WHERE status = 'dead' ORDER BY id DESC";
export const DEAD_OF_TARGET =
	"SELECT * FROM deliveries INDEXED BY deliveries_dead WHERE target = ? AND status = 'dead' ORDER BY id DESC";

export function attemptsQuery(deliveryIds: readonly number[]): Query {
	return {
		sql: `SELECT * FROM attempts WHERE delivery_id IN (${list(deliveryIds.length)}) ORDER BY delivery_id, attempt, id`,
		params: [...deliveryIds],
	};
}

export const COUNTS = `SELECT status, CASE WHEN attempts > attempt_base THEN 1 ELSE 0 END AS retried, COUNT(*) AS n
	FROM deliveries GROUP BY status, CASE WHEN attempts > attempt_base THEN 1 ELSE 0 END`;

/**
 * The oldest event with a delivery pending, delivering or dead: the first two through the partial
 * index deliveries_due, the dead through deliveries_dead (no index holds all three).
 */
export const OLDEST_UNDELIVERED = `SELECT MIN(t) AS t FROM (
		SELECT MIN(e.received_at) AS t FROM deliveries d INDEXED BY deliveries_due JOIN events e ON e.id = d.event_id
		WHERE d.status IN ('pending', 'delivering')
		UNION ALL SELECT MIN(e.received_at) FROM deliveries d INDEXED BY deliveries_dead JOIN events e ON e.id = d.event_id
		WHERE d.status = 'dead') AS u`;

/** The bucket index of a time column (an integer). */
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

export const SESSION_REVOKED = 'SELECT 1 AS revoked FROM console_revocations WHERE session_id = ?';

// The housekeeping.

/**
 * Events that may be pruned: received before ? and with no delivery still pending or delivering
 * (dead ones go too: the console shows them until then, and an operator requeues them in time);
 * oldest first, at most ? of them.
 */
export const PRUNABLE = `SELECT id FROM events e WHERE received_at < ?
	AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status IN ('pending', 'delivering'))
	ORDER BY received_at LIMIT ?`;

/**
 * Deletes the listed events with their deliveries and attempts, in foreign-key order. A refund's
 * or chargeback's key stays as a catch-up mark (at its time): the catch-up reads chargebacks of
 * payments months old, and does not forward again one whose event is pruned.
 */
export function pruneStatements(eventIds: readonly string[]): Query[] {
	const ids = list(eventIds.length);
	const params = [...eventIds];
	return [
		{
			sql: `INSERT INTO catchup_marks (mark, at) SELECT dedupe_key, received_at FROM events
				WHERE id IN (${ids}) AND kind IN ('refund', 'chargeback') AND dedupe_key IS NOT NULL
				ON CONFLICT (mark) DO NOTHING`,
			params,
		},
		{
			sql: `DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id IN (${ids}))`,
			params,
		},
		{ sql: `DELETE FROM deliveries WHERE event_id IN (${ids})`, params },
		{ sql: `DELETE FROM events WHERE id IN (${ids})`, params },
	];
}

/** Payment and payout events received since ? stored without a pair key, at most ? (see fillPairKeys). */
export const EVENTS_WITHOUT_PAIR_KEY = `SELECT id, kind, fields_json FROM events
	WHERE pair_key IS NULL AND kind IN ('payment', 'payout') AND received_at >= ? LIMIT ?`;
/** Parameters: the key, the event's id. */
export const SET_PAIR_KEY = 'UPDATE events SET pair_key = ? WHERE id = ?';

export const DROP_EXPIRED_REVOCATIONS = 'DELETE FROM console_revocations WHERE expires_at < ?';
export const REVOKE_SESSION = `INSERT INTO console_revocations (session_id, expires_at) VALUES (?, ?)
	ON CONFLICT (session_id) DO NOTHING`;

export const CATCHUP_MARK = 'SELECT mark FROM catchup_marks WHERE mark = ?';
/** Parameters: mark, now (a kept mark gets the new time). */
export const ADD_CATCHUP_MARK =
	'INSERT INTO catchup_marks (mark, at) VALUES (?, ?) ON CONFLICT (mark) DO UPDATE SET at = excluded.at';
/** Marks older than the parameter; the baseline's (BASELINE_MARKS, `baseline:…`) are kept. */
export const DROP_OLD_CATCHUP_MARKS =
	"DELETE FROM catchup_marks WHERE at < ? AND mark NOT LIKE 'baseline:%'";
/** Writes a baseline mark once. Parameters: the mark, its time. */
export const KEEP_BASELINE_MARK =
	'INSERT INTO catchup_marks (mark, at) VALUES (?, ?) ON CONFLICT (mark) DO NOTHING';
/** Moves a baseline mark back (never forward). Parameters: the time, the mark. */
export const MOVE_BASELINE_MARK_BACK = 'UPDATE catchup_marks SET at = MIN(at, ?) WHERE mark = ?';
/** The time of one mark. */
export const MARK_TIME = 'SELECT at FROM catchup_marks WHERE mark = ?';
/** Forgets which bills the catch-up read in a final state (a back-fill reads them again). */
export const FORGET_BILL_MARKS = "DELETE FROM catchup_marks WHERE mark LIKE 'bill:%'";
/** The oldest trace of a relay on this store (an event's receivedAt, a mark's time), or null. */
export const OLDEST_TRACE = `SELECT MIN(at) AS at FROM (SELECT MIN(received_at) AS at FROM events
	UNION ALL SELECT MIN(at) FROM catchup_marks WHERE mark NOT LIKE 'baseline:%')`;

/** Readiness: a write the store must commit (parameter: now). */
export const HEARTBEAT =
	'INSERT INTO heartbeat (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at';

/** The schema version a file holds (its migrations are numbered by user_version). */
export const SCHEMA_VERSION = 'PRAGMA user_version';

/** Remembers a MULTI link read at $2 (a known one gets the new time). */
export const REMEMBER_LINK = `INSERT INTO catchup_links (bill_id, read_at) VALUES (?, ?)
	ON CONFLICT (bill_id) DO UPDATE SET read_at = excluded.read_at`;
/** The remembered links least recently read first, but those in the JSON list $1, at most $2. */
export const LINKS_TO_READ = `SELECT bill_id FROM catchup_links
	WHERE bill_id NOT IN (SELECT value FROM json_each(?)) ORDER BY read_at, bill_id LIMIT ?`;
/** A remembered link read at $1 (an unknown one is not added). */
export const MARK_LINK_READ = 'UPDATE catchup_links SET read_at = ? WHERE bill_id = ?';
