import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../relay/src/app.ts';
import { loadConfig } from '../../relay/src/config.ts';
import { SqliteStore } from '../../relay/src/store-sqlite/store.ts';
import {
	LogSink,
	Target,
	baseEnv,
	form,
	paymentFields,
	payoutFields,
	redirectFields,
	tempDir,
} from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const RELAY_VERSION = (
	JSON.parse(readFileSync(join(__dirname, '..', '..', 'relay', 'package.json'), 'utf8')) as {
		version: string;
	}
).version;

interface Exposition {
	types: Map<string, string>;
	help: Map<string, string>;
	/** `name{a="1",b="2"}` (labels in the order written) → value. */
	samples: Map<string, number>;
}

/** Reads Prometheus text format 0.0.4; every line must be a comment, a sample or empty. */
function parse(text: string): Exposition {
	const out: Exposition = { types: new Map(), help: new Map(), samples: new Map() };
	for (const line of text.split('\n')) {
		if (line === '') continue;
		const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
		if (meta) {
			(meta[1] === 'HELP' ? out.help : out.types).set(meta[2], meta[3]);
			continue;
		}
		const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
		if (!sample) throw new Error(`not an exposition line: ${line}`);
		out.samples.set(sample[1], Number(sample[2]));
	}
	return out;
}

const sample = (e: Exposition, key: string) => e.samples.get(key);

describe('Prometheus metrics (prom-client)', () => {
	const tmp = tempDir();
	const target = new Target();
	const sink = new LogSink();
	let store: SqliteStore;
	let app: FastifyInstance;

	const post = (url: string, body: string) =>
		app.inject({ method: 'POST', url, headers: FORM, payload: body });
	const scrape = async () => {
		const res = await app.inject({ method: 'GET', url: '/metrics' });
		expect(res.statusCode).toBe(200);
		expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
		return parse(res.body);
	};

	beforeAll(async () => {
		await target.listen();
		const config = loadConfig(
			baseEnv(tmp.dir, {
				payment: [target.url('/pay')],
				payout: [target.url('/payout')],
				success: [target.url('/ok')],
			}),
		);
		store = await SqliteStore.open(config.database);
		app = await buildApp(config, { store, logStream: sink });
		await app.ready();
	});

	afterAll(async () => {
		await app?.close();
		await store?.close();
		await target.close();
		tmp.cleanup();
	});

	it('keeps every metric name, type and label, with the values of what happened', async () => {
		target.responder = (req) =>
			req.body.includes('TrsId=M-dead&') ? { status: 400 } : { status: 200 };
		expect((await post('/postback/payment', form(paymentFields('M-1')))).statusCode).toBe(200);
		expect((await post('/postback/payment', form(paymentFields('M-1')))).statusCode).toBe(200); // duplicate
		expect((await post('/postback/payment', form(paymentFields('M-dead')))).statusCode).toBe(200);
		expect(
			(await post('/postback/payment', form(paymentFields('M-forged', { token: '1|wrong' }))))
				.statusCode,
		).toBe(401);
		expect((await post('/postback/payout', form(payoutFields('M-P-1')))).statusCode).toBe(200);
		expect((await post('/redirect/success', form(redirectFields('M-order')))).statusCode).toBe(200);
		await waitFor('deliveries settled', async () => {
			const counts = await store.counts();
			return (
				counts.pending + counts.retrying + counts.delivering === 0 &&
				counts.delivered === 3 &&
				counts.dead === 1
			);
		});

		const e = await scrape();
		for (const [name, type] of [
			['paypalych_relay_received_total', 'counter'],
			['paypalych_relay_rejected_total', 'counter'],
			['paypalych_relay_duplicates_total', 'counter'],
			['paypalych_relay_delivered_total', 'counter'],
			['paypalych_relay_delivery_retries_total', 'counter'],
			['paypalych_relay_receipts_total', 'counter'],
			['paypalych_relay_dead_total', 'counter'],
			['paypalych_relay_delivery_latency_seconds', 'histogram'],
			['paypalych_relay_deliveries', 'gauge'],
			['paypalych_relay_build_info', 'gauge'],
		]) {
			expect(e.types.get(name), name).toBe(type);
			expect(e.help.get(name), name).toBeTruthy();
		}
		expect(sample(e, 'paypalych_relay_received_total{kind="payment"}')).toBe(3);
		expect(sample(e, 'paypalych_relay_received_total{kind="payout"}')).toBe(1);
		expect(sample(e, 'paypalych_relay_received_total{kind="success"}')).toBe(1);
		expect(sample(e, 'paypalych_relay_duplicates_total{kind="payment"}')).toBe(1);
		expect(sample(e, 'paypalych_relay_rejected_total{kind="payment",reason="bad_signature"}')).toBe(
			1,
		);
		expect(sample(e, 'paypalych_relay_delivered_total{kind="payment"}')).toBe(1);
		expect(sample(e, 'paypalych_relay_delivered_total{kind="payout"}')).toBe(1);
		expect(sample(e, 'paypalych_relay_delivered_total{kind="success"}')).toBe(1);
		expect(sample(e, 'paypalych_relay_dead_total{kind="payment"}')).toBe(1);
		// Each answer by the trigger's receipt: the 400 came without one.
		expect(sample(e, 'paypalych_relay_receipts_total{kind="payment",receipt="accepted"}')).toBe(1);
		expect(sample(e, 'paypalych_relay_receipts_total{kind="payment",receipt="none"}')).toBe(1);
		expect(sample(e, 'paypalych_relay_receipts_total{kind="payout",receipt="accepted"}')).toBe(1);
		expect(sample(e, 'paypalych_relay_delivery_retries_total{kind="payment"}')).toBeUndefined();
		// The histogram: one observation per successful delivery, cumulative buckets up to +Inf.
		expect(sample(e, 'paypalych_relay_delivery_latency_seconds_count')).toBe(3);
		expect(sample(e, 'paypalych_relay_delivery_latency_seconds_bucket{le="+Inf"}')).toBe(3);
		expect(sample(e, 'paypalych_relay_delivery_latency_seconds_bucket{le="86400"}')).toBe(3);
		expect(sample(e, 'paypalych_relay_delivery_latency_seconds_sum')).toBeGreaterThan(0);
		// The gauge is the store's own count, read at the scrape.
		const counts = await store.counts();
		for (const status of ['pending', 'retrying', 'delivering', 'delivered', 'dead'] as const) {
			expect(sample(e, `paypalych_relay_deliveries{status="${status}"}`), status).toBe(
				counts[status],
			);
		}
		expect(counts.delivered).toBe(3);
		expect(
			sample(
				e,
				`paypalych_relay_build_info{version="${RELAY_VERSION}",node_version="${process.version}",store="sqlite"}`,
			),
		).toBe(1);
	});

	it('reads the delivery gauge again at each scrape', async () => {
		const before = sample(await scrape(), 'paypalych_relay_deliveries{status="delivered"}')!;
		expect((await post('/postback/payment', form(paymentFields('M-2')))).statusCode).toBe(200);
		await waitFor(
			'one more delivered',
			async () => (await store.counts()).delivered === before + 1,
		);
		expect(sample(await scrape(), 'paypalych_relay_deliveries{status="delivered"}')).toBe(
			before + 1,
		);
	});

	it('exposes the default process metrics', async () => {
		const e = await scrape();
		for (const name of [
			'process_cpu_user_seconds_total',
			'process_resident_memory_bytes',
			'nodejs_heap_size_used_bytes',
			'nodejs_eventloop_lag_seconds',
		]) {
			expect(e.types.has(name), name).toBe(true);
		}
		expect(sample(e, 'process_resident_memory_bytes')).toBeGreaterThan(1_000_000);
	});

	it('still answers when the store cannot count: the other metrics without the delivery gauge, and a log line', async () => {
		const counts = store.counts;
		store.counts = () => Promise.reject(new Error('store unavailable'));
		try {
			const e = await scrape();
			expect(e.types.get('paypalych_relay_deliveries')).toBe('gauge');
			expect(
				[...e.samples.keys()].filter((k) => k.startsWith('paypalych_relay_deliveries{')),
			).toEqual([]);
			expect(sample(e, 'paypalych_relay_received_total{kind="payment"}')).toBe(4);
			expect(sink.text).toContain('"msg":"reading delivery counts failed"');
		} finally {
			store.counts = counts;
		}
		expect(sample(await scrape(), 'paypalych_relay_deliveries{status="dead"}')).toBe(1);
	});

	it('gives each app its own registry', async () => {
		const other = tempDir();
		try {
			const config = loadConfig(
				baseEnv(other.dir, { payment: [target.url('/pay')] }, { LOG_LEVEL: 'silent' }),
			);
			const second = await buildApp(config, { forwarder: false });
			const res = await second.inject({ method: 'GET', url: '/metrics' });
			const e = parse(res.body);
			expect(
				[...e.samples.keys()].filter((k) => k.startsWith('paypalych_relay_received_total')),
			).toEqual([]);
			expect(sample(e, 'paypalych_relay_deliveries{status="delivered"}')).toBe(0);
			await second.close();
		} finally {
			other.cleanup();
		}
	});
});
