import type { IDataObject, IWebhookFunctions, IWebhookResponseData } from 'n8n-workflow';

import { RECEIPT_HEADER, type PostbackEvent, type Receipt } from '../shared';

/** The Node.js response methods the trigger uses (n8n's express response has them all). */
export interface PlainResponse {
	statusCode: number;
	setHeader(name: string, value: string): unknown;
	end(body?: string): unknown;
}

/** What a 503 asks the sender to wait before trying a postback again that could not be confirmed. */
const RETRY_AFTER_SECONDS = 60;

/**
 * The call a pipeline step looks at: the n8n context, the node's event (its Event parameter; the
 * body may be another kind it takes, a refund at a payment trigger) and the workflow's ID.
 */
export interface Call {
	context: IWebhookFunctions;
	event: PostbackEvent;
	workflowId: string | undefined;
}

/**
 * The one answer to a call: written by `send` once the steps are done, after its log line.
 * With an item the workflow starts; without one nothing runs.
 */
export interface Answer {
	status: number;
	body: string;
	/**
	 * What the trigger did with the call (one of RECEIPTS): the value of RECEIPT_HEADER on every
	 * answer it writes. `retry` (with 503): the service could not confirm the postback now; the
	 * sender should try again.
	 */
	receipt: Receipt;
	contentType?: string;
	/** A 303 to this address, without a body (a redirect event sending the browser on). */
	location?: string;
	log?: { level: 'debug' | 'info' | 'warn'; message: string };
	item?: IDataObject;
	/**
	 * A signed call the service's record refused (422): what the Refused output gets when the
	 * merchant turned it on. Never on the first output, never with `paid`.
	 */
	refusal?: IDataObject;
}

/** What a step decided: go on with a value, or stop with the answer. */
export type Verdict<T> = { ok: true; value: T } | { ok: false; answer: Answer };

export const pass = <T>(value: T): Verdict<T> => ({ ok: true, value });
export const stop = (answer: Answer): Verdict<never> => ({ ok: false, answer });

/**
 * A reason names a field, a value or a rule, never the token or the received signature. Names and
 * values come from the caller: control characters are replaced and the length is capped.
 */
export const printable = (why: string) =>
	Array.from(why.slice(0, 200), (c) =>
		c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127 ? '?' : c,
	).join('');

export function refused(call: { event: string }, status: number, why: string): Answer {
	const reason = printable(why);
	return {
		status,
		body: reason,
		receipt: 'rejected',
		log: {
			level: 'warn',
			message: `PayPalych Trigger refused a ${call.event} call (HTTP ${status}): ${reason}`,
		},
	};
}

export function ignored(message: string): Answer {
	return { status: 200, body: 'OK', receipt: 'ignored', log: { level: 'debug', message } };
}

export function duplicate(call: { event: string }, which: string): Answer {
	return {
		status: 200,
		body: 'OK',
		receipt: 'duplicate',
		log: {
			level: 'info',
			message: `PayPalych Trigger: ${call.event} postback ${which} was already received`,
		},
	};
}

export function retryLater(body: string, log?: Answer['log']): Answer {
	return { status: 503, body, receipt: 'retry', log };
}

export function accepted(item: IDataObject): Answer {
	return { status: 200, body: 'OK', receipt: 'accepted', item };
}

/** Writes the answer with Node.js response methods only, so it works on any server. */
function write(res: PlainResponse, answer: Answer): void {
	if (answer.location !== undefined) {
		res.statusCode = 303;
		res.setHeader('Location', answer.location);
		res.setHeader('Cache-Control', 'no-store');
		res.setHeader(RECEIPT_HEADER, answer.receipt);
		res.end();
		return;
	}
	res.statusCode = answer.status;
	if (answer.receipt === 'retry') res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
	res.setHeader('Content-Type', answer.contentType ?? 'text/plain; charset=utf-8');
	res.setHeader('Cache-Control', 'no-store');
	res.setHeader(RECEIPT_HEADER, answer.receipt);
	res.end(answer.body);
}

/**
 * Logs and writes the answer, and hands n8n the item when there is one. The node answers itself,
 * before n8n starts the execution: n8n saves the static data (the trigger's memory of postbacks)
 * when the node answers, whereas its own deferred "onReceived" answer comes after the run has
 * taken over the static data, and a new key could then be lost (seen with n8n 2.41.1).
 */
export function send(
	call: Pick<Call, 'context' | 'workflowId'>,
	res: PlainResponse,
	answer: Answer,
	refusedOutput = false,
): IWebhookResponseData {
	if (answer.log) {
		call.context.logger[answer.log.level](answer.log.message, { workflowId: call.workflowId });
	}
	write(res, answer);
	if (answer.item) return { noWebhookResponse: true, workflowData: [[{ json: answer.item }]] };
	if (refusedOutput && answer.refusal) {
		// The second output ("Refused"): an execution the merchant sees, off the paid path.
		return { noWebhookResponse: true, workflowData: [[], [{ json: answer.refusal }]] };
	}
	return { noWebhookResponse: true };
}
