// The relay console's routes through app.inject on a store given by the caller (run on each
// store): login, session cookie, CSRF, every bad input answered clearly with nothing changed,
// escaping, and no secret on any page.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../relay/src/app.ts';
import { loadConfig } from '../../relay/src/config.ts';
import type { NewEvent, Store } from '../../relay/src/store/types.ts';
import { ADMIN_TOKEN, LogSink, TOKEN, baseEnv, form, paymentFields, tempDir } from './helpers.ts';
import type { OpenedStore } from './store-suite.ts';
import { markDead, markDelivered } from './marks.ts';
import { FORM, cookieOf, csrfIn, setCookieLine, submitLogin } from './console-login.ts';

export const PAY_A = 'http://127.0.0.1:9/a/pay';
const PAY_B = 'http://127.0.0.1:9/b/pay';
const PAYOUT = 'http://127.0.0.1:9/payout';
const XSS_CUSTOM = '<script>alert("custom")</script>';
const XSS_INVID = '"><img src=x onerror=alert(1)>';

const event = (
	trsId: string,
	receivedAt: number,
	targets: string[],
	extra: Record<string, string> = {},
	kind: NewEvent['kind'] = 'payment',
): NewEvent => ({
	kind,
	dedupeKey: `${kind}:${trsId}:SUCCESS`,
	contentType: FORM,
	body: `TrsId=${trsId}`,
	fields: { TrsId: trsId, Status: 'SUCCESS', InvId: `inv-${trsId}`, OutSum: '18.50', ...extra },
	receivedAt,
	targets,
});

export function consoleSuite(name: string, open: () => Promise<OpenedStore>): void {
	describe(`relay console routes (${name})`, () => {
		const tmp = tempDir();
		const sink = new LogSink();
		let opened: OpenedStore;
		let store: Store;
		let app: FastifyInstance;
		const now = Date.now();
		const ids = { dead: 0, delivered: 0, deadB: 0, xssEvent: '', deadEvent: '' };

		const snapshot = async () =>
			JSON.stringify([
				await store.listDeliveries({ limit: 1000 }),
				await store.listEvents({ limit: 1000 }),
				await store.counts(),
			]);

		async function login(): Promise<{ cookie: string; csrf: string }> {
			const res = await submitLogin(app, { token: ADMIN_TOKEN });
			expect(res.statusCode).toBe(303);
			const cookie = cookieOf(res, 'relay_console') ?? '';
			const home = await app.inject({ url: '/admin/console', headers: { cookie } });
			expect(home.statusCode).toBe(200);
			return { cookie, csrf: csrfIn(home.body) };
		}
		let s: { cookie: string; csrf: string };
		const get = (url: string, cookie = s.cookie) => app.inject({ url, headers: { cookie } });
		const post = (url: string, fields: Record<string, string>, cookie = s.cookie, type = FORM) =>
			app.inject({
				method: 'POST',
				url,
				headers: { cookie, 'content-type': type },
				payload: type === FORM ? form(fields) : JSON.stringify(fields),
			});

		beforeAll(async () => {
			opened = await open();
			store = opened.store;
			const config = loadConfig(
				baseEnv(tmp.dir, { payment: [PAY_A, PAY_B], payout: [PAYOUT] }, { LOG_LEVEL: 'info' }),
			);
			app = await buildApp(config, { store, forwarder: false, logStream: sink });
			await app.ready();
			// One dead and one delivered delivery of an older event, one dead one of another target.
			const old = await store.insertEvent(event('T-old', now - 3_600_000, [PAY_A, PAY_B]));
			ids.deadEvent = old.eventId;
			const claimed = await store.claimDue(now, 10, 60_000, 'test');
			const a = claimed.find((d) => d.target === PAY_A)!;
			const b = claimed.find((d) => d.target === PAY_B)!;
			await markDead(store, a.id, 'test', 410, 'HTTP 410 from the target', {
				attempt: 1,
				startedAt: now - 10,
				durationMs: 7,
			});
			await markDelivered(store, b.id, now, 200, { attempt: 1, startedAt: now - 5, durationMs: 3 });
			ids.dead = a.id;
			ids.delivered = b.id;
			const other = await store.insertEvent(event('T-other', now - 1_800_000, [PAY_B]));
			const [c] = await store.claimDue(now, 10, 60_000, 'test');
			expect(c.eventId).toBe(other.eventId);
			await markDead(store, c.id, 'test', null, 'connect ECONNREFUSED', {
				attempt: 1,
				startedAt: now - 4,
				durationMs: 2,
			});
			ids.deadB = c.id;
			// Fields an attacker controls, and a signature that must never be shown.
			const xss = await store.insertEvent(
				event('T-xss', now - 60_000, [], {
					custom: XSS_CUSTOM,
					InvId: XSS_INVID,
					SignatureValue: 'SIGNATURE-MUST-NOT-SHOW',
				}),
			);
			ids.xssEvent = xss.eventId;
			s = await login();
		});

		afterAll(async () => {
			await app?.close();
			await opened?.cleanup();
			tmp.cleanup();
		});

		describe('login and session', () => {
			it('sends a browser without a session to the login form, and refuses its posts', async () => {
				const before = await snapshot();
				const page = await app.inject({ url: '/admin/console/dead?target=x' });
				expect(page.statusCode).toBe(303);
				expect(page.headers.location).toBe(
					`/admin/login?next=${encodeURIComponent('/admin/console/dead?target=x')}`,
				);
				const action = await app.inject({
					method: 'POST',
					url: `/admin/console/deliveries/${ids.dead}/requeue`,
					headers: { 'content-type': FORM },
					payload: 'x=1',
				});
				expect(action.statusCode).toBe(401);
				expect(action.body).toContain('Nothing was changed.');
				expect(await snapshot()).toBe(before);
			});

			it('trades the right token for an HttpOnly SameSite=Strict signed session cookie that does not hold the token', async () => {
				const page = await app.inject({ url: '/admin/login' });
				expect(page.statusCode).toBe(200);
				expect(page.body).toContain('type="password"');
				const res = await submitLogin(app, {
					token: ADMIN_TOKEN,
					next: '/admin/console/events?kind=payment',
				});
				expect(res.statusCode).toBe(303);
				expect(res.headers.location).toBe('/admin/console/events?kind=payment');
				const line = setCookieLine(res, 'relay_console');
				expect(line).toMatch(/; HttpOnly/);
				expect(line).toMatch(/; SameSite=Strict/);
				expect(line).toMatch(/; Path=\/admin(;|$)/);
				expect(line).not.toMatch(/Secure/);
				expect(line).not.toContain(ADMIN_TOKEN);
				expect(line).not.toContain(encodeURIComponent(ADMIN_TOKEN));
			});

			it('refuses a wrong token, a missing login-form token and a login form from elsewhere, with no session', async () => {
				const page = await app.inject({ url: '/admin/login' });
				const loginCookie = cookieOf(page, 'relay_console_login')!;
				const attempt = (cookie: string | undefined, fields: Record<string, string>) =>
					app.inject({
						method: 'POST',
						url: '/admin/login',
						headers: { ...(cookie ? { cookie } : {}), 'content-type': FORM },
						payload: form(fields),
					});
				const wrong = await attempt(loginCookie, {
					_csrf: csrfIn(page.body),
					token: 'not-the-admin-token-000',
				});
				expect(wrong.statusCode).toBe(401);
				expect(wrong.body).toContain('Wrong admin token.');
				expect(cookieOf(wrong, 'relay_console')).toBeUndefined();
				const noCsrf = await attempt(loginCookie, { token: ADMIN_TOKEN });
				expect(noCsrf.statusCode).toBe(403);
				expect(noCsrf.body).toContain('login form has expired or did not come from this relay');
				expect(cookieOf(noCsrf, 'relay_console')).toBeUndefined();
				// A cross-site form carries no SameSite=Strict cookie: the right token alone is not enough.
				const noCookie = await attempt(undefined, { _csrf: csrfIn(page.body), token: ADMIN_TOKEN });
				expect(noCookie.statusCode).toBe(403);
				expect(cookieOf(noCookie, 'relay_console')).toBeUndefined();
				const missing = await attempt(loginCookie, { _csrf: csrfIn(page.body) });
				expect(missing.statusCode).toBe(400);
				expect(missing.body).toContain('Admin token: is required');
			});

			it('never sends a login to another site', async () => {
				for (const next of [
					'https://evil.example/admin/console',
					'//evil.example/admin/console',
					'/admin/consolex',
					'/admin/events',
				]) {
					const res = await submitLogin(app, { token: ADMIN_TOKEN, next });
					expect(res.headers.location, next).toBe('/admin/console');
				}
			});

			it('rejects forged, tampered and expired session cookies', async () => {
				const [, value] = s.cookie.split('=');
				const [v, expires, id, mac] = value.split('.');
				const forged = [
					`relay_console=${v}.${Number(expires) + 1000}.${id}.${mac}`,
					`relay_console=${v}.${expires}.${id.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))}.${mac}`,
					`relay_console=${v}.${expires}.${id}.${mac.slice(0, -2)}AA`,
					`relay_console=${ADMIN_TOKEN}`,
					`relay_console=v1.1.${id}.${mac}`,
				];
				for (const cookie of forged) {
					const res = await get('/admin/console/events', cookie);
					expect(res.statusCode, cookie).toBe(303);
					expect(res.headers.location).toMatch(/^\/admin\/login/);
				}
			});

			it('a console cookie does not open the bearer admin API, which keeps working', async () => {
				expect((await get('/admin/events')).statusCode).toBe(401);
				const api = await app.inject({
					url: '/admin/dead',
					headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
				});
				expect(api.statusCode).toBe(200);
				expect(
					(api.json() as { data: Array<{ id: number }> }).data.map((d) => d.id).sort(),
				).toEqual([ids.dead, ids.deadB].sort());
			});

			it('logs out with a CSRF token, and the old cookie stops working', async () => {
				const own = await login();
				const refused = await post('/admin/logout', {}, own.cookie);
				expect(refused.statusCode).toBe(403);
				expect((await get('/admin/console', own.cookie)).statusCode).toBe(200);
				const out = await post('/admin/logout', { _csrf: own.csrf }, own.cookie);
				expect(out.statusCode).toBe(303);
				expect(out.headers.location).toBe('/admin/login');
				expect(setCookieLine(out, 'relay_console')).toMatch(/Max-Age=0/);
				expect((await get('/admin/console', own.cookie)).statusCode).toBe(303);
			});

			it('sets a Content-Security-Policy that allows no script on every console page', async () => {
				for (const url of [
					'/admin/login',
					'/admin/console',
					'/admin/console/events',
					'/admin/console/dead',
				]) {
					const res = await get(url);
					expect(res.headers['content-security-policy'], url).toContain("default-src 'none'");
					expect(String(res.headers['content-security-policy'])).not.toContain('script-src');
					expect(res.headers['cache-control']).toBe('no-store');
					expect(res.body).not.toMatch(/<script/i);
				}
				const css = await app.inject({ url: '/admin/console/assets/console.css' });
				expect(css.statusCode).toBe(200);
				expect(css.headers['content-type']).toMatch(/^text\/css/);
			});
		});

		describe('actions need the session’s CSRF token and change nothing on bad input', () => {
			it('refuses a requeue without a CSRF token, with another login’s token, or as JSON', async () => {
				const before = await snapshot();
				const url = `/admin/console/deliveries/${ids.dead}/requeue`;
				const missing = await post(url, {});
				expect(missing.statusCode).toBe(403);
				expect(missing.body).toContain('CSRF token');
				expect(missing.body).toContain('Nothing was changed.');
				const other = await login();
				expect(other.csrf).not.toBe(s.csrf);
				expect((await post(url, { _csrf: other.csrf })).statusCode).toBe(403);
				expect((await post(url, { _csrf: `${s.csrf}x` })).statusCode).toBe(403);
				expect((await post(url, { _csrf: s.csrf }, s.cookie, 'application/json')).statusCode).toBe(
					415,
				);
				expect(await snapshot()).toBe(before);
			});

			it('answers a requeue of a delivered, a missing or a malformed delivery clearly', async () => {
				const before = await snapshot();
				const delivered = await post(`/admin/console/deliveries/${ids.delivered}/requeue`, {
					_csrf: s.csrf,
				});
				expect(delivered.statusCode).toBe(409);
				expect(delivered.body).toContain(`Delivery ${ids.delivered} is delivered, not dead`);
				const missing = await post('/admin/console/deliveries/999999/requeue', { _csrf: s.csrf });
				expect(missing.statusCode).toBe(404);
				expect(missing.body).toContain('There is no delivery 999999.');
				for (const bad of ['abc', '1.5', '-3', '0']) {
					const res = await post(`/admin/console/deliveries/${bad}/requeue`, { _csrf: s.csrf });
					expect(res.statusCode, bad).toBe(400);
					expect(res.body).toContain('is not a delivery id');
				}
				expect(await snapshot()).toBe(before);
			});

			it('refuses a requeue of all of a target with no target or no dead delivery', async () => {
				const before = await snapshot();
				const none = await post('/admin/console/dead/requeue-target', { _csrf: s.csrf });
				expect(none.statusCode).toBe(400);
				expect(none.body).toContain('Target: is required');
				const clean = await post('/admin/console/dead/requeue-target', {
					_csrf: s.csrf,
					target: PAYOUT,
				});
				expect(clean.statusCode).toBe(409);
				expect(clean.body).toContain(`No dead delivery goes to ${PAYOUT}.`);
				expect(await snapshot()).toBe(before);
			});

			it('refuses a replay with a bad range or a target that is not configured', async () => {
				const before = await snapshot();
				const from = new Date(now - 7_200_000).toISOString().slice(0, 19);
				const to = new Date(now).toISOString().slice(0, 19);
				const cases: Array<[Record<string, string>, string]> = [
					[{ from: to, to: from, target: PAY_A }, 'From must be before To'],
					[{ from: 'yesterday', to, target: PAY_A }, 'From: is not a date and time'],
					[{ to, target: PAY_A }, 'From: is required'],
					[
						{ from, to, target: 'http://127.0.0.1:9/elsewhere' },
						'Target: is not one of the configured targets',
					],
				];
				for (const [fields, message] of cases) {
					const preview = await get(
						`/admin/console/replay?${new URLSearchParams(fields).toString()}`,
					);
					expect(preview.statusCode, message).toBe(400);
					expect(preview.body).toContain(message);
					const res = await post('/admin/console/replay', { _csrf: s.csrf, ...fields });
					expect(res.statusCode, message).toBe(400);
					expect(res.body).toContain(message);
					expect(res.body).toContain('Nothing was replayed.');
				}
				const empty = await post('/admin/console/replay', {
					_csrf: s.csrf,
					from: '2001-01-01T00:00',
					to: '2001-01-02T00:00',
					target: '*',
					deliveries: '1',
				});
				expect(empty.statusCode).toBe(409);
				expect(empty.body).toContain('No event in this range goes to this target.');
				// A replay must carry the number its confirmation showed, and that number must still hold.
				const unconfirmed = await post('/admin/console/replay', {
					_csrf: s.csrf,
					from,
					to,
					target: PAY_A,
				});
				expect(unconfirmed.statusCode).toBe(400);
				expect(unconfirmed.body).toContain(
					'Deliveries: is missing: confirm the replay on its confirmation page',
				);
				const stale = await post('/admin/console/replay', {
					_csrf: s.csrf,
					from,
					to,
					target: PAY_A,
					deliveries: '1',
				});
				expect(stale.statusCode).toBe(409);
				// T-old, T-other and T-xss are payments received in these two hours.
				expect(stale.body).toContain(
					'The range now makes 3 deliveries, not the 1 you confirmed. Nothing was replayed: confirm again.',
				);
				expect(stale.body).toContain('name="deliveries" value="3"');
				expect(await snapshot()).toBe(before);
			});

			it('answers bad filters on the events and dead-letter pages with what was wrong', async () => {
				const cases: Array<[string, string]> = [
					[
						'/admin/console/events?kind=refunds',
						'Kind: must be one of payment, payout, success, fail, refund, chargeback',
					],
					[
						'/admin/console/events?status=lost',
						'Delivery status: must be one of pending, delivering, delivered, dead',
					],
					['/admin/console/events?from=tomorrow', 'From: is not a date and time'],
					[
						'/admin/console/events?from=2026-02-01T00:00&to=2026-01-01T00:00',
						'From must be before To',
					],
					['/admin/console/events?before=zzz', 'Page: is not a page cursor'],
					['/admin/console/events?trsId=a&trsId=b', 'TrsId: must be given once'],
					[
						`/admin/console/events?invId=${'x'.repeat(129)}`,
						'InvId: is longer than 128 characters',
					],
					['/admin/console/dead?beforeId=x', 'Page: is not a delivery id'],
				];
				for (const [url, message] of cases) {
					const res = await get(url);
					expect(res.statusCode, url).toBe(400);
					expect(res.body, url).toContain(message);
				}
				expect((await get('/admin/console/events/no-such-event')).statusCode).toBe(404);
				expect((await get('/admin/console/nothing-here')).statusCode).toBe(404);
			});
		});

		describe('pages', () => {
			it('escapes every field and never shows a signature, the admin token or the API token', async () => {
				const fields = paymentFields('T-posted', { invId: XSS_INVID });
				const posted = await app.inject({
					method: 'POST',
					url: '/postback/payment',
					headers: { 'content-type': FORM },
					payload: form({ ...fields, custom: XSS_CUSTOM }),
				});
				expect(posted.statusCode).toBe(200);
				const [stored] = await store.listEvents({ trsId: 'T-posted', limit: 1 });
				const pages = [
					'/admin/console',
					'/admin/console/events',
					`/admin/console/events?invId=${encodeURIComponent(XSS_INVID)}`,
					`/admin/console/events/${ids.xssEvent}`,
					`/admin/console/events/${stored.id}`,
					'/admin/console/dead',
				];
				for (const url of pages) {
					const res = await get(url);
					expect(res.statusCode, url).toBe(200);
					for (const secret of [
						ADMIN_TOKEN,
						TOKEN,
						fields.SignatureValue,
						'SIGNATURE-MUST-NOT-SHOW',
						'SignatureValue',
						XSS_CUSTOM,
						XSS_INVID,
					]) {
						expect(res.body, `${url} shows ${secret}`).not.toContain(secret);
					}
					expect(res.body).not.toMatch(/<script|<img/i);
				}
				const detail = (await get(`/admin/console/events/${ids.xssEvent}`)).body;
				expect(detail).toContain('&lt;script&gt;alert(&quot;custom&quot;)&lt;/script&gt;');
				expect(detail).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
				const list = (await get(`/admin/console/events?invId=${encodeURIComponent(XSS_INVID)}`))
					.body;
				expect(list.match(/href="\/admin\/console\/events\/[^"]+"/g)).toHaveLength(2);
				expect(sink.text).not.toContain(ADMIN_TOKEN);
			});

			it('shows an event with its fields, deliveries and every attempt', async () => {
				const res = await get(`/admin/console/events/${ids.deadEvent}`);
				expect(res.statusCode).toBe(200);
				expect(res.body).toContain('inv-T-old');
				expect(res.body).toContain(`Delivery ${ids.dead}`);
				expect(res.body).toContain(`Delivery ${ids.delivered}`);
				expect(res.body).toContain('HTTP 410 from the target');
				expect(res.body).toContain('<td data-label="Took" class="num">7 ms</td>');
				expect(res.body).toContain(`Requeue delivery ${ids.dead}`);
				expect(res.body).not.toContain(`Requeue delivery ${ids.delivered}`);
				expect(res.body).toContain('Replay to its 2 current targets');
				// Nothing in flight (one dead, one delivered): no reloading.
				expect(res.body).not.toContain('http-equiv="refresh"');
			});

			it('filters events by kind, delivery status, TrsId, InvId and time, and pages through events of one millisecond', async () => {
				const rowsOf = (body: string) =>
					[...body.matchAll(/href="\/admin\/console\/events\/([^"#]+)"/g)].map((m) => m[1]);
				expect(rowsOf((await get('/admin/console/events?status=dead')).body).sort()).toEqual(
					[ids.deadEvent, (await store.listEvents({ trsId: 'T-other', limit: 1 }))[0].id].sort(),
				);
				expect(rowsOf((await get('/admin/console/events?trsId=T-old')).body)).toEqual([
					ids.deadEvent,
				]);
				expect(rowsOf((await get('/admin/console/events?invId=inv-T-old')).body)).toEqual([
					ids.deadEvent,
				]);
				const window = (from: number, to: number) =>
					`from=${new Date(from).toISOString().slice(0, 19)}&to=${new Date(to).toISOString().slice(0, 19)}`;
				expect(
					rowsOf(
						(await get(`/admin/console/events?${window(now - 3_700_000, now - 3_500_000)}`)).body,
					),
				).toEqual([ids.deadEvent]);
				const same = now - 7_200_000;
				const inserted: string[] = [];
				for (let i = 0; i < 57; i++)
					inserted.push(
						(await store.insertEvent(event(`T-page-${i}`, same, [], {}, 'payout'))).eventId,
					);
				const first = await get('/admin/console/events?kind=payout');
				const page1 = rowsOf(first.body);
				expect(page1).toHaveLength(50);
				const older = /href="(\/admin\/console\/events\?[^"]*before=[^"]+)" rel="next"/
					.exec(first.body)?.[1]
					.replaceAll('&amp;', '&');
				expect(older).toBeDefined();
				const second = await get(older!);
				const page2 = rowsOf(second.body);
				expect(page2).toHaveLength(7);
				expect(second.body).not.toContain('rel="next"');
				expect([...page1, ...page2].sort()).toEqual(inserted.sort());
			});

			it('shows the overview: counts, oldest undelivered event, targets with success rate and last error, charts per kind', async () => {
				const res = await get('/admin/console');
				expect(res.statusCode).toBe(200);
				expect(res.body).toMatch(
					/<b><a href="\/admin\/console\/dead">2<\/a><\/b><span>dead<\/span>/,
				);
				expect(res.body).toContain('oldest undelivered');
				expect(res.body).toContain('1 h 0 min');
				expect(res.body).toContain(PAY_A);
				expect(res.body).toContain('HTTP 410 from the target');
				expect(res.body).toContain('connect ECONNREFUSED');
				// PAY_B: one success out of two attempts in the last day.
				expect(res.body).toMatch(
					new RegExp(
						`${PAY_B.replaceAll('/', '\\/').replaceAll('.', '\\.')}</td>[\\s\\S]*?50\\.0 % <span class="muted">\\(1/2\\)</span>`,
					),
				);
				expect(
					res.body.match(/<svg viewBox="0 0 600 170" role="img"/g)?.length,
				).toBeGreaterThanOrEqual(4);
				expect(res.body).toContain('aria-label="payment events, last 24 hours: received');
			});

			it('confirms a replay with the number of deliveries it makes, and makes exactly those', async () => {
				const from = new Date(now - 3_700_000).toISOString().slice(0, 19);
				const to = new Date(now - 1_000_000).toISOString().slice(0, 19);
				const preview = await get(
					`/admin/console/replay?${new URLSearchParams({ from, to, target: PAY_A }).toString()}`,
				);
				expect(preview.statusCode).toBe(200);
				// T-old and T-other are payment events in the range; PAY_A takes payments: two deliveries.
				expect(preview.body).toContain(
					'<p id="replay-count">This makes <b>2</b> new deliveries.</p>',
				);
				const everyTarget = await get(
					`/admin/console/replay?${new URLSearchParams({ from, to, target: '*' }).toString()}`,
				);
				expect(everyTarget.body).toContain('This makes <b>4</b> new deliveries.');
				const before = await store.listDeliveries({ target: PAY_A, limit: 1000 });
				expect(preview.body).toContain('name="deliveries" value="2"');
				const res = await post('/admin/console/replay', {
					_csrf: s.csrf,
					from,
					to,
					target: PAY_A,
					deliveries: '2',
				});
				expect(res.statusCode).toBe(303);
				expect(res.headers.location).toBe('/admin/console/dead?notice=replayed&n=2&m=2');
				const after = await store.listDeliveries({ target: PAY_A, limit: 1000 });
				expect(after.length - before.length).toBe(2);
				expect((await get(res.headers.location as string)).body).toContain(
					'Replayed 2 events: 2 new deliveries.',
				);
			});

			it('requeues one dead delivery, then all of a target', async () => {
				const one = await post(`/admin/console/deliveries/${ids.dead}/requeue`, {
					_csrf: s.csrf,
					back: `/admin/console/events/${ids.deadEvent}`,
				});
				expect(one.statusCode).toBe(303);
				expect(one.headers.location).toBe(
					`/admin/console/events/${ids.deadEvent}?notice=requeued&n=1`,
				);
				const [requeued] = await store.listDeliveries({
					eventId: ids.deadEvent,
					target: PAY_A,
					limit: 10,
					beforeId: ids.dead + 1,
				});
				// Attempt numbers go on; the next attempt is the operator's.
				expect(requeued).toMatchObject({
					id: ids.dead,
					status: 'pending',
					attempts: 1,
					attemptBase: 1,
					manual: true,
				});
				// Its event's page now reloads itself until the delivery lands.
				const page = await get(`/admin/console/events/${ids.deadEvent}`);
				expect(page.body).toContain('<meta http-equiv="refresh" content="5">');
				const again = await post(`/admin/console/deliveries/${ids.dead}/requeue`, {
					_csrf: s.csrf,
				});
				expect(again.statusCode).toBe(409);
				const all = await post('/admin/console/dead/requeue-target', {
					_csrf: s.csrf,
					target: PAY_B,
					back: 'https://evil.example/',
				});
				expect(all.statusCode).toBe(303);
				expect(all.headers.location).toBe('/admin/console/dead?notice=requeued&n=1');
				expect(await store.listDeliveries({ status: 'dead', limit: 10 })).toEqual([]);
			});
		});
	});
}
