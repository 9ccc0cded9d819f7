import type { IDataObject } from 'n8n-workflow';

import {
	POSTBACK_RULES,
	UNKNOWN_POSTBACK_RETRY_MS,
	describeRejection,
	isMoneyBackEvent,
	isRedirectEvent,
	postbackKindOf,
	type PostbackEvent,
	type PostbackFields,
	type RedirectEvent,
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
import { checkSigned, credentialChanged, forgetCredential, readAfreshBeside } from './credential';
import { KINDS, recordKeyOf, type Confirmed, type KindRule } from './kinds';
import { acceptedKinds, notMoneyBack, notSetUp } from './money-back';
import { receiveP2pDeal } from './p2p';
import { SeenPostbacks } from './memory';
import { customerPage, safeRedirectUrl, statusSelected } from './receive';
import { readCall, type N8nRequest, type ReadCall } from './request';

export type { N8nRequest };

/**
 * The one way through the trigger for every kind of call (payment, payout, refund, chargeback,
 * redirect): forwarded for this node, body read, which rule reads it, signature verified, taken by
 * this node, redirects answered, status selected, not seen before (or claimed), confirmed by the
 * service, the item built. What differs between the kinds is the table in kinds.ts; the first
 * step that stops gives the answer.
 */

/** What the trigger answers when its credential has no API token. */
const NO_TOKEN = 'The trigger has no API token to verify calls: set it in the PayPalych credential';

/**
 * The rule that reads this body: a refund or chargeback body (one URL may be pasted into the
 * Result, Refund and Chargeback URL fields) is read as money going back whatever the node's event,
 * and the signature tells which of the two; at a Refund or Chargeback trigger any other body is
 * asked to come back (the log names the fix); every other body is the node's own event.
 */
function ruleFor(call: Call, fields: PostbackFields): Verdict<KindRule> {
	if (postbackKindOf(fields) === 'moneyBack') return pass(KINDS.refund);
	if (isMoneyBackEvent(call.event)) return stop(notMoneyBack(call));
	return pass(KINDS[call.event]);
}

/** The signature, checked with the credential's API token; it also says which kind the body is. */
async function verifySignature(
	call: Call,
	rule: KindRule,
	fields: PostbackFields,
): Promise<Verdict<PostbackEvent>> {
	const verified = await checkSigned(call.context, call.event, (tokens) =>
		rule.verify(fields, tokens),
	);
	if (verified.ok) return pass(verified.kind);
	if (verified.reason === 'no_token') return stop(refused(call, 500, NO_TOKEN));
	return stop(refused(call, 401, describeRejection(verified)));
}

/** A refund or chargeback is this node's when it is its event or one of its Also Accept kinds. */
function takes(call: Call, kind: PostbackEvent): Verdict<void> {
	if (!isMoneyBackEvent(kind) || acceptedKinds(call).includes(kind)) return pass(undefined);
	return stop(notSetUp(call, kind));
}

/** Redirect events answer the customer's browser: 303 to the merchant's page, or a plain page. */
function redirectAnswer(
	call: Call,
	event: RedirectEvent,
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

/** Only the statuses selected in a payment or payout node start the workflow. */
function statusFilter(call: Call, kind: PostbackEvent, fields: PostbackFields): Verdict<void> {
	if (kind !== 'payment' && kind !== 'payout') return pass(undefined);
	const selected = call.context.getNodeParameter(
		kind === 'payment' ? 'paymentStatuses' : 'payoutStatuses',
		[],
	) as string[];
	if (statusSelected(fields.Status, selected, POSTBACK_RULES[kind].statuses)) {
		return pass(undefined);
	}
	return stop(
		ignored(`PayPalych Trigger: ${kind} postback with status ${fields.Status} is not selected`),
	);
}

/** The trigger's memory of postbacks already received, and the kind, key and label of this one. */
interface Memory {
	seen: SeenPostbacks;
	kind: PostbackEvent;
	key: string;
	label: string;
}

function memoryOf(call: Call, kind: PostbackEvent, key: string, label: string): Memory {
	const seen = new SeenPostbacks(
		call.context.getWorkflowStaticData('node'),
		`${call.workflowId ?? ''}:${call.context.getNode().name}`,
	);
	return { seen, kind, key, label };
}

/** Without confirmation: a postback not seen before is remembered and starts the workflow. */
function acceptUnconfirmed(
	memory: Memory,
	rule: KindRule,
	item: IDataObject,
	fields: PostbackFields,
): Answer {
	if (memory.seen.has(memory.key)) return duplicate({ event: memory.kind }, memory.label);
	memory.seen.remember(memory.key);
	item.confirmed = false;
	rule.unconfirmed(item, fields);
	return accepted(item);
}

/** What the service's confirmation came to: the record, a stop, or a stale credential to retry with. */
type Confirmation = Verdict<Confirmed> | { ok: 'credential changed' };

/**
 * Claimed while the service is asked; remembered only once confirmed, and only when the credential
 * the call used is still the merchant's (a kept read is checked against a fresh one: a postback
 * of the previous credential never starts the workflow), so that a refused call leaves nothing
 * behind. An overlapping delivery of the same postback is asked to come back: whether it is a
 * duplicate is known only when the first one is confirmed.
 */
async function confirm(
	call: Call,
	{ fields, receivedAt }: ReadCall,
	rule: KindRule & Required<Pick<KindRule, 'confirm'>>,
	memory: Memory,
): Promise<Confirmation> {
	const who = { event: memory.kind };
	if (memory.seen.has(memory.key)) return stop(duplicate(who, memory.label));
	if (!memory.seen.claim(memory.key)) {
		return stop(retryLater('The same postback is being confirmed right now. Try again later.'));
	}
	let verdict: Awaited<ReturnType<typeof rule.confirm>>;
	try {
		readAfreshBeside(call.context);
		verdict = await rule.confirm({
			context: call.context,
			fields,
			requireOrderId: call.context.getNodeParameter('orderCheck', 'orderId') !== 'billId',
			isDelivered: (id, status) => memory.seen.has(recordKeyOf(memory.kind, id, status)),
		});
		if (verdict.ok && (await credentialChanged(call.context))) return { ok: 'credential changed' };
		// A postback whose TrsId names a bill is not remembered by its own key: the next payment of
		// the same MULTI link posts the very same fields. Its payment's key is (see confirmedItem).
		if (verdict.ok && verdict.viaBill === undefined) memory.seen.remember(memory.key);
	} finally {
		memory.seen.release(memory.key);
	}
	if (verdict.ok) return pass(verdict);
	// A kept credential is never used again after the service did not confirm with it.
	forgetCredential(call.context);
	if ('delivered' in verdict) return stop(duplicate(who, memory.label));
	return stop(notConfirmed(memory.kind, receivedAt, verdict));
}

/** The answer to a confirmation that failed: retry while it may still come, refuse otherwise. */
function notConfirmed(
	kind: PostbackEvent,
	receivedAt: number | undefined,
	verdict: { retry: boolean; reason: string; unknown?: boolean },
): Answer {
	const reason = printable(`Not confirmed by the service: ${verdict.reason}`);
	const waited = receivedAt === undefined ? 0 : Date.now() - receivedAt;
	if (verdict.retry && verdict.unknown && waited >= UNKNOWN_POSTBACK_RETRY_MS) {
		// Bounded: the relay stops retrying on 422 (dead letter, kept in its console).
		const minutes = Math.floor(waited / 60_000);
		return refused(
			{ event: kind },
			422,
			`${reason}; still unknown ${minutes} minutes after the relay received it`,
		);
	}
	if (verdict.retry) {
		return retryLater(`${reason}. Try again later.`, {
			level: 'warn',
			message: `PayPalych Trigger asked for a retry of a ${kind} postback (HTTP 503): ${reason}`,
		});
	}
	return refused({ event: kind }, 422, reason);
}

/** Signed, refused by the service's record: what the Refused output gets; every field is the sender's word. */
function withRefusal(
	answer: Answer,
	kind: PostbackEvent,
	fields: PostbackFields,
	at: string,
): Answer {
	if (answer.receipt !== 'rejected') return answer;
	const refusal = {
		event: kind,
		refused: true,
		confirmed: false,
		reason: answer.body,
		httpStatus: answer.status,
		receivedAt: at,
		unverified: { ...fields },
	};
	return { ...answer, refusal };
}

/**
 * The item of a confirmed postback, with the service's record. The service's own id and status
 * are remembered too (recordKeyOf): a replay whose ids are spelled another way but name the same
 * record is a duplicate.
 */
function confirmedItem(
	memory: Memory,
	rule: KindRule,
	confirmed: Confirmed,
	item: IDataObject,
): Answer {
	const { record } = confirmed;
	const recordKey = recordKeyOf(memory.kind, String(record.id), String(record.status));
	if (recordKey !== memory.key && memory.seen.has(recordKey)) {
		return duplicate({ event: memory.kind }, memory.label);
	}
	memory.seen.remember(recordKey);
	item.confirmed = true;
	rule.fill(item, confirmed);
	return accepted(item);
}

/** The steps after the body is read, for every kind; run again once when the credential changed. */
async function receiveFields(call: Call, read: ReadCall, retried = false): Promise<Answer> {
	const { fields } = read;
	const ruled = ruleFor(call, fields);
	if (!ruled.ok) return ruled.answer;
	const signed = await verifySignature(call, ruled.value, fields);
	if (!signed.ok) return signed.answer;
	const kind = signed.value;
	const taken = takes(call, kind);
	if (!taken.ok) return taken.answer;
	const rule = KINDS[kind];
	const item = { ...rule.item(fields), receivedAt: new Date().toISOString() };
	if (isRedirectEvent(kind)) return redirectAnswer(call, kind, fields, item);
	const selected = statusFilter(call, kind, fields);
	if (!selected.ok) return selected.answer;
	const memory = memoryOf(call, kind, rule.key(fields) as string, rule.label(fields));
	if (!(call.context.getNodeParameter('confirmWithApi', true) as boolean) || !rule.confirm) {
		return acceptUnconfirmed(memory, rule, item, fields);
	}
	const confirmed = await confirm(call, read, { ...rule, confirm: rule.confirm }, memory);
	if (confirmed.ok === 'credential changed') {
		// Checked again from the signature with the credential as it is now (never twice).
		if (retried) return retryLater('The credential changed while confirming. Try again later.');
		return receiveFields(call, read, true);
	}
	if (!confirmed.ok) return withRefusal(confirmed.answer, kind, fields, item.receivedAt);
	return confirmedItem(memory, rule, confirmed.value, item);
}

/** What the trigger answers a call (see the steps above). */
export async function receive(call: Call, req: N8nRequest): Promise<Answer> {
	const read = await readCall(call, req);
	if (!read.ok) return read.answer;
	// A P2P deal (signed like a payout) is neither a payment nor a payout of the shop.
	if (postbackKindOf(read.value.fields) === 'p2pDeal')
		return receiveP2pDeal(call, read.value.fields);
	return receiveFields(call, read.value);
}
