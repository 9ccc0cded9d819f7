import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import {
	ENDPOINTS,
	confirmMoneyBack,
	findById,
	moneyBackListOf,
	type MoneyBackEvent,
	type PostbackFields,
} from '../shared';
import { recordOf } from '../PayPalych/helpers/normalize';
import { errorKeyOf } from '../PayPalych/transport';
import { retryLater, type Answer, type Call } from './answer';
import {
	CONFIRM_BUDGET_MS,
	get,
	orderIdOfPayment,
	transient,
	unreachable,
	type ConfirmResult,
} from './confirm';

/**
 * What is the trigger's own about refund and chargeback postbacks: which node takes them and the
 * confirmation with the service (their signature, identity and item are the kind table's,
 * kinds.ts; the pipeline is the one of every call). A Refund or Chargeback trigger takes its own kind;
 * a Payment trigger takes the kinds selected in Also Accept (one URL pasted into the Result,
 * Refund and Chargeback URL fields). Any other trigger refuses them with a 503, which the service
 * retries, and logs the fix: a refund is never acknowledged without reaching a workflow.
 */

/** The human name of a kind, in the log and the answers. */
const NAME: Record<MoneyBackEvent, string> = { refund: 'refund', chargeback: 'chargeback' };

/** The kinds of money going back this node takes: its own event, or a payment trigger's Also Accept. */
export function acceptedKinds(call: Call): MoneyBackEvent[] {
	if (call.event === 'refund' || call.event === 'chargeback') return [call.event];
	if (call.event !== 'payment') return [];
	const selected = call.context.getNodeParameter('alsoAccept', []) as unknown;
	return Array.isArray(selected)
		? selected.filter((v): v is MoneyBackEvent => v === 'refund' || v === 'chargeback')
		: [];
}

/** The answer to a refund or chargeback this node is not set up for: retried, and the fix logged. */
export function notSetUp(call: Call, kind: MoneyBackEvent): Answer {
	const fix =
		call.event === 'payment'
			? `select ${NAME[kind]} in this trigger's Also Accept option, or add a PayPalych Trigger with the event ${kind === 'refund' ? 'Refund Reported' : 'Chargeback Reported'} and paste its URL as the ${kind === 'refund' ? 'Refund' : 'Chargeback'} URL`
			: `add a PayPalych Trigger with the event ${kind === 'refund' ? 'Refund Reported' : 'Chargeback Reported'} (or a Payment trigger with ${NAME[kind]} in Also Accept) and paste its URL as the ${kind === 'refund' ? 'Refund' : 'Chargeback'} URL`;
	return retryLater(`This trigger does not take ${NAME[kind]} postbacks. Try again later.`, {
		level: 'warn',
		message: `PayPalych Trigger (${call.event}) received a verified ${NAME[kind]} postback it is not set up for and asked for a retry (HTTP 503): ${fix}.`,
	});
}

/**
 * Asks the service: a refund by `refund/status?id=<Id>` or, where that answers otherwise than with
 * the refund, a failure to retry or "not found" (the refund API is not switched on for the
 * merchant), by the refunds `payment/status?id=<PaymentId>&refunds=1` lists; a chargeback by
 * `payment/status?id=<PaymentId>&chargeback=1`. Then the payment's bill order ID when the order
 * check needs it and the payment does not name it, and the comparison (confirmMoneyBack).
 */
export async function confirmMoneyBackWithService(
	context: IWebhookFunctions,
	kind: MoneyBackEvent,
	fields: PostbackFields,
	requireOrderId: boolean,
): Promise<ConfirmResult> {
	const id = (fields.Id ?? '').trim();
	const paymentId = (fields.PaymentId ?? '').trim();
	if (id === '' || paymentId === '') {
		return { ok: false, retry: false, reason: 'Id or PaymentId is empty' };
	}
	const deadline = Date.now() + CONFIRM_BUDGET_MS;
	let record: IDataObject | undefined;
	if (kind === 'refund') {
		const found = await get(context, ENDPOINTS.refundStatus, { id }, deadline);
		if ('record' in found) record = recordOf(found.record);
		else if (transient(found.error) || errorKeyOf(found.error) === 'api:error.refund_not_found') {
			return unreachable(`Refund ${id}`, found.error);
		}
	}
	const qs: Record<string, string> = { id: paymentId };
	if (kind === 'chargeback') qs.chargeback = '1';
	else if (record === undefined) qs.refunds = '1';
	const paid = await get(context, ENDPOINTS.paymentStatus, qs, deadline);
	if ('error' in paid) return unreachable(`Payment ${paymentId}`, paid.error);
	const payment = recordOf(paid.record);
	if (record === undefined) {
		record = findById(moneyBackListOf(kind, payment), id) as IDataObject | undefined;
		if (record === undefined) {
			return {
				ok: false,
				retry: true,
				unknown: true,
				reason: `the service lists no ${NAME[kind]} ${id} on payment ${paymentId}`,
			};
		}
	}
	const order = await orderIdOfPayment(context, payment, requireOrderId, deadline);
	if ('failure' in order) return order.failure;
	const verdict = confirmMoneyBack(kind, fields, record, payment, order.orderId, requireOrderId);
	if (!verdict.ok)
		return verdict.retry ? { ...verdict, retry: true } : { ...verdict, retry: false };
	return { ok: true, record, payment, orderConfirmed: verdict.orderConfirmed };
}

/**
 * What a Refund or Chargeback trigger answers a body that is not a refund or chargeback (a payment
 * posted to it): never a silent OK; a retry, and the fix in the log.
 */
export function notMoneyBack(call: Call): Answer {
	return retryLater(`This trigger takes ${call.event} postbacks only. Try again later.`, {
		level: 'warn',
		message: `PayPalych Trigger (${call.event}) received a call that is not a refund or chargeback postback (no PaymentId and Id) and asked for a retry (HTTP 503): paste this URL only as the ${call.event === 'refund' ? 'Refund' : 'Chargeback'} URL, and use a Payment trigger (with Also Accept) for the Result URL.`,
	});
}
