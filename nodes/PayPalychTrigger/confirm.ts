import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import {
	ENDPOINTS,
	confirmPayment,
	confirmPayout,
	orderIdOf,
	type Confirmation,
	type Endpoint,
	type PostbackFields,
} from '../shared';
import { recordOf } from '../PayPalych/helpers/normalize';
import { apiRequest, errorKeyOf } from '../PayPalych/transport';

/** How long one look-up may take: the trigger answers the service (or the relay) after it. */
export const CONFIRM_TIMEOUT_MS = 8000;

export type ConfirmResult =
	| { ok: true; record: IDataObject; orderConfirmed?: boolean }
	| Extract<Confirmation, { ok: false; retry: false }>
	/** `unknown`: the service answered that it does not know the payment, payout or bill. */
	| { ok: false; retry: true; reason: string; unknown?: boolean };

/** The service's answers that it does not know the record asked for. */
const NOT_FOUND_KEYS = [
	'api:error.payment_not_found',
	'api:error.payout_not_found',
	'api:error.bill_not_found',
];

/**
 * Every failure to read the service asks the sender to retry later: the record may not exist yet,
 * the service may be down, and nothing is lost by trying again. Only a record that contradicts the
 * postback is a refusal.
 */
function unreachable(what: string, error: unknown): ConfirmResult {
	const key = errorKeyOf(error) ?? 'network_error';
	return {
		ok: false,
		retry: true,
		reason: `${what} could not be read from the service (${key})`,
		unknown: NOT_FOUND_KEYS.includes(key),
	};
}

async function get(
	context: IWebhookFunctions,
	endpoint: Endpoint,
	qs: Record<string, string>,
): Promise<IDataObject> {
	return await apiRequest.call(context, endpoint, { qs, timeoutMs: CONFIRM_TIMEOUT_MS });
}

/**
 * Looks the postback's TrsId up with the service and compares (see `confirmPayment` and
 * `confirmPayout` in the contract). A payment's order ID comes from the payment when the service
 * gives it there, otherwise from its bill (`bill/status`).
 */
export async function confirmWithService(
	context: IWebhookFunctions,
	event: 'payment' | 'payout',
	fields: PostbackFields,
	requireOrderId = true,
): Promise<ConfirmResult> {
	const trsId = (fields.TrsId ?? '').trim();
	if (trsId === '') return { ok: false, retry: false, reason: 'TrsId is empty' };
	let record: IDataObject;
	try {
		record = await get(
			context,
			event === 'payment' ? ENDPOINTS.paymentStatus : ENDPOINTS.payoutStatus,
			{ id: trsId },
		);
	} catch (error) {
		return unreachable(`${event === 'payment' ? 'Payment' : 'Payout'} ${trsId}`, error);
	}
	if (event === 'payout') {
		const verdict = confirmPayout(fields, record);
		return verdict.ok ? { ok: true, record: recordOf(record) } : verdict;
	}
	let orderId = orderIdOf(record);
	const billId =
		typeof record.bill_id === 'string' || typeof record.bill_id === 'number'
			? String(record.bill_id)
			: '';
	if (orderId === undefined && billId !== '') {
		try {
			orderId = orderIdOf(await get(context, ENDPOINTS.billStatus, { id: billId }));
		} catch (error) {
			return unreachable(`Bill ${billId}`, error);
		}
	}
	const verdict = confirmPayment(fields, record, orderId, requireOrderId);
	return verdict.ok
		? { ok: true, record: recordOf(record), orderConfirmed: verdict.orderConfirmed }
		: verdict;
}
