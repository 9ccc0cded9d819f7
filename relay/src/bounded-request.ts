import { request } from 'undici';
import type { Dispatcher } from 'undici';

/**
 * One GET with a whole-answer size limit and an overall deadline (boundedRequest), and its two
 * failures: the transport under the relay's client of the service (service-api.ts).
 */

/** Largest answer the relay reads from the service's API (a page of 100 bills is about 100 KiB). */
export const API_MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** Longest one call to the service's API may take, headers and whole body, in ms. */
export const API_CALL_DEADLINE_MS = 30_000;

/** The answer was larger than the limit: reading stopped there and the connection was closed. */
export class AnswerTooLarge extends Error {
	readonly limit: number;
	constructor(limit: number) {
		super(`the answer is larger than ${limit} bytes`);
		this.name = 'AnswerTooLarge';
		this.limit = limit;
	}
}

/** The call did not end (headers and whole body) within its deadline. */
export class DeadlinePassed extends Error {
	constructor(ms: number) {
		super(`no whole answer within ${ms} ms`);
		this.name = 'DeadlinePassed';
	}
}

export interface BoundedRequestOptions {
	headers?: Record<string, string>;
	dispatcher?: Dispatcher;
	/** Most bytes of body read; more is an AnswerTooLarge. */
	maxBytes?: number;
	/** Overall deadline of the call (connect, headers and the whole body), in ms. */
	deadlineMs?: number;
	/** Idle limits (nothing received for this long); the deadline bounds the whole call. */
	idleMs?: number;
}

export interface BoundedAnswer {
	status: number;
	headers: Record<string, string | string[] | undefined>;
	text: string;
}

/**
 * One GET with a whole-answer size limit and an overall deadline, not only idle timeouts:
 * a trickled answer (one byte a second) or an endless one ends at the deadline, a huge one at
 * `maxBytes` without being held in memory. The transport under ServiceApi.
 */
export async function boundedRequest(
	url: string | URL,
	options: BoundedRequestOptions = {},
): Promise<BoundedAnswer> {
	const maxBytes = options.maxBytes ?? API_MAX_ANSWER_BYTES;
	const deadlineMs = options.deadlineMs ?? API_CALL_DEADLINE_MS;
	const idleMs = Math.min(options.idleMs ?? deadlineMs, deadlineMs);
	const controller = new AbortController();
	const timer = setTimeout(() => controller.abort(new DeadlinePassed(deadlineMs)), deadlineMs);
	try {
		const answer = await request(url, {
			method: 'GET',
			headers: options.headers,
			headersTimeout: idleMs,
			bodyTimeout: idleMs,
			dispatcher: options.dispatcher,
			signal: controller.signal,
		});
		const declared = Number(answer.headers['content-length']);
		if (Number.isFinite(declared) && declared > maxBytes) {
			answer.body.destroy();
			throw new AnswerTooLarge(maxBytes);
		}
		const chunks: Buffer[] = [];
		let size = 0;
		for await (const chunk of answer.body as AsyncIterable<Buffer>) {
			size += chunk.length;
			if (size > maxBytes) {
				answer.body.destroy();
				throw new AnswerTooLarge(maxBytes);
			}
			chunks.push(chunk);
		}
		return {
			status: answer.statusCode,
			headers: answer.headers,
			text: Buffer.concat(chunks).toString('utf8'),
		};
	} catch (error) {
		if (controller.signal.aborted && !(error instanceof AnswerTooLarge))
			throw new DeadlinePassed(deadlineMs);
		throw error;
	} finally {
		clearTimeout(timer);
	}
}
