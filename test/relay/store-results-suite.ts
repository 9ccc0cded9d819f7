// The store contract's cases of recordResults (run inside storeContract, on every store).
import { expect, it } from 'vitest';
import { StoreInputError } from '../../relay/src/store/input.ts';
import type {
	AttemptTiming,
	Delivery,
	DeliveryAttempt,
	DeliveryResult,
	NewEvent,
	Store,
} from '../../relay/src/store/types.ts';

const T0 = 2_000_000_000_000;

const timing = (attempt: number, startedAt: number, durationMs: number): AttemptTiming => ({
	attempt,
	startedAt,
	durationMs,
});

const event = (trsId: string, targets: string[], receivedAt: number): NewEvent => ({
	kind: 'payment',
	dedupeKey: `payment:${trsId}:SUCCESS`,
	contentType: 'application/x-www-form-urlencoded',
	body: `TrsId=${trsId}&Status=SUCCESS`,
	fields: { TrsId: trsId, Status: 'SUCCESS' },
	receivedAt,
	targets,
});

/** What a delivery's row says, without what differs between two deliveries of one scenario. */
const state = ({ id: _id, eventId: _e, target: _t, createdAt: _c, ...rest }: Delivery) => rest;
const attemptShape = ({ id: _id, deliveryId: _d, ...rest }: DeliveryAttempt) => rest;

export function resultsContract(get: () => Store): void {
	it('records a batch of results in one call: each as its single mark, attempts in the batch order', async () => {
		const store = get();
		await store.insertEvent(event('S-res', ['http://a/', 'http://b/', 'http://c/'], T0));
		await store.insertEvent(event('S-res-2', ['http://d/', 'http://e/'], T0 + 1));
		const claimed = await store.claimDue(T0 + 10, 10, 60_000, 'w');
		expect(claimed).toHaveLength(5);
		const [a, b, c, d, e] = claimed.map((x) => x.id);
		// e is claimed again by another owner: only a delivered result still applies to it.
		await store.releaseLease(e, 'w', T0 + 10);
		const [again] = await store.claimDue(T0 + 20, 10, 60_000, 'x');
		expect(again.id).toBe(e);
		const results: DeliveryResult[] = [
			{
				outcome: 'dead',
				id: c,
				owner: 'w',
				now: T0 + 50,
				httpStatus: 410,
				error: 'HTTP 410',
				timing: { ...timing(1, T0 + 20, 30), response: 'gone' },
			},
			{
				outcome: 'delivered',
				id: e,
				now: T0 + 60,
				httpStatus: 204,
				timing: timing(1, T0 + 40, 20),
			},
			{
				outcome: 'retry',
				id: d,
				owner: 'someone-else',
				now: T0 + 70,
				nextAttemptAt: T0 + 999,
				httpStatus: 503,
				error: 'HTTP 503',
				timing: timing(1, T0 + 20, 50),
			},
			{
				outcome: 'retry',
				id: b,
				owner: 'w',
				now: T0 + 80,
				nextAttemptAt: T0 + 5_000,
				httpStatus: null,
				error: 'ECONNREFUSED',
				timing: timing(1, T0 + 20, 60),
			},
			{
				outcome: 'delivered',
				id: a,
				owner: 'w',
				now: T0 + 90,
				httpStatus: 200,
				timing: { ...timing(1, T0 + 20, 70), origin: 'manual', response: 'ok' },
			},
		];
		await store.recordResults(results);
		const byId = new Map(
			(await store.listDeliveries({ limit: 10 })).map((x) => [x.id, x] as const),
		);
		expect(byId.get(a)).toMatchObject({
			status: 'delivered',
			deliveredAt: T0 + 90,
			lastStatus: 200,
			lastError: null,
			lastResponse: null,
			leaseUntil: null,
		});
		expect(byId.get(b)).toMatchObject({
			status: 'pending',
			nextAttemptAt: T0 + 5_000,
			lastStatus: null,
			lastError: 'ECONNREFUSED',
			leaseUntil: null,
		});
		expect(byId.get(c)).toMatchObject({
			status: 'dead',
			lastStatus: 410,
			lastError: 'HTTP 410',
			lastResponse: 'gone',
		});
		// The wrong owner's retry changed nothing.
		expect(byId.get(d)).toMatchObject({
			status: 'delivering',
			attempts: 1,
			lastError: null,
			leaseUntil: T0 + 10 + 60_000,
		});
		expect(byId.get(e)).toMatchObject({
			status: 'delivered',
			deliveredAt: T0 + 60,
			lastStatus: 204,
		});
		const attempts = await store.listAttempts([a, b, c, d, e]);
		expect(attempts.filter((x) => x.deliveryId === d)).toEqual([]);
		// Attempt ids follow the batch's order.
		expect([...attempts].sort((x, y) => x.id - y.id).map((x) => x.deliveryId)).toEqual([
			c,
			e,
			b,
			a,
		]);
		expect(attempts.find((x) => x.deliveryId === a)).toMatchObject({
			attempt: 1,
			startedAt: T0 + 20,
			durationMs: 70,
			httpStatus: 200,
			error: null,
			outcome: 'delivered',
			origin: 'manual',
			response: 'ok',
		});
		expect(attempts.find((x) => x.deliveryId === b)).toMatchObject({
			httpStatus: null,
			error: 'ECONNREFUSED',
			outcome: 'retry',
			origin: 'scheduled',
			response: null,
		});
		expect(attempts.find((x) => x.deliveryId === c)).toMatchObject({
			httpStatus: 410,
			error: 'HTTP 410',
			outcome: 'dead',
			response: 'gone',
		});
		expect(await store.counts()).toMatchObject({
			delivered: 2,
			dead: 1,
			delivering: 1,
			retrying: 1,
		});
		await store.recordResults([]);
	});

	it('applies results of one delivery given twice in a batch as the same calls in sequence', async () => {
		const store = get();
		const ids = async (trsId: string, at: number) => {
			await store.insertEvent(event(trsId, ['http://a/', 'http://b/', 'http://c/'], at));
			return (await store.claimDue(at, 10, 60_000, 'w')).map((x) => x.id);
		};
		// For each delivery: its results, as one batch on one set of deliveries and one result per call on the other.
		const scenario = (x: number, y: number, z: number): DeliveryResult[] => [
			{
				outcome: 'retry',
				id: x,
				owner: 'w',
				now: T0 + 1,
				nextAttemptAt: T0 + 100,
				httpStatus: 500,
				error: 'HTTP 500',
				timing: timing(1, T0, 1),
			},
			{ outcome: 'delivered', id: y, now: T0 + 2, httpStatus: 200, timing: timing(1, T0, 2) },
			{ outcome: 'delivered', id: x, now: T0 + 3, httpStatus: 200, timing: timing(1, T0, 3) },
			{
				outcome: 'dead',
				id: z,
				owner: 'w',
				now: T0 + 4,
				httpStatus: 410,
				error: 'HTTP 410',
				timing: timing(1, T0, 4),
			},
			{ outcome: 'delivered', id: y, now: T0 + 5, httpStatus: 201, timing: timing(2, T0, 5) },
			{
				outcome: 'dead',
				id: x,
				owner: 'w',
				now: T0 + 6,
				httpStatus: 400,
				error: 'HTTP 400',
				timing: timing(2, T0, 6),
			},
			{
				outcome: 'retry',
				id: z,
				owner: 'w',
				now: T0 + 7,
				nextAttemptAt: T0 + 100,
				httpStatus: 503,
				error: 'HTTP 503',
				timing: timing(2, T0, 7),
			},
		];
		const batched = await ids('S-dup-batch', T0);
		const single = await ids('S-dup-single', T0);
		await store.recordResults(scenario(batched[0], batched[1], batched[2]));
		for (const r of scenario(single[0], single[1], single[2])) await store.recordResults([r]);
		const deliveries = await store.listDeliveries({ limit: 10 });
		const attempts = await store.listAttempts(deliveries.map((x) => x.id));
		const of = (list: number[]) =>
			list.map((id) => ({
				state: state(deliveries.find((x) => x.id === id)!),
				attempts: attempts.filter((x) => x.deliveryId === id).map(attemptShape),
			}));
		expect(of(batched)).toEqual(of(single));
		const [x, y, z] = of(batched);
		// x: the retry, then the delivered one (the dead one came after it: no lease any more).
		expect(x.state).toMatchObject({ status: 'delivered', deliveredAt: T0 + 3 });
		expect(x.attempts.map((a) => a.outcome)).toEqual(['retry', 'delivered']);
		// y: delivered once, both attempts recorded (the target has the event either way).
		expect(y.state).toMatchObject({ status: 'delivered', deliveredAt: T0 + 2, lastStatus: 200 });
		expect(y.attempts.map((a) => a.httpStatus)).toEqual([200, 201]);
		expect(z.state).toMatchObject({ status: 'dead', lastError: 'HTTP 410' });
		expect(z.attempts.map((a) => a.outcome)).toEqual(['dead']);
	});

	it("keeps the trigger's receipt with each attempt, and the latest attempt's with its delivery", async () => {
		const store = get();
		await store.insertEvent(
			event('S-receipt', ['http://a/', 'http://b/', 'http://c/', 'http://d/'], T0),
		);
		const [a, b, c, d] = (await store.claimDue(T0, 10, 60_000, 'w')).map((x) => x.id);
		const at = (n: number, receipt?: AttemptTiming['receipt']) => ({
			...timing(n, T0, 1),
			...(receipt === undefined ? {} : { receipt }),
		});
		await store.recordResults([
			{ outcome: 'delivered', id: a, now: T0 + 1, httpStatus: 200, timing: at(1, 'duplicate') },
			{ outcome: 'delivered', id: b, now: T0 + 1, httpStatus: 200, timing: at(1) },
			{
				outcome: 'dead',
				id: c,
				owner: 'w',
				now: T0 + 1,
				httpStatus: 422,
				error: 'HTTP 422',
				timing: at(1, 'rejected'),
			},
			{
				outcome: 'retry',
				id: d,
				owner: 'w',
				now: T0 + 1,
				nextAttemptAt: T0 + 2,
				httpStatus: 503,
				error: 'HTTP 503',
				timing: at(1, 'retry'),
			},
		]);
		const [again] = await store.claimDue(T0 + 2, 10, 60_000, 'w');
		expect(again.id).toBe(d);
		await store.recordResults([
			{ outcome: 'delivered', id: d, now: T0 + 3, httpStatus: 200, timing: at(2, 'accepted') },
		]);
		const receipts = async (id: number) => ({
			last: (await store.getDelivery(id))?.lastReceipt,
			attempts: (await store.listAttempts([id])).map((x) => x.receipt),
		});
		expect(await receipts(a)).toEqual({ last: 'duplicate', attempts: ['duplicate'] });
		// A target that gave no receipt (not the trigger): none, never a guess.
		expect(await receipts(b)).toEqual({ last: null, attempts: [null] });
		expect(await receipts(c)).toEqual({ last: 'rejected', attempts: ['rejected'] });
		expect(await receipts(d)).toEqual({ last: 'accepted', attempts: ['retry', 'accepted'] });
		const listed = await store.listDeliveries({ eventId: again.eventId, limit: 10 });
		expect(new Map(listed.map((x) => [x.id, x.lastReceipt]))).toEqual(
			new Map([
				[a, 'duplicate'],
				[b, null],
				[c, 'rejected'],
				[d, 'accepted'],
			]),
		);
	});

	it('refuses bad results before any SQL, with a StoreInputError, and changes nothing', async () => {
		const store = get();
		await store.insertEvent(event('S-res-bad', ['http://a/'], T0));
		const [c] = await store.claimDue(T0, 10, 60_000, 'w');
		const good: DeliveryResult = {
			outcome: 'delivered',
			id: c.id,
			now: T0 + 1,
			httpStatus: 200,
			timing: timing(1, T0, 1),
		};
		const retry: DeliveryResult = {
			outcome: 'retry',
			id: c.id,
			owner: 'w',
			now: T0 + 1,
			nextAttemptAt: T0 + 9,
			httpStatus: 500,
			error: 'HTTP 500',
			timing: timing(1, T0, 1),
		};
		const bad = (r: Record<string, unknown>) => [good, r as unknown as DeliveryResult];
		for (const results of [
			bad({ ...good, id: 0 }),
			bad({ ...good, id: 1.5 }),
			bad({ ...good, id: 1e20 }),
			bad({ ...good, outcome: 'lost' }),
			bad({ ...retry, owner: undefined }),
			bad({ ...retry, nextAttemptAt: undefined }),
			bad({ ...retry, error: 'e'.repeat(20_000) }),
			bad({ ...retry, error: 42 }),
			bad({ ...good, timing: { ...good.timing, origin: 'robot' } }),
			bad({ ...good, timing: { ...good.timing, receipt: 'maybe' } }),
			bad({ ...good, timing: { ...good.timing, receipt: ' accepted' } }),
			bad({ ...good, timing: { ...good.timing, receipt: 42 } }),
			bad({ ...good, timing: { ...good.timing, durationMs: -1 } }),
			bad({ ...good, timing: null }),
			[null as unknown as DeliveryResult],
		]) {
			const error = await store.recordResults(results).then(
				() => undefined,
				(e: unknown) => e,
			);
			expect(error).toBeInstanceOf(StoreInputError);
		}
		expect(await store.getDelivery(c.id)).toMatchObject({ status: 'delivering' });
		expect(await store.listAttempts([c.id])).toEqual([]);
	});
}
