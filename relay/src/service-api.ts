import type { Dispatcher } from 'undici';
import {
	API_CALL_DEADLINE_MS,
	API_MAX_ANSWER_BYTES,
	AnswerTooLarge,
	boundedRequest,
} from './bounded-request.ts';
import { ENDPOINTS, apiRootOf, describeApiError, listUrl, readPages } from './contract.ts';
import { retryAfterDelay } from './retry-policy.ts';

export {
	API_CALL_DEADLINE_MS,
	API_MAX_ANSWER_BYTES,
	AnswerTooLarge,
	DeadlinePassed,
	boundedRequest,
} from './bounded-request.ts';
export type { BoundedAnswer, BoundedRequestOptions } from './bounded-request.ts';

/**
 * The relay's one client of the service's REST API, for the look-ups of incoming postbacks and
 * for the catch-up. Every call is bounded (a largest answer, and a deadline for the whole call,
 * not only idle timeouts), counted against the client's call budget and its overall deadline,
 * retried with a doubling back-off that honours Retry-After, and its failure read once (ApiError,
 * its key read by the contract's describeApiError). A call the relay makes to the service is a
 * method here and nowhere else.
 */

/** Longest a client may read the service by default (a catch-up run): its calls, retries and waits. */
export const RUN_DEADLINE_MS = 5 * 60_000;
/** Largest answer a look-up reads: one payment or payout record is well under 4 KiB. */
export const LOOK_UP_MAX_ANSWER_BYTES = 64 * 1024;

/** The client's call budget is spent: a catch-up run stops and the next one goes on. */
export class BudgetSpent extends Error {
	readonly calls: number;
	constructor(calls: number) {
		super(`the run's budget of ${calls} API calls is spent`);
		this.name = 'BudgetSpent';
		this.calls = calls;
	}
}

/** The client's overall deadline has passed: a catch-up run stops and the next one goes on. */
export class RunDeadlinePassed extends BudgetSpent {
	constructor(calls: number, ms: number) {
		super(calls);
		this.message = `the run's deadline of ${ms} ms has passed after ${calls} API calls`;
		this.name = 'RunDeadlinePassed';
	}
}

/** The service refused a call or could not be read after the retries. */
export class ApiError extends Error {
	readonly path: string;
	/** The HTTP status; null: no whole answer (the network, the deadline, the size limit). */
	readonly status: number | null;
	/** The error key as the contract reads it (describeApiError: `api:error.*`, `http_<code>`, ...). */
	readonly key: string;
	/** The start of the refusal's answer (at most 1 KiB), for what the key does not say. */
	readonly answer: string;
	constructor(path: string, status: number | null, message: string, key: string, answer = '') {
		super(message);
		this.name = 'ApiError';
		this.path = path;
		this.status = status;
		this.key = key;
		this.answer = answer.slice(0, 1024);
	}
}

export interface ServiceApiOptions {
	baseUrl: string;
	token: string;
	/** Most HTTP requests this client makes (retries count); Infinity: no budget. */
	maxCalls: number;
	/** Idle limit of one call (nothing received this long); callDeadlineMs bounds the whole call. */
	timeoutMs?: number;
	/** Overall deadline of one call, headers and whole answer (API_CALL_DEADLINE_MS). */
	callDeadlineMs?: number;
	/** Largest answer read (API_MAX_ANSWER_BYTES); a larger one is an error, never retried. */
	maxAnswerBytes?: number;
	/** Overall deadline of everything this client does (RUN_DEADLINE_MS), from its creation; Infinity: none. */
	runDeadlineMs?: number;
	now?: () => number;
	/** Retries of one call after 429, 5xx or a network error (0: one call only). */
	retries?: number;
	/**
	 * First back-off; doubled each retry. A 429/5xx's Retry-After (read as the forwarder reads it)
	 * is honoured between backoffMs and maxBackoffMs; absent, empty or unreadable: the back-off.
	 */
	backoffMs?: number;
	maxBackoffMs?: number;
	dispatcher?: Dispatcher;
	sleep?: (ms: number) => Promise<void>;
	/** Told of every request made (for the metric). */
	onCall?: (path: string) => void;
}

export type ApiRecord = Record<string, unknown>;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A gentle, read-only client of the service's REST API: GET with the Bearer token, at most
 * `maxCalls` requests in all within `runDeadlineMs`, a back-off on 429, 5xx and network errors
 * (honouring Retry-After), and lists read page by page. Defaults are a catch-up run's; the
 * look-ups use `lookUpApi`.
 */
export class ServiceApi {
	calls = 0;
	/** Calls of the budget held back from whoever reads now (a catch-up run's refunds' share). */
	heldBack = 0;
	readonly #o: Required<Omit<ServiceApiOptions, 'dispatcher' | 'onCall'>> &
		Pick<ServiceApiOptions, 'dispatcher' | 'onCall'>;
	readonly #endsAt: number;

	constructor(options: ServiceApiOptions) {
		this.#o = {
			timeoutMs: 15_000,
			callDeadlineMs: API_CALL_DEADLINE_MS,
			maxAnswerBytes: API_MAX_ANSWER_BYTES,
			runDeadlineMs: RUN_DEADLINE_MS,
			now: Date.now,
			retries: 3,
			backoffMs: 1_000,
			maxBackoffMs: 30_000,
			sleep: delay,
			...options,
		};
		this.#endsAt = this.#o.now() + this.#o.runDeadlineMs;
	}

	/**
	 * `payment/status?id=`: the payment's record; `refunds`: with `refunds=1` (its refunds listed
	 * under `refunds`), `chargeback`: with `chargeback=1` (its chargebacks under `chargebacks`).
	 */
	paymentStatus(
		id: string,
		lists: { refunds?: boolean; chargeback?: boolean } = {},
	): Promise<ApiRecord> {
		return this.#record(ENDPOINTS.paymentStatus.path, id, {
			...(lists.refunds ? { refunds: '1' } : {}),
			...(lists.chargeback ? { chargeback: '1' } : {}),
		});
	}

	/** `refund/status?id=`: the refund's record (the refund API, switched on per merchant). */
	refundStatus(id: string): Promise<ApiRecord> {
		return this.#record(ENDPOINTS.refundStatus.path, id);
	}

	/** `payout/status?id=`: the payout's record. */
	payoutStatus(id: string): Promise<ApiRecord> {
		return this.#record(ENDPOINTS.payoutStatus.path, id);
	}

	/** `bill/status?id=`: the bill's record. */
	billStatus(id: string): Promise<ApiRecord> {
		return this.#record(ENDPOINTS.billStatus.path, id);
	}

	/** `merchant/balance`: the answer, one balance per currency under `balances`. */
	merchantBalance(): Promise<ApiRecord> {
		return this.get(ENDPOINTS.merchantBalance.path);
	}

	/** `bill/payments?id=`: the answer, the bill's payments under `data`. */
	billPayments(id: string): Promise<ApiRecord> {
		return this.get(ENDPOINTS.billPayments.path, { id });
	}

	/**
	 * Every page of `bill/payments?id=` (cursor-paged on the live service), through the shared page
	 * reader, `perPage` rows a page, at most `maxPages` pages: the rows, and whether the list was
	 * read to its end (not: the page cap, or a next page outside the API root).
	 */
	async billPaymentPages(
		id: string,
		perPage: number,
		maxPages: number,
	): Promise<{ rows: ApiRecord[]; complete: boolean; pages: number }> {
		const read = await readPages<unknown>((url) => this.page(url), {
			firstUrl: listUrl(this.#o.baseUrl, ENDPOINTS.billPayments.path, { id, per_page: perPage }),
			apiRoot: apiRootOf(this.#o.baseUrl),
			maxPages,
		});
		const rows = read.rows.filter(
			(row): row is ApiRecord => row !== null && typeof row === 'object' && !Array.isArray(row),
		);
		return { rows, complete: read.complete, pages: read.pages };
	}

	/** One GET of `path` under the base URL; the answer as a JSON object. */
	get(path: string, qs: Record<string, string | undefined> = {}): Promise<ApiRecord> {
		const url = new URL(`${this.#o.baseUrl}${path}`);
		for (const [k, v] of Object.entries(qs)) if (v !== undefined) url.searchParams.set(k, v);
		return this.#call(url, path);
	}

	/**
	 * A client with the same settings whose overall deadline (`runDeadlineMs`, default: one call's
	 * deadline) starts now: one look-up of an incoming postback, all its calls (a bill's status and
	 * every page of its payments) within the time one call may take.
	 */
	startRun(runDeadlineMs = this.#o.callDeadlineMs): ServiceApi {
		return new ServiceApi({ ...this.#o, runDeadlineMs });
	}

	/** Calls left before the budget, less what is held back, is spent. */
	get callsLeft(): number {
		return Math.max(0, this.#o.maxCalls - this.heldBack - this.calls);
	}

	/** One page of a list by its absolute URL (the shared `pages`' fetcher). */
	page(url: string): Promise<ApiRecord> {
		const parsed = new URL(url);
		return this.#call(parsed, parsed.pathname.replace(/^.*(\/api\/v1\/)/, '$1'));
	}

	/** A `.../status?id=` record: flat, or under `data`. */
	async #record(path: string, id: string, qs: Record<string, string> = {}): Promise<ApiRecord> {
		const answer = await this.get(path, { id, ...qs });
		const data = answer.data;
		return data && typeof data === 'object' && !Array.isArray(data) ? (data as ApiRecord) : answer;
	}

	/** What is left of the overall deadline, in ms (0 or less: passed). */
	#left(): number {
		return this.#endsAt - this.#o.now();
	}

	async #call(url: URL, path: string): Promise<ApiRecord> {
		for (let attempt = 0; ; attempt++) {
			if (this.callsLeft <= 0) throw new BudgetSpent(this.#o.maxCalls - this.heldBack);
			if (this.#left() <= 0) throw new RunDeadlinePassed(this.calls, this.#o.runDeadlineMs);
			this.calls += 1;
			this.#o.onCall?.(path);
			const answer = await this.#send(url, path);
			const { status, text } = answer;
			if (status !== null && status >= 200 && status < 300) return objectOf(path, status, text);
			const retryable = status === null || status === 429 || status >= 500;
			if (!retryable || attempt >= this.#o.retries) throw apiError(path, status, text);
			const backoff = this.#backoff(attempt, answer.retryAfter);
			if (backoff >= this.#left()) throw new RunDeadlinePassed(this.calls, this.#o.runDeadlineMs);
			await this.#o.sleep(backoff);
		}
	}

	/** One request; status null with the error's text when no whole answer came. */
	async #send(
		url: URL,
		path: string,
	): Promise<{ status: number | null; text: string; retryAfter?: string | string[] }> {
		try {
			const answer = await boundedRequest(url, {
				headers: { authorization: `Bearer ${this.#o.token}`, accept: 'application/json' },
				idleMs: this.#o.timeoutMs,
				deadlineMs: Math.max(1, Math.min(this.#o.callDeadlineMs, this.#left())),
				maxBytes: this.#o.maxAnswerBytes,
				dispatcher: this.#o.dispatcher,
			});
			return {
				status: answer.status,
				text: answer.text,
				retryAfter: answer.headers['retry-after'],
			};
		} catch (error) {
			// Never retried: the same answer would come again.
			if (error instanceof AnswerTooLarge)
				throw new ApiError(
					path,
					null,
					`${path} answered more than ${error.limit} bytes`,
					describeApiError(undefined, undefined).key,
				);
			return { status: null, text: error instanceof Error ? error.message : String(error) };
		}
	}

	/** The wait before retry `attempt` + 1: the answer's Retry-After, else the doubling back-off. */
	#backoff(attempt: number, retryAfter: string | string[] | undefined): number {
		const { backoffMs: baseMs, maxBackoffMs: maxMs } = this.#o;
		const asked = retryAfterDelay(retryAfter, Date.now(), { baseMs, maxMs, remainingMs: maxMs });
		return asked ?? Math.min(maxMs, baseMs * 2 ** attempt);
	}
}

/**
 * The look-ups' client for one token: one call (no retry: the postback's sender is waiting and
 * sends it again later), a record's size of answer (LOOK_UP_MAX_ANSWER_BYTES), the whole call
 * within RELAY_DELIVERY_TIMEOUT_MS. No budget of its own: the intake's LookUpBudget bounds how many
 * look-ups incoming postbacks cause; each look-up runs on `startRun()`, every call of it within
 * one RELAY_DELIVERY_TIMEOUT_MS together.
 */
export function lookUpApi(
	config: { apiBaseUrl: string; deliveryTimeoutMs: number },
	token: string,
): ServiceApi {
	return new ServiceApi({
		baseUrl: config.apiBaseUrl,
		token,
		maxCalls: Infinity,
		runDeadlineMs: Infinity,
		retries: 0,
		timeoutMs: config.deliveryTimeoutMs,
		callDeadlineMs: config.deliveryTimeoutMs,
		maxAnswerBytes: LOOK_UP_MAX_ANSWER_BYTES,
	});
}

/** A 2xx answer's JSON object; anything else is an ApiError. */
function objectOf(path: string, status: number, text: string): ApiRecord {
	try {
		const parsed: unknown = JSON.parse(text);
		if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as ApiRecord;
	} catch {
		// not JSON: refused below
	}
	throw new ApiError(
		path,
		status,
		`${path} answered HTTP ${status} without a JSON object`,
		describeApiError(status, undefined).key,
	);
}

/** The one error reader: a refusal (or no answer) as an ApiError with the contract's error key. */
function apiError(path: string, status: number | null, text: string): ApiError {
	if (status === null) {
		const { key } = describeApiError(undefined, undefined);
		return new ApiError(path, null, `${path} could not be reached (${text.slice(0, 200)})`, key);
	}
	const { key } = describeApiError(status, text);
	const named = key === `http_${status}` ? '' : ` ${key.slice(0, 100)}`;
	return new ApiError(path, status, `${path} answered HTTP ${status}${named}`, key, text);
}
