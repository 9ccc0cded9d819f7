import type { PostbackEvent } from './contract.ts';

/**
 * What the forwarder does with a target's answer: success, retry or a permanent refusal, and how
 * long to wait before the next attempt. Pure functions, no I/O.
 */

export type Outcome = 'success' | 'retry' | 'permanent';

export const NO_RECEIPT_ERROR =
	'2xx without an X-PayPalych-Receipt header: the target is not a PayPalych Trigger answering (n8n starting up?)';

/**
 * 2xx is success. Timeouts and connection errors (status undefined), 404 (an inactive n8n
 * workflow), 408, 429 and 5xx are retried. Redirect events accept 3xx too: the trigger answers a
 * browser redirect with a redirect. Anything else (400, 401, 403, 410, 413, ...) is a permanent
 * refusal: the delivery goes dead at once and waits for an operator (admin requeue).
 *
 * With `requireReceipt` (the default), a success answer counts only when it carries the trigger's
 * X-PayPalych-Receipt header (any value). Without it the answer did not come from the trigger: n8n
 * answers every request, webhooks included, with 200 "n8n is starting up. Please wait" while it
 * starts. Such an answer is retried like a 503.
 */
export function classify(
	status: number | undefined,
	kind: PostbackEvent,
	receipt?: { required: boolean; present: boolean },
): Outcome {
	if (status === undefined) return 'retry';
	const ok =
		(status >= 200 && status < 300) ||
		(status >= 300 && status < 400 && (kind === 'success' || kind === 'fail'));
	if (ok) return receipt && receipt.required && !receipt.present ? 'retry' : 'success';
	if (status === 404 || status === 408 || status === 429 || status >= 500) return 'retry';
	return 'permanent';
}

/** Exponential backoff with equal jitter: half of min(max, base * 2^(attempt-1)) plus a random half. */
export function backoffDelay(
	attempt: number,
	baseMs: number,
	maxMs: number,
	random: () => number = Math.random,
): number {
	const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 52)));
	return Math.round(exp / 2 + random() * (exp / 2));
}

/** Retry-After as delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(
	value: string | string[] | undefined,
	now: number,
): number | undefined {
	const v = Array.isArray(value) ? value[0] : value;
	if (v === undefined || v.trim() === '') return undefined;
	if (/^\s*\d+\s*$/.test(v)) return Number(v.trim()) * 1000;
	const at = Date.parse(v);
	if (Number.isNaN(at)) return undefined;
	return Math.max(0, at - now);
}

/**
 * The wait a 429/503's Retry-After asks for, kept within bounds: never below `baseMs` (a past
 * date or `0` must not make the queue hammer the target), never above `maxMs` or the delivery's
 * remaining retry budget (`Retry-After: 999999999` must not park it for years: at worst the last
 * attempt falls at the end of its budget). Undefined when the header is absent or unreadable.
 */
export function retryAfterDelay(
	value: string | string[] | undefined,
	now: number,
	bounds: { baseMs: number; maxMs: number; remainingMs: number },
): number | undefined {
	const asked = parseRetryAfter(value, now);
	if (asked === undefined) return undefined;
	return Math.max(bounds.baseMs, Math.min(asked, bounds.maxMs, bounds.remainingMs));
}

/** How a failed delivery is retried: the backoff bounds and the budget from its first attempt. */
export interface RetrySchedule {
	baseDelayMs: number;
	maxDelayMs: number;
	/** How long after its budget start a delivery may still be attempted (RELAY_RETRY_BUDGET). */
	retryBudgetMs: number;
	/** Source of jitter, [0, 1). */
	random: () => number;
}

/** A failed attempt, as far as the schedule is concerned. */
export interface FailedAttempt {
	status: number | undefined;
	retryAfter: string | string[] | undefined;
	/** Attempts made since the budget started (1 for the first). */
	attempt: number;
	budgetStart: number;
}

/** What follows a failed attempt: another one at `at`, or death (refused, or budget spent). */
export type AfterFailure =
	| { next: 'retry'; at: number; delayMs: number }
	| { next: 'dead'; why: 'refused' | 'budget' };

/**
 * The retry-budget rule: a permanent refusal is dead at once; a retryable failure waits for a
 * 429/503's Retry-After (bounded by retryAfterDelay) or the backoff, and is dead instead when that
 * wait would end after the budget.
 */
export function afterFailure(
	outcome: Exclude<Outcome, 'success'>,
	failed: FailedAttempt,
	now: number,
	schedule: RetrySchedule,
): AfterFailure {
	if (outcome === 'permanent') return { next: 'dead', why: 'refused' };
	const { baseDelayMs: baseMs, maxDelayMs: maxMs } = schedule;
	const end = failed.budgetStart + schedule.retryBudgetMs;
	const fromHeader =
		failed.status === 429 || failed.status === 503
			? retryAfterDelay(failed.retryAfter, now, { baseMs, maxMs, remainingMs: end - now })
			: undefined;
	const delayMs = fromHeader ?? backoffDelay(failed.attempt, baseMs, maxMs, schedule.random);
	const at = now + delayMs;
	return at > end ? { next: 'dead', why: 'budget' } : { next: 'retry', at, delayMs };
}
