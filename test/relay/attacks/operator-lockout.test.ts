/**
 * A stranger cannot lock the operator out (security review, round 4, finding 4). Before: 1,000
 * wrong admin tokens from 100 addresses in a second made every token check answer 429 with
 * Retry-After 900; the known-operator exemption lived in one process's memory (gone after a
 * restart, absent on a second instance), the console said "Too many wrong tokens from this
 * address", and the only way out was an undocumented setting and a restart. On both stores.
 */
import { expect, it } from 'vitest';
import { submitLogin } from '../console-login.ts';
import { ADMIN_TOKEN } from '../helpers.ts';
import { onEveryStoreKind } from './world.ts';

const OPERATOR = '198.51.100.10';
const LIMITS = { RELAY_AUTH_LIMIT: '10', RELAY_AUTH_GLOBAL_LIMIT: '50' };

onEveryStoreKind('the operator keeps a way in', ({ database, relay }) => {
	type Relay = Awaited<ReturnType<typeof relay>>;
	const check = (r: Relay, remoteAddress: string, token: string, headers = {}) =>
		r.app.inject({
			url: '/admin/events',
			headers: { authorization: `Bearer ${token}`, ...headers },
			remoteAddress,
		});
	/** 100 addresses, one wrong token each: past the ceiling for everyone (50). */
	const flood = async (r: Relay) => {
		for (let i = 0; i < 100; i++) await check(r, `203.0.113.${i}`, `wrong-${i}`);
	};

	it('36.4a a known operator is kept in the store: let in after a restart and on another instance while everyone is locked out', async () => {
		const db = await database();
		const before = await relay(LIMITS, { database: db });
		expect((await check(before, OPERATOR, ADMIN_TOKEN)).statusCode).toBe(200);
		// Another instance on the same store (or this one after a restart) never saw the operator.
		const other = await relay(LIMITS, { database: db });
		await flood(other);
		const stranger = await check(other, '192.0.2.77', ADMIN_TOKEN);
		expect(stranger.statusCode).toBe(429);
		expect((await check(other, OPERATOR, ADMIN_TOKEN)).statusCode).toBe(200);
	});

	it("36.4b the refusal says when the lock is everyone's, and the console says it too", async () => {
		const r = await relay(LIMITS);
		// One client's own wrong tokens: the refusal says it is this address's.
		for (let i = 0; i < 10; i++) await check(r, '192.0.2.80', 'wrong');
		expect(JSON.parse((await check(r, '192.0.2.80', ADMIN_TOKEN)).body).scope).toBe('client');
		await flood(r);
		const refused = await check(r, '192.0.2.78', ADMIN_TOKEN);
		expect(refused.statusCode).toBe(429);
		expect(refused.headers['cache-control']).toBe('no-store');
		expect(JSON.parse(refused.body)).toMatchObject({
			scope: 'everywhere',
			message: expect.stringMatching(
				/^Too many wrong tokens from everywhere: the relay has locked token checks/,
			),
		});
		const login = await submitLogin(r.app, { token: ADMIN_TOKEN }, {}, '192.0.2.79');
		expect(login.statusCode).toBe(429);
		expect(login.body).toContain(
			'Too many wrong tokens from everywhere: the relay has locked token checks',
		);
		expect(login.body).not.toContain('Too many wrong tokens from this address');
	});

	it("36.4c the break-glass: a direct call from the relay's own host is checked during the lock; one through a proxy is not", async () => {
		const r = await relay(LIMITS);
		await flood(r);
		// Through a proxy on the host (it adds X-Forwarded-For): no break-glass.
		const proxied = await check(r, '127.0.0.1', ADMIN_TOKEN, { 'x-forwarded-for': '192.0.2.81' });
		expect(proxied.statusCode).toBe(429);
		expect((await check(r, '127.0.0.1', ADMIN_TOKEN)).statusCode).toBe(200);
		expect((await check(r, '::1', ADMIN_TOKEN)).statusCode).toBe(200);
		// A wrong token from the host is still a wrong token.
		expect((await check(r, '127.0.0.1', 'wrong')).statusCode).toBe(401);
	});
});
