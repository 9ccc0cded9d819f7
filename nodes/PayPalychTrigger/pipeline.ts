import type { IDataObject } from 'n8n-workflow';

import {
	EVENT_HEADER,
	POSTBACK_RULES,
	RECEIVED_AT_HEADER,
	UNKNOWN_POSTBACK_RETRY_MS,
	canonicalStatus,
	describeRejection,
	eventKeyOf,
	isMoneyBackEvent,
	isPaidStatus,
	postbackKindOf,
	postbackKey,
	verifiedItem,
	verifyPostback,
	type CallEvent,
	type PostbackFields,
} from '../shared';
import {
	accepted,
	duplicate,
	ignored,
	pass,
	printable,
	refused,
	retryLater,
	stop,
	type Answer,
	type Call,
	type Verdict,
} from './answer';
import { confirmWithService } from './confirm';
import { checkSigned, forgetCredential } from './credential';
import { notMoneyBack, receiveMoneyBack, type MoneyBackCall } from './refund';
import {
	MAX_BODY_BYTES,
	SeenPostbacks,
	customerPage,
	readPostbackBody,
	safeRedirectUrl,
	statusSelected,
} from './receive';

/** The parts of n8n's request the trigger reads: headers and the raw body its body reader keeps. */
export interface N8nRequest {
	headers: Record<string, string | string[] | undefined>;
	rawBody?: unknown;
	readRawBody?: () => Promise<void>;
	readableEnded?: boolean;
}

/** A call the relay forwarded for another event is not this node's. */
function forwardedElsewhere(call: Call, req: N8nRequest): Verdict<void> {
	const forwardedAs = req.headers[EVENT_HEADER];
	// A refund or chargeback forwarded to this URL is decided by its body (see receiveMoneyBack).
	if (isMoneyBackEvent(typeof forwardedAs === 'string' && forwardedAs.trim().toLowerCase())) {
		return pass(undefined);
	}
	if (typeof forwardedAs === 'string' && forwardedAs.trim().toLowerCase() !== call.event) {
		return stop(
			ignored(
				`PayPalych Trigger (${call.event}) ignored a call forwarded as ${forwardedAs.slice(0, 20)}`,
			),
		);
	}
	return pass(undefined);
}

async function rawBodyOf(req: N8nRequest, contentType: string): Promise<Buffer | undefined> {
	if (
		!Buffer.isBuffer(req.rawBody) &&
		typeof req.readRawBody === 'function' &&
		!/multipart/i.test(contentType) &&
		req.readableEnded !== true
	) {
		// A body n8n left unread (a content type it does not parse): read it the way n8n does.
		// Multipart bodies are parsed by n8n itself and come through getBodyData().
		await req.readRawBody();
	}
	return Buffer.isBuffer(req.rawBody) ? req.rawBody : undefined;
}

/** The postback's fields, from the raw body or from what n8n parsed. */
export async function readBody(
	call: Pick<Call, 'context'> & { event: string },
	req: N8nRequest,
): Promise<Verdict<PostbackFields>> {
	const contentType = String(req.headers['content-type'] ?? '');
	let raw: Buffer | undefined;
	try {
		raw = await rawBodyOf(req, contentType);
	} catch {
		return stop(refused(call, 400, 'The body could not be read'));
	}
	const parsed = readPostbackBody(
		raw,
		raw === undefined ? call.context.getBodyData() : undefined,
		contentType,
	);
	if (!parsed.ok) {
		const why =
			parsed.reason === 'too_large'
				? `The body is larger than ${MAX_BODY_BYTES} bytes`
				: describeRejection(parsed);
		return stop(refused(call, 400, why));
	}
	return pass(parsed.fields);
}

/** The signature, checked with the credential's API token (and the token trimmed, if it differs). */
async function verifySignature(call: Call, fields: PostbackFields): Promise<Verdict<void>> {
	const verified = await checkSigned(call.context, call.event, (tokens) =>
		verifyPostback(call.event, fields, tokens),
	);
	if (verified.ok) return pass(undefined);
	if (verified.reason === 'no_token') {
		return stop(
			refused(
				call,
				500,
				'The trigger has no API token to verify calls: set it in the PayPalych credential',
			),
		);
	}
	return stop(refused(call, 401, describeRejection(verified)));
}

/** Redirect events answer the customer's browser: 303 to the merchant's page, or a plain page. */
function redirectAnswer(
	call: Call,
	event: Extract<CallEvent, 'success' | 'fail'>,
	fields: PostbackFields,
	item: IDataObject,
): Answer {
	const target = safeRedirectUrl(call.context.getNodeParameter('redirectUrl', ''));
	// A redirect is the customer's browser coming back; its signature is public. It proves no payment.
	item.customerSentTo = target ?? 'plain page';
	item.paymentProof = false;
	if (target) return { ...accepted(item), status: 303, body: '', location: target };
	return {
		...accepted(item),
		body: customerPage(event, fields),
		contentType: 'text/html; charset=utf-8',
	};
}

/** Only the statuses selected in the node start the workflow. */
function statusFilter(call: Call, event: 'payment' | 'payout', fields: PostbackFields) {
	const selected = call.context.getNodeParameter(
		event === 'payment' ? 'paymentStatuses' : 'payoutStatuses',
		[],
	) as string[];
	if (statusSelected(fields.Status, selected, POSTBACK_RULES[event].statuses)) {
		return pass(undefined);
	}
	return stop(
		ignored(`PayPalych Trigger: ${event} postback with status ${fields.Status} is not selected`),
	);
}

/** The trigger's memory of postbacks already received, and the key and label of this one. */
interface Memory {
	seen: SeenPostbacks;
	key: string;
	label: string;
}

function memoryOf(call: Call, fields: PostbackFields): Memory {
	const key = postbackKey(call.event, fields) as string;
	const seen = new SeenPostbacks(
		call.context.getWorkflowStaticData('node'),
		`${call.workflowId ?? ''}:${call.context.getNode().name}`,
	);
	return { seen, key, label: `${fields.TrsId ?? ''} ${canonicalStatus(fields.Status)}` };
}

/** Without confirmation: a postback not seen before is remembered and starts the workflow. */
function acceptUnconfirmed(call: Call, memory: Memory, item: IDataObject): Answer {
	if (memory.seen.has(memory.key)) return duplicate(call, memory.label);
	memory.seen.remember(memory.key);
	item.confirmed = false;
	return accepted(item);
}

/**
 * Claimed while the service is asked; remembered only once confirmed, so that a refused call
 * leaves nothing behind. An overlapping delivery of the same postback is asked to come back:
 * whether it is a duplicate is known only when the first one is confirmed.
 */
function claim(call: Call, memory: Memory): Verdict<void> {
	if (memory.seen.has(memory.key)) return stop(duplicate(call, memory.label));
	if (!memory.seen.claim(memory.key)) {
		return stop(retryLater('The same postback is being confirmed right now. Try again later.'));
	}
	return pass(undefined);
}

type Confirmed = Extract<Awaited<ReturnType<typeof confirmWithService>>, { ok: true }>;

/** Asks the service about the postback; the claim ends whatever the answer. */
async function confirm(
	call: Call,
	event: 'payment' | 'payout',
	req: N8nRequest,
	fields: PostbackFields,
	memory: Memory,
): Promise<Verdict<Confirmed>> {
	let verdict: Awaited<ReturnType<typeof confirmWithService>>;
	try {
		const requireOrderId = call.context.getNodeParameter('orderCheck', 'orderId') !== 'billId';
		verdict = await confirmWithService(call.context, event, fields, requireOrderId, (id, status) =>
			memory.seen.has(recordKeyOf(event, id, status)),
		);
		// A postback whose TrsId names a bill is not remembered by its own key: the next payment of
		// the same MULTI link posts the very same fields. Its payment's key is (see confirmedItem).
		if (verdict.ok && verdict.viaBill === undefined) memory.seen.remember(memory.key);
	} finally {
		memory.seen.release(memory.key);
	}
	if (verdict.ok) return pass(verdict);
	// A kept credential is never used again after the service did not confirm with it.
	forgetCredential(call.context);
	if ('delivered' in verdict) return stop(duplicate(call, memory.label));
	const reason = printable(`Not confirmed by the service: ${verdict.reason}`);
	const receivedAt = Number(req.headers[RECEIVED_AT_HEADER]);
	const waited = Number.isFinite(receivedAt) && receivedAt > 0 ? Date.now() - receivedAt : 0;
	if (verdict.retry && verdict.unknown && waited >= UNKNOWN_POSTBACK_RETRY_MS) {
		// Bounded: the relay stops retrying on 422 (dead letter, kept in its console).
		const minutes = Math.floor(waited / 60_000);
		return stop(
			refused(call, 422, `${reason}; still unknown ${minutes} minutes after the relay received it`),
		);
	}
	if (verdict.retry) {
		return stop(
			retryLater(`${reason}. Try again later.`, {
				level: 'warn',
				message: `PayPalych Trigger asked for a retry of a ${call.event} postback (HTTP 503): ${reason}`,
			}),
		);
	}
	return stop(refused(call, 422, reason));
}

/** The memory's key of one record of the service (a payment or payout in one status). */
function recordKeyOf(event: CallEvent, id: string, status: string): string {
	return JSON.stringify([event, 'record', id, canonicalStatus(status)]);
}

/** The postback's own order and amount fields, which the signature alone does not bind. */
const UNBOUND_FIELDS = ['InvId', 'OutSum'];

/**
 * The service's bill id, order ID and amount at the top of a confirmed payment's item. Where the
 * order is not bound (Bill ID Only, or a service that shows no order ID), the postback's InvId
 * and OutSum may come from another order's redirect signature: they go under `unverified`, so a
 * workflow that reads the order or the amount finds the service's.
 */
function serviceFigures(item: IDataObject, record: IDataObject, confirmed: Confirmed): void {
	const billId = record.bill_id;
	item.billId = typeof billId === 'string' || typeof billId === 'number' ? String(billId) : null;
	item.orderId = confirmed.orderId ?? null;
	item.amount = confirmed.amount ?? null;
	item.amountNumber = confirmed.amount === undefined ? null : Number(confirmed.amount);
	if (confirmed.orderConfirmed === true) return;
	const unverified = { ...((item.unverified as IDataObject | undefined) ?? {}) };
	for (const field of UNBOUND_FIELDS) {
		if (!(field in item)) continue;
		unverified[field] = item[field];
		delete item[field];
	}
	delete item.OutSumNumber;
	item.unverified = unverified;
}

/**
 * The item of a confirmed postback, with the service's record. The service's own id and status
 * are remembered too: a replay whose TrsId is spelled another way but names the same record is a
 * duplicate.
 */
function confirmedItem(
	call: Call,
	memory: Memory,
	confirmed: Confirmed,
	item: IDataObject,
): Answer {
	const { event } = call;
	const record = confirmed.record;
	const recordKey = recordKeyOf(event, String(record.id), String(record.status));
	if (memory.seen.has(recordKey)) return duplicate(call, memory.label);
	memory.seen.remember(recordKey);
	item.confirmed = true;
	if (event === 'payment') item.trsIdNames = confirmed.viaBill === undefined ? 'payment' : 'bill';
	item.status = canonicalStatus(record.status);
	item.eventKey = eventKeyOf(event, String(record.id), String(record.status));
	if (event === 'payment') {
		item.paid = isPaidStatus(record.status);
		item.orderConfirmed = confirmed.orderConfirmed === true;
		serviceFigures(item, record, confirmed);
		item.payment = record;
	} else {
		item.payout = record;
	}
	return accepted(item);
}

/**
 * What the trigger answers a call, step by step: forwarded for this event, body read, signature
 * verified, redirect events answered, status selected, not seen before (or claimed), confirmed by
 * the service, the item built. The first step that stops gives the answer.
 */
export async function receive(call: Call, req: N8nRequest): Promise<Answer> {
	const forwarded = forwardedElsewhere(call, req);
	if (!forwarded.ok) return forwarded.answer;
	const body = await readBody(call, req);
	if (!body.ok) return body.answer;
	const fields = body.value;
	// A refund or chargeback (one URL pasted into several fields) is never taken as this event.
	if (postbackKindOf(fields) === 'moneyBack') return receiveMoneyBack(call, req.headers, fields);
	const signed = await verifySignature(call, fields);
	if (!signed.ok) return signed.answer;

	const item = {
		...verifiedItem(call.event, fields),
		receivedAt: new Date().toISOString(),
	} as IDataObject;
	const { event } = call;
	if (event === 'success' || event === 'fail') return redirectAnswer(call, event, fields, item);

	const selected = statusFilter(call, event, fields);
	if (!selected.ok) return selected.answer;
	const memory = memoryOf(call, fields);
	if (!(call.context.getNodeParameter('confirmWithApi', true) as boolean)) {
		return acceptUnconfirmed(call, memory, item);
	}
	const claimed = claim(call, memory);
	if (!claimed.ok) return claimed.answer;
	const confirmed = await confirm(call, event, req, fields, memory);
	if (!confirmed.ok) {
		const answer = confirmed.answer;
		if (answer.receipt !== 'rejected') return answer;
		// Signed, refused by the service's record: every field is the sender's word.
		return {
			...answer,
			refusal: {
				event,
				refused: true,
				confirmed: false,
				reason: answer.body,
				httpStatus: answer.status,
				receivedAt: item.receivedAt,
				unverified: { ...fields },
			},
		};
	}
	return confirmedItem(call, memory, confirmed.value, item);
}

/**
 * What a Refund or Chargeback trigger answers: a call the relay forwarded as another kind is not
 * this node's; a body that is no refund or chargeback is asked to come back (the log names the
 * fix); a refund or chargeback goes through receiveMoneyBack.
 */
export async function receiveMoneyBackCall(call: MoneyBackCall, req: N8nRequest): Promise<Answer> {
	const forwardedAs = req.headers[EVENT_HEADER];
	const as = typeof forwardedAs === 'string' ? forwardedAs.trim().toLowerCase() : undefined;
	if (as !== undefined && as !== call.event && !isMoneyBackEvent(as)) {
		return ignored(
			`PayPalych Trigger (${call.event}) ignored a call forwarded as ${as.slice(0, 20)}`,
		);
	}
	const body = await readBody(call, req);
	if (!body.ok) return body.answer;
	if (postbackKindOf(body.value) !== 'moneyBack') return notMoneyBack(call);
	return receiveMoneyBack(call, req.headers, body.value);
}
