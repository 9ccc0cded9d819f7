import type { PostbackFields } from './body';
import { textOf, type MoneyBackEvent } from './kinds';
import { POSTBACK_RULES, verifyPostback, type VerifyResult } from './postback';
import { decimalToNumber, formatCents, toCents } from './money';
import { canonicalStatus } from './statuses';

/**
 * Money going back to the payer, refunds and chargebacks (docs/developer/service.md, "Refunds and
 * chargebacks"): telling their bodies from a payment's, verifying them, their one identity, the
 * service's records of them and the comparison with those records. The trigger, the relay's
 * intake and its catch-up all go through this file: "the same refund" is defined here once.
 * Merchants are told to paste their Result URL into the Refund URL and Chargeback URL fields too,
 * so one URL may receive all three.
 */

/**
 * The identity of a refund or chargeback: its kind, the service's Id of it and its canonical
 * Status. Every delivery of one postback (a retry, a replay with white space around the Id or
 * another spelling of the Status), the catch-up's event rebuilt from the service's record and the
 * trigger's memory all meet on this one key.
 *
 * Why the Status is part of it, for chargebacks too: the service posts a refund or chargeback when
 * it reaches a final status, and a later final status of the same record (a failed refund made
 * good, a chargeback reversed) is news a workflow must get, as a payment's TrsId + Status is. A
 * postback that lies about its Status (the Status is not signed) is another event, which the
 * service's record refuses wherever the record is read; a postback without a Status is refused
 * before it is verified (POSTBACK_RULES: Status is required and non-empty). The Id is signed (with
 * the payment, the bill and a refund's amount), so no one without the token makes another
 * record's key.
 */
export function moneyBackKey(kind: MoneyBackEvent, id: unknown, status: unknown): string {
	return JSON.stringify([kind, textOf(id), canonicalStatus(status)]);
}

/** The identity of a received refund or chargeback postback (see moneyBackKey). */
export function moneyBackKeyOf(kind: MoneyBackEvent, fields: PostbackFields): string {
	return moneyBackKey(kind, fields.Id, fields.Status);
}

/**
 * Statuses a refund or chargeback record may still leave (the service's records: NEW, PROCESS,
 * SUCCESS, FAIL). A postback may run ahead of them; the catch-up leaves such a record for later.
 */
export const MONEY_BACK_NOT_FINAL: readonly string[] = ['NEW', 'PROCESS'];

/** Whether a record's status is final: shown, and not one it may still leave. */
export function isMoneyBackFinal(status: unknown): boolean {
	const canonical = canonicalStatus(status);
	return canonical !== '' && !MONEY_BACK_NOT_FINAL.includes(canonical);
}

/** Statuses of a refund or chargeback after which the money has gone back. */
export const MONEY_BACK_DONE_STATUSES: readonly string[] = ['SUCCESS'];

type Json = Readonly<Record<string, unknown>>;

/**
 * The list a payment's record gives of its refunds (`payment/status?refunds=1`: `refunds`) or of
 * its chargebacks (`payment/status?chargeback=1`: `chargeback`, a list under a singular key, in
 * the service's reference; `chargebacks` is read too). undefined: the record shows no such list.
 */
export function moneyBackListOf(kind: MoneyBackEvent, payment: Json): Json[] | undefined {
	const names = kind === 'refund' ? ['refunds'] : ['chargeback', 'chargebacks'];
	let found: Json[] | undefined;
	for (const name of names) {
		const list = payment[name];
		if (!Array.isArray(list)) continue;
		found = [
			...(found ?? []),
			...list.filter((e): e is Json => typeof e === 'object' && e !== null),
		];
	}
	return found;
}

/**
 * The payment a refund or chargeback record belongs to: `payment_id`, or `entity_id` where
 * `entity_type` is `payment` or not shown (the service's refund records name their payment so).
 * '' when the record names none.
 */
export function paymentIdOfMoneyBack(record: Json): string {
	const direct = textOf(record.payment_id);
	if (direct !== '') return direct;
	const type = textOf(record.entity_type).toLowerCase();
	return type === '' || type === 'payment' ? textOf(record.entity_id) : '';
}

/**
 * A refund or chargeback record as the package outputs it: the service's fields as given, with
 * `payment_id` added (from `entity_id`, paymentIdOfMoneyBack) where the record names its payment
 * only as its entity, as the service's refund records do. A workflow reads `payment_id` whichever
 * spelling the service used; `entity_type` and `entity_id` stay.
 */
export function withPaymentId<T extends Json>(record: T): T {
	if (record.payment_id !== undefined && record.payment_id !== null) return record;
	const paymentId = paymentIdOfMoneyBack(record);
	return paymentId === '' ? record : { ...record, payment_id: paymentId };
}

/**
 * What a body is by its fields alone: a refund and a chargeback carry the same fields; a P2P deal
 * (a deal of the service's P2P product, posted to the Result URL and signed like a payout) is
 * neither a payment nor a payout of the shop.
 */
export type PostbackKind = 'payment' | 'payout' | 'moneyBack' | 'p2pDeal';

const present = (fields: PostbackFields, name: string) =>
	typeof fields[name] === 'string' && fields[name].trim() !== '';

/** A P2P deal's lists, as a form body names them: `Payment[0][id]`, `Payout[1][amount]`. */
const DEAL_LIST_FIELD = /^(?:Payment|Payout)(?:\[|$)/;

/** Fields of a payout postback that a P2P deal's is not seen with. */
const PAYOUT_OWN_FIELDS = ['IsAuto', 'AccountType', 'AccountNumber', 'CommissionApplyType'];

/**
 * Tells a refund or chargeback body (`PaymentId` and `Id`, no `OutSum`) from a payment body
 * (`OutSum`), a P2P deal (`Amount` and `TrsId`, no `OutSum`, with its lists of payments and
 * payouts, or with an `InvId` and none of a payout's own fields) and a payout body (`Amount` and
 * `TrsId`). Undefined when the fields say none of these. Only the signature (identifyMoneyBack)
 * tells a refund from a chargeback. The P2P deal's field set is the public record's; that a
 * deal without lists always carries InvId and a payout never does is a guess, written down in
 * docs/developer/service.md.
 */
export function postbackKindOf(fields: PostbackFields): PostbackKind | undefined {
	if (present(fields, 'PaymentId') && present(fields, 'Id') && !present(fields, 'OutSum')) {
		return 'moneyBack';
	}
	if (present(fields, 'OutSum')) return 'payment';
	if (!present(fields, 'Amount') || !present(fields, 'TrsId')) return undefined;
	const lists = Object.keys(fields).some((name) => DEAL_LIST_FIELD.test(name));
	const dealOnly =
		present(fields, 'InvId') && !PAYOUT_OWN_FIELDS.some((name) => fields[name] !== undefined);
	return lists || dealOnly ? 'p2pDeal' : 'payout';
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

export type MoneyBackConfirmation =
	| { ok: true; orderConfirmed: boolean }
	| { ok: false; retry: boolean; reason: string; unknown?: boolean };

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
			textOf((entry as { id?: unknown }).id) === wanted
		) {
			return entry as Record<string, unknown>;
		}
	}
	return undefined;
}

const refuse = (reason: string): MoneyBackConfirmation => ({ ok: false, retry: false, reason });

/**
 * Compares a refund or chargeback postback with the service's records:
 * - the record's id is the postback's Id; its payment (`payment_id`, or `entity_id`:
 *   paymentIdOfMoneyBack) and `bill_id`, where it shows them, are the postback's PaymentId and
 *   BillId;
 * - the payment (`payment/status?id=<PaymentId>`) is the postback's PaymentId and belongs to the
 *   bill in BillId (a payment without `bill_id` is refused: the bill cannot be checked);
 * - the record's amount and currency, where both show them, are the postback's Amount and
 *   Currency (a chargeback's record and postback show none: nothing is compared, nothing guessed);
 * - the record's status is the postback's Status in canonical form (NEW or PROCESS on the service:
 *   retry later; a postback without a Status is refused: it is half of the identity);
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
	if (textOf(record.id) !== id) {
		return refuse(`the service answered ${event} ${textOf(record.id) || '(none)'} for Id ${id}`);
	}
	const recordPayment = paymentIdOfMoneyBack(record);
	if (recordPayment !== '' && recordPayment !== paymentId) {
		return refuse(`${event} ${id} belongs to payment ${recordPayment}, not ${paymentId}`);
	}
	if (record.bill_id !== undefined && textOf(record.bill_id) !== billId) {
		return refuse(`${event} ${id} belongs to bill ${textOf(record.bill_id)}, not ${billId}`);
	}
	if (textOf(payment.id) !== paymentId) {
		return refuse(
			`the service answered payment ${textOf(payment.id) || '(none)'} for ${paymentId}`,
		);
	}
	if (textOf(payment.bill_id) !== billId) {
		return refuse(
			`payment ${paymentId} belongs to bill ${textOf(payment.bill_id) || '(none shown)'}, not ${billId}`,
		);
	}
	if (record.amount !== undefined && record.amount !== null && fields.Amount !== undefined) {
		const shown = toCents(record.amount);
		if (shown === undefined || toCents(fields.Amount) !== shown) {
			const described = shown === undefined ? textOf(record.amount) : formatCents(shown);
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
	if (sent === '') return refuse(`the ${event} postback has no Status`);
	if (service !== sent) {
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
