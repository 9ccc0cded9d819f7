// The PostgreSQL store's statements of the queue: group-commit inserts, claims, results, leases,
// replays and requeues (the reads are in pg-reads.ts; SQL shared with SQLite is in sql.ts).
import { clipResponse } from './rows.ts';
import { HEARTBEAT, REQUEUE_DEAD, numbered } from './sql.ts';
import type { DeliveryResult, InsertResult, NewEvent } from './types.ts';

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
			$8::integer[], $9::bigint[], $10::integer[], $11::text[], $12::text[])
			WITH ORDINALITY AS i (id, outcome, owner, now, next_attempt_at, http_status, error, attempt, started_at, duration_ms, origin, response, n)
	), u AS (
		UPDATE deliveries d SET
			status = CASE i.outcome WHEN 'delivered' THEN 'delivered' WHEN 'retry' THEN 'pending' ELSE 'dead' END,
			delivered_at = CASE WHEN i.outcome = 'delivered' THEN i.now ELSE d.delivered_at END,
			next_attempt_at = CASE WHEN i.outcome = 'retry' THEN i.next_attempt_at ELSE d.next_attempt_at END,
			last_status = i.http_status, last_error = i.error,
			last_response = CASE WHEN i.outcome = 'delivered' THEN NULL ELSE i.response END,
			manual = 0, lease_until = NULL, lease_owner = NULL
		FROM input i
		WHERE d.id = ANY($1::bigint[]) AND d.id = i.id AND CASE WHEN i.outcome = 'delivered' THEN d.status <> 'delivered'
			ELSE d.status = 'delivering' AND d.lease_owner = i.owner END
		RETURNING i.n
	)
	INSERT INTO attempts (delivery_id, target, attempt, started_at, duration_ms, http_status, error, outcome, origin, response)
	SELECT d.id, d.target, i.attempt, i.started_at, i.duration_ms, i.http_status, i.error, i.outcome, i.origin, i.response
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
	];
}

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
	[INSERT_EVENTS, DEDUPE_LOOKUP_MANY, CLAIM, RECORD_RESULTS, RELEASE, PING].map((sql, i) => [
		sql,
		`relay_${i}`,
	]),
);
