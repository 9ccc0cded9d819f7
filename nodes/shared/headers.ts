/**
 * HTTP headers between the relay and the PayPalych Trigger. One definition for both sides, so the
 * relay never waits for a header the trigger spells another way. Header names are
 * case-insensitive on the wire; these are the lower-case forms Node.js uses for received headers.
 */

/**
 * What the trigger did with a call (one of RECEIPTS), on every answer it writes. A relay counts a
 * 2xx as delivered only with it: n8n answers 200 to every request while it is starting up, before
 * any trigger has seen the call.
 */
export const RECEIPT_HEADER = 'x-paypalych-receipt';

/**
 * Every value the trigger writes in RECEIPT_HEADER. `retry` comes with a 503 (the service could
 * not confirm the postback now), `rejected` with a 4xx. The relay keeps the receipt with each
 * delivery attempt and knows only these words: anything else is no receipt.
 */
export const RECEIPTS = ['accepted', 'duplicate', 'ignored', 'rejected', 'retry'] as const;

/** What the trigger did with a call: one of RECEIPTS. */
export type Receipt = (typeof RECEIPTS)[number];

/**
 * The receipt a header value names, or null: exactly one of RECEIPTS, as the trigger writes it. A
 * repeated header, another spelling, a longer text or anything else a target answers is none: a
 * target that is not the trigger gives no receipt, and none is ever guessed.
 */
export function receiptOf(value: unknown): Receipt | null {
	if (typeof value !== 'string' || value.length > 16) return null;
	return (RECEIPTS as readonly string[]).includes(value) ? (value as Receipt) : null;
}

/** The event the relay forwarded a call as (`payment`, `payout`, `success`, `fail`). */
export const EVENT_HEADER = 'x-paypalych-event';

/** The relay's id of the stored event: the same on every attempt and replay. */
export const EVENT_ID_HEADER = 'x-paypalych-event-id';

/** The relay's idempotency key of a forwarded call (the event id). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** The relay's attempt number of a forwarded call, from 1. */
export const DELIVERY_ATTEMPT_HEADER = 'x-paypalych-delivery-attempt';

/**
 * When the relay first received the call, epoch milliseconds, the same on every attempt and
 * replay. The trigger stops asking for retries of a postback the service still does not know
 * once this is UNKNOWN_POSTBACK_RETRY_MS old (it answers 422, and the relay dead-letters it).
 */
export const RECEIVED_AT_HEADER = 'x-paypalych-received-at';
