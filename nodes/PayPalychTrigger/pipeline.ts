import type { IDataObject } from 'n8n-workflow';

import {
	EVENT_HEADER,
	POSTBACK_RULES,
	RECEIVED_AT_HEADER,
	UNKNOWN_POSTBACK_RETRY_MS,
	canonicalStatus,
	describeRejection,
	eventKeyOf,
	isPaidStatus,
	postbackKey,
	verifiedItem,
	verifyPostback,
	type PostbackEvent,
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
import { credentialOf } from './credential';
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
async function readBody(call: Call, req: N8nRequest): Promise<Verdict<PostbackFields>> {
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
	const credentials = await credentialOf(call.context);
	const token = typeof credentials.apiToken === 'string' ? credentials.apiToken : '';
	const tokens = token.trim() === token ? [token] : [token, token.trim()];
	const verified = verifyPostback(call.event, fields, tokens);
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
	event: Extract<PostbackEvent, 'success' | 'fail'>,
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
		verdict = await confirmWithService(call.context, event, fields, requireOrderId);
		if (verdict.ok) memory.seen.remember(memory.key);
	} finally {
		memory.seen.release(memory.key);
	}
	if (verdict.ok) return pass(verdict);
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
	const recordKey = JSON.stringify([
		event,
		'record',
		String(record.id),
		canonicalStatus(record.status),
	]);
	if (memory.seen.has(recordKey)) return duplicate(call, memory.label);
	memory.seen.remember(recordKey);
	item.confirmed = true;
	item.status = canonicalStatus(record.status);
	item.eventKey = eventKeyOf(event, String(record.id), String(record.status));
	if (event === 'payment') {
		item.paid = isPaidStatus(record.status);
		item.orderConfirmed = confirmed.orderConfirmed === true;
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
	if (!confirmed.ok) return confirmed.answer;
	return confirmedItem(call, memory, confirmed.value, item);
}
