// The admin API and the metrics answer the same on both stores: one scenario, run on SQLite and on
// PostgreSQL, gives the same answers (ids and times aside).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { start } from '../../relay/src/server.ts';
import {
	ADMIN_TOKEN,
	LogSink,
	Target,
	baseEnv,
	form,
	paymentFields,
	payoutFields,
	tempDir,
} from './helpers.ts';
import { PG_MISSING, createTestDatabase } from './pg.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Json = Record<string, unknown>;

/** Replaces what differs from run to run (generated ids, clock times, durations) by its shape. */
function normalise(value: unknown, key = ''): unknown {
	if (Array.isArray(value)) return value.map((v) => normalise(v));
	if (value && typeof value === 'object') {
		return Object.fromEntries(Object.entries(value as Json).map(([k, v]) => [k, normalise(v, k)]));
	}
	if (/^(id|eventId|deliveryId)$/.test(key)) return typeof value;
	if (/(At|Until|budgetStart|durationMs)$/.test(key)) return value === null ? null : typeof value;
	if (typeof value === 'string') return value.replace(/127\.0\.0\.1:\d+/g, 'HOST');
	return value;
}

async function scenario(
	database: (dir: string) => Promise<{ url: string; drop: () => Promise<void> }>,
) {
	const tmp = tempDir();
	const db = await database(tmp.dir);
	const ok = await new Target().listen();
	const refusing = await new Target().listen();
	refusing.responder = () => ({ status: 410 });
	const relay = await start(
		baseEnv(
			tmp.dir,
			{ payment: [ok.url('/pay')], payout: [refusing.url('/payout')] },
			{ RELAY_DATABASE: db.url },
		),
		{ deps: { logStream: new LogSink() } },
	);
	const admin = async (path: string, init: RequestInit = {}) => {
		const res = await fetch(`${relay.url}/admin${path}`, {
			...init,
			headers: {
				authorization: `Bearer ${ADMIN_TOKEN}`,
				...(init.body ? { 'content-type': 'application/json' } : {}),
			},
		});
		return { status: res.status, body: (await res.json()) as Json };
	};
	try {
		const post = (path: string, fields: Record<string, string>) =>
			fetch(`${relay.url}${path}`, {
				method: 'POST',
				headers: { 'content-type': 'application/x-www-form-urlencoded' },
				body: form(fields),
			});
		expect((await post('/postback/payment', paymentFields('PAR-1'))).status).toBe(200);
		expect((await post('/postback/payment', paymentFields('PAR-1'))).status).toBe(200);
		expect((await post('/postback/payout', payoutFields('PAR-2'))).status).toBe(200);
		await waitFor('both deliveries settled', async () => {
			const { body } = await admin('/deliveries');
			const list = body.data as Array<{ status: string }>;
			return (
				list.length === 2 && list.every((d) => d.status === 'delivered' || d.status === 'dead')
			);
		});

		const events = await admin('/events');
		const payout = (events.body.data as Array<{ id: string; kind: string }>).find(
			(e) => e.kind === 'payout',
		)!;
		const snapshot = {
			events,
			byTrsId: await admin('/events?trsId=PAR-1'),
			dead: await admin('/dead'),
			deadEvents: await admin('/events?status=dead'),
			detail: await admin(`/events/${payout.id}`),
			badQuery: await admin('/deliveries?status=nope'),
			missing: await admin('/events/nope'),
			metrics: (await (await fetch(`${relay.url}/metrics`)).text())
				.split('\n')
				.filter((l) => /^paypalych_relay_(received|duplicates|delivered|dead|deliveries)/.test(l)),
			requeue: await admin('/dead/requeue', { method: 'POST', body: '{}' }),
		};
		await waitFor(
			'dead again after the requeue',
			async () => ((await admin('/dead')).body.data as unknown[]).length === 1,
		);
		return normalise(snapshot);
	} finally {
		await relay.close();
		await ok.close();
		await refusing.close();
		await db.drop();
		tmp.cleanup();
	}
}

describe.skipIf(PG_MISSING)('admin API and metrics on both stores', () => {
	it('give the same answers on SQLite and on PostgreSQL', async () => {
		const sqlite = await scenario(async (dir) => ({
			url: join(dir, 'relay.sqlite'),
			drop: async () => {},
		}));
		const postgres = await scenario(() => createTestDatabase());
		expect(postgres).toEqual(sqlite);
		// And the answers are the expected ones, not merely equal.
		const s = sqlite as Json;
		expect(s.metrics).toEqual(
			expect.arrayContaining([
				'paypalych_relay_received_total{kind="payment"} 2',
				'paypalych_relay_duplicates_total{kind="payment"} 1',
				'paypalych_relay_delivered_total{kind="payment"} 1',
				'paypalych_relay_dead_total{kind="payout"} 1',
				'paypalych_relay_deliveries{status="delivered"} 1',
				'paypalych_relay_deliveries{status="dead"} 1',
			]),
		);
		const detail = (
			s.detail as {
				body: { deliveries: Array<{ status: string; attempts: number; attemptHistory: Json[] }> };
			}
		).body;
		expect(detail.deliveries).toHaveLength(1);
		expect(detail.deliveries[0].status).toBe('dead');
		expect(detail.deliveries[0].attempts).toBe(1);
		expect(detail.deliveries[0].attemptHistory).toEqual([
			{
				id: 'number',
				deliveryId: 'number',
				attempt: 1,
				startedAt: 'number',
				durationMs: 'number',
				httpStatus: 410,
				error: 'HTTP 410',
				outcome: 'dead',
				origin: 'scheduled',
				response: '410',
				// The test's target gives no receipt with a 410.
				receipt: null,
			},
		]);
		expect((s.byTrsId as { body: { data: unknown[] } }).body.data).toHaveLength(1);
		expect(
			(s.deadEvents as { body: { data: Array<{ kind: string }> } }).body.data.map((e) => e.kind),
		).toEqual(['payout']);
		expect(s.requeue).toEqual({ status: 200, body: { requeued: 1 } });
		expect((s.badQuery as { status: number }).status).toBe(400);
		expect((s.missing as { status: number }).status).toBe(404);
	}, 60_000);
});
