import {
	PAYMENT_POSTBACK_STATUSES,
	canonicalStatus,
	confirmPayment,
	confirmPayout,
	orderIdOf,
	billOfUnnamedOrder,
} from './contract.ts';
import type { PostbackFields } from './contract.ts';
import { ApiError } from './service-api.ts';
import type { ApiRecord, ServiceApi } from './service-api.ts';

/**
 * The look-ups of incoming postbacks: what the service's own record says of a postback whose
 * signature cannot tell. A payment's `SignatureValue` covers only `OutSum` and `InvId` and is shown
 * to the customer in the success/fail redirect; `TrsId`, `Status` and every other field are not
 * signed. So:
 * - a payout postback is stored only when the service knows its TrsId as a payout
 *   (`payout/status`): a payment's pair verifies as a payout postback with `Amount=OutSum`,
 *   `TrsId=InvId` (one MD5 layout), and the service is the only one who can tell them apart;
 * - a payment postback over the pair limit (limits.ts) is looked up (`payment/status`) instead of
 *   refused: a popular MULTI link gives every sale one InvId and amount, so one signed pair;
 * - a postback under a stored postback's TrsId and status with another signed pair is looked up
 *   (fidelity.ts), with its order too for a payment;
 * - a payment postback the store holds already is looked up (checkRepeatedPayment): identical
 *   postbacks are one payment's retries only when TrsId is a payment id.
 * Where `payment/status` answers `payment_not_found`, TrsId may be the bill id (some deployments
 * send it): `bill/status` and every page of `bill/payments` answer, and the intake claims one
 * payment of that bill not stored yet for the postback (chooseStoredBillPayment in fidelity.ts,
 * chooseBillPayment in nodes/shared, as the trigger does).
 * Each look-up is one call through the look-ups' client (service-api.ts, `lookUpApi`: no retry,
 * a record's size of answer, RELAY_DELIVERY_TIMEOUT_MS), made with the token that verified the
 * signature; the intake bounds how many there are (LookUpBudget).
 */

/**
 * What a look-up found. `bill`: the postback's TrsId is no payment the service knows but a bill
 * (some deployments send the bill id as TrsId): its record and every payment of it, for the
 * intake to choose the one payment this postback is (chooseStoredBillPayment in fidelity.ts).
 */
export type LookUpVerdict =
	| { ok: true; bill?: BillPayments; noBill?: true }
	| { ok: false; code: 403 | 503; reason: string };

/** A bill the postback's TrsId names, and all its payments as the service lists them. */
export interface BillPayments {
	bill: ApiRecord;
	payments: ApiRecord[];
}

type Refused = Extract<LookUpVerdict, { ok: false }>;

/** Rows asked for per page of `bill/payments` in a look-up (the look-ups' client reads 64 KiB). */
export const LOOK_UP_PAYMENTS_PER_PAGE = 50;

/**
 * Most pages of `bill/payments` one look-up reads (LOOK_UP_PAYMENTS_PER_PAGE rows each): a MULTI
 * link with more payments is not confirmed by a look-up (503, the service retries; the catch-up
 * reads every page of it).
 */
export const LOOK_UP_PAYMENT_PAGES = 10;

/**
 * One `payment/status`, `payout/status` or `bill/status` call for `id`: the record. Not known (4xx
 * other than 401/403/408/429): refused. The service or the network failing, or the relay's own
 * token refused: 503, so the service sends the postback again later.
 */
async function readRecord(
	api: ServiceApi,
	what: 'payment' | 'payout' | 'bill',
	id: string,
): Promise<{ record: ApiRecord } | Refused> {
	try {
		const record =
			what === 'payment'
				? await api.paymentStatus(id)
				: what === 'payout'
					? await api.payoutStatus(id)
					: await api.billStatus(id);
		return { record };
	} catch (error) {
		return failed(error, what, id);
	}
}

/** A look-up call that failed: a record the service does not know (403), or retry later (503). */
export function failed(error: unknown, what: string, id: string): Refused {
	const status = error instanceof ApiError ? error.status : null;
	if (status !== null && status >= 400 && status < 500 && ![401, 403, 408, 429].includes(status))
		return {
			ok: false,
			code: 403,
			reason: `the service does not know ${what} ${id.slice(0, 64)}`,
		};
	return { ok: false, code: 503, reason: (error as Error).message.slice(0, 200) };
}

/** Whether a failed call is the service's answer that it does not know the record (`key`). */
function notFound(error: unknown, key: 'payment_not_found'): boolean {
	return error instanceof ApiError && error.key === `api:error.${key}`;
}

/**
 * The bill `id` names and every page of its payments, when `payment/status` did not know the id:
 * neither a payment nor a bill of that id (`bill/status` answers 4xx) is refused (403) as an
 * unknown payment; a bill whose payments cannot be read to the end (the service failing, or more
 * than LOOK_UP_PAYMENT_PAGES pages): 503, the service sends the postback again later.
 */
async function readBill(api: ServiceApi, id: string): Promise<LookUpVerdict> {
	let bill: ApiRecord;
	try {
		bill = await api.billStatus(id);
	} catch (error) {
		const refused = failed(error, 'bill', id);
		if (refused.code === 503) return refused;
		return {
			ok: false,
			code: 403,
			reason: `the service does not know payment ${id.slice(0, 64)} (nor a bill of that id)`,
		};
	}
	try {
		const read = await api.billPaymentPages(id, LOOK_UP_PAYMENTS_PER_PAGE, LOOK_UP_PAYMENT_PAGES);
		if (!read.complete)
			return {
				ok: false,
				code: 503,
				reason: `the payments of bill ${id.slice(0, 64)} were not read to the end (${read.pages} pages, the look-ups' cap ${LOOK_UP_PAYMENT_PAGES}): the catch-up reads them all`,
			};
		return { ok: true, bill: { bill, payments: read.rows } };
	} catch (error) {
		return { ok: false, code: 503, reason: (error as Error).message.slice(0, 200) };
	}
}

/**
 * The postback's record (`payment/status` or `payout/status` for its TrsId), handed to `judge`.
 * A payment the service does not know (`payment_not_found`) may be a bill's id: then the bill
 * and its payments are the answer (readBill), not `judge`'s.
 */
async function lookUp(
	api: ServiceApi,
	kind: 'payment' | 'payout',
	fields: PostbackFields,
	judge: (record: ApiRecord, trsId: string) => LookUpVerdict | Promise<LookUpVerdict>,
): Promise<LookUpVerdict> {
	const trsId = (fields.TrsId ?? '').trim();
	if (trsId === '') return { ok: false, code: 403, reason: 'TrsId is empty' };
	if (kind === 'payout') {
		const read = await readRecord(api, kind, trsId);
		return 'record' in read ? await judge(read.record, trsId) : read;
	}
	let record: ApiRecord;
	try {
		record = await api.paymentStatus(trsId);
	} catch (error) {
		return notFound(error, 'payment_not_found')
			? await readBill(api, trsId)
			: failed(error, 'payment', trsId);
	}
	// A payment the service knows: its TrsId names no bill (remembered, see LookUpBudget).
	const verdict = await judge(record, trsId);
	return verdict.ok ? { ...verdict, noBill: true } : verdict;
}

/**
 * Asks the service whether it knows the payout postback's TrsId (`payout/status?id=`): stored
 * only when the record's id is the TrsId.
 */
export function checkPayout(api: ServiceApi, fields: PostbackFields): Promise<LookUpVerdict> {
	return lookUp(api, 'payout', fields, (record, trsId) => {
		const id = record.id;
		if (id !== undefined && id !== null && String(id) === trsId) return { ok: true };
		return { ok: false, code: 403, reason: 'the service answered another payout' };
	});
}

/**
 * Asks the service whether its payout record confirms the payout postback, compared the way the
 * trigger does (confirmPayout in nodes/shared: the id, the status, and Amount as the payout's
 * amount or amount + commission); not final yet: 503, the service retries. Used when another
 * payout postback with the same TrsId and status and another signed pair is stored (fidelity.ts):
 * a payout's signed pair is (Amount, TrsId), so only the amount tells the two apart, which
 * checkPayout (the id alone) does not look at.
 */
export function checkPayoutRecord(api: ServiceApi, fields: PostbackFields): Promise<LookUpVerdict> {
	return lookUp(api, 'payout', fields, (record) => {
		const confirmation = confirmPayout(fields, record);
		if (confirmation.ok) return { ok: true };
		return { ok: false, code: confirmation.retry ? 503 : 403, reason: confirmation.reason };
	});
}

/**
 * Asks the service whether it knows a final payment with the postback's TrsId, status and amount
 * (`payment/status?id=`), compared the way the trigger does (confirmPayment in nodes/shared: OutSum
 * is the payment's `amount`, `amount_received`, `amount_received + commission`, or `amount +
 * commission` when the postback's Commission is the record's own; CurrencyIn; and InvId against
 * the order ID when the payment record names one). A payment not yet final (NEW, PROCESS): 503, the service retries. Used for a payment
 * postback over RELAY_PAIR_LIMIT (a popular MULTI link: one InvId and amount for every sale).
 */
export function checkPayment(api: ServiceApi, fields: PostbackFields): Promise<LookUpVerdict> {
	return lookUp(api, 'payment', fields, (record) =>
		judgePayment(fields, record, orderIdOf(record)),
	);
}

/**
 * checkPayment, and the order too: when the payment record names no order ID, its bill's
 * (`bill/status`, one call more) where the service shows one. Used when another payment postback
 * with the same TrsId and status and another signed pair is stored (fidelity.ts): a signature
 * borrowed from another order of the same amount agrees on everything but InvId. Where the
 * service shows no order ID at all, the amount is all there is to compare.
 */
export function checkPaymentOrder(api: ServiceApi, fields: PostbackFields): Promise<LookUpVerdict> {
	return lookUp(api, 'payment', fields, async (record) => {
		let orderId = orderIdOf(record);
		const billId = billOfUnnamedOrder(record);
		if (billId !== undefined) {
			const bill = await readRecord(api, 'bill', billId);
			if (!('record' in bill)) return bill;
			orderId = orderIdOf(bill.record);
		}
		return judgePayment(fields, record, orderId);
	});
}

/**
 * A payment postback the store holds already (the same dedupe key): the service's retry of it,
 * unless its TrsId names a bill, whose MULTI link's payments post byte-identical postbacks. Asks
 * `payment/status`: a payment the service knows, or an id it knows neither as a payment nor as a
 * bill, leaves the duplicate as it is (`noBill`: remembered, no further call for that TrsId); a
 * bill answers its payments (the intake tells whether one is left to store); the service failing:
 * 503 (the intake then leaves the duplicate as it is too).
 */
export async function checkRepeatedPayment(
	api: ServiceApi,
	fields: PostbackFields,
): Promise<LookUpVerdict> {
	const verdict = await lookUp(api, 'payment', fields, () => ({ ok: true }));
	if (verdict.ok && verdict.bill) return verdict;
	return verdict.ok || verdict.code === 403 ? { ok: true, noBill: true } : verdict;
}

/** Whether a final payment record (and its order ID, when known) confirms the postback. */
function judgePayment(
	fields: PostbackFields,
	record: ApiRecord,
	orderId: string | null | undefined,
): LookUpVerdict {
	const status = canonicalStatus(record.status);
	const confirmation = confirmPayment(fields, record, orderId, false);
	if (!confirmation.ok) {
		return { ok: false, code: confirmation.retry ? 503 : 403, reason: confirmation.reason };
	}
	if (!(PAYMENT_POSTBACK_STATUSES as readonly string[]).includes(status)) {
		return { ok: false, code: 503, reason: `the service shows the payment as ${status}` };
	}
	return { ok: true };
}
