import { canonicalStatus, confirmMoneyBack, findById } from './contract.ts';
import type { MoneyBackEvent, PostbackFields } from './contract.ts';
import { failed } from './look-ups.ts';
import type { LookUpVerdict } from './look-ups.ts';
import { ApiError } from './service-api.ts';
import type { ApiRecord, ServiceApi } from './service-api.ts';

/**
 * Refund and chargeback postbacks in the relay (beyond the interface document:
 * docs/developer/service.md): their dedupe key and their look-ups with the service. The intake runs
 * them as it runs a payment's (intake.ts, its kind table); the routes tell them from a payment body
 * by their fields and signature (routes/postbacks.ts).
 */

/**
 * The dedupe key of a refund (its Id and canonical Status) or a chargeback (its Id): every
 * delivery of one postback, in any spelling of its Status or with white space around its Id, and
 * the catch-up's event rebuilt from the service's record, are one event. The signature covers
 * the Id (with the payment, the bill and a refund's amount), so no one without the token makes
 * another refund's key; a Status is not signed, and a postback with another Status is another
 * event that the look-up refuses unless the service shows it.
 */
export function moneyBackDedupeKey(kind: MoneyBackEvent, fields: PostbackFields): string {
	const id = (fields.Id ?? '').trim();
	return kind === 'refund'
		? JSON.stringify([kind, id, canonicalStatus(fields.Status)])
		: JSON.stringify([kind, id]);
}

/** Nothing whole answered, or the service failed or throttled: worth a retry, not a fallback. */
const transient = (error: unknown) =>
	!(error instanceof ApiError) ||
	error.status === null ||
	error.status === 429 ||
	error.status >= 500;

/**
 * Asks the service about a refund or chargeback postback: a refund by `refund/status?id=<Id>`, or,
 * where the refund API is not switched on for the merchant (any refusal other than
 * `refund_not_found`), by the `refunds` of `payment/status?id=<PaymentId>&refunds=1`; a chargeback
 * by the `chargebacks` of `payment/status?id=<PaymentId>&chargeback=1`. Then the comparison the
 * trigger makes (confirmMoneyBack: the ids, the payment belonging to BillId, the amount, currency
 * and status where the service shows them); the order ID is left to the trigger, whose Order
 * Check setting says whether it counts. Not known, or not the postback: 403; not final yet or the
 * service not answering: 503, the service retries.
 */
export async function checkMoneyBack(
	kind: MoneyBackEvent,
	api: ServiceApi,
	fields: PostbackFields,
): Promise<LookUpVerdict> {
	const id = (fields.Id ?? '').trim();
	const paymentId = (fields.PaymentId ?? '').trim();
	if (id === '' || paymentId === '')
		return { ok: false, code: 403, reason: 'Id or PaymentId is empty' };
	let record: ApiRecord | undefined;
	if (kind === 'refund') {
		try {
			record = await api.refundStatus(id);
		} catch (error) {
			if (transient(error) || /refund_not_found/.test((error as ApiError).key))
				return failed(error, 'refund', id);
		}
	}
	let payment: ApiRecord;
	try {
		payment = await api.paymentStatus(paymentId, {
			refunds: kind === 'refund' && record === undefined,
			chargeback: kind === 'chargeback',
		});
	} catch (error) {
		return failed(error, 'payment', paymentId);
	}
	record ??= findById(kind === 'refund' ? payment.refunds : payment.chargebacks, id);
	if (record === undefined)
		return {
			ok: false,
			code: 403,
			reason: `the service lists no ${kind} ${id} on payment ${paymentId}`,
		};
	const verdict = confirmMoneyBack(kind, fields, record, payment, undefined, false);
	if (verdict.ok) return { ok: true };
	return { ok: false, code: verdict.retry ? 503 : 403, reason: verdict.reason };
}
