// Every statement of the PostgreSQL store but its migrations (schema.ts): the queue (group-commit
// inserts, claims, results, leases, replays, requeues), the reads, and the housekeeping (pruning,
// logouts, the catch-up's marks and lock, readiness, wake-ups). The classes only run them.
import type { PostbackEvent } from '../contract.ts';
import { clipResponse } from '../store/rows.ts';
import { Conditions } from '../store/query.ts';
import type { FieldExpr, Query } from '../store/query.ts';
import type {
	DeliveryFilter,
	DeliveryResult,
	EventFilter,
	InsertResult,
	NewEvent,
} from '../store/types.ts';

/** The n-th placeholder as PostgreSQL spells it. */
const placeholder = (n: number) => `$${n}`;

/**
 * Events in one statement (group commit): parallel arrays, one element per event; targets as a
 * JSON array per event. An event whose signed pair is full (pair_max > 0, see NewEvent.pairLimit)
 * and that is not a duplicate is not inserted and comes back as `limited`; the events inserted come
 * back as `stored`, once per delivery stored leased (NewEvent.lease: delivery_id and target, in
 * target order) or once with no delivery; the others were duplicates (also of each other: the second of two rows with
 * one key conflicts with the first). An event with a twin (NewEvent.twinCheck) is not inserted and
 * comes back as `twins`: the LATERAL ... LIMIT 1 probes the events_trs_id index once per event
 * whatever plan the prepared statement settles on (an EXISTS became a hash join over every event
 * under the generic plan: 650-800 µs of database CPU per postback instead of about 140).
 */
export const INSERT_EVENTS = `WITH input AS (
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::bigint[], $8::jsonb[], $9::text[],
			$10::text[], $11::int[], $12::bigint[], $13::text[], $14::bigint[], $15::text[])
			AS i (id, kind, dedupe_key, content_type, body, fields_json, received_at, targets, source, pair_key, pair_max, pair_since,
				lease_owner, lease_until, twin_trs)
	), twins AS (
		SELECT i.id FROM input i CROSS JOIN LATERAL (
			SELECT 1 FROM events x WHERE (x.fields_json ->> 'TrsId') = i.twin_trs AND x.kind = i.kind
				AND x.dedupe_key IS DISTINCT FROM i.dedupe_key LIMIT 1) AS t
		WHERE i.twin_trs IS NOT NULL
	), limited AS (
		SELECT i.id FROM input i
		WHERE i.pair_max > 0 AND i.pair_key IS NOT NULL AND i.id NOT IN (SELECT id FROM twins)
			AND NOT EXISTS (SELECT 1 FROM events x WHERE x.dedupe_key = i.dedupe_key)
			AND (SELECT COUNT(*) FROM (SELECT 1 FROM events x WHERE x.pair_key = i.pair_key AND x.received_at >= i.pair_since
				LIMIT i.pair_max) AS p) >= i.pair_max
	), e AS (
		INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at, source, pair_key)
		SELECT id, kind, dedupe_key, content_type, body, fields_json, received_at, source, pair_key FROM input
		WHERE id NOT IN (SELECT id FROM limited) AND id NOT IN (SELECT id FROM twins)
		ON CONFLICT (dedupe_key) DO NOTHING RETURNING id
	), d AS (
		INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at, lease_until, lease_owner)
		SELECT i.id, t.target, CASE WHEN i.lease_owner IS NULL THEN 'pending' ELSE 'delivering' END,
			CASE WHEN i.lease_owner IS NULL THEN 0 ELSE 1 END, i.received_at, i.received_at, COALESCE(i.lease_until, i.received_at),
			i.lease_until, i.lease_owner
		FROM e JOIN input i ON i.id = e.id CROSS JOIN LATERAL jsonb_array_elements_text(i.targets) WITH ORDINALITY AS t (target, n)
		ORDER BY i.received_at, i.id, t.n RETURNING id, event_id, target, lease_owner
	)
	SELECT e.id, 'stored' AS outcome, d.id AS delivery_id, d.target FROM e LEFT JOIN d ON d.event_id = e.id AND d.lease_owner IS NOT NULL
	UNION ALL SELECT id, 'limited', NULL::bigint, NULL::text FROM limited
	UNION ALL SELECT id, 'twins', NULL::bigint, NULL::text FROM twins`;

export const DEDUPE_LOOKUP_MANY =
	'SELECT id, dedupe_key FROM events WHERE dedupe_key = ANY($1::text[])';

/** Inserts in flight at once; the calls made meanwhile wait and share the next statement. */
export const INSERTS_IN_FLIGHT = 4;
/** Most events in one statement. */
export const INSERT_BATCH = 200;

export interface QueuedInsert {
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
export const CLAIM = `WITH c AS (
		UPDATE deliveries SET status = 'delivering', attempts = attempts + 1, lease_until = $1, lease_owner = $2, next_attempt_at = $1
		WHERE id IN (
			SELECT id FROM deliveries WHERE status IN ('pending', 'delivering') AND next_attempt_at <= $3
			ORDER BY next_attempt_at LIMIT $4 FOR UPDATE SKIP LOCKED)
		RETURNING *
	)
	SELECT c.*, e.kind, e.content_type, e.body, e.received_at FROM c JOIN events e ON e.id = c.event_id ORDER BY c.id`;

/**
 * Results of attempts, many in one statement: parallel arrays, one element per result (see
 * resultParams). Each applies as its single mark did: delivered whatever the lease (unless already
 * delivered) and its attempt recorded whatever; retry and dead only while the owner still holds
 * the lease, their attempt recorded only then. Attempts are inserted in the results' order. A
 * statement updates a row once: a delivery must not come twice (see runsWithoutRepeats).
 */
/**
 * `d.id = ANY($1)` beside the join on the input: the planner does not know how many rows unnest
 * gives, and without it chose a scan of every delivery (4 ms a batch at 100,000 deliveries);
 * with it, the primary key finds each one.
 */
export const RECORD_RESULTS = `WITH input AS (
		SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::integer[], $7::text[],
			$8::integer[], $9::bigint[], $10::integer[], $11::text[], $12::text[], $13::text[])
			WITH ORDINALITY AS i (id, outcome, owner, now, next_attempt_at, http_status, error, attempt, started_at, duration_ms, origin, response, receipt, n)
	), u AS (
		UPDATE deliveries d SET
			status = CASE i.outcome WHEN 'delivered' THEN 'delivered' WHEN 'retry' THEN 'pending' ELSE 'dead' END,
			delivered_at = CASE WHEN i.outcome = 'delivered' THEN i.now ELSE d.delivered_at END,
			next_attempt_at = CASE WHEN i.outcome = 'retry' THEN i.next_attempt_at ELSE d.next_attempt_at END,
			last_status = i.http_status, last_receipt = i.receipt, last_error = i.error,
			last_response = CASE WHEN i.outcome = 'delivered' THEN NULL ELSE i.response END,
			manual = 0, lease_until = NULL, lease_owner = NULL
		FROM input i
		WHERE d.id = ANY($1::bigint[]) AND d.id = i.id AND CASE WHEN i.outcome = 'delivered' THEN d.status <> 'delivered'
			ELSE d.status = 'delivering' AND d.lease_owner = i.owner END
		RETURNING i.n
	)
	INSERT INTO attempts (delivery_id, target, attempt, started_at, duration_ms, http_status, error, outcome, origin, response, receipt)
	SELECT d.id, d.target, i.attempt, i.started_at, i.duration_ms, i.http_status, i.error, i.outcome, i.origin, i.response, i.receipt
	FROM input i JOIN deliveries d ON d.id = i.id
	WHERE d.id = ANY($1::bigint[]) AND (i.outcome = 'delivered' OR i.n IN (SELECT n FROM u))
	ORDER BY i.n`;

/** RECORD_RESULTS' parameters. */
export function resultParams(results: readonly DeliveryResult[]): unknown[] {
	const column = <T>(f: (r: DeliveryResult) => T) => results.map(f);
	return [
		column((r) => r.id),
		column((r) => r.outcome),
		column((r) => r.owner ?? null),
		column((r) => r.now),
		column((r) => (r.outcome === 'retry' ? r.nextAttemptAt : null)),
		column((r) => r.httpStatus),
		column((r) => (r.outcome === 'delivered' ? null : r.error)),
		column((r) => r.timing.attempt),
		column((r) => r.timing.startedAt),
		column((r) => r.timing.durationMs),
		column((r) => r.timing.origin ?? 'scheduled'),
		column((r) => clipResponse(r.timing.response)),
		column((r) => r.timing.receipt ?? null),
	];
}

export const RELEASE = `UPDATE deliveries SET status = 'pending', attempts = GREATEST(attempts - 1, attempt_base), next_attempt_at = $1,
		lease_until = NULL, lease_owner = NULL
	WHERE id = $2 AND status = 'delivering' AND lease_owner = $3`;

/** A replay's deliveries (a manual first attempt); its events locked, so none pruned meanwhile gets one. */
export const REPLAY = `INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at, manual)
	SELECT e.id, t.target, 'pending', 0, $3, $3, $3, 1
	FROM events e CROSS JOIN unnest($2::text[]) WITH ORDINALITY AS t (target, n)
	WHERE e.id = ANY($1::text[]) AND e.kind = $4 ORDER BY e.received_at, e.id, t.n
	FOR KEY SHARE OF e`;

/**
 * Dead deliveries back to pending with a fresh budget; parameters: now, now. Attempt numbers go
 * on (attempt_base marks where the new budget starts) and the next attempt is a manual one.
 */
export const REQUEUE = `UPDATE deliveries SET status = 'pending', attempt_base = attempts, manual = 1, budget_start = $1,
		next_attempt_at = $2, last_error = NULL, last_response = NULL
	WHERE status = 'dead'`;
/** REQUEUE of the listed deliveries only ($3). */
export const REQUEUE_SOME = `${REQUEUE} AND id = ANY($3::bigint[])`;

/** The advisory lock one catch-up holds at a time (any constant other than the migration lock). */
export const CATCHUP_LOCK = 0x70617963; // 'payc'
export const TRY_CATCHUP_LOCK = 'SELECT pg_try_advisory_lock($1) AS ok';
export const CATCHUP_UNLOCK = 'SELECT pg_advisory_unlock($1)';

/** Readiness: a write the store must commit (parameter: now). */
export const PING =
	'INSERT INTO heartbeat (id, at) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET at = excluded.at';

/** The channel on which instances announce new due work (see PgWaker). */
export const WAKE_CHANNEL = 'paypalych_relay_due';
export const LISTEN = `LISTEN ${WAKE_CHANNEL}`;
/** Parameters: the channel, this instance's payload. */
export const NOTIFY = 'SELECT pg_notify($1, $2)';

// The reads (one query each).

/** The stored field as PostgreSQL reads it (the same expression as the events_trs_id / events_inv_id indexes). */
export const field: FieldExpr = (name) => `(fields_json ->> '${name}')`;

const EVENT_COLUMNS = 'id, kind, source, dedupe_key, content_type, fields_json, received_at';

export const GET_EVENT = `SELECT ${EVENT_COLUMNS} FROM events WHERE id = $1`;
export const GET_DELIVERY = 'SELECT * FROM deliveries WHERE id = $1';

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
		sql: `SELECT ${EVENT_COLUMNS} FROM events ${w.clause} ORDER BY received_at DESC, id DESC LIMIT ${w.next()}`,
		params: [...w.params, filter.limit],
	};
}

export function deliveriesQuery(filter: DeliveryFilter): Query {
	const w = new Conditions(placeholder);
	// A literal: a generic plan of `status = $1` could not use the partial index deliveries_dead.
	if (filter.status === 'dead') w.add("status = 'dead'");
	else w.add('status = ?', filter.status);
	w.add('target = ?', filter.target);
	w.add('event_id = ?', filter.eventId);
	w.add('created_at >= ?', filter.from);
	w.add('created_at < ?', filter.to);
	w.add('id < ?', filter.beforeId);
	return {
		sql: `SELECT * FROM deliveries ${w.clause} ORDER BY id DESC LIMIT ${w.next()}`,
		params: [...w.params, filter.limit],
	};
}

export function eventIdsQuery(from: number, to: number, kind?: PostbackEvent): Query {
	return kind
		? {
				sql: 'SELECT id FROM events WHERE received_at >= $1 AND received_at < $2 AND kind = $3 ORDER BY received_at, id',
				params: [from, to, kind],
			}
		: {
				sql: 'SELECT id FROM events WHERE received_at >= $1 AND received_at < $2 ORDER BY received_at, id',
				params: [from, to],
			};
}

/** Every delivery of these events ($1, a list), by event then newest first. */
export const DELIVERIES_OF_EVENTS =
	'SELECT * FROM deliveries WHERE event_id = ANY($1::text[]) ORDER BY event_id, id DESC';

/** Every dead delivery, newest first; DEAD_OF_TARGET: of one target (both read the partial index deliveries_dead). */
export const DEAD = "SELECT * FROM deliveries WHERE status = 'dead' ORDER BY id DESC";
export const DEAD_OF_TARGET =
	"SELECT * FROM deliveries WHERE target = $1 AND status = 'dead' ORDER BY id DESC";

/** The attempts of these deliveries ($1, a list). */
export const ATTEMPTS =
	'SELECT * FROM attempts WHERE delivery_id = ANY($1::bigint[]) ORDER BY delivery_id, attempt, id';

export const COUNTS = `SELECT status, CASE WHEN attempts > attempt_base THEN 1 ELSE 0 END AS retried, COUNT(*) AS n
	FROM deliveries GROUP BY status, CASE WHEN attempts > attempt_base THEN 1 ELSE 0 END`;

/** The oldest event with a delivery pending or delivering (deliveries_due) or dead (deliveries_dead). */
export const OLDEST_UNDELIVERED = `SELECT MIN(t) AS t FROM (
		SELECT MIN(e.received_at) AS t FROM deliveries d JOIN events e ON e.id = d.event_id
		WHERE d.status IN ('pending', 'delivering')
		UNION ALL SELECT MIN(e.received_at) FROM deliveries d JOIN events e ON e.id = d.event_id
		WHERE d.status = 'dead') AS u`;

/** The bucket index of a time column: $1 from, $2 bucketMs. */
const bucket = (column: string) => `CAST((${column} - $1) / $2 AS INTEGER)`;

/** Three grouped counts over [from, to); each query takes (from, bucketMs, from, to). */
export const ACTIVITY_QUERIES = {
	received: `SELECT ${bucket('received_at')} AS b, kind, COUNT(*) AS received FROM events
		WHERE received_at >= $3 AND received_at < $4 GROUP BY 1, kind`,
	delivered: `SELECT ${bucket('d.delivered_at')} AS b, e.kind, COUNT(*) AS delivered
		FROM deliveries d JOIN events e ON e.id = d.event_id
		WHERE d.delivered_at >= $3 AND d.delivered_at < $4 GROUP BY 1, e.kind`,
	failed: `SELECT ${bucket('a.started_at')} AS b, e.kind, COUNT(*) AS failed,
			COUNT(DISTINCT CASE WHEN a.outcome = 'dead' THEN a.delivery_id END) AS died
		FROM attempts a JOIN deliveries d ON d.id = a.delivery_id JOIN events e ON e.id = d.event_id
		WHERE a.started_at >= $3 AND a.started_at < $4 AND a.outcome IN ('retry', 'dead') GROUP BY 1, e.kind`,
} as const;

/**
 * Target health in one query: deliveries per target and state (every target that has a
 * delivery), its attempts since $1 and its latest failed attempt (partial index
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
		FROM attempts WHERE started_at >= $1 GROUP BY target) a ON a.target = s.target
	ORDER BY s.target`;

export const SESSION_REVOKED = 'SELECT 1 AS revoked FROM console_revocations WHERE session_id = $1';

// The housekeeping.

/**
 * Events that may be pruned, locked for this pass: received before $1 and with no delivery still
 * pending or delivering (dead ones go too: the console shows them until then, and an operator
 * requeues them in time); oldest first, at most $2 of them. SKIP LOCKED: another instance pruning
 * takes others.
 */
export const PRUNABLE_LOCKED = `SELECT id FROM events e WHERE received_at < $1
	AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status IN ('pending', 'delivering'))
	ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED`;

/** Of the locked events ($1), those still prunable with a fresh snapshot. */
export const STILL_PRUNABLE = `SELECT id FROM events e WHERE id = ANY($1::text[])
	AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status IN ('pending', 'delivering'))`;

/**
 * Deletes the listed events ($1) with their deliveries and attempts, in foreign-key order. A
 * refund's or chargeback's key stays as a catch-up mark (at its time): the catch-up reads
 * chargebacks of payments months old, and does not forward again one whose event is pruned.
 */
export const PRUNE = [
	`INSERT INTO catchup_marks (mark, at) SELECT dedupe_key, received_at FROM events
		WHERE id = ANY($1::text[]) AND kind IN ('refund', 'chargeback') AND dedupe_key IS NOT NULL
		ON CONFLICT (mark) DO NOTHING`,
	'DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM deliveries WHERE event_id = ANY($1::text[]))',
	'DELETE FROM deliveries WHERE event_id = ANY($1::text[])',
	'DELETE FROM events WHERE id = ANY($1::text[])',
] as const;

/** Payment and payout events received since $1 stored without a pair key, at most $2 (see fillPairKeys). */
export const EVENTS_WITHOUT_PAIR_KEY = `SELECT id, kind, fields_json FROM events
	WHERE pair_key IS NULL AND kind IN ('payment', 'payout') AND received_at >= $1 LIMIT $2`;
/** Parameters: the events' ids, their keys (parallel lists). */
export const SET_PAIR_KEYS =
	'UPDATE events e SET pair_key = u.k FROM unnest($1::text[], $2::text[]) AS u (id, k) WHERE e.id = u.id';

export const DROP_EXPIRED_REVOCATIONS = 'DELETE FROM console_revocations WHERE expires_at < $1';
export const REVOKE_SESSION = `INSERT INTO console_revocations (session_id, expires_at) VALUES ($1, $2)
	ON CONFLICT (session_id) DO NOTHING`;

/** The marks among $1 that are stored. */
export const CATCHUP_MARKS = 'SELECT mark FROM catchup_marks WHERE mark = ANY($1::text[])';
/**
 * Stores the marks $1 at $2 (kept ones get the new time), deleting those older than $3 but the
 * baseline's (BASELINE_MARKS, `baseline:…`).
 */
export const ADD_CATCHUP_MARKS = `WITH d AS (DELETE FROM catchup_marks WHERE at < $3 AND mark NOT LIKE 'baseline:%')
	INSERT INTO catchup_marks (mark, at) SELECT m, $2 FROM unnest($1::text[]) AS m
	ON CONFLICT (mark) DO UPDATE SET at = excluded.at`;

/**
 * Writes the baseline marks $2 once, at $1 or the oldest trace of a relay on the store if older (an
 * event's receivedAt, a mark's time; LEAST ignores NULLs), and
 * answers them (those another instance wrote in the same instant may be missing: read them again).
 */
export const KEEP_BASELINE = `WITH start AS (
		SELECT LEAST($1::bigint, (SELECT MIN(received_at) FROM events),
			(SELECT MIN(at) FROM catchup_marks WHERE mark NOT LIKE 'baseline:%')) AS at),
	kept AS (INSERT INTO catchup_marks (mark, at) SELECT m, start.at FROM start, unnest($2::text[]) AS m
		ON CONFLICT (mark) DO NOTHING RETURNING mark, at)
	SELECT mark, at FROM kept
	UNION ALL SELECT mark, at FROM catchup_marks
		WHERE mark = ANY($2::text[]) AND mark NOT IN (SELECT mark FROM kept)`;
/** The marks $1 with their times. */
export const MARK_TIMES = 'SELECT mark, at FROM catchup_marks WHERE mark = ANY($1::text[])';
/** A back-fill: the mark $2 moved back to $1 (never forward), the bills' marks forgotten. */
export const BACKFILL_CATCHUP = `WITH moved AS (UPDATE catchup_marks SET at = LEAST(at, $1::bigint)
		WHERE mark = $2 RETURNING mark)
	DELETE FROM catchup_marks WHERE mark LIKE 'bill:%'`;

/** Remembers the MULTI links $1 read at $2 (known ones get the new time). */
export const REMEMBER_LINKS = `INSERT INTO catchup_links (bill_id, read_at)
	SELECT DISTINCT b, $2::bigint FROM unnest($1::text[]) AS b
	ON CONFLICT (bill_id) DO UPDATE SET read_at = excluded.read_at`;
/** The remembered links least recently read first, but those in $1, at most $2. */
export const LINKS_TO_READ = `SELECT bill_id FROM catchup_links WHERE bill_id <> ALL($1::text[])
	ORDER BY read_at, bill_id LIMIT $2`;
/** The remembered links $1 read at $2 (unknown ones are not added). */
export const MARK_LINKS_READ =
	'UPDATE catchup_links SET read_at = $2 WHERE bill_id = ANY($1::text[])';

/**
 * The statements of the hot paths run as named prepared statements: parsed and planned once per
 * connection instead of on every call (the insert and claim CTEs cost more to plan than to run).
 */
export const PREPARED = new Map(
	[INSERT_EVENTS, DEDUPE_LOOKUP_MANY, CLAIM, RECORD_RESULTS, RELEASE, PING].map((sql, i) => [
		sql,
		`relay_${i}`,
	]),
);

/** The newest migration a database holds (42P01: none yet, the table is not there). */
export const SCHEMA_VERSION = 'SELECT MAX(version) AS v FROM relay_schema_migrations';
