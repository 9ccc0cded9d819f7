/**
 * The relay on the open internet. Guessing the admin token, signing out, and the console's addresses.
 * Each case replays an attack of the security review on both stores; cases that fixed a finding
 * say in a `Before:` comment what the relay did before.
 */
import { expect, it } from 'vitest';
import { cookieOf, submitLogin } from '../console-login.ts';
import { ADMIN_TOKEN, form } from '../helpers.ts';
import { FORM, onEveryStoreKind } from './world.ts';

onEveryStoreKind('the admin API and the console', ({ database, relay, admin }) => {
	// Security review, finding 3.
	it('one brute-force limiter for the admin API and the console login: 429 with Retry-After, even for the right token', async () => {
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

	// Security review, finding 6.
	it('a logout holds across a restart and on another instance sharing the store', async () => {
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

	// Security review, finding 7.
	it('/admin and /admin/ lead to the console (its login page when signed out)', async () => {
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

	// Security review, finding 10.
	it('the admin-token limiter never fails open: an IPv6 /64 is one client, a global ceiling, a full table evicts the oldest', async () => {
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
});
