/**
 * Fifth security round, the relay: the corners not yet tried. Each case is numbered (F5-n, as in
 * docs/operator/relay-security.md) and runs on both stores.
 * - F5-2: the service's error answers with hostile keys and values (`constructor`, `__proto__`,
 *   numbers, nested objects, 10 MB): the look-ups read a catalogue key or the generic one, never
 *   take a hostile key for `payment_not_found`, and answer 403 or 503, never 500.
 * - F5-5, F5-6: a TrsId naming a bill whose `bill/payments` never ends, repeats itself, or answers
 *   pages of hostile size or speed: the look-up stays within its pages, bytes and time (every
 *   call of one look-up within one RELAY_DELIVERY_TIMEOUT_MS), answers, and other postbacks are
 *   answered meanwhile.
 * - F5-7 to F5-10: the client address behind proxies and tunnels (RELAY_TRUST_PROXY,
 *   X-Forwarded-For) and the break-glass: what each set-up protects and what it does not.
 */
import { expect, it } from 'vitest';
import { describeApiError } from '../../../relay/src/contract.ts';
import { ERROR_CATALOGUE } from '../../../nodes/shared/errors.ts';
import { LOOK_UP_PAYMENT_PAGES, LOOK_UP_PAYMENTS_PER_PAGE } from '../../../relay/src/look-ups.ts';
import { ApiError, LOOK_UP_MAX_ANSWER_BYTES, lookUpApi } from '../../../relay/src/service-api.ts';
import {
	BILL,
	startHostileBillService,
	type PagesMode,
} from '../../helpers/hostile-bill-service.ts';
import { submitLogin } from '../console-login.ts';
import {
	ADMIN_TOKEN,
	TOKEN,
	form,
	paymentFields,
	payoutFields,
	redirectFields,
} from '../helpers.ts';
import { FORM, onEveryStoreKind, ownServer } from './world.ts';

const own = (key: string) => Object.prototype.hasOwnProperty.call(ERROR_CATALOGUE, key);

/** Error answers a hostile or broken service could send: [HTTP status, body]. */
const HOSTILE_ERRORS: Array<[number, string]> = [
	[404, '{"message":"constructor"}'],
	[404, '{"message":"__proto__"}'],
	[404, '{"message":"api:error.__proto__"}'],
	[404, '{"message":"toString"}'],
	[404, '{"error_code":"__proto__","error_message":"constructor"}'],
	[404, '{"error_code":"constructor"}'],
	[400, '{"error":"hasOwnProperty"}'],
	[404, '{"message":42}'],
	[404, '{"message":{"a":{"b":{"c":"api:error.__proto__"}}}}'],
	[422, '{"errors":{"__proto__":["x"],"amount":{"toString":1}}}'],
	[404, '["api:error.constructor"]'],
	[404, '{"__proto__":{"message":"api:error.payment_not_found"}}'],
	[500, '{"message":"valueOf"}'],
	[404, 'null'],
	[404, 'not json at all'],
];

onEveryStoreKind('fifth round: hostile answers of the service', (w) => {
	const { cleanups, relay, post } = w;

	it('F5-2 hostile error answers: a catalogue key or the generic one, 403 or 503, never a bill look-up for a hostile key', async () => {
		let answer: [number, string] = [404, '{}'];
		const calls: string[] = [];
		const url = await ownServer(cleanups, (req, res) => {
			calls.push(new URL(req.url ?? '/', 'http://x').pathname);
			res.statusCode = answer[0];
			res.setHeader('content-type', 'application/json');
			res.end(answer[1]);
		});
		const r = await relay({
			PAYPALYCH_API_BASE_URL: url,
			RELAY_PAYOUT_CHECK: 'service',
			RELAY_PAIR_LIMIT: '1',
			RELAY_LOOKUP_GLOBAL_LIMIT: '1000',
		});
		const api = lookUpApi({ apiBaseUrl: url, deliveryTimeoutMs: 1000 }, TOKEN);
		const big = `{"message":"${'x'.repeat(10 * 1024 * 1024)}","errors":[${'"y",'.repeat(1000)}"z"]}`;
		for (const [i, hostile] of [...HOSTILE_ERRORS, [404, big] as [number, string]].entries()) {
			answer = hostile;
			// The relay's client of the service: an ApiError with a key of the catalogue or the generic one.
			const error = await api.payoutStatus(`PO-${i}`).then(
				() => undefined,
				(e: unknown) => e,
			);
			expect(error, hostile[1].slice(0, 60)).toBeInstanceOf(ApiError);
			const key = (error as ApiError).key;
			expect(own(key) || /^(http_\d+|invalid_request_data|network_error)$/.test(key), key).toBe(
				true,
			);
			// A payout postback looked up (RELAY_PAYOUT_CHECK=service): refused or retried, never 500.
			const payout = await post(r, '/postback/payout', payoutFields(`PO-${i}`, { token: TOKEN }));
			expect([403, 503], `${payout.statusCode} ${hostile[1].slice(0, 60)}`).toContain(
				payout.statusCode,
			);
			expect(payout.statusCode).toBe(hostile[0] >= 500 || hostile[1] === big ? 503 : 403);
			// A payment postback over the pair limit is looked up: a hostile key is no payment_not_found,
			// so no bill is asked for.
			const sale = paymentFields(`PAY-${i}`, { invId: `order-${i}`, token: TOKEN });
			expect((await post(r, '/postback/payment', sale)).statusCode).toBe(200);
			const again = await post(r, '/postback/payment', { ...sale, Status: 'FAIL' });
			expect([403, 503]).toContain(again.statusCode);
		}
		expect(calls.filter((p) => p.endsWith('/bill/status'))).toEqual([]);
		expect(describeApiError(404, '{"message":"api:error.__proto__"}').key).toBe('http_404');
	}, 60_000);
});

onEveryStoreKind("fifth round: a bill's payments that never end", (w) => {
	const { relay, post, cleanups } = w;

	async function billRelay(mode: PagesMode) {
		const service = await startHostileBillService(mode);
		cleanups.push(() => service.close());
		const r = await relay({
			PAYPALYCH_API_BASE_URL: service.url,
			RELAY_PAYOUT_CHECK: 'off',
			RELAY_DELIVERY_TIMEOUT_MS: '1000',
			RELAY_PAIR_LIMIT: '1',
		});
		const first = paymentFields(BILL, { invId: 'link-1', outSum: '40.00', token: TOKEN });
		// The first postback of the link is stored as it is; the next one of its signed pair is
		// looked up: payment/status does not know the TrsId, bill/status does.
		expect((await post(r, '/postback/payment', first)).statusCode).toBe(200);
		const sale = { ...first, Status: 'FAIL' };
		const pagesRead = () => service.calls.get('/api/v1/bill/payments') ?? 0;
		return { service, r, sale, pagesRead };
	}

	const cases: Array<{
		mode: PagesMode;
		says: string;
		codes: number[];
		maxPages: number;
	}> = [
		{ mode: 'endless', says: 'a cursor that never ends', codes: [503], maxPages: 10 },
		{ mode: 'same-cursor', says: 'the same cursor again', codes: [200, 403, 503], maxPages: 2 },
		{ mode: 'same-rows', says: 'the same rows again', codes: [200, 403, 503], maxPages: 2 },
		{
			mode: 'same-url',
			says: 'links.next naming the page read',
			codes: [200, 403, 503],
			maxPages: 1,
		},
		{ mode: 'rows-100k', says: 'a page of 100,000 rows', codes: [503], maxPages: 1 },
		{ mode: 'bytes-5mb', says: 'a page of 5 MB', codes: [503], maxPages: 1 },
		{ mode: 'trickle', says: 'a page trickled without end', codes: [503], maxPages: 1 },
		{ mode: 'slow-pages', says: 'endless pages of 300 ms each', codes: [503], maxPages: 4 },
	];
	for (const [n, c] of cases.entries()) {
		it(`F5-5.${n + 1} bill/payments, ${c.says}: the look-up stops within its pages, bytes and one delivery timeout, and answers`, async () => {
			const { service, r, sale, pagesRead } = await billRelay(c.mode);
			service.slowMs = 300;
			const started = Date.now();
			const answer = await post(r, '/postback/payment', sale);
			const took = Date.now() - started;
			expect(c.codes, answer.body).toContain(answer.statusCode);
			// RELAY_DELIVERY_TIMEOUT_MS (1000) for every call of the look-up together, and a margin.
			expect(took).toBeLessThan(1800);
			expect(pagesRead()).toBeLessThanOrEqual(c.maxPages);
			if (c.mode === 'rows-100k' || c.mode === 'bytes-5mb') {
				// The look-ups' client reads a record's size of answer (64 KiB) and then stops reading.
				const read = lookUpApi({ apiBaseUrl: service.url, deliveryTimeoutMs: 1000 }, TOKEN)
					.startRun()
					.billPaymentPages(BILL, LOOK_UP_PAYMENTS_PER_PAGE, LOOK_UP_PAYMENT_PAGES);
				await expect(read).rejects.toThrow(`answered more than ${LOOK_UP_MAX_ANSWER_BYTES} bytes`);
			}
		}, 20_000);
	}

	it('F5-6 other postbacks are answered while a look-up reads slow pages', async () => {
		const { service, r, sale, pagesRead } = await billRelay('slow-pages');
		service.slowMs = 300;
		const stuck = post(r, '/postback/payment', sale);
		for (let i = 0; i < 50 && pagesRead() === 0; i++) await new Promise((x) => setTimeout(x, 10));
		expect(pagesRead()).toBeGreaterThanOrEqual(1);
		const started = Date.now();
		for (let i = 0; i < 5; i++) {
			const other = await post(
				r,
				'/postback/payment',
				paymentFields(`OTHER-${i}`, { invId: `order-other-${i}`, token: TOKEN }),
			);
			expect(other.statusCode).toBe(200);
		}
		expect(Date.now() - started).toBeLessThan(500);
		expect((await stuck).statusCode).toBe(503);
	}, 20_000);
});

onEveryStoreKind('fifth round: proxies, tunnels and the break-glass', (w) => {
	const { relay } = w;
	type Relay = Awaited<ReturnType<typeof relay>>;
	const LIMITS = {
		RELAY_AUTH_LIMIT: '5',
		RELAY_AUTH_GLOBAL_LIMIT: '20',
		RELAY_REDIRECT_LIMIT_PER_CLIENT: '5',
		RELAY_REDIRECT_LIMIT_PER_PAYMENT: '0',
	};
	const check = (r: Relay, remoteAddress: string, token: string, headers = {}) =>
		r.app.inject({
			url: '/admin/events',
			headers: { authorization: `Bearer ${token}`, ...headers },
			remoteAddress,
		});
	const redirect = (r: Relay, remoteAddress: string, order: string, headers = {}) =>
		r.app.inject({
			method: 'POST',
			url: '/redirect/success',
			headers: { ...FORM, ...headers },
			payload: form(redirectFields(order)),
			remoteAddress,
		});
	/** 30 strangers' wrong tokens, each from its own address as the relay sees it. */
	const flood = async (r: Relay, via: (i: number) => [string, Record<string, string>]) => {
		for (let i = 0; i < 30; i++) {
			const [address, headers] = via(i);
			await check(r, address, `wrong-${i}`, headers);
		}
	};

	it('F5-7 a proxy or tunnel on the same host that adds no forwarding header: every client is 127.0.0.1, one client to the limits (whatever RELAY_TRUST_PROXY says)', async () => {
		for (const trust of ['', '1', 'loopback']) {
			const r = await relay({ ...LIMITS, RELAY_TRUST_PROXY: trust });
			// Every request reaches the relay from the proxy's loopback socket, without a header.
			const viaProxy = (token: string) => check(r, '127.0.0.1', token);
			const codes: number[] = [];
			for (let i = 0; i < 12; i++) codes.push((await viaProxy(`wrong-${i}`)).statusCode);
			// Five wrong tokens are checked in the window, from everyone together, then none.
			expect(codes).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
			// Not protected: the operator, through the same proxy or from a shell on the host, is
			// locked out with everyone until the window ends.
			expect((await viaProxy(ADMIN_TOKEN)).statusCode, trust).toBe(429);
			// Customers' redirects share one client's limit.
			const redirects: number[] = [];
			for (let i = 0; i < 8; i++)
				redirects.push((await redirect(r, '127.0.0.1', `order-np-${trust}-${i}`)).statusCode);
			expect(redirects.filter((c) => c === 429)).toHaveLength(3);
		}
	});

	it('F5-8 the same proxy or tunnel adding X-Forwarded-For, with RELAY_TRUST_PROXY=1 or loopback: a client each, no proxied call is break-glass, a shell on the host still is', async () => {
		for (const trust of ['1', 'loopback', '127.0.0.1']) {
			const r = await relay({ ...LIMITS, RELAY_TRUST_PROXY: trust });
			const through = (client: string) => ({ 'x-forwarded-for': client });
			// A stranger's wrong tokens lock the stranger, not the operator.
			for (let i = 0; i < 6; i++) await check(r, '127.0.0.1', 'wrong', through('203.0.113.50'));
			expect((await check(r, '127.0.0.1', ADMIN_TOKEN, through('203.0.113.50'))).statusCode).toBe(
				429,
			);
			expect((await check(r, '127.0.0.1', ADMIN_TOKEN, through('198.51.100.7'))).statusCode).toBe(
				200,
			);
			// Past the ceiling for everyone: a proxied call is no break-glass, a direct one from the host is.
			await flood(r, (i) => ['127.0.0.1', through(`192.0.2.${i}`)]);
			expect((await check(r, '127.0.0.1', ADMIN_TOKEN, through('192.0.2.200'))).statusCode).toBe(
				429,
			);
			expect((await check(r, '127.0.0.1', ADMIN_TOKEN)).statusCode).toBe(200);
			// Redirects are counted per customer.
			for (let i = 0; i < 5; i++)
				expect(
					(await redirect(r, '127.0.0.1', `o-${trust}-${i}`, through('203.0.113.1'))).statusCode,
				).toBe(200);
			expect(
				(await redirect(r, '127.0.0.1', `o-${trust}-x`, through('203.0.113.1'))).statusCode,
			).toBe(429);
			expect(
				(await redirect(r, '127.0.0.1', `o-${trust}-y`, through('203.0.113.2'))).statusCode,
			).toBe(200);
		}
	});

	it('F5-9 a tunnel or proxy that adds X-Forwarded-For while RELAY_TRUST_PROXY is unset: the header is not believed (one client, 127.0.0.1), and no proxied call is break-glass', async () => {
		const r = await relay(LIMITS);
		const through = (client: string) => ({ 'x-forwarded-for': client });
		for (let i = 0; i < 5; i++) await check(r, '127.0.0.1', 'wrong', through(`203.0.113.${i}`));
		// Five strangers with five addresses were one client: the sixth, the operator, is locked out.
		expect((await check(r, '127.0.0.1', ADMIN_TOKEN, through('198.51.100.7'))).statusCode).toBe(
			429,
		);
		expect(
			JSON.parse((await check(r, '127.0.0.1', ADMIN_TOKEN, through('198.51.100.7'))).body).scope,
		).toBe('client');
	});

	it('F5-10 X-Forwarded-For written by the client: ignored without RELAY_TRUST_PROXY; with a hop count believed from a client that reaches the port directly, not with proxy addresses', async () => {
		// No proxy configured: a remote client rotating the header is counted by its socket.
		const plain = await relay(LIMITS);
		const codes: number[] = [];
		for (let i = 0; i < 8; i++)
			codes.push(
				(await check(plain, '203.0.113.66', `wrong-${i}`, { 'x-forwarded-for': `192.0.2.${i}` }))
					.statusCode,
			);
		expect(codes).toEqual([...Array(5).fill(401), ...Array(3).fill(429)]);
		// A header on a loopback call takes the break-glass away, never gives it.
		await flood(plain, (i) => [`198.51.100.${i}`, {}]);
		expect(
			(await check(plain, '127.0.0.1', ADMIN_TOKEN, { 'x-forwarded-for': '127.0.0.1' })).statusCode,
		).toBe(429);
		expect((await check(plain, '127.0.0.1', ADMIN_TOKEN)).statusCode).toBe(200);

		// RELAY_TRUST_PROXY=1 and a client that bypasses the proxy (the relay's port reachable from
		// outside): its own header is believed, one address per guess. Not protected: the port must
		// be reachable only through the proxy.
		const hops = await relay({ ...LIMITS, RELAY_TRUST_PROXY: '1' });
		const direct: number[] = [];
		for (let i = 0; i < 8; i++)
			direct.push(
				(await check(hops, '203.0.113.66', `wrong-${i}`, { 'x-forwarded-for': `192.0.2.${i}` }))
					.statusCode,
			);
		expect(direct).toEqual(Array(8).fill(401));
		// RELAY_TRUST_PROXY naming the proxy's address: the same client's header is not believed.
		const named = await relay({ ...LIMITS, RELAY_TRUST_PROXY: '127.0.0.1' });
		const refused: number[] = [];
		for (let i = 0; i < 8; i++)
			refused.push(
				(await check(named, '203.0.113.66', `wrong-${i}`, { 'x-forwarded-for': `192.0.2.${i}` }))
					.statusCode,
			);
		expect(refused).toEqual([...Array(5).fill(401), ...Array(3).fill(429)]);
		// The console login counts the same way.
		const login = await submitLogin(
			named.app,
			{ token: 'wrong-token-000000' },
			{ 'x-forwarded-for': '192.0.2.99' },
			'203.0.113.66',
		);
		expect(login.statusCode).toBe(429);
	});
});
