import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import {
	ENDPOINTS,
	MONEY_BACK_DONE_STATUSES,
	RECEIVED_AT_HEADER,
	UNKNOWN_POSTBACK_RETRY_MS,
	canonicalStatus,
	confirmMoneyBack,
	describeRejection,
	doneFieldOf,
	eventKeyOf,
	findById,
	identifyMoneyBack,
	moneyBackItem,
	moneyBackKeyOf,
	statusFieldOf,
	type MoneyBackEvent,
	type PostbackEvent,
	type PostbackFields,
} from '../shared';
import { recordOf } from '../PayPalych/helpers/normalize';
import { errorKeyOf } from '../PayPalych/transport';
import { checkSigned, forgetCredential } from './credential';
import { accepted, duplicate, printable, refused, retryLater, type Answer } from './answer';
import { CONFIRM_BUDGET_MS, get, orderIdOfPayment, transient, unreachable } from './confirm';
import { SeenPostbacks } from './receive';

/**
 * Refund and chargeback postbacks at the trigger: which node takes them, their signature, the
 * confirmation with the service and the item. A Refund or Chargeback trigger takes its own kind;
 * a Payment trigger takes the kinds selected in Also Accept (one URL pasted into the Result,
 * Refund and Chargeback URL fields). Any other trigger refuses them with a 503, which the service
 * retries, and logs the fix: a refund is never acknowledged without reaching a workflow.
 */

/** The call as the pipeline has it, for any event of the node. */
export interface MoneyBackCall {
	context: IWebhookFunctions;
	event: PostbackEvent;
	workflowId: string | undefined;
}

/** The human name of a kind, in the log and the answers. */
const NAME: Record<MoneyBackEvent, string> = { refund: 'refund', chargeback: 'chargeback' };

/** The kinds of money going back this node takes: its own event, or a payment trigger's Also Accept. */
export function acceptedKinds(call: MoneyBackCall): MoneyBackEvent[] {
	if (call.event === 'refund' || call.event === 'chargeback') return [call.event];
	if (call.event !== 'payment') return [];
	const selected = call.context.getNodeParameter('alsoAccept', []) as unknown;
	return Array.isArray(selected)
		? selected.filter((v): v is MoneyBackEvent => v === 'refund' || v === 'chargeback')
		: [];
}

/** The answer to a refund or chargeback this node is not set up for: retried, and the fix logged. */
function notSetUp(call: MoneyBackCall, kind: MoneyBackEvent): Answer {
	const fix =
		call.event === 'payment'
			? `select ${NAME[kind]} in this trigger's Also Accept option, or add a PayPalych Trigger with the event ${kind === 'refund' ? 'Refund Postback' : 'Chargeback Postback'} and paste its URL as the ${kind === 'refund' ? 'Refund' : 'Chargeback'} URL`
			: `add a PayPalych Trigger with the event ${kind === 'refund' ? 'Refund Postback' : 'Chargeback Postback'} (or a Payment trigger with ${NAME[kind]} in Also Accept) and paste its URL as the ${kind === 'refund' ? 'Refund' : 'Chargeback'} URL`;
	return retryLater(`This trigger does not take ${NAME[kind]} postbacks. Try again later.`, {
		level: 'warn',
		message: `PayPalych Trigger (${call.event}) received a verified ${NAME[kind]} postback it is not set up for and asked for a retry (HTTP 503): ${fix}.`,
	});
}

type Confirmed =
	| { ok: true; record: IDataObject; payment: IDataObject; orderConfirmed: boolean }
	| { ok: false; retry: boolean; reason: string; unknown?: boolean };

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
): Promise<Confirmed> {
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
		record = findById(kind === 'refund' ? payment.refunds : payment.chargebacks, id) as
			| IDataObject
			| undefined;
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
	return verdict.ok
		? { ok: true, record, payment, orderConfirmed: verdict.orderConfirmed }
		: { ...verdict };
}

/** The answer to a confirmation that failed: retry while it may still come, refuse otherwise. */
function notConfirmed(
	call: MoneyBackCall,
	kind: MoneyBackEvent,
	headers: Record<string, string | string[] | undefined>,
	verdict: Extract<Confirmed, { ok: false }>,
): Answer {
	const reason = printable(`Not confirmed by the service: ${verdict.reason}`);
	const receivedAt = Number(headers[RECEIVED_AT_HEADER]);
	const waited = Number.isFinite(receivedAt) && receivedAt > 0 ? Date.now() - receivedAt : 0;
	const who = { event: NAME[kind] };
	if (verdict.retry && verdict.unknown && waited >= UNKNOWN_POSTBACK_RETRY_MS) {
		const minutes = Math.floor(waited / 60_000);
		return refused(
			who,
			422,
			`${reason}; still unknown ${minutes} minutes after the relay received it`,
		);
	}
	if (verdict.retry) {
		return retryLater(`${reason}. Try again later.`, {
			level: 'warn',
			message: `PayPalych Trigger asked for a retry of a ${NAME[kind]} postback (HTTP 503): ${reason}`,
		});
	}
	return refused(who, 422, reason);
}

/**
 * A refund or chargeback body (postbackKindOf said so) at any trigger: signature (which of the two
 * it is), whether this node takes it, dedupe, confirmation with the service, the item.
 */
export async function receiveMoneyBack(
	call: MoneyBackCall,
	headers: Record<string, string | string[] | undefined>,
	fields: PostbackFields,
): Promise<Answer> {
	const verified = await checkSigned(call.context, call.event, (tokens) =>
		identifyMoneyBack(fields, tokens),
	);
	if (!verified.ok) {
		if (verified.reason === 'no_token') {
			return refused(
				call,
				500,
				'The trigger has no API token to verify calls: set it in the PayPalych credential',
			);
		}
		return refused(call, 401, describeRejection(verified));
	}
	const kind = verified.event;
	if (!acceptedKinds(call).includes(kind)) return notSetUp(call, kind);

	const item = {
		...moneyBackItem(kind, fields),
		receivedAt: new Date().toISOString(),
	} as IDataObject;
	item.eventKey = eventKeyOf(kind, fields.Id ?? '', fields.Status ?? '');
	const seen = new SeenPostbacks(
		call.context.getWorkflowStaticData('node'),
		`${call.workflowId ?? ''}:${call.context.getNode().name}`,
	);
	const key = moneyBackKeyOf(kind, fields);
	const label = `${(fields.Id ?? '').trim()} ${canonicalStatus(fields.Status)}`;
	const who = { event: NAME[kind] };
	if (seen.has(key)) return duplicate(who, label);
	if (!(call.context.getNodeParameter('confirmWithApi', true) as boolean)) {
		seen.remember(key);
		item.confirmed = false;
		item[doneFieldOf(kind)] = MONEY_BACK_DONE_STATUSES.includes(canonicalStatus(fields.Status));
		return accepted(item);
	}
	if (!seen.claim(key)) {
		return retryLater('The same postback is being confirmed right now. Try again later.');
	}
	let verdict: Confirmed;
	try {
		const requireOrderId = call.context.getNodeParameter('orderCheck', 'orderId') !== 'billId';
		verdict = await confirmMoneyBackWithService(call.context, kind, fields, requireOrderId);
		if (verdict.ok) seen.remember(key);
	} finally {
		seen.release(key);
	}
	if (!verdict.ok) {
		forgetCredential(call.context);
		return notConfirmed(call, kind, headers, verdict);
	}

	// The service's own id and status: a replay naming the same record in another spelling is a duplicate.
	const status = canonicalStatus(verdict.record.status);
	const recordKey = JSON.stringify([kind, 'record', String(verdict.record.id), status]);
	if (seen.has(recordKey)) return duplicate(who, label);
	seen.remember(recordKey);
	item.confirmed = true;
	item[statusFieldOf(kind)] = status;
	item[doneFieldOf(kind)] = MONEY_BACK_DONE_STATUSES.includes(status);
	item.eventKey = eventKeyOf(kind, String(verdict.record.id), status);
	item.orderConfirmed = verdict.orderConfirmed;
	item[kind] = verdict.record;
	item.payment = verdict.payment;
	return accepted(item);
}

/**
 * What a Refund or Chargeback trigger answers a body that is not a refund or chargeback (a payment
 * posted to it): never a silent OK; a retry, and the fix in the log.
 */
export function notMoneyBack(call: MoneyBackCall): Answer {
	return retryLater(`This trigger takes ${call.event} postbacks only. Try again later.`, {
		level: 'warn',
		message: `PayPalych Trigger (${call.event}) received a call that is not a refund or chargeback postback (no PaymentId and Id) and asked for a retry (HTTP 503): paste this URL only as the ${call.event === 'refund' ? 'Refund' : 'Chargeback'} URL, and use a Payment trigger (with Also Accept) for the Result URL.`,
	});
}
