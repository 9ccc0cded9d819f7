import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../relay/src/app.ts';
import { loadConfig } from '../../relay/src/config.ts';
import { start } from '../../relay/src/server.ts';
import { SqliteStore } from '../../relay/src/store-sqlite/store.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import {
	ADMIN_TOKEN,
	LogSink,
	OLD_TOKEN,
	TOKEN,
	Target,
	baseEnv,
	form,
	md5,
	paymentFields,
	payoutFields,
	redirectFields,
	tempDir,
} from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

const FORM = 'application/x-www-form-urlencoded';

describe('relay routes over real sockets with a real SQLite file', () => {
	const tmp = tempDir();
	const sink = new LogSink();
	const targetA = new Target();
	const targetB = new Target();
	let relay: RunningRelay;
	let db: DatabaseSync;
	const signatures: string[] = [];
	/** The service's stand-in for look-ups: it knows one payment, T-victim-1 (18.50, SUCCESS). */
	const lookUps: string[] = [];
	const service: Server = createServer((req, res) => {
		const url = new URL(req.url ?? '/', 'http://service');
		lookUps.push(`${url.pathname}?${url.searchParams}`);
		const known =
			url.pathname === '/api/v1/payment/status' && url.searchParams.get('id') === 'T-victim-1';
		res.writeHead(known ? 200 : 404, { 'content-type': 'application/json' });
		res.end(
			JSON.stringify(
				known
					? { id: 'T-victim-1', status: 'SUCCESS', amount: '18.50', currency_in: 'RUB' }
					: { success: false, message: 'not found' },
			),
		);
	});

	const post = (path: string, body: string, contentType = FORM) =>
		fetch(`${relay.url}${path}`, {
			method: 'POST',
			body,
			headers: { 'content-type': contentType },
			redirect: 'manual',
		});
	const eventsWith = (trsId: string) =>
		db
			.prepare(`SELECT * FROM events WHERE json_extract(fields_json, '$.TrsId') = ?`)
			.all(trsId) as Array<Record<string, unknown>>;
	const deliveriesOf = (eventId: unknown) =>
		db.prepare('SELECT * FROM deliveries WHERE event_id = ?').all(eventId as string) as Array<
			Record<string, unknown>
		>;
	const countEvents = () =>
		Number((db.prepare('SELECT COUNT(*) AS n FROM events').get() as { n: number }).n);

	beforeAll(async () => {
		await targetA.listen();
		await targetB.listen();
		await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
		const env = baseEnv(
			tmp.dir,
			{
				payment: [targetA.url('/a/pay'), targetB.url('/b/pay')],
				payout: [targetA.url('/a/payout')],
				redirect: [targetB.url('/b/redirect')],
			},
			{
				RELAY_BODY_LIMIT: '2048',
				RELAY_SUCCESS_URL: 'https://shop.example/thanks',
				PAYPALYCH_API_BASE_URL: `http://127.0.0.1:${(service.address() as AddressInfo).port}`,
				LOG_LEVEL: 'debug',
			},
		);
		relay = await start(env, { deps: { logStream: sink } });
		db = new DatabaseSync(join(tmp.dir, 'relay.sqlite'), { readOnly: true });
	});

	afterAll(async () => {
		db?.close();
		await relay?.close();
		await targetA.close();
		await targetB.close();
		await new Promise<void>((resolve) => service.close(() => resolve()));
		tmp.cleanup();
	});

	it('stores a valid form-encoded payment postback before answering 200 OK, with one delivery per target', async () => {
		const fields = paymentFields('T-valid-1');
		signatures.push(fields.SignatureValue);
		const res = await post('/postback/payment', form(fields));
		expect(res.status).toBe(200);
		expect(await res.text()).toBe('OK');
		// Already committed when the answer arrived: a separate connection sees it.
		const rows = eventsWith('T-valid-1');
		expect(rows).toHaveLength(1);
		expect(rows[0].kind).toBe('payment');
		expect(rows[0].body).toBe(form(fields));
		expect(JSON.parse(String(rows[0].fields_json))).not.toHaveProperty('SignatureValue');
		expect(
			deliveriesOf(rows[0].id)
				.map((d) => d.target)
				.sort(),
		).toEqual([targetA.url('/a/pay'), targetB.url('/b/pay')].sort());
		await waitFor(
			'fan-out',
			() =>
				targetA.received.some((r) => r.body === form(fields)) &&
				targetB.received.some((r) => r.body === form(fields)),
		);
	});

	it('accepts JSON bodies and forwards them unchanged with their content type', async () => {
		const fields = paymentFields('T-json-1');
		signatures.push(fields.SignatureValue);
		const body = JSON.stringify(fields);
		const res = await post('/postback/payment', body, 'application/json');
		expect(res.status).toBe(200);
		const got = await waitFor('json delivery', () => targetA.received.find((r) => r.body === body));
		expect(got.headers['content-type']).toBe('application/json');
		expect(got.headers['x-paypalych-event-id']).toBe(String(eventsWith('T-json-1')[0].id));
		expect(got.headers['idempotency-key']).toBe(got.headers['x-paypalych-event-id']);
		expect(got.headers['x-paypalych-delivery-attempt']).toBe('1');
	});

	it('accepts the old token during rotation', async () => {
		const fields = paymentFields('T-old-token', { token: OLD_TOKEN });
		signatures.push(fields.SignatureValue);
		expect((await post('/postback/payment', form(fields))).status).toBe(200);
		expect(eventsWith('T-old-token')).toHaveLength(1);
	});

	it('answers a duplicate (same TrsId and Status) 200 without a new event or delivery', async () => {
		const fields = paymentFields('T-dup-1');
		signatures.push(fields.SignatureValue);
		expect((await post('/postback/payment', form(fields))).status).toBe(200);
		const second = await post('/postback/payment', form(fields));
		expect(second.status).toBe(200);
		expect(await second.text()).toBe('OK');
		const rows = eventsWith('T-dup-1');
		expect(rows).toHaveLength(1);
		expect(deliveriesOf(rows[0].id)).toHaveLength(2);
		// A new status for the same transaction is a new postback.
		const failed = paymentFields('T-dup-1', { status: 'FAIL' });
		expect((await post('/postback/payment', form(failed))).status).toBe(200);
		expect(eventsWith('T-dup-1')).toHaveLength(2);
	});

	it('takes a replay in another spelling of Status or TrsId for the same postback', async () => {
		const fields = paymentFields('T-spell-1');
		signatures.push(fields.SignatureValue);
		expect((await post('/postback/payment', form(fields))).status).toBe(200);
		for (const Status of ['success', 'Success', 'SUCCESS ', ' SUCCESS']) {
			expect((await post('/postback/payment', form({ ...fields, Status }))).status).toBe(200);
		}
		expect(
			(await post('/postback/payment', form({ ...fields, TrsId: ' T-spell-1 ' }))).status,
		).toBe(200);
		expect(eventsWith('T-spell-1')).toHaveLength(1);
	});

	it('stores a call with another signed pair under the same TrsId as its own event once the service agrees: a forged call sent first cannot shadow the genuine one', async () => {
		// The attacker's own (failed) order's public redirect signature, with the victim's TrsId.
		const forged = paymentFields('T-victim-1', { invId: 'attacker-order', outSum: '18.50' });
		const genuine = paymentFields('T-victim-1');
		signatures.push(forged.SignatureValue, genuine.SignatureValue);
		// (The duplicates above asked once each whether their TrsId names a bill.)
		lookUps.length = 0;
		expect((await post('/postback/payment', form(forged))).status).toBe(200);
		expect(lookUps).toEqual([]);
		// Another signed pair under a stored postback's TrsId and status: looked up, the service's
		// record agrees (it shows no order ID), stored.
		expect((await post('/postback/payment', form(genuine))).status).toBe(200);
		expect(lookUps).toEqual(['/api/v1/payment/status?id=T-victim-1']);
		const rows = eventsWith('T-victim-1');
		expect(rows.map((r) => JSON.parse(String(r.fields_json)).InvId).sort()).toEqual([
			'attacker-order',
			'order-T-victim-1',
		]);
		for (const row of rows) expect(deliveriesOf(row.id)).toHaveLength(2);
	});

	it('rejects forged, unsigned, garbage and oversized calls without storing them', async () => {
		const before = countEvents();
		const forged = {
			...paymentFields('T-forged'),
			SignatureValue: md5('18.50:order-T-forged:wrong-token'),
		};
		expect((await post('/postback/payment', form(forged))).status).toBe(401);
		const tampered = { ...paymentFields('T-tampered'), OutSum: '999.00' };
		expect((await post('/postback/payment', form(tampered))).status).toBe(401);
		const unsigned: Record<string, string> = { ...paymentFields('T-unsigned') };
		delete unsigned.SignatureValue;
		expect((await post('/postback/payment', form(unsigned))).status).toBe(401);
		expect((await post('/postback/payment', '{not json', 'application/json')).status).toBe(400);
		expect((await post('/postback/payment', '')).status).toBe(400);
		expect((await post('/postback/payment', 'a=1&a=2')).status).toBe(400);
		const noTrs: Record<string, string> = { ...paymentFields('T-x') };
		delete noTrs.TrsId;
		expect((await post('/postback/payment', form(noTrs))).status).toBe(400);
		const big = { ...paymentFields('T-big'), PayerComment: 'x'.repeat(4000) };
		expect((await post('/postback/payment', form(big))).status).toBe(413);
		expect(
			(
				await post(
					'/postback/payout',
					form({ ...payoutFields('P-forged'), SignatureValue: md5('x') }),
				)
			).status,
		).toBe(401);
		expect((await post('/postback/payout', 'garbage')).status).toBe(400);
		expect(
			(
				await post(
					'/postback/payout',
					form({ ...payoutFields('P-big'), AccountNumber: 'x'.repeat(4000) }),
				)
			).status,
		).toBe(413);
		const redirectGarbage = await post('/redirect/success', 'InvId=only');
		expect(redirectGarbage.status).toBe(400);
		expect(redirectGarbage.headers.get('content-type')).toMatch(/text\/html/);
		expect(countEvents()).toBe(before);
		const metrics = await (await fetch(`${relay.url}/metrics`)).text();
		expect(metrics).toMatch(
			/paypalych_relay_rejected_total\{kind="payment",reason="bad_signature"\} 2/,
		);
		expect(metrics).toMatch(
			/paypalych_relay_rejected_total\{kind="payment",reason="missing_field"\} 2/,
		);
	});

	it('stores payout postbacks and forwards them to the payout targets', async () => {
		const fields = payoutFields('P-1');
		signatures.push(fields.SignatureValue);
		expect((await post('/postback/payout', form(fields))).status).toBe(200);
		expect(eventsWith('P-1')[0].kind).toBe('payout');
		const duplicate = await post('/postback/payout', JSON.stringify(fields), 'application/json');
		expect(duplicate.status).toBe(200);
		expect(eventsWith('P-1')).toHaveLength(1);
		expect(deliveriesOf(eventsWith('P-1')[0].id)).toHaveLength(1);
		const got = await waitFor('payout delivery', () =>
			targetA.received.find((r) => r.path === '/a/payout' && r.body === form(fields)),
		);
		expect(got.headers['x-paypalych-event']).toBe('payout');
		expect(targetB.received.some((r) => r.body === form(fields))).toBe(false);
	});

	it('redirects a verified success to the merchant page with 303 and forwards it; a forged one gets 401', async () => {
		const fields = redirectFields('order-r1');
		signatures.push(fields.SignatureValue);
		const res = await post('/redirect/success', form(fields));
		expect(res.status).toBe(303);
		expect(res.headers.get('location')).toBe('https://shop.example/thanks');
		await waitFor('redirect delivery', () =>
			targetB.received.some((r) => r.path === '/b/redirect' && r.body === form(fields)),
		);
		const storedBefore = countEvents();
		const forged = await post(
			'/redirect/fail',
			form({ ...redirectFields('order-r2'), SignatureValue: md5('nope') }),
		);
		expect(forged.status).toBe(401);
		expect(forged.headers.get('content-type')).toMatch(/text\/html/);
		expect(countEvents()).toBe(storedBefore);
		// No fail page configured: a plain page instead of a redirect; redirects are never deduplicated.
		const failFields = redirectFields('order-r3');
		signatures.push(failFields.SignatureValue);
		const fail1 = await post('/redirect/fail', form(failFields));
		expect(fail1.status).toBe(200);
		expect(await fail1.text()).toMatch(/did not go through/);
		expect((await post('/redirect/fail', form(failFields))).status).toBe(200);
		expect(countEvents()).toBe(storedBefore + 2);
		expect((await post('/redirect/success', 'x'.repeat(3000))).status).toBe(413);
	});

	it('serves health, readiness and Prometheus metrics', async () => {
		const health = await fetch(`${relay.url}/healthz`);
		expect(health.status).toBe(200);
		expect(await health.json()).toEqual({ status: 'ok' });
		const ready = await fetch(`${relay.url}/readyz`);
		expect(ready.status).toBe(200);
		await waitFor('all deliveries done', async () => {
			const text = await (await fetch(`${relay.url}/metrics`)).text();
			return (
				/paypalych_relay_deliveries\{status="pending"\} 0/.test(text) &&
				/paypalych_relay_deliveries\{status="delivering"\} 0/.test(text)
			);
		});
		const res = await fetch(`${relay.url}/metrics`);
		expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0.0.4/);
		const text = await res.text();
		expect(text).toMatch(/paypalych_relay_received_total\{kind="payment"\} 14/);
		expect(text).toMatch(/paypalych_relay_duplicates_total\{kind="payment"\} 6/);
		expect(text).toMatch(/paypalych_relay_duplicates_total\{kind="payout"\} 1/);
		const delivered = Number(
			/paypalych_relay_deliveries\{status="delivered"\} (\d+)/.exec(text)?.[1],
		);
		const rows = Number(
			(
				db.prepare(`SELECT COUNT(*) AS n FROM deliveries WHERE status = 'delivered'`).get() as {
					n: number;
				}
			).n,
		);
		expect(delivered).toBe(rows);
		expect(text).toMatch(/paypalych_relay_delivered_total\{kind="payment"\} \d+/);
		const count = Number(/paypalych_relay_delivery_latency_seconds_count (\d+)/.exec(text)?.[1]);
		expect(count).toBe(rows);
	});

	it('protects the admin API with its bearer token', async () => {
		expect((await fetch(`${relay.url}/admin/events`)).status).toBe(401);
		expect(
			(await fetch(`${relay.url}/admin/events`, { headers: { authorization: `Bearer ${TOKEN}` } }))
				.status,
		).toBe(401);
		const ok = await fetch(`${relay.url}/admin/events?kind=payout`, {
			headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
		});
		expect(ok.status).toBe(200);
		const { data } = (await ok.json()) as {
			data: Array<{ kind: string; fields: Record<string, string> }>;
		};
		expect(data.length).toBe(1);
		expect(data[0].fields.TrsId).toBe('P-1');
		expect(data[0].fields).not.toHaveProperty('SignatureValue');
		const bad = await fetch(`${relay.url}/admin/deliveries?status=lost`, {
			headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
		});
		expect(bad.status).toBe(400);
	});

	it('never writes a token or a signature to the log', async () => {
		expect(sink.lines.length).toBeGreaterThan(10);
		expect(sink.text).toContain('"msg":"stored"');
		expect(sink.text).toContain('"msg":"rejected"');
		for (const secret of [TOKEN, OLD_TOKEN, ADMIN_TOKEN, ...signatures]) {
			expect(sink.text).not.toContain(secret);
			expect(sink.text.toLowerCase()).not.toContain(secret.toLowerCase());
		}
		for (const line of sink.lines) expect(() => JSON.parse(line)).not.toThrow();
	});
});

describe('redirect targets and the X-PayPalych-Event header', () => {
	const tmp = tempDir();
	const successOnly = new Target();
	const failOnly = new Target();
	const both = new Target();
	const payments = new Target();
	let relay: RunningRelay;

	beforeAll(async () => {
		for (const t of [successOnly, failOnly, both, payments]) await t.listen();
		relay = await start(
			baseEnv(
				tmp.dir,
				{
					payment: [payments.url('/pay')],
					success: [successOnly.url('/ok'), both.url('/any')],
					fail: [failOnly.url('/ko')],
					redirect: [both.url('/any')],
				},
				{ LOG_LEVEL: 'silent' },
			),
		);
	});

	afterAll(async () => {
		await relay?.close();
		for (const t of [successOnly, failOnly, both, payments]) await t.close();
		tmp.cleanup();
	});

	const post = (path: string, body: string) =>
		fetch(`${relay.url}${path}`, {
			method: 'POST',
			body,
			headers: { 'content-type': FORM },
			redirect: 'manual',
		});

	it('sends success redirects to RELAY_SUCCESS_TARGETS and fail redirects to RELAY_FAIL_TARGETS, plus RELAY_REDIRECT_TARGETS once each', async () => {
		const ok = form(redirectFields('order-split-ok'));
		const ko = form(redirectFields('order-split-ko'));
		expect((await post('/redirect/success', ok)).status).toBe(200);
		expect((await post('/redirect/fail', ko)).status).toBe(200);
		expect((await post('/postback/payment', form(paymentFields('T-split')))).status).toBe(200);
		await waitFor(
			'all deliveries',
			() =>
				successOnly.received.length >= 1 &&
				failOnly.received.length >= 1 &&
				both.received.length >= 2 &&
				payments.received.length >= 1,
		);
		// Give a wrong extra delivery the time to show up before counting.
		await waitFor('queue empty', async () => {
			const text = await (await fetch(`${relay.url}/metrics`)).text();
			return (
				/paypalych_relay_deliveries\{status="pending"\} 0/.test(text) &&
				/paypalych_relay_deliveries\{status="delivering"\} 0/.test(text)
			);
		});
		expect(successOnly.received.map((r) => [r.body, r.headers['x-paypalych-event']])).toEqual([
			[ok, 'success'],
		]);
		expect(failOnly.received.map((r) => [r.body, r.headers['x-paypalych-event']])).toEqual([
			[ko, 'fail'],
		]);
		// Listed in both RELAY_SUCCESS_TARGETS and RELAY_REDIRECT_TARGETS: one delivery per event.
		expect(both.received.map((r) => [r.body, r.headers['x-paypalych-event']]).sort()).toEqual(
			[
				[ok, 'success'],
				[ko, 'fail'],
			].sort(),
		);
		expect(payments.received.map((r) => r.headers['x-paypalych-event'])).toEqual(['payment']);
	});
});

describe('readiness', () => {
	it('commits a write to answer ready, and fails while the SQLite file cannot be written', async () => {
		const tmp = tempDir();
		try {
			const config = loadConfig(
				baseEnv(tmp.dir, { payment: ['http://127.0.0.1:9/x'] }, { LOG_LEVEL: 'silent' }),
			);
			const app = await buildApp(config, { forwarder: false });
			const before = Date.now();
			expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
			const other = new DatabaseSync(config.database);
			const beat = other.prepare('SELECT at FROM heartbeat WHERE id = 1').get() as { at: number };
			expect(beat.at).toBeGreaterThanOrEqual(before);
			// Another connection holds the write lock: the store cannot commit, so it is not ready.
			other.exec('PRAGMA busy_timeout = 0');
			other.exec('BEGIN IMMEDIATE');
			try {
				const res = await app.inject({ method: 'GET', url: '/readyz' });
				expect(res.statusCode).toBe(503);
			} finally {
				other.exec('ROLLBACK');
				other.close();
			}
			expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
			await app.close();
		} finally {
			tmp.cleanup();
		}
	}, 30_000);

	it('answers 503 when the store does not answer', async () => {
		const tmp = tempDir();
		try {
			const config = loadConfig(
				baseEnv(tmp.dir, { payment: ['http://127.0.0.1:9/x'] }, { LOG_LEVEL: 'silent' }),
			);
			const store = await SqliteStore.open(config.database);
			const app = await buildApp(config, { store, forwarder: false });
			expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
			await store.close();
			const res = await app.inject({ method: 'GET', url: '/readyz' });
			expect(res.statusCode).toBe(503);
			expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
			const fields = paymentFields('T-store-down');
			const post = await app.inject({
				method: 'POST',
				url: '/postback/payment',
				headers: { 'content-type': FORM },
				payload: form(fields),
			});
			expect(post.statusCode).toBe(503);
			await app.close();
		} finally {
			tmp.cleanup();
		}
	});
});
