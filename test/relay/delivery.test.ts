/** The forwarder against real targets: retries, Retry-After, timeouts, refusals and replays. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start } from '../../relay/src/server.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import {
	LogSink,
	Target,
	baseEnv,
	form,
	freePort,
	paymentFields,
	payoutFields,
	tempDir,
} from './helpers.ts';
import { FORM, admin, openDb, postPayment } from './deliveries.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

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
		await waitFor('failed attempts', () =>
			ids.every((id) =>
				store.deliveriesFor(id).some((d) => Number(d.attempts) >= 2 && d.last_error),
			),
		);
		expect(store.deliveriesFor(ids[0])[0].status).not.toBe('dead');
		late = await new Target().listen(downPort);
		await waitFor('all payouts after recovery', () =>
			ids.every((id) => late!.received.some((r) => r.body.includes(`TrsId=${id}&`))),
		);
		await waitFor('delivered state', () =>
			ids.every((id) => store.deliveriesFor(id)[0].status === 'delivered'),
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
			'delivered after 429',
			() => store.deliveriesFor('T-429')[0]?.status === 'delivered',
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
		await waitFor('delivered after Retry-After', () =>
			Object.keys(answers).every((id) => store.deliveriesFor(id)[0]?.status === 'delivered'),
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
			'delivered after 404s',
			() => store.deliveriesFor('T-404')[0]?.status === 'delivered',
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
			'delivered with a receipt',
			() => store.deliveriesFor('T-no-receipt')[0]?.status === 'delivered',
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
			'attempts during start-up',
			() => Number(store.deliveriesFor('T-starting')[0]?.attempts) >= 3,
		);
		const during = store.deliveriesFor('T-starting')[0];
		expect(during.status).not.toBe('delivered');
		expect(during.last_status).toBe(200);
		expect(String(during.last_error)).toContain('X-PayPalych-Receipt');
		startingUp = false;
		await waitFor(
			'delivered after start-up',
			() => store.deliveriesFor('T-starting')[0]?.status === 'delivered',
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
			'delivered after a timeout',
			() => store.deliveriesFor('T-timeout')[0]?.status === 'delivered',
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
		await waitFor('dead after 400', () => store.deliveriesFor('T-400')[0]?.status === 'dead');
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
			'delivered after requeue',
			() => store.deliveriesFor('T-400')[0]?.status === 'delivered',
		);
	});

	it("keeps the target's reason for a 422 (at most 1 KiB), shows it to the operator, and numbers a requeued attempt on", async () => {
		const reason = `{"error":"signature mismatch <script>x</script>"}${'é'.repeat(2000)}`;
		target.responder = (req) =>
			req.body.includes('TrsId=T-422&') ? { status: 422, body: reason } : { status: 200 };
		expect(await postPayment(relay, paymentFields('T-422'))).toBe(200);
		await waitFor('dead after 422', () => store.deliveriesFor('T-422')[0]?.status === 'dead');
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
		await waitFor('requeued', () => store.deliveriesFor('T-422')[0]?.status === 'delivered');
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
		await waitFor('first delivery', () =>
			['T-replay-1', 'T-replay-2'].every(
				(id) => store.deliveriesFor(id)[0]?.status === 'delivered',
			),
		);
		const countOf = (id: string) =>
			target.received.filter((r) => r.body.includes(`TrsId=${id}&`)).length;
		const eventId = String(store.deliveriesFor('T-replay-1')[0].event_id);

		const one = await admin(relay, `/events/${eventId}/replay`, { method: 'POST' });
		expect(await one.json()).toEqual({ eventId, deliveries: 1 });
		await waitFor('single replay', () => countOf('T-replay-1') === 2);
		const replayed = target.received.filter((r) => r.body.includes('TrsId=T-replay-1&'));
		expect(replayed[1].headers['x-paypalych-event-id']).toBe(eventId);

		const range = await admin(relay, '/replay', {
			method: 'POST',
			body: JSON.stringify({ from: t0, to: new Date(t1).toISOString(), kind: 'payment' }),
		});
		expect(await range.json()).toEqual({ events: 2, deliveries: 2 });
		await waitFor('range replay', () => countOf('T-replay-1') === 3 && countOf('T-replay-2') === 2);
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
