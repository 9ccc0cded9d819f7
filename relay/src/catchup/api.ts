import type { Dispatcher } from 'undici';
import {
	API_CALL_DEADLINE_MS,
	API_MAX_ANSWER_BYTES,
	AnswerTooLarge,
	boundedRequest,
} from '../bounded-request.ts';
import { retryAfterDelay } from '../retry-policy.ts';

/** Longest one catch-up run may read the service, in ms: its calls, their retries and waits. */
export const RUN_DEADLINE_MS = 5 * 60_000;

/** The call budget of one run is spent: the run stops and the next one goes on. */
export class BudgetSpent extends Error {
	readonly calls: number;
	constructor(calls: number) {
		super(`the run's budget of ${calls} API calls is spent`);
		this.name = 'BudgetSpent';
		this.calls = calls;
	}
}

/** The run's overall deadline has passed: the run stops and the next one goes on. */
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
	readonly status: number | null;
	/** The service's error key (`message` of its answer), when it gave one. */
	readonly key: string | undefined;
	constructor(path: string, status: number | null, message: string, key?: string) {
		super(message);
		this.name = 'ApiError';
		this.path = path;
		this.status = status;
		this.key = key;
	}
}

export interface ServiceApiOptions {
	baseUrl: string;
	token: string;
	/** Most HTTP requests this client makes (retries count). */
	maxCalls: number;
	/** Idle limit of one call (nothing received this long); callDeadlineMs bounds the whole call. */
	timeoutMs?: number;
	/** Overall deadline of one call, headers and whole answer (API_CALL_DEADLINE_MS). */
	callDeadlineMs?: number;
	/** Largest answer read (API_MAX_ANSWER_BYTES); a larger one is an error, never retried. */
	maxAnswerBytes?: number;
	/** Overall deadline of everything this client does (a run), from its creation (RUN_DEADLINE_MS). */
	runDeadlineMs?: number;
	now?: () => number;
	/** Retries of one call after 429, 5xx or a network error. */
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

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A gentle, read-only client of the service's REST API for one catch-up run: GET with the Bearer
 * token, at most `maxCalls` requests in all, a back-off on 429, 5xx and network errors (honouring
 * Retry-After), and paginated lists read page by page (following a next cursor when the service
 * gives one).
 */
export class ServiceApi {
	calls = 0;
	readonly #o: Required<Omit<ServiceApiOptions, 'dispatcher' | 'onCall'>> &
		Pick<ServiceApiOptions, 'dispatcher' | 'onCall'>;

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

	readonly #endsAt: number;

	/** What is left of the run's deadline, in ms (0 or less: passed). */
	#left(): number {
		return this.#endsAt - this.#o.now();
	}

	async get(
		path: string,
		qs: Record<string, string | undefined> = {},
	): Promise<Record<string, unknown>> {
		const url = new URL(`${this.#o.baseUrl}${path}`);
		for (const [k, v] of Object.entries(qs)) if (v !== undefined) url.searchParams.set(k, v);
		return this.#call(url, path);
	}

	/** One page of a list by its absolute URL (the shared readPages' fetcher). */
	page(url: string): Promise<Record<string, unknown>> {
		const parsed = new URL(url);
		return this.#call(parsed, parsed.pathname.replace(/^.*(\/api\/v1\/)/, '$1'));
	}

	async #call(url: URL, path: string): Promise<Record<string, unknown>> {
		for (let attempt = 0; ; attempt++) {
			if (this.calls >= this.#o.maxCalls) throw new BudgetSpent(this.#o.maxCalls);
			if (this.#left() <= 0) throw new RunDeadlinePassed(this.calls, this.#o.runDeadlineMs);
			this.calls += 1;
			this.#o.onCall?.(path);
			let status: number | null = null;
			let retryAfter: string | string[] | undefined;
			let text = '';
			try {
				const answer = await boundedRequest(url, {
					headers: { authorization: `Bearer ${this.#o.token}`, accept: 'application/json' },
					idleMs: this.#o.timeoutMs,
					deadlineMs: Math.max(1, Math.min(this.#o.callDeadlineMs, this.#left())),
					maxBytes: this.#o.maxAnswerBytes,
					dispatcher: this.#o.dispatcher,
				});
				status = answer.status;
				text = answer.text;
				retryAfter = answer.headers['retry-after'];
			} catch (error) {
				if (error instanceof AnswerTooLarge)
					throw new ApiError(path, null, `${path} answered more than ${error.limit} bytes`);
				text = error instanceof Error ? error.message : String(error);
			}
			if (status !== null && status >= 200 && status < 300) {
				try {
					const parsed: unknown = JSON.parse(text);
					if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
						return parsed as Record<string, unknown>;
				} catch {
					// fall through
				}
				throw new ApiError(path, status, `${path} answered HTTP ${status} without a JSON object`);
			}
			const retryable = status === null || status === 429 || status >= 500;
			if (!retryable || attempt >= this.#o.retries) {
				const key = errorKey(text);
				throw new ApiError(
					path,
					status,
					status === null
						? `${path} could not be reached (${text.slice(0, 200)})`
						: `${path} answered HTTP ${status}${key ? ` ${key}` : ''}`,
					key,
				);
			}
			const backoff = this.#backoff(attempt, retryAfter);
			if (backoff >= this.#left()) throw new RunDeadlinePassed(this.calls, this.#o.runDeadlineMs);
			await this.#o.sleep(backoff);
		}
	}

	/** The wait before retry `attempt` + 1: the answer's Retry-After, else the doubling back-off. */
	#backoff(attempt: number, retryAfter: string | string[] | undefined): number {
		const { backoffMs: baseMs, maxBackoffMs: maxMs } = this.#o;
		const asked = retryAfterDelay(retryAfter, Date.now(), { baseMs, maxMs, remainingMs: maxMs });
		return asked ?? Math.min(maxMs, baseMs * 2 ** attempt);
	}
}

function errorKey(text: string): string | undefined {
	try {
		const body = JSON.parse(text) as { message?: unknown };
		return typeof body.message === 'string' ? body.message.slice(0, 100) : undefined;
	} catch {
		return undefined;
	}
}
