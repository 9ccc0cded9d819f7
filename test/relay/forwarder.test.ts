// The forwarder's results: written in batches (ResultBatcher), each delivery freed after its commit,
// with the trigger's receipt each answer carried.
import { afterEach, describe, expect, it } from 'vitest';
import { Forwarder } from '../../relay/src/forwarder.ts';
import { createLogger } from '../../relay/src/logging.ts';
import { Metrics } from '../../relay/src/metrics.ts';
import { RESULT_WAIT_MS, ResultBatcher } from '../../relay/src/result-batcher.ts';
import type { DeliveryResult, Store } from '../../relay/src/store/types.ts';
import { freshSqliteStore } from './fresh-store.ts';
import { Target } from './helpers.ts';
import type { Answer } from './helpers.ts';
import { storeEvent } from './store-suite.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

const result = (id: number): DeliveryResult => ({
	outcome: 'delivered',
	id,
	now: 1,
	httpStatus: 200,
	timing: { attempt: 1, startedAt: 0, durationMs: 1 },
});

/** Past the batcher's wait (its timer was set before this one). */
const turn = () => new Promise<void>((resolve) => setTimeout(resolve, RESULT_WAIT_MS + 1));

/** A recordResults whose calls finish when the test says so. */
function controlled() {
	const calls: Array<{ ids: number[]; finish: () => void }> = [];
	const record = (results: readonly DeliveryResult[]) =>
		new Promise<void>((resolve) => calls.push({ ids: results.map((r) => r.id), finish: resolve }));
	return { calls, record };
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
	for (const c of cleanups.splice(0)) await c();
});

/** A fresh SQLite store and a listening target, both closed after the test. */
async function storeAndTarget() {
	const opened = await freshSqliteStore();
	cleanups.push(opened.cleanup);
	const target = await new Target().listen();
	cleanups.push(() => target.close());
	return { store: opened.store, target };
}

describe('ResultBatcher', () => {
	it('writes a result the store refuses once more without the answer, so its outcome is kept', async () => {
		const written: DeliveryResult[] = [];
		// A store that refuses any result carrying an answer (as PostgreSQL refused a NUL).
		const batcher = new ResultBatcher(async (results) => {
			if (results.some((r) => r.timing.response)) throw new Error('invalid byte sequence');
			written.push(...results);
		});
		const dead: DeliveryResult = {
			outcome: 'dead',
			id: 7,
			owner: 'o',
			now: 2,
			httpStatus: 422,
			error: 'HTTP 422',
			timing: {
				attempt: 1,
				startedAt: 0,
				durationMs: 1,
				response: 'refused\u0000',
				receipt: 'rejected',
			},
		};
		await batcher.record(dead);
		expect(written).toEqual([
			{
				...dead,
				error: 'HTTP 422 (the answer could not be stored: Error)',
				timing: { ...dead.timing, response: null, receipt: null },
			},
		]);
		// A store that refuses everything (down): the result fails, as before.
		const down = new ResultBatcher(async () => {
			throw new Error('connection refused');
		});
		await expect(down.record(dead)).rejects.toThrow('connection refused');
	});

	it('writes a lone result after RESULT_WAIT_MS, with the results that came meanwhile', async () => {
		const { calls, record } = controlled();
		const batcher = new ResultBatcher(record);
		let done = false;
		const written = batcher.record(result(1)).then(() => {
			done = true;
		});
		await new Promise((resolve) => setImmediate(resolve));
		expect(calls).toHaveLength(0);
		await turn();
		expect(calls.map((c) => c.ids)).toEqual([[1]]);
		expect(done).toBe(false);
		calls[0].finish();
		await written;
		expect(batcher.idle).toBe(true);
	});

	it('keeps two batches in flight; results that come meanwhile wait and go together, each resolved after its own commit', async () => {
		const { calls, record } = controlled();
		const batcher = new ResultBatcher(record);
		const settled: number[] = [];
		const add = (...ids: number[]) => {
			for (const id of ids) void batcher.record(result(id)).then(() => settled.push(id));
		};
		add(1, 2);
		await turn();
		add(3);
		await turn();
		add(4, 5, 6, 7, 8, 9);
		await turn();
		await turn();
		expect(calls.map((c) => c.ids)).toEqual([[1, 2], [3]]);
		calls[1].finish();
		await turn();
		expect(settled).toEqual([3]);
		expect(calls.map((c) => c.ids)).toEqual([[1, 2], [3], [4, 5, 6, 7, 8, 9]]);
		add(10);
		await turn();
		expect(calls).toHaveLength(3);
		const drained = batcher.drain();
		calls[0].finish();
		await turn();
		expect(settled).toEqual([3, 1, 2]);
		expect(calls[3].ids).toEqual([10]);
		calls[2].finish();
		calls[3].finish();
		await drained;
		expect(settled).toEqual([3, 1, 2, 4, 5, 6, 7, 8, 9, 10]);
		expect(batcher.idle).toBe(true);
	});

	it('writes each result of a failed batch alone once, so a bad one fails alone', async () => {
		const calls: number[][] = [];
		const batcher = new ResultBatcher(async (results) => {
			calls.push(results.map((r) => r.id));
			if (results.some((r) => r.id === 2)) throw new Error('bad row');
		});
		const outcomes = await Promise.allSettled([1, 2, 3].map((id) => batcher.record(result(id))));
		expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
		// The refused one is tried once more without the target's answer (refused again here).
		expect(calls).toEqual([[1, 2, 3], [1], [2], [2], [3]]);
		// A result alone in its batch has failed alone already: only its plain form is tried.
		await expect(batcher.record(result(2))).rejects.toThrow('bad row');
		expect(calls).toHaveLength(7);
	});
});

describe('Forwarder results', () => {
	it('records many simultaneous deliveries in fewer store calls than deliveries: each delivered, with one attempt', async () => {
		const { store: inner, target } = await storeAndTarget();
		// Every answer at about the same time: their results finish together.
		target.responder = () => ({ status: 200, hangMs: 50 });
		const count = { recordResults: 0, results: 0, singleMarks: 0 };
		const store = new Proxy(inner, {
			get(t, prop) {
				if (prop === 'recordResults')
					return (results: readonly DeliveryResult[]) => {
						count.recordResults += 1;
						count.results += results.length;
						return t.recordResults(results);
					};
				if (typeof prop === 'string' && prop.startsWith('mark')) count.singleMarks += 1;
				const value = Reflect.get(t, prop, t) as unknown;
				return typeof value === 'function' ? (value as () => unknown).bind(t) : value;
			},
		}) as Store;
		const n = 60;
		for (let i = 0; i < n; i++) await inner.insertEvent(storeEvent(`F-${i}`, [target.url('/pay')]));
		const forwarder = new Forwarder({
			store,
			metrics: new Metrics(),
			logger: createLogger('silent'),
			concurrency: 64,
			leaseMs: 60_000,
			deliveryTimeoutMs: 5_000,
			retryBudgetMs: 60_000,
			baseDelayMs: 20,
			maxDelayMs: 200,
			pollIntervalMs: 20,
			requireReceipt: true,
		});
		forwarder.start();
		await waitFor('every delivery sent', () => target.received.length === n);
		// stop() lets the deliveries in flight finish, and resolves after their results are written.
		await forwarder.stop();
		expect(forwarder.inFlight).toBe(0);
		expect(count.results).toBe(n);
		expect(count.recordResults).toBeLessThan(n);
		expect(count.singleMarks).toBe(0);
		const deliveries = await inner.listDeliveries({ limit: 100 });
		expect(deliveries).toHaveLength(n);
		expect(deliveries.every((d) => d.status === 'delivered' && d.attempts === 1)).toBe(true);
		const attempts = await inner.listAttempts(deliveries.map((d) => d.id));
		expect(attempts).toHaveLength(n);
		expect(new Set(attempts.map((a) => a.deliveryId)).size).toBe(n);
		expect(attempts.every((a) => a.outcome === 'delivered' && a.httpStatus === 200)).toBe(true);
	});
});

describe("Forwarder: the trigger's receipt", () => {
	it('keeps each receipt a target answers, and none for a target that gives none or garbage', async () => {
		const { store, target } = await storeAndTarget();
		const receipt = (value: string | string[]) => ({ 'x-paypalych-receipt': value });
		// By the TrsId of the call: what the target answers (status and X-PayPalych-Receipt).
		const answers: Record<string, (nth: number) => Answer> = {
			accepted: () => ({ status: 200 }),
			duplicate: () => ({ status: 200, receipt: 'duplicate' }),
			ignored: () => ({ status: 200, receipt: 'ignored' }),
			rejected: () => ({ status: 422, headers: receipt('rejected'), body: 'Not confirmed' }),
			// The service could not confirm it yet: 503 retry, then accepted on the next attempt.
			retry: (nth) => (nth === 1 ? { status: 503, headers: receipt('retry') } : { status: 200 }),
			// A plain webhook (not the trigger): no receipt.
			plain: () => ({ status: 200, receipt: null }),
			// Garbage: another spelling, a word with more, a long text, the header twice.
			upper: () => ({ status: 200, receipt: 'DUPLICATE' }),
			padded: () => ({ status: 200, receipt: 'duplicate; q=1' }),
			long: () => ({ status: 200, receipt: `accepted${'x'.repeat(8000)}` }),
			twice: () => ({ status: 200, receipt: null, headers: receipt(['accepted', 'duplicate']) }),
		};
		const seen = new Map<string, number>();
		target.responder = (req) => {
			const trsId = new URLSearchParams(req.body).get('TrsId')!.slice(2);
			seen.set(trsId, (seen.get(trsId) ?? 0) + 1);
			return answers[trsId](seen.get(trsId)!);
		};
		const ids = new Map<string, string>();
		for (const name of Object.keys(answers)) {
			const inserted = await store.insertEvent(storeEvent(`R-${name}`, [target.url('/pay')]));
			ids.set(name, inserted.eventId);
		}
		const forwarder = new Forwarder({
			store,
			metrics: new Metrics(),
			logger: createLogger('silent'),
			concurrency: 16,
			leaseMs: 60_000,
			deliveryTimeoutMs: 5_000,
			retryBudgetMs: 60_000,
			baseDelayMs: 20,
			maxDelayMs: 50,
			pollIntervalMs: 20,
			// Plain webhooks are delivered without a receipt (RELAY_REQUIRE_RECEIPT=false).
			requireReceipt: false,
		});
		forwarder.start();
		const finished = async () => {
			const all = await store.listDeliveries({ limit: 100 });
			return all.every((d) => d.status === 'delivered' || d.status === 'dead') ? all : undefined;
		};
		const deliveries = await waitFor('every delivery finished', finished);
		await forwarder.stop();
		const attempts = await store.listAttempts(deliveries.map((d) => d.id));
		const of = (name: string) => {
			const d = deliveries.find((x) => x.eventId === ids.get(name))!;
			const mine = attempts.filter((a) => a.deliveryId === d.id);
			return [d.status, d.lastStatus, d.lastReceipt, mine.map((a) => a.receipt)];
		};
		expect(Object.fromEntries(Object.keys(answers).map((name) => [name, of(name)]))).toEqual({
			accepted: ['delivered', 200, 'accepted', ['accepted']],
			duplicate: ['delivered', 200, 'duplicate', ['duplicate']],
			ignored: ['delivered', 200, 'ignored', ['ignored']],
			rejected: ['dead', 422, 'rejected', ['rejected']],
			retry: ['delivered', 200, 'accepted', ['retry', 'accepted']],
			plain: ['delivered', 200, null, [null]],
			upper: ['delivered', 200, null, [null]],
			padded: ['delivered', 200, null, [null]],
			long: ['delivered', 200, null, [null]],
			twice: ['delivered', 200, null, [null]],
		});
	});
});
