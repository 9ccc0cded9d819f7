import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import {
	ENDPOINTS,
	confirmPayment,
	confirmPayout,
	billOfUnnamedOrder,
	orderIdOf,
	type Confirmation,
	type Endpoint,
	type PostbackFields,
} from '../shared';
import { recordOf } from '../PayPalych/helpers/normalize';
import { apiRequestWithCredential, errorKeyOf, httpCodeOf } from '../PayPalych/transport';
import { credentialOf } from './credential';

/**
 * How long the whole confirmation may take, retry included. The trigger answers the service (or
 * the relay, whose delivery timeout is 10 s by default) only after it: well under both, a slow
 * service gets a clear "retry later" (503) rather than a sender that gives up waiting.
 */
export const CONFIRM_BUDGET_MS = 4000;

/** How long one look-up may take; a look-up that fails in time may be tried once more. */
export const CONFIRM_TIMEOUT_MS = 1500;

/** A retry needs at least this much of the budget left to be worth sending. */
const MIN_RETRY_MS = 250;

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

/**
 * Failures worth one more try: nothing answered (a timeout, a dropped connection) or the service
 * failed (5xx, 429). The service's own answers (a record it does not know, a refused token) are
 * final for this call.
 */
function transient(error: unknown): boolean {
	const code = httpCodeOf(error);
	return code === undefined || code === 429 || code >= 500;
}

/**
 * One look-up within the confirmation's budget: the per-call timeout, cut to what the budget has
 * left, and at most one retry of a transient failure.
 */
async function get(
	context: IWebhookFunctions,
	endpoint: Endpoint,
	qs: Record<string, string>,
	deadline: number,
): Promise<{ record: IDataObject } | { error: unknown }> {
	let failure: unknown;
	for (let attempt = 1; attempt <= 2; attempt++) {
		const left = deadline - Date.now();
		if (attempt === 2 && (!transient(failure) || left < MIN_RETRY_MS)) break;
		const timeoutMs = Math.max(1, Math.min(CONFIRM_TIMEOUT_MS, left));
		try {
			const credential = await credentialOf(context);
			const options = { qs, timeoutMs };
			return {
				record: await apiRequestWithCredential.call(context, credential, endpoint, options),
			};
		} catch (error) {
			failure = error;
		}
	}
	return { error: failure };
}

/**
 * Looks the postback's TrsId up with the service and compares (see `confirmPayment` and
 * `confirmPayout` in the contract). A payment's order ID comes from the payment when the service
 * gives it there, otherwise from its bill (`bill/status`), which is asked only when the order ID
 * is required: under Bill ID Only the payment's answer suffices. Every look-up shares one budget
 * (CONFIRM_BUDGET_MS).
 */
export async function confirmWithService(
	context: IWebhookFunctions,
	event: 'payment' | 'payout',
	fields: PostbackFields,
	requireOrderId = true,
): Promise<ConfirmResult> {
	const trsId = (fields.TrsId ?? '').trim();
	if (trsId === '') return { ok: false, retry: false, reason: 'TrsId is empty' };
	const deadline = Date.now() + CONFIRM_BUDGET_MS;
	const found = await get(
		context,
		event === 'payment' ? ENDPOINTS.paymentStatus : ENDPOINTS.payoutStatus,
		{ id: trsId },
		deadline,
	);
	if ('error' in found) {
		return unreachable(`${event === 'payment' ? 'Payment' : 'Payout'} ${trsId}`, found.error);
	}
	const record = found.record;
	if (event === 'payout') {
		const verdict = confirmPayout(fields, record);
		return verdict.ok ? { ok: true, record: recordOf(record) } : verdict;
	}
	let orderId = orderIdOf(record);
	const billId = billOfUnnamedOrder(record) ?? '';
	if (billId !== '' && requireOrderId) {
		const bill = await get(context, ENDPOINTS.billStatus, { id: billId }, deadline);
		if ('error' in bill) return unreachable(`Bill ${billId}`, bill.error);
		orderId = orderIdOf(bill.record);
	}
	const verdict = confirmPayment(fields, record, orderId, requireOrderId);
	return verdict.ok
		? { ok: true, record: recordOf(record), orderConfirmed: verdict.orderConfirmed }
		: verdict;
}
