import {
	POSTBACK_RULES,
	amountKey,
	verifyPostback,
	type MoneyBackEvent,
	type PostbackFields,
	type VerifyResult,
} from './postback';
import { decimalToNumber, formatCents, toCents } from './money';
import { canonicalStatus } from './statuses';

/**
 * Refund and chargeback postbacks (beyond the interface document: docs/developer/service.md):
 * telling them from a payment body, verifying them, their dedupe key and the comparison with the
 * service's records. Merchants are told to paste their Result URL into the Refund URL and
 * Chargeback URL fields too, so one URL may receive all three.
 */

/** What a body is by its fields alone: a refund and a chargeback carry the same fields. */
export type PostbackKind = 'payment' | 'payout' | 'moneyBack';

const present = (fields: PostbackFields, name: string) =>
	typeof fields[name] === 'string' && fields[name].trim() !== '';

/**
 * Tells a refund or chargeback body (`PaymentId` and `Id`, no `OutSum`) from a payment body
 * (`OutSum`) and a payout body (`Amount` and `TrsId`). Undefined when the fields say none of
 * these. Only the signature (identifyMoneyBack) tells a refund from a chargeback.
 */
export function postbackKindOf(fields: PostbackFields): PostbackKind | undefined {
	if (present(fields, 'PaymentId') && present(fields, 'Id') && !present(fields, 'OutSum')) {
		return 'moneyBack';
	}
	if (present(fields, 'OutSum')) return 'payment';
	if (present(fields, 'Amount') && present(fields, 'TrsId')) return 'payout';
	return undefined;
}

export type MoneyBackVerifyResult =
	| { ok: true; event: MoneyBackEvent; tokenIndex: number }
	| Exclude<VerifyResult, { ok: true }>;

/**
 * Which of the two a refund-or-chargeback body is, by its signature: both rules are checked
 * (each in constant time, every token), whatever matches, so the time taken tells nothing.
 */
export function identifyMoneyBack(
	fields: PostbackFields,
	tokens: string | readonly string[],
): MoneyBackVerifyResult {
	const refund = verifyPostback('refund', fields, tokens);
	const chargeback = verifyPostback('chargeback', fields, tokens);
	if (refund.ok) return { ...refund, event: 'refund' };
	if (chargeback.ok) return { ...chargeback, event: 'chargeback' };
	// The chargeback's fields are the fewer: when they are there, the refund's reason tells more.
	if (chargeback.reason !== 'missing_field' && refund.reason === 'missing_field') return chargeback;
	return refund.reason === 'missing_field' && chargeback.reason === 'missing_field'
		? chargeback
		: refund;
}

/**
 * The dedupe key of a refund or chargeback postback: the event, the canonical Status, and the
 * signed values without surrounding white space (Id, PaymentId, BillId; an amount as whole cents,
 * a currency in upper case). Every
 * delivery of one postback, in any spelling of its Status or with white space around its Id, has
 * the same key; a forged call with another Status is another event that fails confirmation.
 */
export function moneyBackKey(event: MoneyBackEvent, fields: PostbackFields): string {
	const signed = POSTBACK_RULES[event].signedFields.map((field) =>
		field === 'Amount'
			? amountKey((fields[field] ?? '').trim())
			: field === 'Currency'
				? (fields[field] ?? '').trim().toUpperCase()
				: (fields[field] ?? '').trim(),
	);
	return JSON.stringify([event, canonicalStatus(fields.Status), ...signed]);
}

/**
 * The item fields a workflow gets for a verified refund or chargeback, before confirmation adds
 * the service's records: the signed fields and InvId at the top (with `AmountNumber`), every other
 * field as received under `unverified`. Its status is `refundStatus` or `chargebackStatus`, never
 * `status` or `Status`, and it has no `paid` and no `OutSum`: a workflow written for payments
 * cannot read it as a payment.
 */
export function moneyBackItem(
	event: MoneyBackEvent,
	fields: PostbackFields,
): Record<string, unknown> {
	const keep = [
		...POSTBACK_RULES[event].signedFields,
		'Amount',
		'Currency',
		'InvId',
		'SignatureValue',
	];
	const top: Record<string, unknown> = { event, verified: true };
	const unverified: Record<string, string> = {};
	for (const [name, value] of Object.entries(fields)) {
		if (keep.includes(name)) top[name] = value;
		else Object.defineProperty(unverified, name, { value, enumerable: true, writable: true });
	}
	if (top.InvId === undefined) top.InvId = '';
	for (const field of POSTBACK_RULES[event].amountFields) {
		const n = fields[field] === undefined ? undefined : decimalToNumber(fields[field]);
		if (n !== undefined) top[`${field}Number`] = n;
	}
	top[statusFieldOf(event)] = canonicalStatus(fields.Status);
	return { ...top, unverified };
}

/** The item's top-level status field: `refundStatus` or `chargebackStatus`. */
export function statusFieldOf(event: MoneyBackEvent): 'refundStatus' | 'chargebackStatus' {
	return event === 'refund' ? 'refundStatus' : 'chargebackStatus';
}

/** The item's boolean: `refunded` or `chargedBack`. */
export function doneFieldOf(event: MoneyBackEvent): 'refunded' | 'chargedBack' {
	return event === 'refund' ? 'refunded' : 'chargedBack';
}

/** Statuses of a refund or chargeback after which the money has gone back. */
export const MONEY_BACK_DONE_STATUSES: readonly string[] = ['SUCCESS'];

/** Statuses a refund or chargeback may still leave: a postback may run ahead of them. */
const MONEY_BACK_NOT_FINAL = ['NEW', 'PROCESS'];

export type MoneyBackConfirmation =
	| { ok: true; orderConfirmed: boolean }
	| { ok: false; retry: boolean; reason: string; unknown?: boolean };

function text(value: unknown): string {
	return typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
}

/**
 * The refund or chargeback with this id in a list the service gave (`refunds` or `chargebacks`
 * of `payment/status?refunds=1` / `chargeback=1`), or undefined.
 */
export function findById(list: unknown, id: string): Record<string, unknown> | undefined {
	if (!Array.isArray(list)) return undefined;
	const wanted = id.trim();
	for (const entry of list) {
		if (
			typeof entry === 'object' &&
			entry !== null &&
			text((entry as { id?: unknown }).id) === wanted
		) {
			return entry as Record<string, unknown>;
		}
	}
	return undefined;
}

const refuse = (reason: string): MoneyBackConfirmation => ({ ok: false, retry: false, reason });

/**
 * Compares a refund or chargeback postback with the service's records:
 * - the record's id is the postback's Id; its `payment_id` and `bill_id`, where it shows them, are
 *   the postback's PaymentId and BillId;
 * - the payment (`payment/status?id=<PaymentId>`) is the postback's PaymentId and belongs to the
 *   bill in BillId (a payment without `bill_id` is refused: the bill cannot be checked);
 * - the record's amount and currency, where it shows them, are the postback's Amount and Currency;
 * - the record's status, where the postback has one, is the same in canonical form (NEW or PROCESS
 *   on the service: retry later);
 * - unless the order check is off, the order ID of the payment's bill (`orderId`, read by the
 *   caller from the payment or its bill) is the postback's InvId.
 */
export function confirmMoneyBack(
	event: MoneyBackEvent,
	fields: PostbackFields,
	record: Readonly<Record<string, unknown>>,
	payment: Readonly<Record<string, unknown>>,
	orderId: string | null | undefined,
	requireOrderId: boolean,
): MoneyBackConfirmation {
	const id = (fields.Id ?? '').trim();
	const paymentId = (fields.PaymentId ?? '').trim();
	const billId = (fields.BillId ?? '').trim();
	if (text(record.id) !== id) {
		return refuse(`the service answered ${event} ${text(record.id) || '(none)'} for Id ${id}`);
	}
	if (record.payment_id !== undefined && text(record.payment_id) !== paymentId) {
		return refuse(`${event} ${id} belongs to payment ${text(record.payment_id)}, not ${paymentId}`);
	}
	if (record.bill_id !== undefined && text(record.bill_id) !== billId) {
		return refuse(`${event} ${id} belongs to bill ${text(record.bill_id)}, not ${billId}`);
	}
	if (text(payment.id) !== paymentId) {
		return refuse(`the service answered payment ${text(payment.id) || '(none)'} for ${paymentId}`);
	}
	if (text(payment.bill_id) !== billId) {
		return refuse(
			`payment ${paymentId} belongs to bill ${text(payment.bill_id) || '(none shown)'}, not ${billId}`,
		);
	}
	if (record.amount !== undefined && fields.Amount !== undefined) {
		const shown = toCents(record.amount);
		if (shown === undefined || toCents(fields.Amount) !== shown) {
			const described = shown === undefined ? text(record.amount) : formatCents(shown);
			return refuse(`Amount ${fields.Amount} is not the ${event}'s amount (${described})`);
		}
	}
	if (
		typeof record.currency === 'string' &&
		fields.Currency !== undefined &&
		record.currency.trim().toUpperCase() !== fields.Currency.trim().toUpperCase()
	) {
		return refuse(
			`Currency ${fields.Currency} is not the ${event}'s currency (${record.currency})`,
		);
	}
	const service = canonicalStatus(record.status);
	const sent = canonicalStatus(fields.Status);
	if (sent !== '' && service !== sent) {
		if (MONEY_BACK_NOT_FINAL.includes(service)) {
			return {
				ok: false,
				retry: true,
				reason: `the service still shows the ${event} as ${service}, not ${sent}`,
			};
		}
		return refuse(
			`the service shows the ${event} as ${service || 'no status'}, the postback says ${sent}`,
		);
	}
	if (!requireOrderId) return { ok: true, orderConfirmed: false };
	const invId = (fields.InvId ?? '').trim();
	if (orderId === undefined) {
		return refuse(
			'this service shows no order ID for bills: set Order Check to Bill ID Only and find the order by BillId',
		);
	}
	if ((orderId ?? '') !== invId) {
		return refuse(`InvId ${invId || '(empty)'} is not the order ID of bill ${billId}`);
	}
	return { ok: true, orderConfirmed: true };
}
