/**
 * The forwarder's life: a short retry budget (dead, then requeued), a target that is not a
 * PayPalych Trigger, a graceful shutdown, and the hand-off of a new postback to a free slot.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { start } from '../../relay/src/server.ts';
import { SqliteStore } from '../../relay/src/store-sqlite/store.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import { LogSink, Target, baseEnv, paymentFields, tempDir } from './helpers.ts';
import { admin, openDb, postPayment } from './deliveries.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

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
		await waitFor('dead', () =>
			['T-dead-1', 'T-dead-2'].every((id) => store.deliveriesFor(id)[0]?.status === 'dead'),
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
		await waitFor('delivered after requeue', () =>
			['T-dead-1', 'T-dead-2'].every((id) => store.deliveriesFor(id)[0]?.status === 'delivered'),
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
			'delivered without a receipt',
			() => store.deliveriesFor('T-generic')[0]?.status === 'delivered',
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
			await waitFor('in flight', () => slow.received.length === 1);
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
				await waitFor('sent after restart', () => slow.received.length === 2);
				const again = openDb(tmp.dir);
				await waitFor(
					'delivered',
					() => again.deliveriesFor('T-shutdown')[0].status === 'delivered',
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
			await waitFor('in flight', () => slow.received.length === 1);
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
			await waitFor(`delivery ${i}`, () => target.received.length === i + 1);
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
		await waitFor('the burst delivered', () => target.received.length === 17);
		await waitFor('every delivery recorded', async () => (await store.counts()).delivered === 17);
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
