import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../relay/src/app.ts';
import { loadConfig } from '../../relay/src/config.ts';
import { ADMIN_TOKEN, baseEnv, form, paymentFields, tempDir } from './helpers.ts';

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const json = { ...auth, 'content-type': 'application/json' };

describe('every admin answer says Cache-Control: no-store', () => {
	const tmp = tempDir();
	let app: FastifyInstance;
	let eventId = '';

	beforeAll(async () => {
		const config = loadConfig(
			baseEnv(
				tmp.dir,
				{ payment: ['http://127.0.0.1:9/x'] },
				{ LOG_LEVEL: 'silent', RELAY_CATCHUP_INTERVAL_S: '0' },
			),
		);
		app = await buildApp(config, { forwarder: false });
		await app.ready();
		const posted = await app.inject({
			method: 'POST',
			url: '/postback/payment',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			payload: form(paymentFields('T-cache-1')),
		});
		expect(posted.statusCode).toBe(200);
		const events = await app.inject({ method: 'GET', url: '/admin/events', headers: auth });
		eventId = (events.json() as { data: Array<{ id: string }> }).data[0].id;
	});
	afterAll(async () => {
		await app.close();
		tmp.cleanup();
	});

	/** One call per admin API route, answered however it is (a list, a refusal, a 404). */
	const apiCalls = () =>
		[
			['GET', '/admin/catchup'],
			['POST', '/admin/catchup', {}],
			['POST', '/admin/catchup/backfill', { since: new Date().toISOString() }],
			['GET', '/admin/alerts'],
			['GET', '/admin/events'],
			['GET', `/admin/events/${eventId}`],
			['GET', '/admin/deliveries'],
			['GET', '/admin/dead'],
			['GET', '/admin/deliveries/1/attempts'],
			['POST', `/admin/events/${eventId}/replay`, {}],
			['POST', '/admin/replay', { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }],
			['POST', '/admin/dead/requeue', {}],
			['POST', '/admin/deliveries/1/requeue', {}],
			['GET', '/admin/statement?day=2026-01-01'],
			['GET', '/admin/statement.csv?day=2026-01-01'],
		] as Array<[string, string, object?]>;

	const inject = (method: string, url: string, body?: object, headers: object = json) =>
		app.inject({
			method: method as 'GET',
			url,
			headers: headers as Record<string, string>,
			...(body === undefined ? {} : { payload: JSON.stringify(body) }),
		});

	// Security review, round 4, finding 7 (36.7): the admin JSON API answered without no-store.
	it('on each route of the admin API, whatever it answers', async () => {
		const covered = new Set<string>();
		for (const [method, url, body] of apiCalls()) {
			const res = await inject(method, url, body);
			expect(res.headers['cache-control'], `${method} ${url} → ${res.statusCode}`).toBe('no-store');
			expect(res.statusCode).toBeLessThan(500);
			covered.add(
				`${method} ${url.split('?')[0].replace(eventId, ':id').replace(/\/1\//, '/:id/')}`,
			);
		}
		// The list above is every JSON route of the API (the console's pages are tested on their own).
		const api = routesOf(app).filter(
			(r) => /^\S+ \/admin\/./.test(r) && !/\/admin\/(console|login|logout)/.test(r),
		);
		expect(api).toContain('GET /admin/events/:id');
		expect(api.sort()).toEqual([...covered].sort());
	});

	it('on its refusals: no token, a wrong one, a schema refusal, bad JSON, an unknown path', async () => {
		const answers = [
			await inject('GET', '/admin/events', undefined, {}),
			await inject('GET', '/admin/events', undefined, { authorization: 'Bearer wrong' }),
			await inject('GET', '/admin/events?limit=0'),
			await inject('GET', '/admin/events/nope'),
			await inject('POST', '/admin/replay', { from: 'x' }),
			await app.inject({ method: 'POST', url: '/admin/replay', headers: json, payload: '{' }),
			await inject('GET', '/admin/no-such-route'),
			await inject('GET', '/admin'),
		];
		expect(answers.map((a) => a.statusCode)).toEqual([401, 401, 400, 404, 400, 400, 404, 303]);
		for (const a of answers) expect(a.headers['cache-control']).toBe('no-store');
	});

	it('on the throttle’s 429 after too many wrong tokens', async () => {
		let last = await inject('GET', '/admin/events', undefined, { authorization: 'Bearer wrong' });
		for (let i = 0; i < 200 && last.statusCode !== 429; i++)
			last = await inject('GET', '/admin/events', undefined, { authorization: 'Bearer wrong' });
		expect(last.statusCode).toBe(429);
		expect(last.headers['cache-control']).toBe('no-store');
	});

	it('but not on the other routes (health, postbacks)', async () => {
		const res = await app.inject({ method: 'GET', url: '/healthz' });
		expect(res.headers['cache-control']).toBeUndefined();
	});
});

/** `METHOD /path` of every route the app has (HEAD left out), read from Fastify's route tree. */
function routesOf(app: FastifyInstance): string[] {
	const stack: string[] = [];
	const out: string[] = [];
	for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
		const m = /^(.*?)[├└]── (\S+)(?: \(([^)]*)\))?$/.exec(line);
		if (!m) continue;
		const depth = m[1].length / 4;
		stack.length = depth;
		const path = (depth > 0 ? stack[depth - 1] : '') + m[2];
		stack.push(path);
		for (const method of (m[3] ?? '').split(', '))
			if (method && method !== 'HEAD') out.push(`${method} ${path}`);
	}
	return out.sort();
}
