import { formatCents, receivedCents, toCents } from './money';
import { PAYOUT_POSTBACK_CONFIRMED_BY, canonicalStatus } from './statuses';
import type { PostbackFields } from './body';

/**
 * The order ID of a bill (or of a payment that names it) as the service tells it: null when the
 * record has none (`null`, absent value or ''), undefined when the record does not tell it (no
 * `order_id` key: the interface document lists none on bills, the live service adds it) or tells
 * something that is no order ID. The trigger and the relay's catch-up both read it this way.
 */
export function orderIdOf(record: Readonly<Record<string, unknown>>): string | null | undefined {
	if (!Object.prototype.hasOwnProperty.call(record, 'order_id')) return undefined;
	const value = record.order_id;
	if (value === null || value === undefined || value === '') return null;
	return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

/**
 * Where a payment's order ID is to be read when the payment record does not name one: its bill
 * (`bill/status`), whose id this answers as text. Undefined when the record names the order ID
 * (or says it has none) or gives no bill_id; the trigger and the relay both ask the bill then.
 */
export function billOfUnnamedOrder(payment: Readonly<Record<string, unknown>>): string | undefined {
	if (orderIdOf(payment) !== undefined) return undefined;
	const billId = payment.bill_id;
	return typeof billId === 'string' || typeof billId === 'number' ? String(billId) : undefined;
}

/**
 * Whether the service's own record confirms a postback. A valid signature proves only that the
 * service once produced `OutSum` and `InvId` (or `Amount` and `TrsId`): the success and fail
 * redirects carry the same payment signature in the customer's browser, and `Status`, `TrsId`
 * and the other fields are not signed. The service's answer to `payment/status` (or
 * `payout/status`) for the postback's TrsId is the proof; these rules compare the two.
 */
export type Confirmation =
	/**
	 * `orderConfirmed`: whether InvId was compared with the bill's order ID (see confirmPayment).
	 * `amount`: the service's amount the signed amount matched, as `0.00` text (payments).
	 */
	| { ok: true; orderConfirmed?: boolean; amount?: string }
	/** The record contradicts the postback: it must never start a workflow. */
	| { ok: false; retry: false; reason: string }
	/** The record may not be final yet (NEW, PROCESS, MODERATING): ask the sender to retry later. */
	| { ok: false; retry: true; reason: string };

/**
 * How long after the relay first received a postback (its X-PayPalych-Received-At header) the
 * trigger keeps asking for retries while the service answers that it does not know the payment or
 * payout. After it the trigger refuses the postback (422) and the relay dead-letters it: a TrsId
 * the service has not heard of 15 minutes on is a forgery (or, rarely, an operator's case in the
 * console), not a postback that ran ahead of the service.
 */
export const UNKNOWN_POSTBACK_RETRY_MS = 15 * 60_000;

/** Statuses after which a payment or payout can still change: a postback may run ahead of them. */
const NOT_FINAL = ['NEW', 'PROCESS', 'MODERATING'];

/**
 * Why a payment is refused when the service shows no order ID for its bill (the interface
 * document gives bills none): the trigger cannot bind InvId, and this names the fix. Kept short:
 * the trigger's answer carries it, and the relay keeps the start of that answer as the reason.
 */
export const NO_ORDER_ID_REFUSAL =
	'this service shows no order ID for bills: set Order Check to Bill ID Only and find the order by bill_id';

function text(value: unknown): string {
	return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

/** A plus b, when both are known. */
function sum(a: number | undefined, b: number | undefined): number | undefined {
	return a !== undefined && b !== undefined ? a + b : undefined;
}

/** The record's id and status against the postback's TrsId and Status. */
function compareRecord(
	kind: 'payment' | 'payout',
	fields: PostbackFields,
	record: Record<string, unknown>,
): Confirmation | undefined {
	const trsId = (fields.TrsId ?? '').trim();
	if (text(record.id) !== trsId) {
		return {
			ok: false,
			retry: false,
			reason: `the service answered ${kind} ${text(record.id) || '(none)'} for TrsId ${trsId}`,
		};
	}
	return compareStatus(kind, record.status, fields.Status);
}

/**
 * Whether the record's status confirms the postback's: the same status, or for a payout a record
 * of the same family (PAYOUT_POSTBACK_CONFIRMED_BY: a FAIL postback and an ERROR record).
 */
function sameStatus(kind: 'payment' | 'payout', service: string, postback: string): boolean {
	if (service === postback) return true;
	return kind === 'payout' && (PAYOUT_POSTBACK_CONFIRMED_BY[postback] ?? []).includes(service);
}

/** The signed amount field against the record's possible amounts (whole cents; unknown ones left out). */
function compareAmount(
	kind: 'payment' | 'payout',
	field: string,
	sent: string | undefined,
	amounts: Array<number | undefined>,
): Confirmation | undefined {
	const cents = toCents(sent);
	const candidates = amounts.filter((value): value is number => value !== undefined);
	if (cents !== undefined && candidates.includes(cents)) return undefined;
	return amountMismatch(kind, field, sent, candidates);
}

function amountMismatch(
	kind: 'payment' | 'payout',
	field: string,
	sent: string | undefined,
	candidates: number[],
): Confirmation {
	const shown = candidates.map(formatCents).join(' / ') || 'no amount';
	return {
		ok: false,
		retry: false,
		reason: `${field} ${sent ?? ''} is not the ${kind}'s amount (${shown})`,
	};
}

function compareStatus(
	kind: 'payment' | 'payout',
	recorded: unknown,
	sent: string | undefined,
): Confirmation | undefined {
	const service = canonicalStatus(recorded);
	const postback = canonicalStatus(sent);
	if (sameStatus(kind, service, postback)) return undefined;
	if (NOT_FINAL.includes(service)) {
		return {
			ok: false,
			retry: true,
			reason: `the service still shows the ${kind} as ${service}, not ${postback}`,
		};
	}
	return {
		ok: false,
		retry: false,
		reason: `the service shows the ${kind} as ${service || 'no status'}, the postback says ${postback}`,
	};
}

/**
 * Compares a payment postback with the service's payment (`payment/status?id=<TrsId>`) and the
 * order ID of the bill it belongs to.
 * - the payment's id is the postback's TrsId;
 * - the statuses are the same in canonical form (NEW or PROCESS on the service: retry later);
 * - OutSum is one of the amounts the service shows for the payment: `amount` (what the payer
 *   paid, commission included when the payer pays it), what it credited (`amount_received`, or
 *   `account_amount` in newer answers, see receivedCents), that plus `commission`, or `amount + commission` when the postback's `Commission` is the very commission
 *   the service shows (the service facts: OutSum includes the commission when the payer pays it;
 *   a service may show an `amount` without it, with its `commission` beside).
 *   The postback's own `Commission` never counts: it is not signed, and a caller holding another
 *   order's redirect signature (OutSum 1000.00) could otherwise claim a 100.00 payment with
 *   Commission 900.00. A service that shows neither an amount with the payer's commission nor the
 *   commission itself cannot confirm such an OutSum: the postback is refused, naming it;
 * - the bill's order ID is the postback's InvId (an absent InvId is an empty one, a bill created
 *   without order_id has none). `billOrderId` undefined means the service returned no order ID
 *   field at all (the interface document gives bills none; the live service is seen to add it):
 *   the InvId cannot be checked, so the postback is refused with NO_ORDER_ID_REFUSAL, unless
 *   `requireOrderId` is false, when the payment and its bill are confirmed and `orderConfirmed`
 *   is false (the workflow must then find the order by the payment's bill_id, never by InvId);
 * - CurrencyIn is the payment's currency_in where both are given.
 */
export function confirmPayment(
	fields: PostbackFields,
	payment: Record<string, unknown>,
	billOrderId: string | null | undefined,
	requireOrderId = true,
): Confirmation {
	const received = receivedCents(payment);
	const amount = toCents(payment.amount);
	const commission = toCents(payment.commission);
	const mismatch =
		compareRecord('payment', fields, payment) ??
		compareAmount('payment', 'OutSum', fields.OutSum, [
			amount,
			received,
			sum(received, commission),
			// The payer's commission on top of an amount that leaves it out: only when the postback
			// names the very commission the service shows.
			toCents(fields.Commission) === commission ? sum(amount, commission) : undefined,
		]);
	if (mismatch) return mismatch;
	// OutSum is one of the service's own amounts: the confirmed amount is the service's.
	const confirmedAmount = formatCents(toCents(fields.OutSum) as number);
	const currency = text(payment.currency_in);
	if (
		currency !== '' &&
		fields.CurrencyIn !== undefined &&
		fields.CurrencyIn.trim().toUpperCase() !== currency.toUpperCase()
	) {
		return {
			ok: false,
			retry: false,
			reason: `CurrencyIn ${fields.CurrencyIn} is not the payment's currency ${currency}`,
		};
	}
	if (billOrderId === undefined) {
		if (!requireOrderId) return { ok: true, orderConfirmed: false, amount: confirmedAmount };
		return {
			ok: false,
			retry: false,
			reason: `${NO_ORDER_ID_REFUSAL} (bill ${text(payment.bill_id)})`,
		};
	}
	const invId = fields.InvId ?? '';
	if ((billOrderId ?? '') !== invId) {
		return {
			ok: false,
			retry: false,
			reason: `InvId ${JSON.stringify(invId)} is not the order ID of bill ${text(payment.bill_id)} (${JSON.stringify(billOrderId ?? '')})`,
		};
	}
	return { ok: true, orderConfirmed: true, amount: confirmedAmount };
}

/**
 * Compares a payout postback with the service's payout (`payout/status?id=<TrsId>`): the id, the
 * status in canonical form (NEW, MODERATING or PROCESS on the service: retry later; a FAIL
 * postback is confirmed by a FAIL or an ERROR record, see PAYOUT_POSTBACK_CONFIRMED_BY), and
 * Amount, which includes the commission (the payout's `amount + commission`, or `amount` alone).
 */
export function confirmPayout(
	fields: PostbackFields,
	payout: Record<string, unknown>,
): Confirmation {
	const amount = toCents(payout.amount);
	const mismatch =
		compareRecord('payout', fields, payout) ??
		compareAmount('payout', 'Amount', fields.Amount, [
			amount,
			sum(amount, toCents(payout.commission)),
		]);
	if (mismatch) return mismatch;
	return { ok: true };
}

/**
 * What a payment postback whose TrsId names a bill (some deployments send the bill id; a MULTI
 * link's payments then post identical fields) confirms: one payment of that bill.
 * - `claim`: a payment of the bill that confirms the postback (confirmPayment, with the bill's
 *   order ID) and was not delivered yet: this postback is that payment's one event;
 * - `delivered`: payments of the bill confirm it, and every one was delivered already: a retry;
 * - otherwise a refusal or a retry, as confirmPayment says for the payments listed (no payment
 *   yet, or one still NEW or PROCESS: retry later, before `delivered`, since the postback may be
 *   that payment's, run ahead of it).
 * Payments are taken in the order the service lists them. `isDelivered(paymentId, status)` asks
 * the caller's memory (the trigger's dedupe, the relay's store).
 */
export type BillPaymentChoice =
	| {
			ok: true;
			payment: Record<string, unknown>;
			orderConfirmed: boolean;
			orderId: string | null | undefined;
			amount?: string;
	  }
	| { ok: false; delivered: true; retry: false; reason: string }
	| Extract<Confirmation, { ok: false }>;

export function chooseBillPayment(
	fields: PostbackFields,
	bill: Record<string, unknown>,
	payments: ReadonlyArray<Record<string, unknown>>,
	isDelivered: (paymentId: string, status: string) => boolean,
	requireOrderId = true,
): BillPaymentChoice {
	const trsId = (fields.TrsId ?? '').trim();
	const billId = text(bill.id);
	if (billId !== trsId) {
		return {
			ok: false,
			retry: false,
			reason: `the service answered bill ${billId || '(none)'} for TrsId ${trsId}`,
		};
	}
	const billOrderId = orderIdOf(bill);
	let retry: string | undefined;
	let refusal: string | undefined;
	let delivered = 0;
	for (const payment of payments) {
		const paymentId = text(payment.id);
		if (paymentId === '' || (payment.bill_id !== undefined && text(payment.bill_id) !== billId)) {
			continue;
		}
		const orderId = billOrderId !== undefined ? billOrderId : orderIdOf(payment);
		const verdict = confirmPayment(
			{ ...fields, TrsId: paymentId },
			payment,
			orderId,
			requireOrderId,
		);
		if (!verdict.ok) {
			if (verdict.retry) retry ??= verdict.reason;
			else refusal ??= verdict.reason;
			continue;
		}
		if (isDelivered(paymentId, canonicalStatus(payment.status))) {
			delivered++;
			continue;
		}
		return {
			ok: true,
			payment,
			orderConfirmed: verdict.orderConfirmed === true,
			orderId,
			amount: verdict.amount,
		};
	}
	// A payment still NEW or PROCESS may be the one this postback ran ahead of: retry later rather
	// than call it a duplicate.
	if (retry !== undefined) return { ok: false, retry: true, reason: `bill ${billId}: ${retry}` };
	if (delivered > 0) {
		return {
			ok: false,
			delivered: true,
			retry: false,
			reason: `every payment of bill ${billId} this postback names (${delivered}) was delivered already`,
		};
	}
	if (payments.length === 0) {
		return { ok: false, retry: true, reason: `bill ${billId} shows no payment yet` };
	}
	return {
		ok: false,
		retry: false,
		reason: `no payment of bill ${billId} confirms the postback: ${refusal ?? 'none matches'}`,
	};
}
