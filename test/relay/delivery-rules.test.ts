/** The forwarder's pure rules: backoff, Retry-After, what an answer means, when to give up. */
import { describe, expect, it } from 'vitest';
import {
	afterFailure,
	backoffDelay,
	classify,
	parseRetryAfter,
	retryAfterDelay,
} from '../../relay/src/retry-policy.ts';

describe('delivery rules (pure)', () => {
	it('backs off exponentially with equal jitter, capped', () => {
		expect(backoffDelay(1, 100, 10_000, () => 0)).toBe(50);
		expect(backoffDelay(1, 100, 10_000, () => 0.999999)).toBe(100);
		expect(backoffDelay(4, 100, 10_000, () => 0)).toBe(400);
		expect(backoffDelay(4, 100, 10_000, () => 0.5)).toBe(600);
		expect(backoffDelay(30, 100, 10_000, () => 0)).toBe(5_000);
		expect(backoffDelay(30, 100, 10_000, () => 0.999999)).toBe(10_000);
	});

	it('reads Retry-After as seconds or an HTTP date', () => {
		const now = Date.parse('2026-01-01T00:00:00Z');
		expect(parseRetryAfter('7', now)).toBe(7_000);
		expect(parseRetryAfter(['3'], now)).toBe(3_000);
		expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
		expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
		expect(parseRetryAfter('soon', now)).toBeUndefined();
		expect(parseRetryAfter(undefined, now)).toBeUndefined();
	});

	it('keeps a Retry-After wait between the base delay and the smaller of the max delay and the remaining budget', () => {
		const now = Date.parse('2026-01-01T00:00:00Z');
		const bounds = { baseMs: 5_000, maxMs: 3_600_000, remainingMs: 86_400_000 };
		expect(retryAfterDelay('120', now, bounds)).toBe(120_000);
		expect(retryAfterDelay('999999999', now, bounds)).toBe(3_600_000);
		expect(retryAfterDelay('99999999999999999999999', now, bounds)).toBe(3_600_000);
		expect(retryAfterDelay('999999999', now, { ...bounds, remainingMs: 600_000 })).toBe(600_000);
		expect(retryAfterDelay('0', now, bounds)).toBe(5_000);
		expect(retryAfterDelay('Wed, 31 Dec 2025 00:00:00 GMT', now, bounds)).toBe(5_000);
		expect(retryAfterDelay('Fri, 31 Dec 9999 23:59:59 GMT', now, bounds)).toBe(3_600_000);
		// Less budget left than the base delay: the base delay, so the delivery ends up dead, not hot-looped.
		expect(retryAfterDelay('1', now, { ...bounds, remainingMs: 100 })).toBe(5_000);
		expect(retryAfterDelay('-5', now, bounds)).toBeGreaterThanOrEqual(5_000);
		expect(retryAfterDelay('soon', now, bounds)).toBeUndefined();
	});

	it('after a failure: dead at once when refused, dead when the next wait ends after the budget, else a retry', () => {
		const now = 1_000_000;
		const schedule = {
			baseDelayMs: 100,
			maxDelayMs: 10_000,
			retryBudgetMs: 60_000,
			random: () => 0,
		};
		const failed = { status: 500, retryAfter: undefined, attempt: 3, budgetStart: now - 1_000 };
		expect(afterFailure('permanent', failed, now, schedule)).toEqual({
			next: 'dead',
			why: 'refused',
		});
		// Backoff of the third attempt with no jitter: 400 / 2.
		expect(afterFailure('retry', failed, now, schedule)).toEqual({
			next: 'retry',
			at: now + 200,
			delayMs: 200,
		});
		// 150 ms of budget left: a 200 ms wait is past it.
		const late = { ...failed, budgetStart: now - 59_850 };
		expect(afterFailure('retry', late, now, schedule)).toEqual({ next: 'dead', why: 'budget' });
		// A 429's Retry-After, bounded by the remaining budget: the retry lands on the budget's end.
		const limited = { ...failed, status: 429, retryAfter: '30', budgetStart: now - 50_000 };
		expect(afterFailure('retry', limited, now, schedule)).toEqual({
			next: 'retry',
			at: now + 10_000,
			delayMs: 10_000,
		});
		// A 500's Retry-After is not read: the backoff.
		expect(afterFailure('retry', { ...limited, status: 500 }, now, schedule)).toMatchObject({
			delayMs: 200,
		});
	});

	it('classifies answers: 2xx success; errors, 404, 408, 429, 5xx retried; other refusals permanent', () => {
		expect(classify(200, 'payment')).toBe('success');
		expect(classify(204, 'payout')).toBe('success');
		for (const s of [undefined, 404, 408, 429, 500, 502, 503, 504])
			expect(classify(s, 'payment')).toBe('retry');
		for (const s of [400, 401, 403, 410, 413, 422, 301])
			expect(classify(s, 'payment')).toBe('permanent');
		expect(classify(303, 'success')).toBe('success');
	});

	it("with the receipt required, counts a 2xx or a redirect event's 3xx only when it carries X-PayPalych-Receipt", () => {
		const without = { required: true, present: false };
		const withIt = { required: true, present: true };
		expect(classify(200, 'payment', without)).toBe('retry');
		expect(classify(204, 'payout', without)).toBe('retry');
		expect(classify(303, 'fail', without)).toBe('retry');
		expect(classify(200, 'payment', withIt)).toBe('success');
		expect(classify(303, 'success', withIt)).toBe('success');
		expect(classify(200, 'payment', { required: false, present: false })).toBe('success');
		// Failures stay what they were: a rejected receipt comes with a 4xx.
		expect(classify(401, 'payment', withIt)).toBe('permanent');
		expect(classify(503, 'payment', without)).toBe('retry');
		expect(classify(301, 'payment', without)).toBe('permanent');
	});
});
