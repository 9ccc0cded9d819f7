import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../relay/src/app.ts';
import { ConfigError, loadConfig } from '../../relay/src/config.ts';
import { SqliteStore } from '../../relay/src/store-sqlite/store.ts';
import { baseEnv, form, paymentFields, payoutFields, redirectFields, tempDir } from './helpers.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('rate limits on redirect events', () => {
	const open: Array<{ app: FastifyInstance; store: SqliteStore; cleanup: () => void }> = [];

	afterEach(async () => {
		for (const o of open.splice(0)) {
			await o.app.close();
			await o.store.close();
			o.cleanup();
		}
	});

	async function relay(limits: Record<string, string>) {
		const tmp = tempDir();
		const config = loadConfig(
			baseEnv(
				tmp.dir,
				{
					payment: ['http://127.0.0.1:9/pay'],
					payout: ['http://127.0.0.1:9/payout'],
					redirect: ['http://127.0.0.1:9/r'],
				},
				{ LOG_LEVEL: 'silent', ...limits },
			),
		);
		const store = await SqliteStore.open(config.database);
		const app = await buildApp(config, { store, forwarder: false });
		open.push({ app, store, cleanup: tmp.cleanup });
		const send = (url: string, fields: Record<string, string>, remoteAddress = '203.0.113.7') =>
			app.inject({ method: 'POST', url, headers: FORM, payload: form(fields), remoteAddress });
		const stored = async () => (await store.listEvents({ limit: 1000 })).length;
		const scrape = async () => (await app.inject({ method: 'GET', url: '/metrics' })).body;
		return { app, store, send, stored, scrape };
	}

	it('answers 429 and stores nothing once one InvId+OutSum pair is over its limit; other pairs go on', async () => {
		const r = await relay({
			RELAY_REDIRECT_LIMIT_PER_PAYMENT: '3',
			RELAY_REDIRECT_LIMIT_PER_CLIENT: '100',
		});
		const same = redirectFields('order-reloaded');
		const codes: number[] = [];
		for (let i = 0; i < 5; i++)
			codes.push((await r.send('/redirect/success', same, `198.51.100.${i}`)).statusCode);
		// Five different client IPs: the pair's own limit applies across them.
		expect(codes).toEqual([200, 200, 200, 429, 429]);
		expect(await r.stored()).toBe(3);
		const limited = await r.send('/redirect/fail', same, '198.51.100.9');
		expect(limited.statusCode).toBe(429);
		expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
		expect(limited.headers['content-type']).toMatch(/^text\/html/);
		expect(await r.stored()).toBe(3);
		expect((await r.send('/redirect/success', redirectFields('order-other'))).statusCode).toBe(200);
		expect(await r.stored()).toBe(4);
		const metrics = await r.scrape();
		expect(metrics).toContain(
			'paypalych_relay_rejected_total{kind="success",reason="rate_limited"} 2',
		);
		expect(metrics).toContain(
			'paypalych_relay_rejected_total{kind="fail",reason="rate_limited"} 1',
		);
	});

	it('counts only verified redirects against a pair: forged ones cannot use up the real one', async () => {
		const r = await relay({
			RELAY_REDIRECT_LIMIT_PER_PAYMENT: '2',
			RELAY_REDIRECT_LIMIT_PER_CLIENT: '100',
		});
		const forged = redirectFields('order-target', { token: '9|not-the-token' });
		for (let i = 0; i < 6; i++)
			expect((await r.send('/redirect/success', forged, `192.0.2.${i}`)).statusCode).toBe(401);
		expect((await r.send('/redirect/success', redirectFields('order-target'))).statusCode).toBe(
			200,
		);
		expect(await r.stored()).toBe(1);
	});

	it('limits each client IP across pairs, forged calls included', async () => {
		const r = await relay({
			RELAY_REDIRECT_LIMIT_PER_CLIENT: '4',
			RELAY_REDIRECT_LIMIT_PER_PAYMENT: '100',
		});
		const codes: number[] = [];
		for (let i = 0; i < 3; i++)
			codes.push((await r.send('/redirect/success', redirectFields(`order-ip-${i}`))).statusCode);
		codes.push(
			(await r.send('/redirect/success', redirectFields('order-ip-forged', { token: '9|x' })))
				.statusCode,
		);
		codes.push((await r.send('/redirect/fail', redirectFields('order-ip-5'))).statusCode);
		expect(codes).toEqual([200, 200, 200, 401, 429]);
		expect(await r.stored()).toBe(3);
		// Another client is not affected.
		expect(
			(await r.send('/redirect/success', redirectFields('order-ip-6'), '203.0.113.8')).statusCode,
		).toBe(200);
		expect(await r.stored()).toBe(4);
	});

	it('behind one reverse proxy (RELAY_TRUST_PROXY=1), tells clients apart by X-Forwarded-For', async () => {
		const r = await relay({ RELAY_REDIRECT_LIMIT_PER_CLIENT: '1', RELAY_TRUST_PROXY: '1' });
		const via = (invId: string, client: string) =>
			r.app.inject({
				method: 'POST',
				url: '/redirect/success',
				headers: { ...FORM, 'x-forwarded-for': client },
				payload: form(redirectFields(invId)),
				remoteAddress: '127.0.0.1',
			});
		expect((await via('order-xff-1', '198.51.100.20')).statusCode).toBe(200);
		expect((await via('order-xff-2', '198.51.100.21')).statusCode).toBe(200);
		expect((await via('order-xff-3', '198.51.100.20')).statusCode).toBe(429);
	});

	it('never limits postbacks per address, however many come from one (only per signed pair)', async () => {
		const r = await relay({
			RELAY_REDIRECT_LIMIT_PER_CLIENT: '1',
			RELAY_REDIRECT_LIMIT_PER_PAYMENT: '1',
		});
		const codes: number[] = [];
		for (let i = 0; i < 30; i++)
			codes.push((await r.send('/postback/payment', paymentFields(`RL-${i}`))).statusCode);
		for (let i = 0; i < 10; i++)
			codes.push((await r.send('/postback/payment', paymentFields('RL-0'))).statusCode); // the service's retries
		for (let i = 0; i < 10; i++)
			codes.push((await r.send('/postback/payout', payoutFields(`RL-P-${i}`))).statusCode);
		expect(codes.every((c) => c === 200)).toBe(true);
		expect(await r.stored()).toBe(40);
		// The redirect limit of that same address is untouched by the postbacks.
		expect(
			(await r.send('/redirect/success', redirectFields('order-after-postbacks'))).statusCode,
		).toBe(200);
		expect(
			(await r.send('/redirect/success', redirectFields('order-after-postbacks-2'))).statusCode,
		).toBe(429);
	});

	it('has no limit when both are set to 0', async () => {
		const r = await relay({
			RELAY_REDIRECT_LIMIT_PER_CLIENT: '0',
			RELAY_REDIRECT_LIMIT_PER_PAYMENT: '0',
		});
		for (let i = 0; i < 40; i++)
			expect(
				(await r.send('/redirect/success', redirectFields('order-unlimited'))).statusCode,
			).toBe(200);
		expect(await r.stored()).toBe(40);
	});

	it('refuses unusable limit settings by name', () => {
		const tmp = tempDir();
		try {
			const env = baseEnv(tmp.dir, { payment: ['http://127.0.0.1:9/pay'] });
			const error = (extra: Record<string, string>) => {
				try {
					loadConfig({ ...env, ...extra });
				} catch (e) {
					return e as ConfigError;
				}
				throw new Error('accepted');
			};
			expect(error({ RELAY_REDIRECT_LIMIT_WINDOW_MS: '10' }).variables).toEqual([
				'RELAY_REDIRECT_LIMIT_WINDOW_MS',
			]);
			expect(error({ RELAY_REDIRECT_LIMIT_PER_CLIENT: '-1' }).variables).toEqual([
				'RELAY_REDIRECT_LIMIT_PER_CLIENT',
			]);
			expect(error({ RELAY_REDIRECT_LIMIT_PER_PAYMENT: 'lots' }).variables).toEqual([
				'RELAY_REDIRECT_LIMIT_PER_PAYMENT',
			]);
			for (const [variable, value] of [
				['RELAY_REDIRECT_LIMIT_PER_PAYMENT_DAY', '-1'],
				['RELAY_LOOKUP_GLOBAL_LIMIT', '0'],
				['RELAY_LOOKUP_REFUSAL_MEMORY_MS', 'a while'],
			] as const) {
				expect(error({ [variable]: value }).variables).toEqual([variable]);
			}
			expect(loadConfig(env).redirectLimit).toEqual({
				perClient: 30,
				perPayment: 10,
				windowMs: 60_000,
				perPaymentDay: 50,
			});
			expect(loadConfig(env).lookUpLimit).toEqual({
				globalPerMinute: 60,
				refusalMemoryMs: 15 * 60_000,
			});
		} finally {
			tmp.cleanup();
		}
	});
});
