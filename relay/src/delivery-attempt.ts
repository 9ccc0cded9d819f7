import { request } from 'undici';
import type { Dispatcher } from 'undici';
import {
	DELIVERY_ATTEMPT_HEADER,
	EVENT_HEADER,
	EVENT_ID_HEADER,
	IDEMPOTENCY_KEY_HEADER,
	RECEIPT_HEADER,
	RECEIVED_AT_HEADER,
	receiptOf,
} from './contract.ts';
import { NO_RECEIPT_ERROR, classify } from './retry-policy.ts';
import type { Outcome } from './retry-policy.ts';
import { MAX_RESPONSE_BYTES } from './store/types.ts';
import type { AttemptTiming, ClaimedDelivery } from './store/types.ts';

/**
 * One delivery attempt, the forwarder's I/O half: prepare the request, send it, and read the
 * answer into what the forwarder records (success, or a failure and its reason).
 */

export interface SendOptions {
	deliveryTimeoutMs: number;
	/** A success answer counts only with an X-PayPalych-Receipt header (RELAY_REQUIRE_RECEIPT). */
	requireReceipt: boolean;
	dispatcher?: Dispatcher;
}

/** What one attempt brought back. */
export interface AttemptAnswer {
	/** The target's status; undefined when no answer came (timeout, connection error). */
	status: number | undefined;
	retryAfter: string | string[] | undefined;
	/** The X-PayPalych-Receipt header as it came (any text, or repeated): see timingOf. */
	receipt: string | string[] | undefined;
	/** The start of the answer's body (the target's reason for a refusal). */
	response: string | null;
	/** Why no answer came ('' when one did). */
	error: string;
	/** Aborted by the caller (shutdown), not by the attempt's own timeout. */
	cancelled: boolean;
	startedAt: number;
	endedAt: number;
}

/** The request a delivery is sent as: the original body and content type, and the relay headers. */
export function prepare(d: ClaimedDelivery): { headers: Record<string, string>; body: string } {
	return {
		headers: {
			'content-type': d.contentType || 'application/x-www-form-urlencoded',
			'user-agent': 'paypalych-relay',
			[EVENT_HEADER]: d.kind,
			[EVENT_ID_HEADER]: d.eventId,
			[IDEMPOTENCY_KEY_HEADER]: d.eventId,
			[DELIVERY_ATTEMPT_HEADER]: String(d.attempts),
			[RECEIVED_AT_HEADER]: String(d.receivedAt),
		},
		body: d.body,
	};
}

/**
 * Sends one attempt. `abort` is aborted by the caller (shutdown) or by the attempt's own timer
 * (timeout). One controller and one cleared timer per attempt: AbortSignal.timeout's timer cannot
 * be cleared and stays armed for the whole timeout after the answer, and AbortSignal.any links the
 * signals on every attempt.
 */
export async function send(
	d: ClaimedDelivery,
	abort: AbortController,
	o: SendOptions,
): Promise<AttemptAnswer> {
	const signal = abort.signal;
	const startedAt = Date.now();
	const timer = setTimeout(
		() => abort.abort(new DOMException('delivery attempt timed out', 'TimeoutError')),
		o.deliveryTimeoutMs,
	);
	const answer: AttemptAnswer = {
		status: undefined,
		retryAfter: undefined,
		receipt: undefined,
		response: null,
		error: '',
		cancelled: false,
		startedAt,
		endedAt: startedAt,
	};
	try {
		const res = await request(d.target, {
			method: 'POST',
			...prepare(d),
			signal,
			headersTimeout: o.deliveryTimeoutMs,
			bodyTimeout: o.deliveryTimeoutMs,
			dispatcher: o.dispatcher,
		});
		answer.status = res.statusCode;
		answer.retryAfter = res.headers['retry-after'];
		answer.receipt = res.headers[RECEIPT_HEADER];
		answer.response = await readStart(res.body, MAX_RESPONSE_BYTES);
	} catch (err) {
		const timedOut =
			signal.aborted && (signal.reason as { name?: string } | undefined)?.name === 'TimeoutError';
		answer.cancelled = signal.aborted && !timedOut;
		if (answer.status === undefined) answer.error = describeError(err);
	} finally {
		clearTimeout(timer);
	}
	answer.endedAt = Date.now();
	return answer;
}

/** The answer read by the retry policy: success, retry or a permanent refusal. */
export function outcomeOf(d: ClaimedDelivery, a: AttemptAnswer, requireReceipt: boolean): Outcome {
	return classify(a.status, d.kind, { required: requireReceipt, present: a.receipt !== undefined });
}

/**
 * The attempt as the store records it, with the trigger's receipt: one of the known words, or
 * null (no header, a repeated one, or anything else a target wrote: never a guess).
 */
export function timingOf(d: ClaimedDelivery, a: AttemptAnswer): AttemptTiming {
	return {
		attempt: d.attempts,
		startedAt: a.startedAt,
		durationMs: Math.max(0, a.endedAt - a.startedAt),
		origin: d.manual ? 'manual' : 'scheduled',
		response: a.response,
		receipt: receiptOf(a.receipt),
	};
}

/** Why a failed attempt failed, as recorded: the error, or the HTTP status (and a missing receipt). */
export function failureReason(a: AttemptAnswer, outcome: Outcome): string {
	if (a.error) return a.error;
	const noReceipt = outcome === 'retry' && a.status !== undefined && a.status < 400;
	return noReceipt ? `HTTP ${a.status}: ${NO_RECEIPT_ERROR}` : `HTTP ${a.status}`;
}

/**
 * The first `max` bytes of an answer body as text (the target's reason for a refusal), then the
 * rest read and dropped up to 64 KiB so that the connection can be reused. Empty: null.
 */
async function readStart(
	body: Dispatcher.ResponseData['body'],
	max: number,
): Promise<string | null> {
	const kept: Buffer[] = [];
	let size = 0;
	let total = 0;
	for await (const chunk of body) {
		const buf = chunk as Buffer;
		total += buf.length;
		if (size < max) {
			const part = buf.subarray(0, max - size);
			kept.push(part);
			size += part.length;
		}
		if (total >= 64 * 1024) {
			body.destroy();
			break;
		}
	}
	if (size === 0) return null;
	// The store cuts at a character boundary; a character split here decodes to U+FFFD at the end.
	return Buffer.concat(kept).toString('utf8');
}

function describeError(err: unknown): string {
	if (err && typeof err === 'object') {
		const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
		if (
			e.name === 'TimeoutError' ||
			e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
			e.code === 'UND_ERR_BODY_TIMEOUT'
		)
			return 'timeout';
		const code = e.code ?? e.cause?.code;
		if (code) return code;
		if (e.message) return e.message.slice(0, 200);
	}
	return String(err).slice(0, 200);
}
