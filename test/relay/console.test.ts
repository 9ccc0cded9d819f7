// The relay console's routes (app.inject) on the SQLite store, behind a TLS-terminating proxy,
// and its sessions; the browser tests are in console.browser.test.ts.
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../relay/src/app.ts';
import { loadConfig } from '../../relay/src/config.ts';
import { ConsoleAuth, LOGIN_FORM_TTL_MS, SESSION_TTL_MS } from '../../relay/src/console/session.ts';
import { cookieOf, setCookieLine, submitLogin } from './console-login.ts';
import { PAY_A, consoleSuite } from './console-suite.ts';
import { ADMIN_TOKEN, baseEnv, tempDir } from './helpers.ts';
import { PG_MISSING } from './pg.ts';
import { freshPostgresStore, freshSqliteStore } from './fresh-store.ts';

consoleSuite('SQLite', () => freshSqliteStore());

// The same console on PostgreSQL: it reads only the Store interface.
if (!PG_MISSING) consoleSuite('PostgreSQL', freshPostgresStore);

describe('relay console behind a TLS-terminating proxy', () => {
	it('marks the session cookie Secure when the request came over HTTPS, and only then', async () => {
		const tmp = tempDir();
		const config = loadConfig(
			baseEnv(tmp.dir, { payment: [PAY_A] }, { RELAY_TRUST_PROXY: '1', LOG_LEVEL: 'silent' }),
		);
		const app = await buildApp(config, { forwarder: false });
		try {
			const loginOver = (proto: string) =>
				submitLogin(app, { token: ADMIN_TOKEN }, { 'x-forwarded-proto': proto });
			expect(setCookieLine(await loginOver('https'), 'relay_console')).toMatch(/; Secure/);
			expect(setCookieLine(await loginOver('http'), 'relay_console')).not.toMatch(/Secure/);
		} finally {
			await app.close();
			tmp.cleanup();
		}
	});

	it('makes a client wait after ten wrong tokens, even with the right one', async () => {
		const tmp = tempDir();
		const app = await buildApp(
			loadConfig(baseEnv(tmp.dir, { payment: [PAY_A] }, { LOG_LEVEL: 'silent' })),
			{ forwarder: false },
		);
		try {
			const tryToken = (token: string) => submitLogin(app, { token });
			for (let i = 0; i < 10; i++)
				expect((await tryToken(`wrong-token-${i}-000000`)).statusCode).toBe(401);
			const blocked = await tryToken(ADMIN_TOKEN);
			expect(blocked.statusCode).toBe(429);
			expect(cookieOf(blocked, 'relay_console')).toBeUndefined();
		} finally {
			await app.close();
			tmp.cleanup();
		}
	});

	it('ends every session when the admin token changes', async () => {
		const tmp = tempDir();
		const env = baseEnv(tmp.dir, { payment: [PAY_A] }, { LOG_LEVEL: 'silent' });
		const first = await buildApp(loadConfig(env), { forwarder: false });
		const res = await submitLogin(first, { token: ADMIN_TOKEN });
		const cookie = cookieOf(res, 'relay_console')!;
		expect(
			(await first.inject({ url: '/admin/console/events', headers: { cookie } })).statusCode,
		).toBe(200);
		await first.close();
		const second = await buildApp(
			loadConfig({ ...env, RELAY_ADMIN_TOKEN: 'another-admin-token-9876543210' }),
			{ forwarder: false },
		);
		try {
			expect(
				(await second.inject({ url: '/admin/console/events', headers: { cookie } })).statusCode,
			).toBe(303);
		} finally {
			await second.close();
			tmp.cleanup();
		}
	});
});

describe('console sessions (ConsoleAuth, with a clock of its own)', () => {
	it('expires a session after 8 hours and a login form after an hour, and binds CSRF tokens to one session', () => {
		let now = 1_800_000_000_000;
		const auth = new ConsoleAuth(ADMIN_TOKEN, () => now);
		const { cookie, session } = auth.issue();
		expect(cookie).not.toContain(ADMIN_TOKEN);
		expect(auth.verify(cookie)).toEqual(session);
		const form = auth.loginForm();
		expect(auth.checkLoginForm(form.nonce, form.token)).toBe(true);
		expect(auth.checkLoginForm(form.nonce, auth.loginForm().token)).toBe(false);
		now += LOGIN_FORM_TTL_MS;
		expect(auth.checkLoginForm(form.nonce, form.token)).toBe(false);
		expect(auth.verify(cookie)).toEqual(session);
		now += SESSION_TTL_MS - LOGIN_FORM_TTL_MS - 1;
		expect(auth.verify(cookie)).toEqual(session);
		now += 1;
		expect(auth.verify(cookie)).toBeUndefined();
		const other = auth.issue().session;
		expect(auth.checkCsrf(other, auth.csrfToken(other))).toBe(true);
		expect(auth.checkCsrf(other, auth.csrfToken(session))).toBe(false);
		expect(auth.checkCsrf(other, undefined)).toBe(false);
		expect(new ConsoleAuth('another-admin-token-0000').verify(auth.issue().cookie)).toBeUndefined();
		expect(auth.checkToken(` ${ADMIN_TOKEN} `)).toBe(true);
		expect(auth.checkToken(ADMIN_TOKEN.slice(0, -1))).toBe(false);
	});
});
