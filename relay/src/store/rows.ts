// Row → object mapping shared by both engines (SQLite returns fields as JSON text, PostgreSQL as
// jsonb), and the answers both assemble from their rows (counts, activity, target health).
import type { PostbackEvent, Receipt } from '../contract.ts';
import type {
	ActivityBucket,
	DeliveryCounts,
	TargetHealth,
	DeliveryLease,
	DeliveryResult,
	NewEvent,
	AttemptOutcome,
	ClaimedDelivery,
	Delivery,
	DeliveryAttempt,
	DeliveryStatus,
	EventSource,
	StoredEvent,
} from './types.ts';
import { MAX_RESPONSE_BYTES } from './types.ts';

/** A row as a driver answers it (node:sqlite, pg): column name to value. */
export type Row = Record<string, unknown>;

const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const strOrNull = (v: unknown) => (v === null || v === undefined ? null : String(v));
/**
 * A stored receipt: the store's edge lets only the trigger's words in (store/input.ts). No value
 * import of the contract here: the SQLite worker thread loads this file without it.
 */
const receiptOrNull = (v: unknown) => strOrNull(v) as Receipt | null;

export function toEvent(row: Row): StoredEvent {
	const fields = row.fields_json;
	return {
		id: String(row.id),
		kind: row.kind as PostbackEvent,
		source: (row.source === 'catch-up' ? 'catch-up' : 'postback') as EventSource,
		dedupeKey: strOrNull(row.dedupe_key),
		contentType: String(row.content_type),
		fields: (typeof fields === 'string' ? JSON.parse(fields) : fields) as Record<string, string>,
		receivedAt: Number(row.received_at),
	};
}

export function toDelivery(row: Row): Delivery {
	return {
		id: Number(row.id),
		eventId: String(row.event_id),
		target: String(row.target),
		status: row.status as DeliveryStatus,
		attempts: Number(row.attempts),
		createdAt: Number(row.created_at),
		budgetStart: Number(row.budget_start),
		nextAttemptAt: Number(row.next_attempt_at),
		leaseUntil: numOrNull(row.lease_until),
		lastStatus: numOrNull(row.last_status),
		lastError: strOrNull(row.last_error),
		lastResponse: strOrNull(row.last_response),
		lastReceipt: receiptOrNull(row.last_receipt),
		deliveredAt: numOrNull(row.delivered_at),
		attemptBase: Number(row.attempt_base ?? 0),
		manual: Number(row.manual ?? 0) === 1,
	};
}

/** A delivery stored leased with its event (NewEvent.lease), as a claim would return it. */
export function leasedDelivery(
	event: NewEvent,
	eventId: string,
	id: number,
	target: string,
	lease: DeliveryLease,
): ClaimedDelivery {
	return {
		id,
		eventId,
		target,
		status: 'delivering',
		attempts: 1,
		createdAt: event.receivedAt,
		budgetStart: event.receivedAt,
		nextAttemptAt: lease.until,
		leaseUntil: lease.until,
		lastStatus: null,
		lastError: null,
		lastResponse: null,
		lastReceipt: null,
		deliveredAt: null,
		attemptBase: 0,
		manual: false,
		kind: event.kind,
		contentType: event.contentType,
		body: event.body,
		receivedAt: event.receivedAt,
	};
}

/** A claimed delivery: its row, and what must be sent from its event's row (the same row when joined). */
export function toClaimed(row: Row, event: Row = row): ClaimedDelivery {
	return {
		...toDelivery(row),
		kind: event.kind as PostbackEvent,
		contentType: String(event.content_type),
		body: String(event.body),
		receivedAt: Number(event.received_at),
	};
}

export function toAttempt(row: Row): DeliveryAttempt {
	return {
		id: Number(row.id),
		deliveryId: Number(row.delivery_id),
		attempt: Number(row.attempt),
		startedAt: Number(row.started_at),
		durationMs: Number(row.duration_ms),
		httpStatus: numOrNull(row.http_status),
		error: strOrNull(row.error),
		outcome: row.outcome as AttemptOutcome,
		origin: row.origin === 'manual' ? 'manual' : 'scheduled',
		response: strOrNull(row.response),
		receipt: receiptOrNull(row.receipt),
	};
}

/**
 * Text from outside (a target's answer, an error naming it) as both stores keep it: a NUL, which
 * PostgreSQL refuses in text and SQLite keeps, is written as the six characters `\u0000`; a lone
 * surrogate (no UTF-8 for it) as U+FFFD. Invalid UTF-8 was already decoded to U+FFFD. One
 * function for both stores: the same answer is recorded the same way on each.
 */
export function storableText(text: string): string {
	// A lone surrogate (a high one not followed by a low one, or a low one alone) becomes U+FFFD.
	const whole = text.replace(
		/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
		'\uFFFD',
	);
	return whole.includes('\0') ? whole.replaceAll('\0', '\\u0000') : whole;
}

/** A result as both stores write it: its error and its answer through storableText, the answer clipped. */
export function storableResult(r: DeliveryResult): DeliveryResult {
	const response = clipResponse(r.timing.response);
	const timing = response === (r.timing.response ?? null) ? r.timing : { ...r.timing, response };
	if (r.outcome === 'delivered') return timing === r.timing ? r : { ...r, timing };
	return { ...r, error: storableText(r.error), timing };
}

/** The start of a target's answer as stored: at most MAX_RESPONSE_BYTES of UTF-8, never a split character. */
export function clipResponse(raw: string | null | undefined): string | null {
	if (raw === null || raw === undefined || raw === '') return null;
	const text = storableText(raw);
	const bytes = Buffer.from(text, 'utf8');
	if (bytes.length <= MAX_RESPONSE_BYTES) return text;
	let end = MAX_RESPONSE_BYTES;
	// Step back over continuation bytes (10xxxxxx) so that no character is cut in two.
	while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1;
	return bytes.subarray(0, end).toString('utf8');
}

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

/**
 * The activity range's buckets (bucketMs ≥ 1). Bad activity arguments get a clear error before
 * any query runs: checkActivityRange at the store's edge (input.ts).
 */
export function activityBuckets(from: number, to: number, bucketMs: number): number {
	return Math.ceil((to - from) / bucketMs);
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
