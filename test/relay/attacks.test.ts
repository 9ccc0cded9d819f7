/**
 * The relay on the open internet: the attacks of a security review, each replayed as
 * an outside attacker would, on both stores (a real SQLite file and a real PostgreSQL database of
 * the test's own). Real HTTP against the sandbox (the service's stand-in) and the real trigger.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../sandbox/src/index.ts';
import { ConfigError, loadConfig } from '../../relay/src/config.ts';
import { start } from '../../relay/src/server.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import { openStore } from '../../relay/src/store-open.ts';
import type { Store } from '../../relay/src/store/types.ts';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';
import { startTrigger } from '../helpers/trigger-harness.ts';
import { cookieOf, submitLogin } from './console-suite.ts';
import {
	ADMIN_TOKEN,
	TOKEN,
	Target,
	baseEnv,
	form,
	md5,
	paymentFields,
	redirectFields,
	tempDir,
} from './helpers.ts';
import { sandboxMerchant } from './sandbox-merchant.ts';
import { createTestDatabase } from './pg.ts';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const MINUTE = 60_000;

let sb: Sandbox;
let sink: Target;

async function control(method: string, path: string, body?: unknown) {
	const response = await fetch(`${sb.url}/_sandbox/${path}`, {
		method,
		...(body === undefined
			? {}
			: { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
	});
	const data = (await response.json()) as any;
	if (!response.ok) throw new Error(`control ${method} ${path}: HTTP ${response.status}`);
	return data;
}

async function api(path: string, params: Record<string, string>) {
	const response = await fetch(`${sb.url}/api/v1/${path}`, {
		method: 'POST',
		headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' },
		body: new URLSearchParams(params),
	});
	const data = (await response.json()) as any;
	if (!response.ok) throw new Error(`api ${path}: HTTP ${response.status}`);
	return data;
}

/** API requests the sandbox received for one endpoint since the last `DELETE /_sandbox/calls`. */
async function sandboxCalls(endpoint: string): Promise<number> {
	return ((await control('GET', 'calls')).calls[endpoint] as number | undefined) ?? 0;
}

/**
 * A server of the test's own on a free loopback port (a target or a service that misbehaves),
 * closed after the test with its connections; answers its base URL.
 */
async function ownServer(
	cleanups: Array<() => Promise<void>>,
	handler: Parameters<typeof createServer>[1],
): Promise<string> {
	const server: Server = createServer(handler);
	await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
	cleanups.push(
		() =>
			new Promise<void>((r) => {
				server.closeAllConnections();
				server.close(() => r());
			}),
	);
	return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function until<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
	for (let i = 0; i < 1000; i++) {
		const value = await read();
		if (value !== undefined) return value;
		await new Promise((r) => setTimeout(r, 20));
	}
	throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
	// The service stand-in, with the relay's API token as its merchant's (payout look-ups, trigger).
	sb = await startSandbox({ port: 0, token: TOKEN, timeFactor: 0.001, liveExtras: true });
	sink = await new Target().listen();
	// The sandbox's own postbacks go to a sink: each test sends what it wants, in the order it wants.
	await control('PATCH', `shops/${sb.shopId}`, { resultUrl: sink.url('/result') });
});
afterAll(async () => {
	await sink?.close();
	await sb?.close();
});

for (const storeKind of ['sqlite', 'postgresql'] as const) {
	describe(`the relay on the open internet (${storeKind} store)`, () => {
		const cleanups: Array<() => Promise<void>> = [];
		afterEach(async () => {
			for (const c of cleanups.splice(0).reverse()) await c();
		});

		/** A database of this test's own: a file, or a PostgreSQL database dropped afterwards. */
		async function database(): Promise<string> {
			if (storeKind === 'sqlite') {
				const tmp = tempDir();
				cleanups.push(async () => tmp.cleanup());
				return join(tmp.dir, 'relay.sqlite');
			}
			const db = await createTestDatabase();
			cleanups.push(() => db.drop());
			return db.url;
		}

		async function relay(
			extra: Record<string, string> = {},
			options: { database?: string; targets?: string[]; store?: Store } = {},
		): Promise<RunningRelay & { database: string }> {
			const db = options.database ?? (await database());
			const env = baseEnv(
				'/unused',
				{ payment: options.targets ?? [sink.url('/pay')], payout: [sink.url('/payout')] },
				{
					RELAY_DATABASE: db,
					PAYPALYCH_API_BASE_URL: sb.url,
					RELAY_PAYOUT_CHECK: 'service',
					LOG_LEVEL: 'silent',
					...extra,
				},
			);
			const running = await start(env, { deps: options.store ? { store: options.store } : {} });
			cleanups.push(() => running.close());
			return { ...running, database: db };
		}

		const post = (r: RunningRelay, path: string, fields: Record<string, string>, headers = {}) =>
			r.app.inject({
				method: 'POST',
				url: path,
				headers: { ...FORM, ...headers },
				payload: form(fields),
			});
		const admin = (r: RunningRelay, url: string, method: 'GET' | 'POST' = 'GET', body?: unknown) =>
			r.app.inject({
				method,
				url,
				headers: {
					authorization: `Bearer ${ADMIN_TOKEN}`,
					...(body === undefined ? {} : { 'content-type': 'application/json' }),
				},
				payload: body === undefined ? undefined : JSON.stringify(body),
			});
		const events = async (r: RunningRelay) =>
			(JSON.parse((await admin(r, '/admin/events?limit=1000')).body) as { data: unknown[] }).data
				.length;

		it('1a. one customer-visible signature stores at most RELAY_PAIR_LIMIT distinct postbacks; the rest are looked up (at most 10 a minute, 403) or get 429, and nothing more is stored', async () => {
			const r = await relay({ RELAY_PAIR_LIMIT: '10' });
			// What the customer's redirect shows: OutSum, InvId and a valid signature for them.
			const seen = redirectFields('order-attacked', { outSum: '100.50' });
			const forged = (i: number, status = 'SUCCESS', outSum = seen.OutSum) => ({
				...paymentFields(`fake-${i}`, { invId: seen.InvId, outSum, status }),
			});
			// 100.5 and 100.50 are one signed pair (cents), so respelling the amount gains nothing.
			const respelled = {
				...forged(0),
				OutSum: '100.5',
				SignatureValue: md5(`100.5:${seen.InvId}:${TOKEN}`),
			};
			const calls = [
				...Array.from({ length: 60 }, (_, i) => forged(i)),
				...Array.from({ length: 20 }, (_, i) => forged(1000, `MADE-UP-${i}`)),
				{ ...respelled, TrsId: 'fake-respelled' },
			];
			await control('DELETE', 'calls');
			const answers = await Promise.all(calls.map((f) => post(r, '/postback/payment', f)));
			const codes = answers.map((a) => a.statusCode);
			expect(codes.filter((c) => c === 200)).toHaveLength(10);
			// Over the limit a payment is looked up (issue 25: a popular link is not refused for it):
			// the service knows none of these (403), and at most 10 look-ups a minute per pair are
			// made (429 with Retry-After for the rest).
			expect(codes.filter((c) => c === 403 || c === 429)).toHaveLength(calls.length - 10);
			expect(codes.filter((c) => c === 429).length).toBeGreaterThan(0);
			expect(await sandboxCalls('payment/status')).toBe(10);
			const limited = answers.find((a) => a.statusCode === 429)!;
			expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
			expect(await events(r)).toBe(10);
			// The service's retry of a postback already stored is still acknowledged (a duplicate).
			const storedOne = calls[codes.indexOf(200)];
			expect((await post(r, '/postback/payment', storedOne)).statusCode).toBe(200);
			expect(await events(r)).toBe(10);
			// Another payment (another signed pair) is not affected.
			expect((await post(r, '/postback/payment', paymentFields('other-1'))).statusCode).toBe(200);
			expect(await events(r)).toBe(11);
		});

		it("1b. a payment's signature is refused on /postback/payout; a payout the service knows is stored", async () => {
			const r = await relay();
			const seen = redirectFields('order-77', { outSum: '120.00' });
			const asPayout = {
				TrsId: seen.InvId,
				Amount: seen.OutSum,
				Status: 'SUCCESS',
				SignatureValue: seen.SignatureValue,
			};
			const refused = await post(r, '/postback/payout', asPayout);
			expect(refused.statusCode).toBe(403);
			expect(await events(r)).toBe(0);

			const created = await api('payout/personal/create', {
				amount: '120.00',
				payout_account_id: sb.payoutAccountId,
				order_id: `attack-payout-${storeKind}`,
			});
			const id = String(created.data[0].id);
			const amount = String(created.data[0].amount);
			const genuine = {
				TrsId: id,
				Amount: amount,
				Status: 'SUCCESS',
				SignatureValue: md5(`${amount}:${id}:${TOKEN}`),
			};
			expect((await post(r, '/postback/payout', genuine)).statusCode).toBe(200);
			expect(await events(r)).toBe(1);
			// The service cannot be asked (down): 503, nothing stored, the service sends it again later.
			const offline = await relay({ PAYPALYCH_API_BASE_URL: 'http://127.0.0.1:9' });
			expect((await post(offline, '/postback/payout', genuine)).statusCode).toBe(503);
			expect(await events(offline)).toBe(0);
		});

		it('1c. the trigger stops asking for retries of a postback the service still does not know after 15 minutes, and the relay dead-letters it', async () => {
			const trigger: WebhookHarness = await startTrigger(
				{ event: 'payment' },
				{ apiToken: TOKEN, baseUrl: sb.url },
			);
			cleanups.push(() => trigger.close());
			const db = await database();
			const store = await openStore(db);
			cleanups.push(() => store.close());
			const r = await relay({}, { database: db, targets: [trigger.url], store });
			const body = (trsId: string) => form(paymentFields(trsId));
			const now = Date.now();
			// Received 16 minutes ago (the relay passes its receive time to the trigger), and just now.
			const old = await store.insertEvent({
				kind: 'payment',
				dedupeKey: `unknown-old-${storeKind}`,
				contentType: FORM['content-type'],
				body: body('unknown-old'),
				fields: paymentFields('unknown-old'),
				receivedAt: now - 16 * MINUTE,
				targets: [trigger.url],
			});
			expect((await post(r, '/postback/payment', paymentFields('unknown-new'))).statusCode).toBe(
				200,
			);
			const deliveries = async (status: string) =>
				(
					JSON.parse((await admin(r, `/admin/deliveries?status=${status}&limit=100`)).body) as {
						data: Array<{ eventId: string; lastStatus: number | null; attempts: number }>;
					}
				).data;
			const dead = await until('the old postback to go dead', async () =>
				(await deliveries('dead')).find((d) => d.eventId === old.eventId),
			);
			expect(dead.lastStatus).toBe(422);
			// The new one is retried (503): it may still be a postback that ran ahead of the service.
			const retried = await until('the new postback to be retried', async () =>
				(await deliveries('pending')).find((d) => d.lastStatus === 503),
			);
			expect(retried.eventId).not.toBe(old.eventId);
			expect(trigger.executions).toHaveLength(0);
			// Dead events are pruned with the rest after retention (kept in the console until then).
			expect(await store.prune(now, 100)).toBe(1);
			expect(await store.getEvent(old.eventId)).toBeUndefined();
		});

		it('2. RELAY_TRUST_PROXY takes a hop count or proxy addresses, refuses true, and a spoofed X-Forwarded-For picks no address', async () => {
			expect(() =>
				loadConfig(baseEnv('/unused', { payment: ['http://a/'] }, { RELAY_TRUST_PROXY: 'true' })),
			).toThrow(/hop count|proxy hops.*CIDR/);
			try {
				loadConfig(baseEnv('/unused', { payment: ['http://a/'] }, { RELAY_TRUST_PROXY: 'true' }));
			} catch (error) {
				expect(error).toBeInstanceOf(ConfigError);
				expect((error as Error).message).toMatch(/for example 1/);
				expect((error as Error).message).toMatch(/CIDR/);
			}
			for (const trust of ['1', '127.0.0.1/8']) {
				const r = await relay({
					RELAY_TRUST_PROXY: trust,
					RELAY_REDIRECT_LIMIT_PER_CLIENT: '5',
					RELAY_REDIRECT_LIMIT_PER_PAYMENT: '0',
					RELAY_AUTH_LIMIT: '5',
				});
				// One proxy hop (127.0.0.1) in front: it appends the real client to what the client sent.
				const via = (client: string, spoofed: string) => ({
					'x-forwarded-for': `${spoofed}, ${client}`,
				});
				const codes: number[] = [];
				for (let i = 0; i < 60; i++) {
					const res = await r.app.inject({
						method: 'POST',
						url: '/redirect/success',
						headers: { ...FORM, ...via('203.0.113.7', `198.51.100.${i}`) },
						payload: form(redirectFields(`order-xff-${i}`)),
						remoteAddress: '127.0.0.1',
					});
					codes.push(res.statusCode);
				}
				expect(codes.filter((c) => c === 200)).toHaveLength(5);
				expect(codes.filter((c) => c === 429)).toHaveLength(55);
				// The victim whose address the attacker wrote is not limited.
				const victim = await r.app.inject({
					method: 'POST',
					url: '/redirect/success',
					headers: { ...FORM, ...via('198.51.100.3', '203.0.113.7') },
					payload: form(redirectFields('order-victim')),
					remoteAddress: '127.0.0.1',
				});
				expect(victim.statusCode).toBe(200);
				// Wrong console logins with rotating spoofed addresses are throttled all the same.
				const logins: number[] = [];
				for (let i = 0; i < 30; i++) {
					const res = await submitLogin(
						r.app,
						{ token: 'wrong-token-0000000000' },
						{
							...via('203.0.113.9', `192.0.2.${i}`),
						},
					);
					logins.push(res.statusCode);
				}
				expect(logins.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
				expect(logins.slice(5).every((c) => c === 429)).toBe(true);
			}
		});

		it('3. one brute-force limiter for the admin API and the console login: 429 with Retry-After, even for the right token', async () => {
			const r = await relay({ RELAY_AUTH_LIMIT: '10' });
			const codes: number[] = [];
			for (let i = 0; i < 300; i++) {
				const res = await r.app.inject({
					url: '/admin/events',
					headers: { authorization: `Bearer wrong-${i}` },
				});
				codes.push(res.statusCode);
			}
			expect(codes.slice(0, 10).every((c) => c === 401)).toBe(true);
			expect(codes.slice(10).every((c) => c === 429)).toBe(true);
			const right = await admin(r, '/admin/events');
			expect(right.statusCode).toBe(429);
			expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
			const login = await submitLogin(r.app, { token: ADMIN_TOKEN });
			expect(login.statusCode).toBe(429);
			expect(Number(login.headers['retry-after'])).toBeGreaterThan(0);
			// Another client is not affected.
			const other = await r.app.inject({
				url: '/admin/events',
				headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
				remoteAddress: '127.0.0.2',
			});
			expect(other.statusCode).toBe(200);
		});

		it('4. a slow body is cut off within the request timeout', async () => {
			const r = await relay({
				RELAY_REQUEST_TIMEOUT_MS: '1000',
				RELAY_HEADERS_TIMEOUT_MS: '500',
				RELAY_CONNECTION_TIMEOUT_MS: '5000',
			});
			const { port } = new URL(r.url);
			const socket = connect(Number(port), '127.0.0.1');
			const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
			socket.on('error', () => {});
			socket.write(
				'POST /postback/payment HTTP/1.1\r\nHost: relay\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n',
			);
			// One byte every 100 ms (never idle): at most 200 bytes, then the test gives up.
			let sent = 0;
			let isClosed = false;
			void closed.then(() => (isClosed = true));
			while (!isClosed && sent < 200) {
				socket.write('a');
				sent += 1;
				await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 100))]);
			}
			expect(isClosed).toBe(true);
			socket.destroy();
		});

		it('5. input a store cannot hold is refused with 400 and changes nothing', async () => {
			const r = await relay();
			const nul = (s: string) => `${s}\u0000x`;
			const bad = paymentFields('nul-1', { invId: nul('order') });
			expect((await post(r, '/postback/payment', bad)).statusCode).toBe(400);
			const badTrs = paymentFields(nul('trs'));
			expect((await post(r, '/postback/payment', badTrs)).statusCode).toBe(400);
			const badRedirect = redirectFields(nul('order-r'));
			expect((await post(r, '/redirect/success', badRedirect)).statusCode).toBe(400);
			expect((await post(r, '/postback/payment', paymentFields('kept-1'))).statusCode).toBe(200);
			for (const url of [
				`/admin/events?trsId=${encodeURIComponent(nul('a'))}`,
				`/admin/events?invId=${encodeURIComponent(nul('a'))}`,
				'/admin/events?to=99999999999999999999',
				'/admin/deliveries?beforeId=99999999999999999999',
				`/admin/deliveries?eventId=${encodeURIComponent(nul('a'))}`,
				`/admin/deliveries?target=${encodeURIComponent(nul('a'))}`,
				`/admin/events/${encodeURIComponent(nul('a'))}`,
			]) {
				const res = await admin(r, url);
				expect([url, res.statusCode]).toEqual([url, 400]);
				expect(res.body).not.toMatch(/bigint|syntax|invalid byte|0x00/i);
			}
			for (const [url, body] of [
				['/admin/dead/requeue', { ids: [1e20] }],
				['/admin/replay', { from: 0, to: 1e20 }],
			] as const) {
				const res = await admin(r, url, 'POST', body);
				expect([url, res.statusCode]).toEqual([url, 400]);
			}
			// The console's filters too (signed in).
			const login = await submitLogin(r.app, { token: ADMIN_TOKEN });
			const cookie = cookieOf(login, 'relay_console') ?? '';
			const page = await r.app.inject({
				url: `/admin/console/events?trsId=${encodeURIComponent(nul('a'))}`,
				headers: { cookie },
			});
			expect(page.statusCode).toBe(400);
			expect(page.body).not.toMatch(/bigint|invalid byte|0x00/i);
			expect(await events(r)).toBe(1);
		});

		it('6. a logout holds across a restart and on another instance sharing the store', async () => {
			const db = await database();
			const a = await relay({}, { database: db });
			const b = await relay({}, { database: db });
			const login = await submitLogin(a.app, { token: ADMIN_TOKEN });
			const cookie = cookieOf(login, 'relay_console') ?? '';
			const home = await a.app.inject({ url: '/admin/console', headers: { cookie } });
			expect(home.statusCode).toBe(200);
			expect((await b.app.inject({ url: '/admin/console', headers: { cookie } })).statusCode).toBe(
				200,
			);
			const csrf = /name="_csrf" value="([^"]+)"/.exec(home.body)?.[1] ?? '';
			const out = await a.app.inject({
				method: 'POST',
				url: '/admin/logout',
				headers: { cookie, 'content-type': FORM['content-type'] },
				payload: form({ _csrf: csrf }),
			});
			expect(out.statusCode).toBe(303);
			// Instance b never saw the logout request.
			const onB = await b.app.inject({ url: '/admin/console', headers: { cookie } });
			expect(onB.statusCode).toBe(303);
			expect(onB.headers.location).toMatch(/^\/admin\/login/);
			await a.close();
			const restarted = await relay({}, { database: db });
			const after = await restarted.app.inject({ url: '/admin/console', headers: { cookie } });
			expect(after.statusCode).toBe(303);
			expect(after.headers.location).toMatch(/^\/admin\/login/);
		});

		it('7. /admin and /admin/ lead to the console (its login page when signed out)', async () => {
			const r = await relay();
			for (const url of ['/admin', '/admin/']) {
				const res = await r.app.inject({ url });
				expect([url, res.statusCode, res.headers.location]).toEqual([url, 303, '/admin/console']);
			}
			const console = await r.app.inject({ url: '/admin/console' });
			expect(console.statusCode).toBe(303);
			expect(console.headers.location).toMatch(/^\/admin\/login/);
			expect((await r.app.inject({ url: '/admin/login' })).statusCode).toBe(200);
		});

		it("8. a forged duplicate stored first never gives the workflow the attacker's custom as the service's", async () => {
			const trigger: WebhookHarness = await startTrigger(
				{ event: 'payment' },
				{ apiToken: TOKEN, baseUrl: sb.url },
			);
			cleanups.push(() => trigger.close());
			const r = await relay({}, { targets: [trigger.url] });
			const bill = await api('bill/create', {
				amount: '250.00',
				shop_id: sb.shopId,
				order_id: `attack-8-${storeKind}`,
				custom: 'crm=genuine',
			});
			const paid = await control('POST', `bills/${bill.bill_id}/pay`, { outcome: 'full' });
			const genuine = paid.postback as Record<string, string>;
			const forged = { ...genuine, custom: 'crm=attacker', Commission: '999.00' };
			expect((await post(r, '/postback/payment', forged)).statusCode).toBe(200);
			expect((await post(r, '/postback/payment', genuine)).statusCode).toBe(200);
			const item = await until('the execution', async () => trigger.executions[0]?.[0][0].json);
			expect(item.confirmed).toBe(true);
			expect(item.TrsId).toBe(genuine.TrsId);
			// Nothing the signature or the service does not cover is presented as the service's.
			expect(item).not.toHaveProperty('custom');
			expect(item).not.toHaveProperty('Commission');
			expect(item).not.toHaveProperty('CommissionNumber');
			expect(item.unverified).toMatchObject({ custom: 'crm=attacker', Commission: '999.00' });
			expect(item.payment).toMatchObject({ id: genuine.TrsId });
		});

		// Issue 26, third round. Each case says what it showed before the fix.

		it('9. whatever a target answers (NUL bytes, invalid UTF-8), the attempt is recorded the same on both stores and nothing is sent again', async () => {
			// Before: on PostgreSQL the result with a NUL was never recorded (text cannot hold one):
			// the delivery stayed `delivering` and was sent again every lease; a 422 never went dead.
			const hits = new Map<string, number>();
			const answer = Buffer.concat([
				Buffer.from('ok\u0000 '),
				Buffer.from([0xff, 0xfe, 0xc3]),
				Buffer.from(' ünd\u0000'),
			]);
			const base = await ownServer(cleanups, (req, res) => {
				req.resume();
				req.on('end', () => {
					const path = req.url ?? '';
					hits.set(path, (hits.get(path) ?? 0) + 1);
					const status = path === '/refuse' ? 422 : 200;
					res.writeHead(status, {
						'content-type': 'text/plain',
						...(status === 200 ? { 'x-paypalych-receipt': 'accepted' } : {}),
					});
					res.end(answer);
				});
			});
			const r = await relay(
				{ RELAY_LEASE_MS: '1500', RELAY_DELIVERY_TIMEOUT_MS: '1000' },
				{ targets: [`${base}/ok`, `${base}/refuse`] },
			);
			expect((await post(r, '/postback/payment', paymentFields('nul-answer'))).statusCode).toBe(
				200,
			);
			const list = async (status: string) =>
				(
					JSON.parse((await admin(r, `/admin/deliveries?status=${status}&limit=10`)).body) as {
						data: Array<{ id: number; target: string; lastResponse: string | null }>;
					}
				).data;
			await until('one delivered and one dead', async () =>
				(await list('delivered')).length === 1 && (await list('dead')).length === 1
					? true
					: undefined,
			);
			// Two leases later, still one request each: no redelivery.
			await new Promise((res) => setTimeout(res, 3_200));
			expect(Object.fromEntries(hits)).toEqual({ '/ok': 1, '/refuse': 1 });
			const expected = 'ok\\u0000 \uFFFD\uFFFD\uFFFD ünd\\u0000';
			const [dead] = await list('dead');
			expect(dead.lastResponse).toBe(expected);
			for (const d of [...(await list('delivered')), dead]) {
				const attempts = JSON.parse(
					(await admin(r, `/admin/deliveries/${d.id}/attempts`)).body,
				) as { data: Array<{ response: string | null; outcome: string }> };
				expect(attempts.data).toHaveLength(1);
				expect(attempts.data[0].response).toBe(expected);
			}
		});

		it('10. the admin-token limiter never fails open: an IPv6 /64 is one client, a global ceiling, a full table evicts the oldest', async () => {
			const r = await relay({ RELAY_AUTH_LIMIT: '10', RELAY_AUTH_GLOBAL_LIMIT: '200' });
			const wrong = (remoteAddress: string, token = 'wrong-token') =>
				r.app.inject({
					url: '/admin/events',
					headers: { authorization: `Bearer ${token}` },
					remoteAddress,
				});
			// Before: every address of a /64 had 10 fresh tries (100 of 100 got 401 here).
			const v6: number[] = [];
			for (let i = 0; i < 100; i++)
				v6.push((await wrong(`2001:db8:7:7::${(i + 1).toString(16)}`)).statusCode);
			expect(v6.filter((c) => c === 401)).toHaveLength(10);
			expect(v6.slice(10).every((c) => c === 429)).toBe(true);
			// The operator signs in from elsewhere before the attack goes on.
			expect((await admin(r, '/admin/events')).statusCode).toBe(200);
			// Before: 190 addresses with one guess each were all answered 401 (no global ceiling).
			const spread: number[] = [];
			for (let i = 0; i < 190; i++)
				spread.push((await wrong(`198.18.${i >> 8}.${i & 255}`)).statusCode);
			expect(spread.filter((c) => c === 401)).toHaveLength(190);
			for (let i = 0; i < 20; i++) await wrong(`198.19.0.${i}`);
			// 200 wrong tokens in the window: every token check from a new client is 429, the right one too.
			const late = await wrong('203.0.113.50', ADMIN_TOKEN);
			expect(late.statusCode).toBe(429);
			expect(Number(late.headers['retry-after'])).toBeGreaterThan(0);
			expect((await wrong('203.0.113.51')).statusCode).toBe(429);
			// The client that gave the right token keeps its access.
			expect((await admin(r, '/admin/events')).statusCode).toBe(200);

			// Before: once 10,000 clients were tracked, a new one was never counted (always 401).
			const full = await relay({ RELAY_AUTH_LIMIT: '10', RELAY_AUTH_GLOBAL_LIMIT: '1000000' });
			for (let i = 0; i < 10_050; i++)
				await full.app.inject({
					url: '/admin/events',
					headers: { authorization: 'Bearer wrong' },
					remoteAddress: `10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`,
				});
			const fresh: number[] = [];
			for (let i = 0; i < 12; i++)
				fresh.push(
					(
						await full.app.inject({
							url: '/admin/events',
							headers: { authorization: 'Bearer wrong' },
							remoteAddress: '192.0.2.200',
						})
					).statusCode,
				);
			expect(fresh.slice(0, 10).every((c) => c === 401)).toBe(true);
			expect(fresh.slice(10)).toEqual([429, 429]);
		});

		it("11. a redirect's forged paid, confirmed, status and eventKey never reach the top of the trigger's item through the relay", async () => {
			// Before: the item had paid "true", confirmed "true", status "SUCCESS", eventKey... at its top.
			const trigger: WebhookHarness = await startTrigger(
				{ event: 'success' },
				{ apiToken: TOKEN, baseUrl: sb.url },
			);
			cleanups.push(() => trigger.close());
			const db = await database();
			const r = await start(
				baseEnv(
					'/unused',
					{ success: [trigger.url] },
					{ RELAY_DATABASE: db, PAYPALYCH_API_BASE_URL: sb.url, LOG_LEVEL: 'silent' },
				),
			);
			cleanups.push(() => r.close());
			const forged = {
				paid: 'true',
				confirmed: 'true',
				payment: '{"status":"SUCCESS"}',
				status: 'SUCCESS',
				orderConfirmed: 'true',
				eventKey: 'payment-genuine-SUCCESS',
			};
			const res = await post(r, '/redirect/success', {
				...redirectFields('order-forged'),
				...forged,
			});
			expect(res.statusCode).toBeLessThan(400);
			const item = await until('the execution', async () => trigger.executions[0]?.[0][0].json);
			for (const name of Object.keys(forged)) expect(item, name).not.toHaveProperty(name);
			expect(item.unverified).toMatchObject(forged);
			expect(item).toMatchObject({ event: 'success', paymentProof: false, InvId: 'order-forged' });
		});

		it("12. the service's API: a huge answer ends the catch-up at the size limit; plain http and a hop count above 10 are refused at start", async () => {
			// Before: a 300 MB answer took the relay from 120 MB to 1.35 GB; http:// and 99999 were accepted.
			const hostile = await ownServer(cleanups, (_req, res) => {
				res.writeHead(200, { 'content-type': 'application/json' });
				const chunk = Buffer.alloc(64 * 1024, 0x20);
				let sent = 0;
				const pump = () => {
					while (sent < 300e6 && res.write(chunk)) sent += chunk.length;
					if (sent < 300e6) res.once('drain', pump);
					else res.end();
				};
				res.write('{"data":[');
				pump();
			});
			const r = await relay({
				PAYPALYCH_API_BASE_URL: hostile,
				RELAY_CATCHUP_INTERVAL_S: '3600',
			});
			const before = process.memoryUsage().rss;
			const started = Date.now();
			const run = await admin(r, '/admin/catchup', 'POST');
			expect(Date.now() - started).toBeLessThan(15_000);
			expect(JSON.parse(run.body)).toMatchObject({ outcome: 'failed' });
			expect(JSON.parse(run.body).error).toMatch(/more than \d+ bytes/);
			expect(process.memoryUsage().rss - before).toBeLessThan(200e6);
			const env = (extra: Record<string, string>) =>
				baseEnv('/unused', { payment: ['https://n8n.example/w'] }, extra);
			for (const [extra, variable] of [
				[
					{ PAYPALYCH_API_BASE_URL: 'http://pal24.pro', RELAY_ALLOW_PLAIN_HTTP_API: '' },
					'PAYPALYCH_API_BASE_URL',
				],
				[{ RELAY_TRUST_PROXY: '99999' }, 'RELAY_TRUST_PROXY'],
			] as const) {
				let error: unknown;
				try {
					loadConfig(env(extra));
				} catch (e) {
					error = e;
				}
				expect(error).toBeInstanceOf(ConfigError);
				expect((error as ConfigError).variables).toEqual([variable]);
			}
		});

		/** The value of one Prometheus counter line of /metrics (0 when absent). */
		const metric = async (r: RunningRelay, line: string) => {
			const text = (await r.app.inject({ method: 'GET', url: '/metrics' })).body;
			const found = text.split('\n').find((l) => l.startsWith(`${line} `));
			return found ? Number(found.slice(line.length + 1)) : 0;
		};
		/** A payout postback under a redirect's signature (Amount=OutSum, TrsId=InvId). */
		const asPayout = (invId: string, outSum = '120.00') => {
			const seen = redirectFields(invId, { outSum });
			return {
				TrsId: seen.InvId,
				Amount: seen.OutSum,
				Status: 'SUCCESS',
				SignatureValue: seen.SignatureValue,
			};
		};

		it('13. look-ups caused by postbacks: a refusal is remembered, all pairs share a ceiling a minute (then 503 + Retry-After, counted), and a trickled answer ends at the deadline', async () => {
			// Before: 10 payout/status calls per signed pair per minute, no global ceiling, no memory
			// of a "not found" (about 14,400 calls a day from one public signature), and undici's idle
			// timeouts only (a trickled answer held the postback past its timeout).
			const r = await relay({ RELAY_LOOKUP_GLOBAL_LIMIT: '5' });
			await control('DELETE', 'calls');
			const replayed = asPayout(`remembered-${storeKind}`);
			for (let i = 0; i < 30; i++) {
				expect((await post(r, '/postback/payout', replayed)).statusCode).toBe(403);
			}
			// One call: the other 29 were refused from memory.
			expect(await sandboxCalls('payout/status')).toBe(1);
			// Many signatures (distinct pairs): 4 more calls fill the minute's 5, the rest get 503.
			const answers = [];
			for (let i = 0; i < 20; i++)
				answers.push(await post(r, '/postback/payout', asPayout(`many-${storeKind}-${i}`)));
			expect(answers.slice(0, 4).map((a) => a.statusCode)).toEqual([403, 403, 403, 403]);
			const throttled = answers.slice(4);
			expect(throttled.map((a) => a.statusCode)).toEqual(throttled.map(() => 503));
			const wait = Number(throttled[0].headers['retry-after']);
			expect(wait).toBeGreaterThan(0);
			expect(wait).toBeLessThanOrEqual(60);
			expect(await sandboxCalls('payout/status')).toBe(5);
			expect(await metric(r, 'paypalych_relay_lookups_throttled_total{kind="payout"}')).toBe(16);
			// A genuine payout in that minute is not refused: 503, the service sends it again later.
			const created = await api('payout/personal/create', {
				amount: '120.00',
				payout_account_id: sb.payoutAccountId,
				order_id: `ceiling-${storeKind}`,
			});
			const id = String(created.data[0].id);
			const amount = String(created.data[0].amount);
			const genuine = {
				TrsId: id,
				Amount: amount,
				Status: 'SUCCESS',
				SignatureValue: md5(`${amount}:${id}:${TOKEN}`),
			};
			const later = await post(r, '/postback/payout', genuine);
			expect(later.statusCode).toBe(503);
			expect(Number(later.headers['retry-after'])).toBeGreaterThan(0);
			expect(await events(r)).toBe(0);
			// A fresh minute (another instance on the same store): the same postback is stored.
			const next = await relay({ RELAY_LOOKUP_GLOBAL_LIMIT: '5' }, { database: r.database });
			expect((await post(next, '/postback/payout', genuine)).statusCode).toBe(200);
			expect(await events(next)).toBe(1);

			// A service that trickles its answer (a byte every 200 ms): the look-up ends at its
			// overall deadline (RELAY_DELIVERY_TIMEOUT_MS), 503, not when the trickle stops.
			const trickle = await ownServer(cleanups, (_req, res) => {
				res.writeHead(200, { 'content-type': 'application/json' });
				const timer = setInterval(() => res.write(' '), 200);
				res.on('close', () => clearInterval(timer));
			});
			const slow = await relay({
				PAYPALYCH_API_BASE_URL: trickle,
				RELAY_DELIVERY_TIMEOUT_MS: '1000',
				RELAY_LEASE_MS: '60000',
			});
			const started = Date.now();
			expect((await post(slow, '/postback/payout', genuine)).statusCode).toBe(503);
			expect(Date.now() - started).toBeLessThan(5_000);
		});

		it('14. redirects: one signed pair stores at most RELAY_REDIRECT_LIMIT_PER_PAYMENT_DAY events a day, across instances; the customer still gets the page', async () => {
			// Before: only the per-minute limit (10), so one signature minted ~14,400 events a day.
			const limits = {
				RELAY_REDIRECT_LIMIT_PER_PAYMENT_DAY: '3',
				RELAY_REDIRECT_LIMIT_PER_PAYMENT: '0',
				RELAY_REDIRECT_LIMIT_PER_CLIENT: '0',
				RELAY_REDIRECT_TARGETS: sink.url('/redirect'),
				RELAY_SUCCESS_URL: 'https://shop.example/thanks',
				RELAY_FAIL_URL: 'https://shop.example/sorry',
			};
			const r = await relay(limits);
			const seen = redirectFields(`daily-${storeKind}`, { outSum: '50.00' });
			const codes = [];
			for (let i = 0; i < 5; i++) codes.push((await post(r, '/redirect/success', seen)).statusCode);
			for (let i = 0; i < 2; i++) codes.push((await post(r, '/redirect/fail', seen)).statusCode);
			expect(codes).toEqual([303, 303, 303, 303, 303, 303, 303]);
			expect(await events(r)).toBe(3);
			expect(
				await metric(
					r,
					'paypalych_relay_rejected_total{kind="success",reason="redirect_daily_limit"}',
				),
			).toBe(2);
			// Another instance on the same store counts the same day.
			const other = await relay(limits, { database: r.database });
			expect((await post(other, '/redirect/success', seen)).statusCode).toBe(303);
			expect(await events(other)).toBe(3);
			// Another payment's redirect, and the payment postback of the same pair, are not touched.
			const another = redirectFields(`daily-other-${storeKind}`, { outSum: '50.00' });
			expect((await post(other, '/redirect/success', another)).statusCode).toBe(303);
			const sameOrder = paymentFields(`daily-pay-${storeKind}`, {
				invId: seen.InvId,
				outSum: seen.OutSum,
			});
			expect((await post(other, '/postback/payment', sameOrder)).statusCode).toBe(200);
			expect(await events(other)).toBe(5);
		});

		for (const profile of ['live', 'spec'] as const) {
			it(`15. a popular MULTI link (${profile} profile): 12 genuine payments in a row are all stored, 3 forged TrsIds on its pair refused (403), with bounded look-ups`, async () => {
				// Before: from the 11th payment of one signed pair in the window, 429 for the genuine ones.
				// `spec`: the document's answers only (no `commission` field; `amount` leaves out the
				// commission the payer paid, so OutSum = amount + the postback's Commission).
				await control('PATCH', `merchants/${sb.merchantId}`, {
					profile,
					liveExtras: profile === 'live',
				});
				cleanups.push(async () => {
					await control('PATCH', `merchants/${sb.merchantId}`, {
						profile: 'live',
						liveExtras: true,
					});
				});
				const r = await relay({ RELAY_PAIR_LIMIT: '10' });
				const bill = await api('bill/create', {
					amount: '250.00',
					shop_id: sb.shopId,
					order_id: `link-${storeKind}-${profile}`,
					type: 'multi',
					payer_pays_commission: '1',
				});
				const billId = String(bill.bill_id ?? bill.data?.bill_id);
				await control('DELETE', 'calls');
				const postbacks: Array<Record<string, string>> = [];
				for (let i = 0; i < 12; i++) {
					const paid = await control('POST', `bills/${billId}/pay`, {});
					postbacks.push(paid.postback as Record<string, string>);
				}
				// One pair: the same InvId and amount, distinct TrsIds.
				expect(new Set(postbacks.map((p) => `${p.InvId}:${p.OutSum}`)).size).toBe(1);
				expect(new Set(postbacks.map((p) => p.TrsId)).size).toBe(12);
				await control('DELETE', 'calls');
				const stored = [];
				for (const fields of postbacks)
					stored.push((await post(r, '/postback/payment', fields)).statusCode);
				expect(stored).toEqual(postbacks.map(() => 200));
				expect(await events(r)).toBe(12);
				// Two look-ups: the 11th and the 12th.
				expect(await sandboxCalls('payment/status')).toBe(2);
				// The service's retries of them are duplicates: acknowledged without a call.
				expect((await post(r, '/postback/payment', postbacks[11])).statusCode).toBe(200);
				expect(await sandboxCalls('payment/status')).toBe(2);
				const forged = ['a', 'b', 'c'].map((x) => ({
					...postbacks[0],
					TrsId: `forged-${x}-${storeKind}`,
				}));
				for (const fields of forged)
					expect((await post(r, '/postback/payment', fields)).statusCode).toBe(403);
				// Sent again, each forged one is refused from memory.
				for (const fields of forged)
					expect((await post(r, '/postback/payment', fields)).statusCode).toBe(403);
				expect(await sandboxCalls('payment/status')).toBe(5);
				expect(await events(r)).toBe(12);
			});
		}

		it('16. (issue 26 point 2) one bad bill does not stop catch-up: a bill whose order ID the store refuses is skipped and reported, the genuine lost payments around it are stored, and catchup-failed is raised once', async () => {
			// Before: the store's refusal of one bill ended every run at the same place, for ever.
			const alerts = await new Target().listen();
			cleanups.push(() => alerts.close());
			const m = await sandboxMerchant(sb.url, 'live');
			const early = await m.pay((await m.bill('10.00')).billId);
			const nul = await m.pay((await m.bill('11.00', 'NORMAL', 'bad\u0000order')).billId);
			const late = await m.pay((await m.bill('12.00')).billId);
			const r = await start(
				baseEnv(
					'/unused',
					{ payment: [sink.url('/pay')], payout: [sink.url('/payout')] },
					{
						RELAY_DATABASE: await database(),
						PAYPALYCH_API_TOKEN: m.token,
						PAYPALYCH_API_BASE_URL: sb.url,
						RELAY_CATCHUP_INTERVAL_S: '3600',
						RELAY_ALERT_TARGETS: alerts.url('/alerts'),
						LOG_LEVEL: 'silent',
					},
				),
				{ deps: { catchupBackoffMs: 5, alertCheckMs: 50 } },
			);
			cleanups.push(() => r.close());
			const run = JSON.parse((await admin(r, '/admin/catchup', 'POST')).body);
			expect(run.outcome).toBe('done');
			expect(run.found.map((f: { trsId: string }) => f.trsId).sort()).toEqual(
				[early.paymentId, late.paymentId].sort(),
			);
			// The service takes order IDs up to 255 characters (the store holds 16 384): a NUL is the one
			// the store refuses.
			expect(run.skippedRecords).toEqual([
				{ kind: 'payment', trsId: nul.paymentId, reason: expect.stringMatching(/NUL/) },
			]);
			const alerted = () => alerts.received.filter((a) => a.body.includes('catchup-failed'));
			await until('the catchup-failed alert', async () =>
				alerted().length > 0 ? true : undefined,
			);
			// A later lost payment is caught up by the next run; the bad bills are not read again and
			// nothing is alerted twice.
			const later = await m.pay((await m.bill('13.00')).billId);
			const again = JSON.parse((await admin(r, '/admin/catchup', 'POST', { deep: true })).body);
			expect(again).toMatchObject({ outcome: 'done', skippedRecords: [] });
			expect(again.found.map((f: { trsId: string }) => f.trsId)).toEqual([later.paymentId]);
			await new Promise((resolve) => setTimeout(resolve, 300));
			expect(alerted()).toHaveLength(1);
			expect(alerted()[0].body).toContain(nul.paymentId);
		});

		it('17. (issue 26 point 8) a hop count above the real number of proxies: RELAY_TRUST_PROXY above 10 is refused at start, naming the setting; 10 is accepted', async () => {
			// Before: 99999 was accepted, and X-Forwarded-For chose the client address.
			const db = await database();
			const env = (trust: string) =>
				baseEnv(
					'/unused',
					{ payment: [sink.url('/pay')] },
					{
						RELAY_DATABASE: db,
						PAYPALYCH_API_BASE_URL: sb.url,
						RELAY_TRUST_PROXY: trust,
						LOG_LEVEL: 'silent',
					},
				);
			for (const trust of ['99999', '11']) {
				const refused = await start(env(trust)).then(
					async (r) => {
						await r.close();
						return undefined;
					},
					(e: unknown) => e,
				);
				expect(refused, trust).toBeInstanceOf(ConfigError);
				expect((refused as ConfigError).variables).toEqual(['RELAY_TRUST_PROXY']);
				expect((refused as Error).message).toContain('RELAY_TRUST_PROXY');
			}
			const r = await start(env('10'));
			cleanups.push(() => r.close());
			const seen = await r.app.inject({
				method: 'GET',
				url: '/healthz',
				headers: { 'x-forwarded-for': '203.0.113.7' },
			});
			expect(seen.statusCode).toBe(200);
		});

		/**
		 * Issue 25: a paid bill's postback, and a forger's copy of it with another order's signed pair
		 * (OutSum, InvId, SignatureValue: what a customer sees in their own redirect).
		 */
		async function forgery(order: string, otherAmount = '300.00') {
			const target = await new Target().listen();
			cleanups.push(() => target.close());
			const r = await relay({}, { targets: [target.url('/pay')] });
			const pay = async (suffix: string, amount: string) => {
				const bill = await api('bill/create', {
					amount,
					shop_id: sb.shopId,
					order_id: `attack-18-${order}-${suffix}-${storeKind}`,
				});
				const paid = await control('POST', `bills/${bill.bill_id}/pay`, { outcome: 'full' });
				return paid.postback as Record<string, string>;
			};
			const other = await pay('other', otherAmount);
			const genuine = await pay('genuine', '250.00');
			const forged = {
				...genuine,
				OutSum: other.OutSum,
				InvId: other.InvId,
				SignatureValue: other.SignatureValue,
			};
			await control('DELETE', 'calls');
			/** What the target received under the genuine TrsId: the InvIds. */
			const forwarded = () =>
				target.received
					.map((x) => Object.fromEntries(new URLSearchParams(x.body)))
					.filter((f) => f.TrsId === genuine.TrsId)
					.map((f) => f.InvId)
					.sort();
			return {
				r,
				genuine,
				forged,
				/** The events stored under the genuine TrsId: their InvIds. */
				stored: async () =>
					(
						JSON.parse(
							(await admin(r, `/admin/events?limit=100&trsId=${encodeURIComponent(genuine.TrsId)}`))
								.body,
						) as { data: Array<{ fields: Record<string, string> }> }
					).data
						.map((e) => e.fields.InvId)
						.sort(),
				forwarded,
				/** Once the genuine delivery came, and a while after: the target got only the genuine one. */
				onlyGenuineForwarded: async () => {
					await until('the genuine delivery', async () =>
						forwarded().length > 0 ? true : undefined,
					);
					await settle();
					expect(forwarded()).toEqual([genuine.InvId]);
				},
				lookUps: (outcome: string) =>
					metric(r, `paypalych_relay_lookups_total{kind="payment",outcome="${outcome}"}`),
			};
		}
		const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

		it("18a. (issue 25) the genuine postback, then a forged one with its TrsId and another order's signed pair: the forged one is looked up and refused (403); only the genuine is stored and forwarded", async () => {
			// Before: the forged one was its own event (another dedupe key), stored and forwarded; only
			// the trigger refused it.
			const f = await forgery('a');
			const { r } = f;
			expect((await post(r, '/postback/payment', f.genuine)).statusCode).toBe(200);
			expect(await sandboxCalls('payment/status')).toBe(0);
			const forged = await post(r, '/postback/payment', f.forged);
			expect(forged.statusCode).toBe(403);
			expect(await sandboxCalls('payment/status')).toBe(1);
			expect(await f.lookUps('refused')).toBe(1);
			expect(
				await metric(r, 'paypalych_relay_rejected_total{kind="payment",reason="unknown_payment"}'),
			).toBe(1);
			// Sent again, it is refused from memory, without a call.
			expect((await post(r, '/postback/payment', f.forged)).statusCode).toBe(403);
			expect(await sandboxCalls('payment/status')).toBe(1);
			expect(await f.stored()).toEqual([f.genuine.InvId]);
			await f.onlyGenuineForwarded();
		});

		it("18e. (issue 25) the genuine postback, then a forged one with its TrsId and the signed pair of another order of the same amount: the payment record agrees on everything but the order, so its bill's order ID is read (bill/status) and the forged one refused (403)", async () => {
			const f = await forgery('e', '250.00');
			const { r } = f;
			expect(f.forged.OutSum).toBe(f.genuine.OutSum);
			expect((await post(r, '/postback/payment', f.genuine)).statusCode).toBe(200);
			const forged = await post(r, '/postback/payment', f.forged);
			expect(forged.statusCode, forged.body).toBe(403);
			expect(await sandboxCalls('payment/status')).toBe(1);
			expect(await sandboxCalls('bill/status')).toBe(1);
			expect(await f.stored()).toEqual([f.genuine.InvId]);
			await f.onlyGenuineForwarded();
		});

		it('18b. (issue 25) a forged postback first, then the genuine one: the forged one is stored and forwarded (the trigger refuses it), the genuine one is looked up, agrees, and is stored and forwarded', async () => {
			const f = await forgery('b');
			const { r } = f;
			expect((await post(r, '/postback/payment', f.forged)).statusCode).toBe(200);
			expect(await sandboxCalls('payment/status')).toBe(0);
			expect((await post(r, '/postback/payment', f.genuine)).statusCode).toBe(200);
			// Looked up: the service's record agrees with the genuine one.
			expect(await sandboxCalls('payment/status')).toBe(1);
			expect(await f.lookUps('known')).toBe(1);
			const both = [f.genuine.InvId, f.forged.InvId].sort();
			expect(await f.stored()).toEqual(both);
			await until('both deliveries', async () => (f.forwarded().length >= 2 ? true : undefined));
			await settle();
			expect(f.forwarded()).toEqual(both);
		});

		it("18c. (issue 25) an exact duplicate of a postback (the service's retry, the amount respelled) is answered 200 as a duplicate, with no look-up, even where a forged one shares its TrsId", async () => {
			const f = await forgery('c');
			const { r } = f;
			expect((await post(r, '/postback/payment', f.forged)).statusCode).toBe(200);
			expect((await post(r, '/postback/payment', f.genuine)).statusCode).toBe(200);
			expect(await sandboxCalls('payment/status')).toBe(1);
			// The retries of both: duplicates, no call to the service, nothing more stored or sent.
			const respelled: Record<string, string> = {
				...f.genuine,
				OutSum: String(Number(f.genuine.OutSum)),
			};
			expect(respelled.OutSum).not.toBe(f.genuine.OutSum);
			respelled.SignatureValue = md5(`${respelled.OutSum}:${respelled.InvId}:${TOKEN}`);
			for (const retry of [f.genuine, f.forged, respelled, f.genuine]) {
				expect((await post(r, '/postback/payment', retry)).statusCode).toBe(200);
			}
			expect(await metric(r, 'paypalych_relay_duplicates_total{kind="payment"}')).toBe(4);
			expect(await sandboxCalls('payment/status')).toBe(1);
			expect((await f.lookUps('known')) + (await f.lookUps('refused'))).toBe(1);
			expect(await f.stored()).toHaveLength(2);
			await until('both deliveries', async () => (f.forwarded().length >= 2 ? true : undefined));
			await settle();
			expect(f.forwarded()).toHaveLength(2);
		});

		it("18d. (issue 25) a payout postback with a stored payout's TrsId and status and another amount is looked up and refused (403); the genuine one is forwarded once", async () => {
			const r = await relay();
			const created = await api('payout/personal/create', {
				amount: '120.00',
				payout_account_id: sb.payoutAccountId,
				order_id: `attack-18d-${storeKind}`,
			});
			const id = String(created.data[0].id);
			const amount = String(created.data[0].amount);
			// The service sends a SUCCESS postback once it shows the payout as SUCCESS (before, the
			// look-up answers 503: not final yet, the service retries).
			await control('POST', `payouts/${id}/advance`, { status: 'SUCCESS' });
			const genuine = {
				TrsId: id,
				Amount: amount,
				Status: 'SUCCESS',
				SignatureValue: md5(`${amount}:${id}:${TOKEN}`),
			};
			// A valid signature for another amount with this id (a payment redirect whose InvId is it).
			const forged = { ...genuine, Amount: '999.00', SignatureValue: md5(`999.00:${id}:${TOKEN}`) };
			await control('DELETE', 'calls');
			expect((await post(r, '/postback/payout', genuine)).statusCode).toBe(200);
			// RELAY_PAYOUT_CHECK=service: each payout is looked up once; the forged one twice (its id is
			// the service's, its amount is not).
			expect(await sandboxCalls('payout/status')).toBe(1);
			expect((await post(r, '/postback/payout', forged)).statusCode).toBe(403);
			expect(await sandboxCalls('payout/status')).toBe(3);
			expect(
				await metric(r, 'paypalych_relay_rejected_total{kind="payout",reason="unknown_payout"}'),
			).toBe(1);
			expect(await events(r)).toBe(1);
			await until('the payout delivery', async () =>
				sink.received.some((x) => x.path === '/payout' && x.body.includes(id)) ? true : undefined,
			);
			await settle();
			expect(sink.received.filter((x) => x.path === '/payout' && x.body.includes(id))).toHaveLength(
				1,
			);
		});
	});
}
