/**
 * The intake, the one door for incoming events (postback routes and catch-up alike), on a real
 * SQLite store with a forwarder stand-in that records the hand-off: every lease() is followed by
 * exactly one adopt() with the same count, whatever the insert's outcome; the look-ups, the pair
 * limit, the metrics and the wake-up are applied the same way for both sources.
 */
import type { Counter } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { Intake } from '../../relay/src/intake.ts';
import type { IntakeOptions, Source } from '../../relay/src/intake.ts';
import { LookUpBudget, WindowCounter } from '../../relay/src/limits.ts';
import { Metrics } from '../../relay/src/metrics.ts';
import { StoreInputError } from '../../relay/src/store/input.ts';
import type { ClaimedDelivery, DeliveryLease, Store } from '../../relay/src/store/types.ts';
import { freshSqliteStore } from './fresh-store.ts';
import { start } from '../../relay/src/server.ts';
import { LogSink, Target, baseEnv, form, md5, paymentFields, TOKEN, tempDir } from './helpers.ts';

const TARGETS = {
	payment: ['http://127.0.0.1:9/pay', 'http://127.0.0.1:9/pay-2'],
	payout: ['http://127.0.0.1:9/payout'],
	success: [],
	fail: ['http://127.0.0.1:9/fail'],
	refund: [],
	chargeback: [],
};

/** A forwarder stand-in: `free` slots to lease, and every lease, adopt and kick in order. */
class HandOff {
	calls: string[] = [];
	adopted: Array<{ claimed: readonly ClaimedDelivery[] | undefined; reserved: number }> = [];
	free: number;
	constructor(free = 100) {
		this.free = free;
	}
	lease(n: number): DeliveryLease | undefined {
		if (this.free < n) {
			this.calls.push(`no lease ${n}`);
			return undefined;
		}
		this.free -= n;
		this.calls.push(`lease ${n}`);
		return { owner: 'test-forwarder', until: Date.now() + 60_000 };
	}
	adopt(claimed: readonly ClaimedDelivery[] | undefined, reserved: number): void {
		this.free += reserved;
		this.calls.push(`adopt ${reserved}`);
		this.adopted.push({ claimed, reserved });
	}
	kick(): void {
		this.calls.push('kick');
	}
}

const postback = (fields: Record<string, string>): Source => ({
	via: 'postback',
	body: form(fields),
	contentType: 'application/x-www-form-urlencoded',
	tokenIndex: 0,
});

async function count(counter: Counter, labels: Record<string, string>): Promise<number> {
	const { values } = await counter.get();
	const found = values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x));
	return found?.value ?? 0;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
	for (const c of cleanups.splice(0).reverse()) await c();
});

async function intakeOn(
	options: Partial<IntakeOptions> & { pairMax?: number } = {},
	handOff = new HandOff(),
) {
	const opened = await freshSqliteStore();
	cleanups.push(opened.cleanup);
	const metrics = new Metrics();
	const intake = new Intake({
		config: {
			pairLimit: { max: options.pairMax ?? 10, windowMs: 3_600_000 },
			payoutCheck: 'off',
			apiBaseUrl: 'http://127.0.0.1:9',
			apiTokens: ['token'],
			deliveryTimeoutMs: 1_000,
			...options.config,
		},
		store: options.store ?? opened.store,
		metrics,
		targets: TARGETS,
		forwarder: handOff,
	});
	return { intake, store: opened.store, metrics, handOff };
}

/**
 * A service stand-in: `payment/status` answers the payments in `known`, 404 payment_not_found
 * otherwise (and `bill/status` 404 bill_not_found: no id names a bill).
 */
async function service(known: Record<string, Record<string, unknown>>) {
	const api = await new Target().listen();
	cleanups.push(() => api.close());
	api.responder = (req) => {
		const url = new URL(req.path, 'http://x');
		const id = url.searchParams.get('id') ?? '';
		if (id === 'down') return { status: 502 };
		if (url.pathname.endsWith('/bill/status'))
			return { status: 404, body: '{"success":false,"message":"api:error.bill_not_found"}' };
		const record = known[id];
		return record
			? { status: 200, body: JSON.stringify({ success: true, ...record }) }
			: { status: 404, body: '{"success":false,"message":"api:error.payment_not_found"}' };
	};
	return api;
}

describe('intake', () => {
	it('hands a stored postback to the forwarder: one adopt per lease, with the claimed deliveries, and no kick', async () => {
		const api = await service({ 'T-1': { id: 'T-1', status: 'SUCCESS' } });
		const { intake, store, metrics, handOff } = await intakeOn({
			config: { apiBaseUrl: api.url('') } as IntakeOptions['config'],
		});
		const fields = paymentFields('T-1');
		const first = await intake.admit('payment', fields, postback(fields));
		expect(first).toMatchObject({ outcome: 'stored', duplicate: false, deliveries: 2 });
		expect(handOff.calls).toEqual(['lease 2', 'adopt 2']);
		expect(handOff.adopted[0].claimed?.map((d) => d.target)).toEqual(TARGETS.payment);
		const stored = await store.getEvent((first as { eventId: string }).eventId);
		expect(stored).toMatchObject({ source: 'postback', kind: 'payment' });
		expect(stored?.fields).not.toHaveProperty('SignatureValue');

		// The service's retry: a duplicate (the service knows T-1 as a payment, not a bill),
		// acknowledged, counted, nothing to hand over.
		const again = await intake.admit('payment', fields, postback(fields));
		expect(again).toMatchObject({ outcome: 'stored', duplicate: true });
		expect(api.received.map((r) => r.path)).toEqual(['/api/v1/payment/status?id=T-1']);
		expect(handOff.calls).toEqual(['lease 2', 'adopt 2', 'lease 2', 'adopt 2']);
		expect(handOff.free).toBe(100);
		expect(await count(metrics.received, { kind: 'payment' })).toBe(2);
		expect(await count(metrics.duplicates, { kind: 'payment' })).toBe(1);
	});

	it('wakes the forwarder when it had no free slot for the event', async () => {
		const { intake, handOff } = await intakeOn({}, new HandOff(1));
		const fields = paymentFields('T-2');
		expect(await intake.admit('payment', fields, postback(fields))).toMatchObject({
			outcome: 'stored',
			duplicate: false,
		});
		expect(handOff.calls).toEqual(['no lease 2', 'kick']);
	});

	it('gives the leased slots back when the store refuses the event or fails', async () => {
		const { intake, handOff, store } = await intakeOn();
		const nul = { ...paymentFields('T-3'), custom: 'a\u0000b' };
		await expect(intake.admit('payment', nul, postback(nul))).rejects.toBeInstanceOf(
			StoreInputError,
		);
		const failing = Object.create(store) as Store;
		failing.insertEvent = () => Promise.reject(new Error('database gone'));
		failing.listEvents = (filter) => store.listEvents(filter);
		const broken = await intakeOn({ store: failing }, handOff);
		const fields = paymentFields('T-4');
		await expect(broken.intake.admit('payment', fields, postback(fields))).rejects.toThrow(
			'database gone',
		);
		expect(handOff.calls).toEqual(['lease 2', 'adopt 2', 'lease 2', 'adopt 2']);
		expect(handOff.adopted.map((a) => a.claimed)).toEqual([undefined, undefined]);
		expect(handOff.free).toBe(100);
	});

	it('reads no event for a postback with no twin: the one-payment-one-event check is in the insert; a catch-up event after it is read and known', async () => {
		const api = await service({});
		const { intake, store } = await intakeOn({
			config: { apiBaseUrl: api.url('') } as IntakeOptions['config'],
		});
		const reads: string[] = [];
		const listEvents = store.listEvents.bind(store);
		store.listEvents = async (filter) => {
			reads.push(String(filter.trsId));
			return await listEvents(filter);
		};
		for (const id of ['N-1', 'N-2', 'N-3']) {
			const fields = paymentFields(id);
			expect(await intake.admit('payment', fields, postback(fields))).toMatchObject({
				outcome: 'stored',
				duplicate: false,
			});
			// The service's retry: a duplicate, still no read (the service knows the TrsId as
			// neither a payment nor a bill: no payment of a bill to choose).
			expect(await intake.admit('payment', fields, postback(fields))).toMatchObject({
				duplicate: true,
			});
		}
		expect(reads).toEqual([]);
		expect(api.received).toHaveLength(6);
		// A postback under another status of N-1 has a twin: read once, then stored.
		const failed = { ...paymentFields('N-1'), Status: 'FAIL' };
		expect(await intake.admit('payment', failed, postback(failed))).toMatchObject({
			outcome: 'stored',
			duplicate: false,
		});
		expect(reads).toEqual(['N-1']);
	});

	it('refuses payout postbacks over the pair limit with 429 and a Retry-After, giving the slots back; catch-up events are not limited', async () => {
		const { intake, handOff, metrics, store } = await intakeOn({ pairMax: 2 });
		// RELAY_PAYOUT_CHECK=off here: one signed pair (Amount, TrsId), several statuses.
		const payout = (status: string) => ({ TrsId: 'PO-1', Amount: '10.00', Status: status });
		for (const status of ['SUCCESS', 'FAIL']) {
			expect(await intake.admit('payout', payout(status), postback(payout(status)))).toMatchObject({
				outcome: 'stored',
			});
		}
		const refused = await intake.admit('payout', payout('DECLINED'), postback(payout('DECLINED')));
		expect(refused).toMatchObject({ outcome: 'refused', status: 429, reason: 'pair_limit' });
		expect((refused as { retryAfter: number }).retryAfter).toBeGreaterThan(0);
		expect(await count(metrics.rejected, { kind: 'payout', reason: 'pair_limit' })).toBe(1);
		expect(await count(metrics.received, { kind: 'payout' })).toBe(2);
		expect(handOff.free).toBe(100);

		const forged = (trsId: string) => paymentFields(trsId, { invId: 'order-1', outSum: '10.00' });
		const { SignatureValue: _, ...rebuilt } = forged('F-4');
		const caught = await intake.admit('payment', forged('F-4'), {
			via: 'catch-up',
			orderUnknown: false,
		});
		expect(caught).toMatchObject({ outcome: 'stored', duplicate: false, deliveries: 2 });
		const event = await store.getEvent((caught as { eventId: string }).eventId);
		expect(event).toMatchObject({ source: 'catch-up', fields: rebuilt });
		expect(await count(metrics.catchupEvents, { kind: 'payment' })).toBe(1);
		expect(await count(metrics.received, { kind: 'payment' })).toBe(0);
		// FAIL and DECLINED have a twin (PO-1 under another status): the insert stores nothing and
		// says so, fidelity.ts finds no event of their own status, and they are inserted again
		// without the check: two inserts each, every lease given back by its adopt.
		expect(handOff.calls.filter((c) => c.startsWith('lease'))).toHaveLength(6);
		expect(handOff.calls.filter((c) => c.startsWith('adopt'))).toHaveLength(6);
	});

	it('admits a catch-up payment without order ID only when no event of the same TrsId, status and amount is stored', async () => {
		const { intake, store } = await intakeOn();
		const genuine = paymentFields('T-5', { invId: 'order-5', outSum: '18.50' });
		await intake.admit('payment', genuine, postback(genuine));
		// The same payment as the catch-up rebuilds it: InvId '' (no order ID told), another spelling.
		const rebuilt = paymentFields('T-5', { invId: '', outSum: '18.5' });
		const unknownOrder: Source = { via: 'catch-up', orderUnknown: true };
		expect(await intake.admit('payment', rebuilt, unknownOrder)).toEqual({ outcome: 'known' });
		expect(await store.listEvents({ trsId: 'T-5', limit: 10 })).toHaveLength(1);
		// Another amount is another event.
		const other = { ...rebuilt, OutSum: '20.00' };
		expect(await intake.admit('payment', other, unknownOrder)).toMatchObject({
			outcome: 'stored',
			duplicate: false,
		});
	});

	it('stores a payout postback only when the service knows its TrsId; a service that fails is "unavailable"', async () => {
		const service = await new Target().listen();
		cleanups.push(() => service.close());
		const known = new Set(['P-1']);
		service.responder = (req) => {
			const id = new URL(req.path, 'http://x').searchParams.get('id') ?? '';
			if (id === 'P-down') return { status: 502 };
			return known.has(id)
				? { status: 200, body: JSON.stringify({ id }) }
				: { status: 404, body: '{"success":false}' };
		};
		const { intake, metrics, store } = await intakeOn({
			config: {
				pairLimit: { max: 10, windowMs: 60_000 },
				payoutCheck: 'service',
				apiBaseUrl: service.url(''),
				apiTokens: ['token'],
				deliveryTimeoutMs: 1_000,
			},
		});
		const payout = (trsId: string) => ({ TrsId: trsId, Amount: '5.00', Status: 'SUCCESS' });
		expect(await intake.admit('payout', payout('P-1'), postback(payout('P-1')))).toMatchObject({
			outcome: 'stored',
		});
		expect(await intake.admit('payout', payout('P-2'), postback(payout('P-2')))).toMatchObject({
			outcome: 'refused',
			status: 403,
			reason: 'unknown_payout',
		});
		expect(
			await intake.admit('payout', payout('P-down'), postback(payout('P-down'))),
		).toMatchObject({ outcome: 'unavailable' });
		expect(await count(metrics.rejected, { kind: 'payout', reason: 'unknown_payout' })).toBe(1);
		expect(await store.listEvents({ kind: 'payout', limit: 10 })).toHaveLength(1);
		// The catch-up read the payout from the service itself: no look-up.
		const asked = service.received.length;
		expect(
			await intake.admit('payout', payout('P-9'), { via: 'catch-up', orderUnknown: false }),
		).toMatchObject({ outcome: 'stored' });
		expect(service.received).toHaveLength(asked);
	});
});

describe('look-ups of incoming postbacks', () => {
	const config = (url: string, global = 60, memory = 60_000) => ({
		pairLimit: { max: 2, windowMs: 3_600_000 },
		payoutCheck: 'service' as const,
		apiBaseUrl: url,
		apiTokens: ['token'],
		deliveryTimeoutMs: 1_000,
		lookUpLimit: { globalPerMinute: global, refusalMemoryMs: memory },
	});
	const sale = (trsId: string, extra: Record<string, string> = {}) => ({
		...paymentFields(trsId, { invId: 'link-1', outSum: '10.50' }),
		...extra,
	});
	const record = (id: string, amount: string, status = 'SUCCESS') => ({
		id,
		status,
		amount,
		bill_id: 'B-1',
		currency_in: 'RUB',
	});

	it('over the pair limit, stores a payment the service knows as final with that amount (also amount + the commission the record names) and refuses (403) the rest', async () => {
		const api = await service({
			S3: record('S3', '10.50'),
			// OutSum 10.50 = amount 10.00 + the commission 0.50 the record shows and the postback names.
			S4: { ...record('S4', '10.00'), commission: '0.50' },
			S5: record('S5', '10.50', 'PROCESS'),
			S6: record('S6', '99.00'),
			S7: record('S7', '10.50', 'FAIL'),
			S8: record('S8', '10.50', 'PROCESS'),
		});
		const { intake, metrics, store } = await intakeOn({ config: config(api.url('')) });
		/** A payment of its own pair (InvId link-<id>), after two others filled that pair's limit. */
		const overLimit = async (id: string, extra: Record<string, string> = {}) => {
			const of = (trsId: string) => ({ ...sale(trsId, extra), InvId: `link-${id}` });
			const signed = (f: Record<string, string>) => ({
				...f,
				SignatureValue: md5(`${f.OutSum}:${f.InvId}:${TOKEN}`),
			});
			for (const filler of [`${id}-a`, `${id}-b`]) {
				const f = signed(of(filler));
				expect(await intake.admit('payment', f, postback(f))).toMatchObject({ outcome: 'stored' });
			}
			const f = signed(of(id));
			return intake.admit('payment', f, postback(f));
		};
		expect(await overLimit('S3')).toMatchObject({ outcome: 'stored', duplicate: false });
		expect(await overLimit('S4', { Commission: '0.50' })).toMatchObject({ outcome: 'stored' });
		// Not final yet: the service retries (503). Another amount, another status, unknown: 403.
		expect(await overLimit('S5')).toMatchObject({ outcome: 'unavailable' });
		// A postback that claims the not-final status the service shows is not a final payment.
		expect(await overLimit('S8', { Status: 'PROCESS' })).toMatchObject({
			outcome: 'unavailable',
		});
		expect(await overLimit('S6')).toMatchObject({
			outcome: 'refused',
			status: 403,
			detail: expect.stringMatching(/OutSum 10.50 is not the payment's amount/),
		});
		expect(await overLimit('S7')).toMatchObject({
			status: 403,
			detail: expect.stringMatching(/as FAIL, the postback says SUCCESS/),
		});
		expect(await overLimit('forged')).toMatchObject({
			status: 403,
			detail: expect.stringMatching(/does not know payment forged/),
		});
		// The fillers went in under the limit without a call; each payment over it made one (and
		// the unknown one asked whether it names a bill).
		expect(api.received.map((r) => r.path)).toEqual([
			...['S3', 'S4', 'S5', 'S8', 'S6', 'S7', 'forged'].map(
				(id) => `/api/v1/payment/status?id=${id}`,
			),
			'/api/v1/bill/status?id=forged',
		]);
		expect(await count(metrics.lookUps, { kind: 'payment', outcome: 'known' })).toBe(2);
		expect(await count(metrics.lookUps, { kind: 'payment', outcome: 'failed' })).toBe(2);
		expect(await count(metrics.lookUps, { kind: 'payment', outcome: 'refused' })).toBe(3);
		expect(await count(metrics.rejected, { kind: 'payment', reason: 'unknown_payment' })).toBe(3);
		expect(await store.listEvents({ limit: 100 })).toHaveLength(14 + 2);
	});

	it('remembers a refusal (no second call), answers 429 over the look-ups of one pair and 503 + Retry-After over the global ceiling, counted', async () => {
		const api = await service({ K1: record('K1', '10.50') });
		const { intake, metrics, store } = await intakeOn({ config: config(api.url(''), 3) });
		for (const id of ['S1', 'S2']) await intake.admit('payment', sale(id), postback(sale(id)));
		const forged = await intake.admit('payment', sale('F1'), postback(sale('F1')));
		expect(forged).toMatchObject({ outcome: 'refused', status: 403, reason: 'unknown_payment' });
		// payment/status, then bill/status (is F1 a bill's id?): one look-up.
		expect(api.received).toHaveLength(2);
		// The same forged TrsId again: refused from memory, no call.
		expect(await intake.admit('payment', sale('F1'), postback(sale('F1')))).toMatchObject({
			status: 403,
		});
		expect(api.received).toHaveLength(2);
		expect(await count(metrics.lookUps, { kind: 'payment', outcome: 'remembered' })).toBe(1);
		// The pair's look-ups this minute (RELAY_PAIR_LIMIT: 2) are spent: 429.
		await intake.admit('payment', sale('F2'), postback(sale('F2')));
		const perPair = await intake.admit('payment', sale('F3'), postback(sale('F3')));
		expect(perPair).toMatchObject({ outcome: 'refused', status: 429, reason: 'pair_limit' });
		expect(api.received).toHaveLength(4);
		// The global ceiling (3 a minute): a payout of another pair takes the third, then 503.
		const payout = (id: string) => ({ TrsId: id, Amount: '5.00', Status: 'SUCCESS' });
		await intake.admit('payout', payout('P1'), postback(payout('P1')));
		expect(api.received).toHaveLength(5);
		const over = await intake.admit('payout', payout('P2'), postback(payout('P2')));
		expect(over).toMatchObject({ outcome: 'unavailable' });
		expect((over as { retryAfter: number }).retryAfter).toBeGreaterThan(0);
		expect((over as { retryAfter: number }).retryAfter).toBeLessThanOrEqual(60);
		expect(api.received).toHaveLength(5);
		expect(await count(metrics.lookUpsThrottled, { kind: 'payout' })).toBe(1);
		expect(await store.listEvents({ limit: 10 })).toHaveLength(2);
	});
});

describe('LookUpBudget', () => {
	it('forgets a refusal after the memory time, keeps at most `remembered` of them (the oldest go first), and counts per pair and for all', () => {
		const budget = new LookUpBudget({ perPair: 2, global: 3, refusalMemoryMs: 1_000 }, 2);
		const f = (trsId: string) => ({ TrsId: trsId });
		budget.refused('pair', f('A'), 'unknown A', 0);
		expect(budget.take('pair', f('A'), 999)).toEqual({ over: 'remembered', reason: 'unknown A' });
		expect(budget.take('pair', f('A'), 1_000)).toBeUndefined();
		budget.refused('pair', f('B'), 'unknown B', 1_000);
		budget.refused('pair', f('C'), 'unknown C', 1_000);
		budget.refused('pair', f('D'), 'unknown D', 1_000);
		expect(budget.remembered).toBe(2);
		expect(budget.take('other', f('B'), 1_001)).toBeUndefined();
		expect(budget.take('pair', f('D'), 1_001)).toMatchObject({ over: 'remembered' });
		// Per pair: 'pair' took one at 1000; one more, then 'pair' is over.
		expect(budget.take('pair', f('E'), 1_002)).toBeUndefined();
		expect(budget.take('pair', f('F'), 1_003)).toMatchObject({ over: 'pair' });
		// All pairs: 3 calls this minute were made ('pair' twice, 'other' once): the next is over.
		expect(budget.take('third', f('G'), 1_004)).toEqual({ over: 'global', retryAfter: 60 });
		expect(budget.take('third', f('G'), 61_000)).toBeUndefined();
	});
});

describe('WindowCounter', () => {
	it('lets `max` calls per key through per window, then answers the seconds left', () => {
		const counter = new WindowCounter(2, 10_000, 2);
		expect(counter.take('a', 0)).toBeUndefined();
		expect(counter.take('a', 1_000)).toBeUndefined();
		expect(counter.take('a', 2_000)).toBe(8);
		expect(counter.take('b', 2_000)).toBeUndefined();
		expect(counter.take('a', 10_000)).toBeUndefined();
		// A third key pushes out the oldest one: it starts over.
		expect(counter.take('c', 10_000)).toBeUndefined();
		expect(counter.take('c', 10_000)).toBeUndefined();
		expect(counter.take('c', 10_000)).toBe(10);
	});
});

describe('the postback routes on the intake', () => {
	it('record a refused postback with the status it was answered with (403, 429), not 400', async () => {
		const service = await new Target().listen();
		cleanups.push(() => service.close());
		service.responder = () => ({ status: 404, body: '{"success":false}' });
		const tmp = tempDir();
		cleanups.push(async () => tmp.cleanup());
		const sink = new LogSink();
		const relay = await start(
			baseEnv(
				tmp.dir,
				{ payment: ['http://127.0.0.1:9/pay'], payout: ['http://127.0.0.1:9/payout'] },
				{
					RELAY_PAYOUT_CHECK: 'service',
					PAYPALYCH_API_BASE_URL: service.url(''),
					RELAY_PAIR_LIMIT: '1',
				},
			),
			{ deps: { logStream: sink, forwarder: false } },
		);
		cleanups.push(() => relay.close());
		const post = (path: string, fields: Record<string, string>) =>
			relay.app.inject({
				method: 'POST',
				url: path,
				headers: { 'content-type': 'application/x-www-form-urlencoded' },
				payload: form(fields),
			});
		const payout = { TrsId: 'P-7', Amount: '5.00', Status: 'SUCCESS' };
		const unknown = await post('/postback/payout', {
			...payout,
			SignatureValue: md5(`5.00:P-7:${TOKEN}`),
		});
		expect(unknown.statusCode).toBe(403);
		const pair = (trsId: string) => paymentFields(trsId, { invId: 'order-9', outSum: '9.00' });
		expect((await post('/postback/payment', pair('X-1'))).statusCode).toBe(200);
		// Over RELAY_PAIR_LIMIT a payment is looked up: unknown to the service, 403; the pair's
		// look-ups this minute (RELAY_PAIR_LIMIT of them) spent, 429.
		expect((await post('/postback/payment', pair('X-2'))).statusCode).toBe(403);
		const limited = await post('/postback/payment', pair('X-4'));
		expect(limited.statusCode).toBe(429);
		const forged = await post('/postback/payment', {
			...pair('X-3'),
			SignatureValue: md5('9.00:order-9:wrong-token'),
		});
		expect(forged.statusCode).toBe(401);

		const rejected = sink.lines
			.map((line) => JSON.parse(line) as Record<string, unknown>)
			.filter((line) => line.msg === 'rejected');
		expect(rejected.map((line) => [line.status, line.reason])).toEqual([
			[403, 'unknown_payout'],
			[403, 'unknown_payment'],
			[429, 'pair_limit'],
			[401, 'bad_signature'],
		]);
		for (const line of rejected) {
			expect((line.res as { statusCode: number }).statusCode).toBe(line.status);
		}
	});
});
