import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
	afterFailure,
	backoffDelay,
	classify,
	parseRetryAfter,
	retryAfterDelay,
} from '../../relay/src/retry-policy.ts';
import { start } from '../../relay/src/server.ts';
import { SqliteStore } from '../../relay/src/store-sqlite/store.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import {
	ADMIN_TOKEN,
	LogSink,
	Target,
	baseEnv,
	form,
	freePort,
	paymentFields,
	payoutFields,
	tempDir,
	waitFor,
} from './helpers.ts';

type Row = Record<string, unknown>;

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const admin = (relay: RunningRelay, path: string, init: RequestInit = {}) =>
	fetch(`${relay.url}/admin${path}`, {
		...init,
		headers: {
			authorization: `Bearer ${ADMIN_TOKEN}`,
			...(init.body ? { 'content-type': 'application/json' } : {}),
			...init.headers,
		},
	});
const postPayment = async (relay: RunningRelay, fields: Record<string, string>) => {
	const res = await fetch(`${relay.url}/postback/payment`, {
		method: 'POST',
		headers: FORM,
		body: form(fields),
	});
	return res.status;
};

function openDb(dir: string) {
	const db = new DatabaseSync(join(dir, 'relay.sqlite'), { readOnly: true });
	return {
		db,
		deliveriesFor: (trsId: string) =>
			db
				.prepare(
					`SELECT d.* FROM deliveries d JOIN events e ON e.id = d.event_id
					 WHERE json_extract(e.fields_json, '$.TrsId') = ? ORDER BY d.id`,
				)
				.all(trsId) as Row[],
	};
}

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

describe('forwarder against real targets (long budget)', () => {
	const tmp = tempDir();
	const sink = new LogSink();
	const target = new Target();
	let downPort = 0;
	let late: Target | undefined;
	let relay: RunningRelay;
	let store: ReturnType<typeof openDb>;

	beforeAll(async () => {
		await target.listen();
		downPort = await freePort();
		relay = await start(
			baseEnv(tmp.dir, {
				payment: [target.url('/pay')],
				payout: [`http://127.0.0.1:${downPort}/payout`],
			}),
			{ deps: { logStream: sink } },
		);
		store = openDb(tmp.dir);
	});

	afterAll(async () => {
		store?.db.close();
		await relay?.close();
		await target.close();
		await late?.close();
		tmp.cleanup();
	});

	it('keeps retrying while a target is down and delivers every acknowledged postback once it is up', async () => {
		const ids = Array.from({ length: 25 }, (_, i) => `P-down-${i}`);
		const statuses = await Promise.all(
			ids.map((id) =>
				fetch(`${relay.url}/postback/payout`, {
					method: 'POST',
					headers: FORM,
					body: form(payoutFields(id)),
				}).then((r) => r.status),
			),
		);
		expect(statuses.every((s) => s === 200)).toBe(true);
		// Every delivery has failed at least once against the closed port.
		await waitFor(
			() =>
				ids.every((id) =>
					store.deliveriesFor(id).some((d) => Number(d.attempts) >= 2 && d.last_error),
				),
			'failed attempts',
		);
		expect(store.deliveriesFor(ids[0])[0].status).not.toBe('dead');
		late = await new Target().listen(downPort);
		await waitFor(
			() => ids.every((id) => late!.received.some((r) => r.body.includes(`TrsId=${id}&`))),
			'all payouts after recovery',
		);
		await waitFor(
			() => ids.every((id) => store.deliveriesFor(id)[0].status === 'delivered'),
			'delivered state',
		);
		const metrics = await (await fetch(`${relay.url}/metrics`)).text();
		expect(
			Number(/paypalych_relay_delivery_retries_total\{kind="payout"\} (\d+)/.exec(metrics)?.[1]),
		).toBeGreaterThanOrEqual(25);
	});

	it('honours Retry-After on 429 up to RELAY_MAX_DELAY_MS', async () => {
		const fields = paymentFields('T-429');
		target.responder = (req, _n) =>
			req.body.includes('TrsId=T-429&') &&
			target.received.filter((r) => r.body.includes('TrsId=T-429&')).length === 1
				? { status: 429, headers: { 'retry-after': '1' } }
				: { status: 200 };
		expect(await postPayment(relay, fields)).toBe(200);
		await waitFor(
			() => store.deliveriesFor('T-429')[0]?.status === 'delivered',
			'delivered after 429',
		);
		const hits = target.received.filter((r) => r.body.includes('TrsId=T-429&'));
		expect(hits).toHaveLength(2);
		// Backoff alone would retry after 10-20 ms (attempt 1, RELAY_BASE_DELAY_MS 20); Retry-After
		// asks for one second, clamped to RELAY_MAX_DELAY_MS (200 ms). The retry is claimed only once
		// it is due, so it cannot come earlier.
		expect(hits[1].at - hits[0].at).toBeGreaterThanOrEqual(200);
		expect(store.deliveriesFor('T-429')[0].attempts).toBe(2);

		// Both attempts are kept, with their timing, and shown by the admin API.
		const row = store.deliveriesFor('T-429')[0];
		const detail = (await (await admin(relay, `/events/${String(row.event_id)}`)).json()) as {
			deliveries: Array<{
				id: number;
				attempts: number;
				attemptHistory: Array<Record<string, unknown>>;
			}>;
		};
		expect(detail.deliveries[0].attempts).toBe(2);
		const attempts = detail.deliveries[0].attemptHistory;
		expect(attempts.map((a) => [a.attempt, a.httpStatus, a.outcome, a.error])).toEqual([
			[1, 429, 'retry', 'HTTP 429'],
			[2, 200, 'delivered', null],
		]);
		expect(Number(attempts[0].startedAt)).toBeGreaterThanOrEqual(hits[0].at - 1_000);
		expect(Number(attempts[0].startedAt)).toBeLessThanOrEqual(hits[0].at);
		expect(Number(attempts[1].startedAt) - Number(attempts[0].startedAt)).toBeGreaterThanOrEqual(
			200,
		);
		expect(attempts.every((a) => Number(a.durationMs) >= 0 && a.deliveryId === row.id)).toBe(true);
		const own = await admin(relay, `/deliveries/${String(row.id)}/attempts`);
		expect(own.status).toBe(200);
		const body = (await own.json()) as {
			delivery: { id: number; status: string };
			data: unknown[];
		};
		expect(body.delivery).toMatchObject({ id: row.id, status: 'delivered' });
		expect(body.data).toEqual(attempts);
		expect((await admin(relay, '/deliveries/999999/attempts')).status).toBe(404);
		expect((await admin(relay, '/deliveries/abc/attempts')).status).toBe(400);
		expect((await admin(relay, '/deliveries/0/attempts')).status).toBe(400);
		const found = (await (await admin(relay, '/events?trsId=T-429&status=delivered')).json()) as {
			data: Array<{ id: string }>;
		};
		expect(found.data.map((e) => e.id)).toEqual([String(row.event_id)]);
		expect((await admin(relay, '/events?status=gone')).status).toBe(400);
	});

	it('does not park a delivery for a hostile Retry-After: 999999999, nor hammer a target whose Retry-After is in the past', async () => {
		const answers: Record<string, string> = {
			'T-ra-huge': '999999999',
			'T-ra-past': 'Wed, 21 Oct 2015 07:28:00 GMT',
		};
		target.responder = (req) => {
			const id = Object.keys(answers).find((k) => req.body.includes(`TrsId=${k}&`));
			const seen = target.received.filter((r) => id && r.body.includes(`TrsId=${id}&`)).length;
			return id && seen <= 2
				? { status: seen === 1 ? 429 : 503, headers: { 'retry-after': answers[id] } }
				: { status: 200 };
		};
		for (const id of Object.keys(answers))
			expect(await postPayment(relay, paymentFields(id))).toBe(200);
		// Unclamped, the first would wait 31 years; it is retried after at most RELAY_MAX_DELAY_MS.
		await waitFor(
			() => Object.keys(answers).every((id) => store.deliveriesFor(id)[0]?.status === 'delivered'),
			'delivered after Retry-After',
		);
		for (const id of Object.keys(answers)) {
			const hits = target.received.filter((r) => r.body.includes(`TrsId=${id}&`));
			expect(hits).toHaveLength(3);
			// A past date asks for no wait at all: the relay still waits RELAY_BASE_DELAY_MS (20 ms).
			for (let i = 1; i < hits.length; i++)
				expect(hits[i].at - hits[i - 1].at).toBeGreaterThanOrEqual(20);
		}
	});

	it('retries 404 (inactive workflow) and delivers the same body, content type and event id', async () => {
		const fields = paymentFields('T-404');
		target.responder = (req) =>
			req.body.includes('TrsId=T-404&') &&
			target.received.filter((r) => r.body.includes('TrsId=T-404&')).length <= 2
				? { status: 404 }
				: { status: 200 };
		expect(await postPayment(relay, fields)).toBe(200);
		await waitFor(
			() => store.deliveriesFor('T-404')[0]?.status === 'delivered',
			'delivered after 404s',
		);
		const hits = target.received.filter((r) => r.body.includes('TrsId=T-404&'));
		expect(hits.map((h) => h.headers['x-paypalych-delivery-attempt'])).toEqual(['1', '2', '3']);
		expect(new Set(hits.map((h) => h.headers['x-paypalych-event-id'])).size).toBe(1);
		expect(new Set(hits.map((h) => h.headers['idempotency-key'])).size).toBe(1);
		for (const h of hits) {
			expect(h.body).toBe(form(fields));
			expect(h.headers['content-type']).toBe('application/x-www-form-urlencoded');
		}
		const d = store.deliveriesFor('T-404')[0];
		expect(d.attempts).toBe(3);
		expect(d.last_status).toBe(200);
	});

	it('retries a 200 without X-PayPalych-Receipt and counts the next 200 that carries it', async () => {
		target.responder = (req) =>
			req.body.includes('TrsId=T-no-receipt&') &&
			target.received.filter((r) => r.body.includes('TrsId=T-no-receipt&')).length === 1
				? { status: 200, receipt: null }
				: { status: 200, receipt: 'duplicate' };
		expect(await postPayment(relay, paymentFields('T-no-receipt'))).toBe(200);
		await waitFor(
			() => store.deliveriesFor('T-no-receipt')[0]?.status === 'delivered',
			'delivered with a receipt',
		);
		const hits = target.received.filter((r) => r.body.includes('TrsId=T-no-receipt&'));
		expect(hits.map((h) => h.headers['x-paypalych-delivery-attempt'])).toEqual(['1', '2']);
		expect(store.deliveriesFor('T-no-receipt')[0].attempts).toBe(2);
		const retried = sink.lines
			.map(
				(l) => JSON.parse(l) as { msg: string; error?: string; status?: number; eventId?: string },
			)
			.find(
				(l) =>
					l.msg === 'delivery failed; will retry' &&
					l.eventId === hits[0].headers['x-paypalych-event-id'],
			);
		expect(retried?.status).toBe(200);
		expect(retried?.error).toContain('2xx without an X-PayPalych-Receipt header');
	});

	it('keeps a postback pending while n8n answers "n8n is starting up. Please wait", and delivers it once the trigger answers', async () => {
		let startingUp = true;
		target.responder = (req) =>
			startingUp && req.body.includes('TrsId=T-starting&')
				? {
						status: 200,
						receipt: null,
						headers: { 'content-type': 'text/html; charset=utf-8' },
						body: 'n8n is starting up. Please wait',
					}
				: { status: 200, receipt: 'accepted' };
		expect(await postPayment(relay, paymentFields('T-starting'))).toBe(200);
		await waitFor(
			() => Number(store.deliveriesFor('T-starting')[0]?.attempts) >= 3,
			'attempts during start-up',
		);
		const during = store.deliveriesFor('T-starting')[0];
		expect(during.status).not.toBe('delivered');
		expect(during.last_status).toBe(200);
		expect(String(during.last_error)).toContain('X-PayPalych-Receipt');
		startingUp = false;
		await waitFor(
			() => store.deliveriesFor('T-starting')[0]?.status === 'delivered',
			'delivered after start-up',
		);
		const d = store.deliveriesFor('T-starting')[0];
		expect(Number(d.attempts)).toBeGreaterThanOrEqual(4);
		expect(d.last_error).toBeNull();
	});

	it('abandons an attempt after RELAY_DELIVERY_TIMEOUT_MS and retries it', async () => {
		// baseEnv: RELAY_DELIVERY_TIMEOUT_MS=1000; the first answer would come after 1.5 s.
		target.responder = (req) =>
			req.body.includes('TrsId=T-timeout&') &&
			target.received.filter((r) => r.body.includes('TrsId=T-timeout&')).length === 1
				? { status: 200, hangMs: 1_500 }
				: { status: 200 };
		expect(await postPayment(relay, paymentFields('T-timeout'))).toBe(200);
		await waitFor(
			() => store.deliveriesFor('T-timeout')[0]?.status === 'delivered',
			'delivered after a timeout',
		);
		const hits = target.received.filter((r) => r.body.includes('TrsId=T-timeout&'));
		expect(hits.map((h) => h.headers['x-paypalych-delivery-attempt'])).toEqual(['1', '2']);
		expect(hits[1].at - hits[0].at).toBeGreaterThanOrEqual(950);
		const retried = sink.lines
			.map((l) => JSON.parse(l) as { msg: string; error?: string; eventId?: string })
			.find(
				(l) =>
					l.msg === 'delivery failed; will retry' &&
					l.eventId === hits[0].headers['x-paypalych-event-id'],
			);
		expect(retried?.error).toBe('timeout');
	});

	it('gives up at once on a permanent refusal (400) and lists it as dead', async () => {
		target.responder = (req) =>
			req.body.includes('TrsId=T-400&') ? { status: 400 } : { status: 200 };
		expect(await postPayment(relay, paymentFields('T-400'))).toBe(200);
		await waitFor(() => store.deliveriesFor('T-400')[0]?.status === 'dead', 'dead after 400');
		expect(store.deliveriesFor('T-400')[0].attempts).toBe(1);
		const dead = (await (await admin(relay, '/dead')).json()) as {
			data: Array<{ id: number; lastStatus: number }>;
		};
		expect(dead.data.map((d) => d.id)).toContain(Number(store.deliveriesFor('T-400')[0].id));
		target.responder = () => ({ status: 200 });
		const requeue = await admin(
			relay,
			`/deliveries/${store.deliveriesFor('T-400')[0].id}/requeue`,
			{ method: 'POST' },
		);
		expect(requeue.status).toBe(200);
		await waitFor(
			() => store.deliveriesFor('T-400')[0]?.status === 'delivered',
			'delivered after requeue',
		);
	});

	it("keeps the target's reason for a 422 (at most 1 KiB), shows it to the operator, and numbers a requeued attempt on", async () => {
		const reason = `{"error":"signature mismatch <script>x</script>"}${'é'.repeat(2000)}`;
		target.responder = (req) =>
			req.body.includes('TrsId=T-422&') ? { status: 422, body: reason } : { status: 200 };
		expect(await postPayment(relay, paymentFields('T-422'))).toBe(200);
		await waitFor(() => store.deliveriesFor('T-422')[0]?.status === 'dead', 'dead after 422');
		const id = Number(store.deliveriesFor('T-422')[0].id);
		const kept = Buffer.from(reason, 'utf8')
			.subarray(0, 1024)
			.toString('utf8')
			.replace(/\uFFFD$/, '');
		expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(1024);
		expect(kept.startsWith('{"error":"signature mismatch <script>x</script>"}é')).toBe(true);

		const dead = (await (await admin(relay, '/dead')).json()) as {
			data: Array<{ id: number; lastResponse: string | null }>;
		};
		expect(dead.data.find((d) => d.id === id)?.lastResponse).toBe(kept);
		type Attempts = {
			data: Array<{ attempt: number; origin: string; response: string | null; outcome: string }>;
		};
		const first = (await (await admin(relay, `/deliveries/${id}/attempts`)).json()) as Attempts;
		expect(first.data.map((a) => [a.attempt, a.origin, a.outcome, a.response])).toEqual([
			[1, 'scheduled', 'dead', kept],
		]);

		target.responder = () => ({ status: 200, body: 'ok' });
		expect((await admin(relay, `/deliveries/${id}/requeue`, { method: 'POST' })).status).toBe(200);
		await waitFor(() => store.deliveriesFor('T-422')[0]?.status === 'delivered', 'requeued');
		const after = (await (await admin(relay, `/deliveries/${id}/attempts`)).json()) as Attempts;
		// The requeued attempt is number 2 (numbers never repeat), asked for by an operator.
		expect(after.data.map((a) => [a.attempt, a.origin, a.outcome, a.response])).toEqual([
			[1, 'scheduled', 'dead', kept],
			[2, 'manual', 'delivered', 'ok'],
		]);
		const sent = target.received.filter((r) => r.body.includes('TrsId=T-422&'));
		expect(sent.map((r) => r.headers['x-paypalych-delivery-attempt'])).toEqual(['1', '2']);
	});

	it('replays one event and a time range to the current targets', async () => {
		target.responder = () => ({ status: 200 });
		const t0 = Date.now();
		expect(await postPayment(relay, paymentFields('T-replay-1'))).toBe(200);
		expect(await postPayment(relay, paymentFields('T-replay-2'))).toBe(200);
		const t1 = Date.now() + 1;
		await waitFor(
			() =>
				['T-replay-1', 'T-replay-2'].every(
					(id) => store.deliveriesFor(id)[0]?.status === 'delivered',
				),
			'first delivery',
		);
		const countOf = (id: string) =>
			target.received.filter((r) => r.body.includes(`TrsId=${id}&`)).length;
		const eventId = String(store.deliveriesFor('T-replay-1')[0].event_id);

		const one = await admin(relay, `/events/${eventId}/replay`, { method: 'POST' });
		expect(await one.json()).toEqual({ eventId, deliveries: 1 });
		await waitFor(() => countOf('T-replay-1') === 2, 'single replay');
		const replayed = target.received.filter((r) => r.body.includes('TrsId=T-replay-1&'));
		expect(replayed[1].headers['x-paypalych-event-id']).toBe(eventId);

		const range = await admin(relay, '/replay', {
			method: 'POST',
			body: JSON.stringify({ from: t0, to: new Date(t1).toISOString(), kind: 'payment' }),
		});
		expect(await range.json()).toEqual({ events: 2, deliveries: 2 });
		await waitFor(() => countOf('T-replay-1') === 3 && countOf('T-replay-2') === 2, 'range replay');
		expect(
			(
				await admin(relay, '/replay', {
					method: 'POST',
					body: JSON.stringify({ from: t1, to: t0 }),
				})
			).status,
		).toBe(400);
		expect((await admin(relay, '/events/no-such-event/replay', { method: 'POST' })).status).toBe(
			404,
		);

		const detail = (await (await admin(relay, `/events/${eventId}`)).json()) as {
			deliveries: unknown[];
		};
		expect(detail.deliveries).toHaveLength(3);
		const list = (await (
			await admin(relay, `/deliveries?status=delivered&eventId=${eventId}`)
		).json()) as { data: unknown[] };
		expect(list.data).toHaveLength(3);
	});
});

describe('forwarder with a short retry budget', () => {
	const tmp = tempDir();
	const target = new Target();
	let relay: RunningRelay;
	let store: ReturnType<typeof openDb>;

	beforeAll(async () => {
		await target.listen();
		relay = await start(
			baseEnv(
				tmp.dir,
				{ payment: [target.url('/pay')] },
				{ RELAY_RETRY_BUDGET_MS: '400', LOG_LEVEL: 'silent' },
			),
		);
		store = openDb(tmp.dir);
	});

	afterAll(async () => {
		store?.db.close();
		await relay?.close();
		await target.close();
		tmp.cleanup();
	});

	it('marks a delivery dead after the budget and requeues dead ones on request', async () => {
		target.responder = () => ({ status: 503 });
		expect(await postPayment(relay, paymentFields('T-dead-1'))).toBe(200);
		expect(await postPayment(relay, paymentFields('T-dead-2'))).toBe(200);
		await waitFor(
			() => ['T-dead-1', 'T-dead-2'].every((id) => store.deliveriesFor(id)[0]?.status === 'dead'),
			'dead',
		);
		const d = store.deliveriesFor('T-dead-1')[0];
		expect(Number(d.attempts)).toBeGreaterThanOrEqual(2);
		expect(d.last_status).toBe(503);
		const metrics = await (await fetch(`${relay.url}/metrics`)).text();
		expect(metrics).toMatch(/paypalych_relay_dead_total\{kind="payment"\} 2/);
		expect(metrics).toMatch(/paypalych_relay_deliveries\{status="dead"\} 2/);
		const attemptsBefore = target.received.length;
		await new Promise((r) => setTimeout(r, 300));
		expect(target.received.length).toBe(attemptsBefore); // dead means no more attempts

		target.responder = () => ({ status: 200 });
		const res = await admin(relay, '/dead/requeue', { method: 'POST', body: '{}' });
		expect(await res.json()).toEqual({ requeued: 2 });
		await waitFor(
			() =>
				['T-dead-1', 'T-dead-2'].every((id) => store.deliveriesFor(id)[0]?.status === 'delivered'),
			'delivered after requeue',
		);
		// Attempt numbers go on after a requeue; the new budget counts from attempt_base.
		const requeued = store.deliveriesFor('T-dead-1')[0];
		expect(Number(requeued.attempts)).toBe(Number(d.attempts) + 1);
		expect(Number(requeued.attempt_base)).toBe(Number(d.attempts));
	});
});

describe('forwarder with RELAY_REQUIRE_RECEIPT=false (a target that is not a PayPalych Trigger)', () => {
	const tmp = tempDir();
	const target = new Target();
	let relay: RunningRelay;
	let store: ReturnType<typeof openDb>;

	beforeAll(async () => {
		await target.listen();
		target.responder = () => ({ status: 200, receipt: null });
		relay = await start(
			baseEnv(
				tmp.dir,
				{ payment: [target.url('/generic')] },
				{ RELAY_REQUIRE_RECEIPT: 'false', LOG_LEVEL: 'silent' },
			),
		);
		store = openDb(tmp.dir);
	});

	afterAll(async () => {
		store?.db.close();
		await relay?.close();
		await target.close();
		tmp.cleanup();
	});

	it('counts a plain 2xx as delivered on the first attempt', async () => {
		expect(await postPayment(relay, paymentFields('T-generic'))).toBe(200);
		await waitFor(
			() => store.deliveriesFor('T-generic')[0]?.status === 'delivered',
			'delivered without a receipt',
		);
		expect(store.deliveriesFor('T-generic')[0].attempts).toBe(1);
		expect(target.received).toHaveLength(1);
		expect(target.received[0].headers['x-paypalych-event']).toBe('payment');
	});
});

describe('graceful shutdown', () => {
	it('releases a delivery still in flight after the grace period, and the next start sends it', async () => {
		const tmp = tempDir();
		const slow = await new Target().listen();
		slow.responder = () => ({ status: 200, hangMs: 5_000 });
		const env = baseEnv(
			tmp.dir,
			{ payment: [slow.url('/pay')] },
			{
				RELAY_SHUTDOWN_GRACE_MS: '100',
				RELAY_DELIVERY_TIMEOUT_MS: '8000',
				RELAY_LEASE_MS: '60000',
				LOG_LEVEL: 'silent',
			},
		);
		try {
			let relay = await start(env);
			expect(await postPayment(relay, paymentFields('T-shutdown'))).toBe(200);
			await waitFor(() => slow.received.length === 1, 'in flight');
			await relay.close();
			const store = openDb(tmp.dir);
			const d = store.deliveriesFor('T-shutdown')[0];
			store.db.close();
			expect(d.status).toBe('pending');
			expect(d.attempts).toBe(0);
			expect(d.lease_until).toBeNull();

			slow.responder = () => ({ status: 200 });
			relay = await start(env);
			try {
				await waitFor(() => slow.received.length === 2, 'sent after restart');
				const again = openDb(tmp.dir);
				await waitFor(
					() => again.deliveriesFor('T-shutdown')[0].status === 'delivered',
					'delivered',
				);
				again.db.close();
			} finally {
				await relay.close();
			}
		} finally {
			await slow.close();
			tmp.cleanup();
		}
	});

	it('lets an in-flight delivery finish within the grace period', async () => {
		const tmp = tempDir();
		const slow = await new Target().listen();
		slow.responder = () => ({ status: 200, hangMs: 300 });
		const env = baseEnv(
			tmp.dir,
			{ payment: [slow.url('/pay')] },
			{ RELAY_SHUTDOWN_GRACE_MS: '5000', LOG_LEVEL: 'silent' },
		);
		try {
			const relay = await start(env);
			expect(await postPayment(relay, paymentFields('T-finish'))).toBe(200);
			await waitFor(() => slow.received.length === 1, 'in flight');
			await relay.close();
			const store = openDb(tmp.dir);
			expect(store.deliveriesFor('T-finish')[0].status).toBe('delivered');
			store.db.close();
		} finally {
			await slow.close();
			tmp.cleanup();
		}
	});
});

describe('hand-off: a postback stored while the forwarder has free slots is sent with no claim', () => {
	const tmp = tempDir();
	const target = new Target();
	let relay: RunningRelay;
	let store: SqliteStore;
	const claims = { calls: 0, rows: 0 };

	beforeAll(async () => {
		await target.listen();
		store = await SqliteStore.open(join(tmp.dir, 'relay.sqlite'));
		// The store as the relay sees it, counting the forwarder's claims.
		const counted = new Proxy(store, {
			get(s, name) {
				if (name === 'claimDue') {
					return async (...args: Parameters<SqliteStore['claimDue']>) => {
						const rows = await s.claimDue(...args);
						claims.calls += 1;
						claims.rows += rows.length;
						return rows;
					};
				}
				const value = Reflect.get(s, name, s) as unknown;
				return typeof value === 'function'
					? (value as (...a: unknown[]) => unknown).bind(s)
					: value;
			},
		});
		relay = await start(baseEnv(tmp.dir, { payment: [target.url()] }, { RELAY_CONCURRENCY: '4' }), {
			deps: { store: counted, logStream: new LogSink() },
		});
	});
	afterAll(async () => {
		await relay.close();
		await store.close();
		await target.close();
		tmp.cleanup();
	});

	it('delivers each postback once, the first attempt from the hand-off; what does not fit is claimed as usual', async () => {
		// One at a time: each finds a free slot and is delivered with no claim at all.
		for (let i = 0; i < 5; i++) {
			expect(await postPayment(relay, paymentFields(`HAND-${i}`))).toBe(200);
			await waitFor(() => target.received.length === i + 1, `delivery ${i}`);
		}
		expect(claims.rows).toBe(0);
		const first = await store.listDeliveries({ limit: 10 });
		expect(first.map((d) => [d.status, d.attempts])).toEqual(first.map(() => ['delivered', 1]));
		// The target is slow: four slots fill, the other postbacks are stored pending and claimed later.
		target.responder = () => ({ status: 200, hangMs: 150 });
		const statuses = await Promise.all(
			Array.from({ length: 12 }, (_, i) => postPayment(relay, paymentFields(`HAND-BURST-${i}`))),
		);
		expect(statuses).toEqual(statuses.map(() => 200));
		await waitFor(() => target.received.length === 17, 'the burst delivered');
		await waitFor(async () => (await store.counts()).delivered === 17, 'every delivery recorded');
		expect(claims.rows).toBeGreaterThanOrEqual(8);
		const trsIds = target.received.map((r) => new URLSearchParams(r.body).get('TrsId'));
		expect(new Set(trsIds).size).toBe(17);
		const attempts = await store.listAttempts(
			(await store.listDeliveries({ limit: 50 })).map((d) => d.id),
		);
		expect(attempts).toHaveLength(17);
		expect(attempts.every((a) => a.attempt === 1 && a.outcome === 'delivered')).toBe(true);
	});
});
