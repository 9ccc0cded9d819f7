// Each operator operation (replay one event, replay a range, requeue one dead delivery, requeue the
// dead deliveries of a target) and its bad inputs, run through the admin API and through the
// console on identical fresh stores: both answer with the same status class and leave the same
// store behind. On SQLite, and on PostgreSQL where it is present.
import { join } from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../relay/src/app.ts';
import { loadConfig } from '../../relay/src/config.ts';
import { SqliteStore } from '../../relay/src/store-sqlite/store.ts';
import type { NewEvent, Store } from '../../relay/src/store/types.ts';
import { FORM, cookieOf, submitLogin } from './console-login.ts';
import { ADMIN_TOKEN, LogSink, baseEnv, form, tempDir } from './helpers.ts';
import { PG_MISSING } from './pg.ts';
import { freshPostgresStore, freshSqliteStore } from './fresh-store.ts';
import type { OpenedStore } from './store-suite.ts';
import { markDead, markDelivered } from './marks.ts';

const PAY = 'http://127.0.0.1:9/pay';
const OTHER = 'http://127.0.0.1:9/other';
const T0 = Date.UTC(2026, 0, 1);
const NUL = encodeURIComponent('a\u0000b');
const BEYOND = '99999999999999999999';

const event = (trsId: string, kind: NewEvent['kind'], at: number, targets: string[]): NewEvent => ({
	kind,
	dedupeKey: `${kind}:${trsId}:SUCCESS`,
	contentType: FORM,
	body: `TrsId=${trsId}`,
	fields: { TrsId: trsId, Status: 'SUCCESS' },
	receivedAt: at,
	targets,
});

/** Ids the seed made: a dead delivery, a delivered one, and an event no target takes. */
interface Seed {
	dead: number;
	delivered: number;
	paid: string;
	payout: string;
}

/** Two payment events for PAY (one dead, one delivered) and a payout event (no payout target). */
async function seed(store: Store): Promise<Seed> {
	const a = await store.insertEvent(event('T-dead', 'payment', T0, [PAY]));
	const [da] = await store.claimDue(T0 + 10, 10, 60_000, 'test');
	await markDead(store, da.id, 'test', 410, 'HTTP 410', {
		attempt: 1,
		startedAt: T0,
		durationMs: 1,
	});
	await store.insertEvent(event('T-ok', 'payment', T0 + 1_000, [PAY]));
	const [db] = await store.claimDue(T0 + 1_010, 10, 60_000, 'test');
	await markDelivered(store, db.id, T0 + 1_020, 200, { attempt: 1, startedAt: T0, durationMs: 1 });
	const p = await store.insertEvent(event('T-payout', 'payout', T0 + 2_000, []));
	return { dead: da.id, delivered: db.id, paid: a.eventId, payout: p.eventId };
}

/** The store as the operation left it, without times and generated event ids. */
async function effect(store: Store): Promise<unknown> {
	const events = await store.listEvents({ limit: 1000 });
	const trs = new Map(events.map((e) => [e.id, e.fields.TrsId]));
	const deliveries = await store.listDeliveries({ limit: 1000 });
	return {
		events: events.length,
		deliveries: deliveries
			.map((d) => ({ id: d.id, event: trs.get(d.eventId), target: d.target, status: d.status }))
			.sort((x, y) => x.id - y.id),
	};
}

/** ok (a 2xx answer or the console's 303 after an action), else the refusal's status code. */
const outcome = (res: LightMyRequestResponse) => (res.statusCode < 400 ? 'ok' : res.statusCode);

interface Case {
	name: string;
	/** The admin API call: method POST, path under /admin, JSON body. */
	admin: (s: Seed) => [string, unknown?];
	/** The console form post: path under /admin/console, fields (the CSRF token is added). */
	console: (s: Seed) => [string, Record<string, string>?];
	expected: 'ok' | 400 | 404 | 409;
}

const range = { from: String(T0 - 1), to: String(T0 + 60_000) };
const CASES: Case[] = [
	{
		name: 'replay an event',
		admin: (s) => [`/events/${s.paid}/replay`],
		console: (s) => [`/events/${s.paid}/replay`],
		expected: 'ok',
	},
	{
		name: 'replay an event no target takes',
		admin: (s) => [`/events/${s.payout}/replay`],
		console: (s) => [`/events/${s.payout}/replay`],
		expected: 409,
	},
	{
		name: 'replay an unknown event',
		admin: () => ['/events/no-such-event/replay'],
		console: () => ['/events/no-such-event/replay'],
		expected: 404,
	},
	{
		name: 'replay an event id with a NUL byte',
		admin: () => [`/events/${NUL}/replay`],
		console: () => [`/events/${NUL}/replay`],
		expected: 400,
	},
	{
		name: 'requeue a dead delivery',
		admin: (s) => [`/deliveries/${s.dead}/requeue`],
		console: (s) => [`/deliveries/${s.dead}/requeue`],
		expected: 'ok',
	},
	{
		name: 'requeue a delivered delivery',
		admin: (s) => [`/deliveries/${s.delivered}/requeue`],
		console: (s) => [`/deliveries/${s.delivered}/requeue`],
		expected: 409,
	},
	{
		name: 'requeue an unknown delivery',
		admin: () => ['/deliveries/424242/requeue'],
		console: () => ['/deliveries/424242/requeue'],
		expected: 404,
	},
	...[BEYOND, '9007199254740993', 'abc', NUL, '0', '-1', '1.5'].map(
		(id): Case => ({
			name: `requeue delivery id ${decodeURIComponent(id)}`,
			admin: () => [`/deliveries/${id}/requeue`],
			console: () => [`/deliveries/${id}/requeue`],
			expected: 400,
		}),
	),
	{
		name: 'requeue the dead deliveries of a target',
		admin: () => ['/dead/requeue', { target: PAY }],
		console: () => ['/dead/requeue-target', { target: PAY }],
		expected: 'ok',
	},
	{
		name: 'requeue the dead deliveries of a target with none',
		admin: () => ['/dead/requeue', { target: OTHER }],
		console: () => ['/dead/requeue-target', { target: OTHER }],
		expected: 409,
	},
	{
		name: 'requeue the dead deliveries of a target with a NUL byte',
		admin: () => ['/dead/requeue', { target: 'a\u0000b' }],
		console: () => ['/dead/requeue-target', { target: 'a\u0000b' }],
		expected: 400,
	},
	{
		name: 'replay a range',
		admin: () => ['/replay', { from: Number(range.from), to: Number(range.to) }],
		console: () => ['/replay', { ...range, target: '*', deliveries: '2' }],
		expected: 'ok',
	},
	{
		name: 'replay a range to one target',
		admin: () => ['/replay', { from: Number(range.from), to: Number(range.to), target: PAY }],
		console: () => ['/replay', { ...range, target: PAY, deliveries: '2' }],
		expected: 'ok',
	},
	{
		name: 'replay a range with no event',
		admin: () => ['/replay', { from: T0 - 10_000, to: T0 - 5_000 }],
		console: () => [
			'/replay',
			{ from: String(T0 - 10_000), to: String(T0 - 5_000), target: '*', deliveries: '1' },
		],
		expected: 409,
	},
	{
		name: 'replay a range to a target not configured',
		admin: () => ['/replay', { from: Number(range.from), to: Number(range.to), target: OTHER }],
		console: () => ['/replay', { ...range, target: OTHER, deliveries: '2' }],
		expected: 400,
	},
	{
		name: 'replay a range to a target with a NUL byte',
		admin: () => ['/replay', { ...range, target: 'a\u0000b' }],
		console: () => ['/replay', { ...range, target: 'a\u0000b', deliveries: '2' }],
		expected: 400,
	},
	{
		name: 'replay a range ending beyond 2^53',
		admin: () => ['/replay', { from: 0, to: Number(BEYOND) }],
		console: () => ['/replay', { from: '0', to: BEYOND, target: '*', deliveries: '2' }],
		expected: 400,
	},
];

function operationsParity(name: string, open: () => Promise<OpenedStore>): void {
	describe(`operations through the admin API and the console (${name})`, () => {
		const tmp = tempDir();
		const config = loadConfig(baseEnv(tmp.dir, { payment: [PAY] }, { LOG_LEVEL: 'error' }));

		/** A fresh seeded store and app; `act` runs one operation; the answer and the effect. */
		async function run(act: (app: FastifyInstance, s: Seed) => Promise<LightMyRequestResponse>) {
			const opened = await open();
			const app = await buildApp(config, {
				store: opened.store,
				forwarder: false,
				logStream: new LogSink(),
			});
			try {
				await app.ready();
				const s = await seed(opened.store);
				const res = await act(app, s);
				return { res, effect: await effect(opened.store) };
			} finally {
				await app.close();
				await opened.cleanup();
			}
		}

		const viaAdmin = (c: Case) =>
			run((app, s) => {
				const [path, body] = c.admin(s);
				return app.inject({
					method: 'POST',
					url: `/admin${path}`,
					headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
					payload: JSON.stringify(body ?? {}),
				});
			});
		const viaConsole = (c: Case) =>
			run(async (app, s) => {
				const cookie = cookieOf(await submitLogin(app, { token: ADMIN_TOKEN }), 'relay_console');
				const home = await app.inject({ url: '/admin/console', headers: { cookie } });
				const csrf = /name="_csrf" value="([^"]+)"/.exec(home.body)?.[1] ?? '';
				const [path, fields] = c.console(s);
				return app.inject({
					method: 'POST',
					url: `/admin/console${path}`,
					headers: { cookie: cookie ?? '', 'content-type': FORM },
					payload: form({ _csrf: csrf, ...fields }),
				});
			});

		it.each(CASES)('$name: the same answer and the same effect', async (c) => {
			const admin = await viaAdmin(c);
			const page = await viaConsole(c);
			expect([outcome(admin.res), outcome(page.res)], admin.res.body).toEqual([
				c.expected,
				c.expected,
			]);
			expect(page.effect).toEqual(admin.effect);
			if (c.expected === 'ok') expect(page.res.statusCode).toBe(303);
			else {
				// A refusal says why, as JSON under the API and as a page in the console; nothing leaks.
				expect(admin.res.headers['content-type']).toMatch(/^application\/json/);
				expect(page.res.headers['content-type']).toMatch(/^text\/html/);
				for (const body of [admin.res.body, page.res.body])
					expect(body).not.toMatch(
						/\bat \S+\.[jt]s:\d+|node_modules|SELECT .+ FROM|INSERT INTO|UPDATE \w+ SET|bigint|0x00/,
					);
			}
		});

		// A fresh store per case (on PostgreSQL a new database, migrated): slow on a busy machine.
		it('a refused operation changes nothing; an allowed one changes the store', async () => {
			const untouched = await run(async (app) => app.inject({ url: '/health' }));
			for (const c of CASES) {
				const { effect: after } = await viaAdmin(c);
				if (c.expected === 'ok') expect(after, c.name).not.toEqual(untouched.effect);
				else expect(after, c.name).toEqual(untouched.effect);
			}
		}, 180_000);
	});
}

operationsParity('SQLite', () => freshSqliteStore());

if (!PG_MISSING) operationsParity('PostgreSQL', freshPostgresStore);

describe('a store failure', () => {
	it('answers JSON under the admin API and an HTML page in the console, with nothing leaked', async () => {
		const tmp = tempDir();
		const real = await SqliteStore.open(join(tmp.dir, 'failing.sqlite'));
		const failure = new Error('SELECT * FROM events WHERE id = $1: connection lost');
		const store = new Proxy(real, {
			get(target, key, receiver) {
				if (key === 'getEvent') return async () => Promise.reject(failure);
				const value = Reflect.get(target, key, receiver) as unknown;
				return typeof value === 'function' ? value.bind(target) : value;
			},
		});
		const sink = new LogSink();
		const config = loadConfig(baseEnv(tmp.dir, { payment: [PAY] }, { LOG_LEVEL: 'info' }));
		const app = await buildApp(config, { store, forwarder: false, logStream: sink });
		try {
			await app.ready();
			const api = await app.inject({
				url: '/admin/events/E1',
				headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
			});
			expect(api.statusCode).toBe(500);
			expect(api.json()).toEqual({ error: 'Internal Server Error' });
			const cookie = cookieOf(await submitLogin(app, { token: ADMIN_TOKEN }), 'relay_console');
			const page = await app.inject({
				url: '/admin/console/events/E1',
				headers: { cookie: cookie ?? '' },
			});
			expect(page.statusCode).toBe(500);
			expect(page.headers['content-type']).toMatch(/^text\/html/);
			expect(page.body).toContain('Something went wrong');
			for (const body of [api.body, page.body]) {
				expect(body).not.toContain('SELECT');
				expect(body).not.toContain('connection lost');
				expect(body).not.toMatch(/\.[jt]s:\d+/);
			}
			// The operator finds the cause in the log.
			expect(sink.text).toContain('connection lost');
		} finally {
			await app.close();
			await real.close();
			tmp.cleanup();
		}
	});
});
