/**
 * The kinds of call the service (or the customer's browser) makes to the merchant, one list for
 * the nodes and the relay alike:
 * - the four of the interface document (`CallEvent`): the payment postback (Result URL), the
 *   payout postback (payout webhook) and the Success and Fail redirects;
 * - money going back to the payer (`MoneyBackEvent`): the refund and chargeback postbacks the
 *   service posts to the shop's Refund URL and Chargeback URL (docs/developer/service.md).
 * `PostbackEvent` is every kind; each has a signature rule (POSTBACK_RULES).
 */
export type CallEvent = 'payment' | 'payout' | 'success' | 'fail';
export const CALL_EVENTS: readonly CallEvent[] = ['payment', 'payout', 'success', 'fail'];

export type MoneyBackEvent = 'refund' | 'chargeback';
export const MONEY_BACK_EVENTS: readonly MoneyBackEvent[] = ['refund', 'chargeback'];

export type PostbackEvent = CallEvent | MoneyBackEvent;
export const POSTBACK_EVENTS: readonly PostbackEvent[] = [...CALL_EVENTS, ...MONEY_BACK_EVENTS];

/** The redirects: the customer's browser coming back, signed like a payment, proving nothing. */
export type RedirectEvent = Extract<CallEvent, 'success' | 'fail'>;

export function isCallEvent(value: unknown): value is CallEvent {
	return typeof value === 'string' && (CALL_EVENTS as readonly string[]).includes(value);
}

export function isMoneyBackEvent(value: unknown): value is MoneyBackEvent {
	return typeof value === 'string' && (MONEY_BACK_EVENTS as readonly string[]).includes(value);
}

export function isPostbackEvent(value: unknown): value is PostbackEvent {
	return typeof value === 'string' && (POSTBACK_EVENTS as readonly string[]).includes(value);
}

export function isRedirectEvent(value: unknown): value is RedirectEvent {
	return value === 'success' || value === 'fail';
}

/**
 * A record field as text: a string without surrounding white space, a number as written, anything
 * else empty. The one way the contract reads ids and statuses out of the service's JSON.
 */
export function textOf(value: unknown): string {
	return typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
}

/**
 * Whether a failed call of the service is worth another try: nothing whole answered (no HTTP
 * status: a timeout, a dropped connection), the service failed (5xx) or throttled (429). The
 * service's own answers (a record it does not know, a refused token) are not. Each caller maps
 * its error to the status first; this is the one rule.
 */
export function isTransientStatus(status: number | null | undefined): boolean {
	return status === null || status === undefined || status === 429 || status >= 500;
}
