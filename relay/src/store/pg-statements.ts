// The PostgreSQL store's statements of the queue: group-commit inserts, claims, results, leases,
// replays and requeues (the reads are in pg-reads.ts; SQL shared with SQLite is in sql.ts).
import { HEARTBEAT, REQUEUE_DEAD, numbered } from './sql.ts';
import type { InsertResult, NewEvent } from './types.ts';

/**
 * Events in one statement (group commit): parallel arrays, one element per event; targets as a
 * JSON array per event. An event whose signed pair is full (pair_max > 0, see NewEvent.pairLimit)
 * and that is not a duplicate is not inserted and comes back as `limited`; the events inserted come
 * back as `stored`, once per delivery stored leased (NewEvent.lease: delivery_id and target, in
 * target order) or once with no delivery; the others were duplicates (also of each other: the second of two rows with
 * one key conflicts with the first).
 */
export const INSERT_EVENTS = `WITH input AS (
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::bigint[], $8::jsonb[], $9::text[],
			$10::text[], $11::int[], $12::bigint[], $13::text[], $14::bigint[])
			AS i (id, kind, dedupe_key, content_type, body, fields_json, received_at, targets, source, pair_key, pair_max, pair_since,
				lease_owner, lease_until)
	), limited AS (
		SELECT i.id FROM input i
		WHERE i.pair_max > 0 AND i.pair_key IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM events x WHERE x.dedupe_key = i.dedupe_key)
			AND (SELECT COUNT(*) FROM (SELECT 1 FROM events x WHERE x.pair_key = i.pair_key AND x.received_at >= i.pair_since
				LIMIT i.pair_max) AS p) >= i.pair_max
	), e AS (
		INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at, source, pair_key)
		SELECT id, kind, dedupe_key, content_type, body, fields_json, received_at, source, pair_key FROM input
		WHERE id NOT IN (SELECT id FROM limited)
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
	UNION ALL SELECT id, 'limited', NULL::bigint, NULL::text FROM limited`;

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

/** Parameters 1–8 of every result: the attempt's columns in attemptParams' order. */
const INSERT_ATTEMPT_FROM = `INSERT INTO attempts (delivery_id, target, attempt, started_at, duration_ms, http_status, error, outcome, origin, response)
	SELECT id, target, $1, $2, $3, $4, $5, $6, $7, $8`;

/** …then now ($9) and id ($10). */
export const MARK_DELIVERED = `WITH u AS (
		UPDATE deliveries SET status = 'delivered', delivered_at = $9, last_status = $4, last_error = NULL, last_response = NULL,
			manual = 0, lease_until = NULL, lease_owner = NULL
		WHERE id = $10 AND status <> 'delivered'
	)
	${INSERT_ATTEMPT_FROM} FROM deliveries WHERE id = $10`;

/** …then the next attempt's time ($9), id ($10) and owner ($11). */
export const MARK_RETRY = `WITH u AS (
		UPDATE deliveries SET status = 'pending', next_attempt_at = $9, last_status = $4, last_error = $5, last_response = $8,
			manual = 0, lease_until = NULL, lease_owner = NULL
		WHERE id = $10 AND status = 'delivering' AND lease_owner = $11 RETURNING id, target
	)
	${INSERT_ATTEMPT_FROM} FROM u`;

/** …then id ($9) and owner ($10). */
export const MARK_DEAD = `WITH u AS (
		UPDATE deliveries SET status = 'dead', last_status = $4, last_error = $5, last_response = $8,
			manual = 0, lease_until = NULL, lease_owner = NULL
		WHERE id = $9 AND status = 'delivering' AND lease_owner = $10 RETURNING id, target
	)
	${INSERT_ATTEMPT_FROM} FROM u`;

export const RELEASE = `UPDATE deliveries SET status = 'pending', attempts = GREATEST(attempts - 1, attempt_base), next_attempt_at = $1,
		lease_until = NULL, lease_owner = NULL
	WHERE id = $2 AND status = 'delivering' AND lease_owner = $3`;

/** A replay's deliveries: their first attempt is a manual one. */
export const REPLAY = `INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at, manual)
	SELECT e.id, t.target, 'pending', 0, $3, $3, $3, 1
	FROM events e CROSS JOIN unnest($2::text[]) WITH ORDINALITY AS t (target, n)
	WHERE e.id = ANY($1::text[]) AND e.kind = $4 ORDER BY e.received_at, e.id, t.n`;

export const REQUEUE = numbered(REQUEUE_DEAD);

/** The advisory lock one catch-up holds at a time (any constant other than the migration lock). */
export const CATCHUP_LOCK = 0x70617963; // 'payc'
export const PING = numbered(HEARTBEAT);

/**
 * The statements of the hot paths run as named prepared statements: parsed and planned once per
 * connection instead of on every call (the insert and claim CTEs cost more to plan than to run).
 */
export const PREPARED = new Map(
	[
		INSERT_EVENTS,
		DEDUPE_LOOKUP_MANY,
		CLAIM,
		MARK_DELIVERED,
		MARK_RETRY,
		MARK_DEAD,
		RELEASE,
		PING,
	].map((sql, i) => [sql, `relay_${i}`]),
);
