// The reads the admin API and the console share (relay/src/reads.ts) and their one time format
// (relay/src/routes/input.ts), and the one error path (relay/src/errors.ts, mapped in
// relay/src/routes/errors.ts): each surface answers a typed error the same way
// wherever it is thrown, and anything else without its text.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../relay/src/app.ts';
import { loadConfig } from '../../relay/src/config.ts';
import { OperationRefused, StoreInputError } from '../../relay/src/errors.ts';
import { Reads } from '../../relay/src/reads.ts';
import { parseTime } from '../../relay/src/routes/input.ts';
import type { NewEvent, Store } from '../../relay/src/store/types.ts';
import { FORM, cookieOf, submitLogin } from './console-login.ts';
import { freshSqliteStore } from './fresh-store.ts';
import { ADMIN_TOKEN, LogSink, baseEnv, tempDir } from './helpers.ts';
import type { OpenedStore } from './store-suite.ts';

const PAY = 'http://127.0.0.1:9/pay';
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const HOUR = 3_600_000;

const event = (trsId: string, at: number): NewEvent => ({
	kind: 'payment',
	dedupeKey: `payment:${trsId}:SUCCESS`,
	contentType: FORM,
	body: `TrsId=${trsId}`,
	fields: { TrsId: trsId, Status: 'SUCCESS' },
	receivedAt: at,
	targets: [PAY],
});

describe('parseTime: the one time format of the admin API and the console', () => {
	it.each([
		[String(T0), T0],
		[T0, T0],
		['0', 0],
		['2026-01-01T12:00', T0],
		['2026-01-01 12:00', T0],
		['2026-01-01T12:00:00', T0],
		['2026-01-01T12:00:00.000Z', T0],
		['2026-01-01T13:00:00+01:00', T0],
		['2026-01-01T07:00-0500', T0],
		['  2026-01-01T12:00Z  ', T0],
		['2026-01-01', Date.UTC(2026, 0, 1)],
		['2024-02-29T00:00', Date.UTC(2024, 1, 29)],
	])('reads %j as %d', (text, ms) => {
		expect(parseTime(text)).toBe(ms);
	});

	it.each([
		'',
		'yesterday',
		'Thu, 01 Jan 2026 12:00:00 GMT',
		'January 1, 2026',
		'2026-02-30T00:00',
		'2026-13-01',
		'2026-01-01T24:00',
		'2026-01-01T12:60',
		'2026-01-01T12',
		'99999999999999999999',
		'12345678901234567',
		'-1',
		'1.5',
		'1e3',
		'+2026-01-01',
		-1,
		1.5,
		1e20,
		Number.NaN,
	])('refuses %j', (text) => {
		expect(parseTime(text)).toBeUndefined();
	});

	it('reads a time without a zone as UTC whatever the server’s zone is', () => {
		const tz = process.env.TZ;
		process.env.TZ = 'Asia/Tokyo';
		try {
			expect(new Date(2026, 0, 1).getTimezoneOffset()).toBe(-540);
			expect(parseTime('2026-01-01T12:00')).toBe(T0);
			expect(parseTime('2026-01-01')).toBe(Date.UTC(2026, 0, 1));
		} finally {
			if (tz === undefined) delete process.env.TZ;
			else process.env.TZ = tz;
		}
	});
});

describe('the admin API and the console read alike', () => {
	const tmp = tempDir();
	let opened: OpenedStore;
	let store: Store;
	let app: FastifyInstance;
	let cookie = '';
	const ids = { early: '', late: '', delivery: 0 };

	beforeAll(async () => {
		opened = await freshSqliteStore();
		store = opened.store;
		const config = loadConfig(baseEnv(tmp.dir, { payment: [PAY] }, { LOG_LEVEL: 'error' }));
		app = await buildApp(config, { store, forwarder: false, logStream: new LogSink() });
		app.get('/test/store-input', async () => {
			throw new StoreInputError('TrsId contains a NUL character');
		});
		app.get('/test/refused', async () => {
			throw new OperationRefused(409, 'Nothing to do', 'Nothing would change.');
		});
		app.get('/test/failure', async () => {
			throw new Error('SELECT secret FROM events: connection lost');
		});
		await app.ready();
		ids.early = (await store.insertEvent(event('T-early', T0 - HOUR))).eventId;
		ids.late = (await store.insertEvent(event('T-late', T0 + HOUR))).eventId;
		const due = await store.claimDue(T0 + 2 * HOUR, 10, 60_000, 'test');
		const claimed = due.find((d) => d.eventId === ids.late);
		if (!claimed) throw new Error('the late event’s delivery was not claimed');
		await store.recordResults([
			{
				id: claimed.id,
				owner: 'test',
				outcome: 'retry',
				now: T0 + 2 * HOUR + 5,
				httpStatus: 503,
				error: 'HTTP 503',
				nextAttemptAt: T0 + 3 * HOUR,
				timing: { attempt: 1, startedAt: T0 + 2 * HOUR, durationMs: 5 },
			},
		]);
		ids.delivery = claimed.id;
		cookie = cookieOf(await submitLogin(app, { token: ADMIN_TOKEN }), 'relay_console') ?? '';
	});
	afterAll(async () => {
		await app.close();
		await opened.cleanup();
		tmp.cleanup();
	});

	const admin = (url: string) =>
		app.inject({ url: `/admin${url}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
	const page = (url: string) => app.inject({ url: `/admin/console${url}`, headers: { cookie } });
	const trsIdsOf = (res: LightMyRequestResponse) =>
		(res.json() as { data: Array<{ fields: { TrsId: string } }> }).data.map((e) => e.fields.TrsId);
	const shown = (res: LightMyRequestResponse) =>
		['T-early', 'T-late'].filter((t) => res.body.includes(`>${t}<`));

	it.each([
		String(T0),
		'2026-01-01T12:00',
		'2026-01-01 12:00',
		'2026-01-01T12:00:00Z',
		'2026-01-01T14:00:00+02:00',
	])('a time written %j filters the same events in both', async (from) => {
		const q = `?from=${encodeURIComponent(from)}`;
		const [api, html] = [await admin(`/events${q}`), await page(`/events${q}`)];
		expect([api.statusCode, html.statusCode]).toEqual([200, 200]);
		expect(trsIdsOf(api)).toEqual(['T-late']);
		expect(shown(html)).toEqual(['T-late']);
	});

	it.each([
		'yesterday',
		'Thu, 01 Jan 2026 12:00:00 GMT',
		'2026-02-30T00:00',
		'99999999999999999999',
	])('a time written %j is refused by both, with the same reason', async (from) => {
		const q = `?from=${encodeURIComponent(from)}`;
		const [api, html] = [await admin(`/events${q}`), await page(`/events${q}`)];
		expect([api.statusCode, html.statusCode]).toEqual([400, 400]);
		const issue = (api.json() as { issues: Array<{ path: string; message: string }> }).issues;
		expect(issue).toEqual([
			{ path: 'from', message: expect.stringMatching(/^is not a date and time/) },
		]);
		expect(html.body).toContain('From: is not a date and time');
	});

	it('reads an event with its deliveries and attempts one way (admin API, console, Reads)', async () => {
		const detail = await new Reads(store).eventDetail(ids.late);
		expect(detail?.deliveries.map((d) => d.id)).toEqual([ids.delivery]);
		expect(detail?.attempts.map((a) => [a.deliveryId, a.httpStatus])).toEqual([
			[ids.delivery, 503],
		]);
		const api = (await admin(`/events/${ids.late}`)).json() as {
			deliveries: Array<{ id: number; attempts: number; attemptHistory: unknown[] }>;
		};
		expect(api.deliveries.map((d) => [d.id, d.attempts, d.attemptHistory.length])).toEqual([
			[ids.delivery, 1, 1],
		]);
		const html = await page(`/events/${ids.late}`);
		expect(html.statusCode).toBe(200);
		expect(html.body).toContain(`id="delivery-${ids.delivery}"`);
		expect(html.body).toContain('HTTP 503');
		expect(await new Reads(store).eventDetail('no-such-event')).toBeUndefined();
		expect((await admin('/events/no-such-event')).statusCode).toBe(404);
		const missing = await page('/events/no-such-event');
		expect(missing.statusCode).toBe(404);
		// The typed error's own title and reason, with the operator's navigation.
		expect(missing.body).toContain('<h1>No such event</h1>');
		expect(missing.body).toContain('There is no event with this id.');
		expect(missing.body).toContain('action="/admin/logout"');
	});

	it('reads a delivery by id with its attempts, and none for an id between two deliveries', async () => {
		const own = (await admin(`/deliveries/${ids.delivery}/attempts`)).json() as {
			delivery: { id: number; eventId: string };
			data: Array<{ deliveryId: number }>;
		};
		expect(own.delivery).toMatchObject({ id: ids.delivery, eventId: ids.late });
		expect(own.data.map((a) => a.deliveryId)).toEqual([ids.delivery]);
		// The delivery of T-early has an id below; the id above is no delivery.
		expect((await admin(`/deliveries/${ids.delivery + 1}/attempts`)).statusCode).toBe(404);
		expect(await new Reads(store).deliveryAttempts(ids.delivery + 1)).toBeUndefined();
	});

	it('answers a typed error thrown anywhere outside the console as JSON with its status', async () => {
		const input = await app.inject({ url: '/test/store-input' });
		expect([input.statusCode, input.json()]).toEqual([
			400,
			{ error: 'Bad Request', message: 'TrsId contains a NUL character' },
		]);
		const refused = await app.inject({ url: '/test/refused' });
		expect([refused.statusCode, refused.json()]).toEqual([
			409,
			{ error: 'Conflict', message: 'Nothing would change.' },
		]);
	});

	it('answers Fastify’s own refusal on a postback route as the same JSON', async () => {
		const res = await app.inject({
			method: 'POST',
			url: '/postback/payment',
			headers: { 'content-type': FORM },
			payload: 'x'.repeat(app.initialConfig.bodyLimit ?? 1_048_576).concat('x'),
		});
		expect(res.statusCode).toBe(413);
		expect(res.json()).toEqual({ error: 'Payload Too Large', message: expect.any(String) });
	});

	it('answers any other failure with a bare 500, its text only in the log', async () => {
		const res = await app.inject({ url: '/test/failure' });
		expect(res.statusCode).toBe(500);
		expect(res.json()).toEqual({ error: 'Internal Server Error' });
		expect(res.body).not.toContain('SELECT');
	});
	// Last: the replay adds a delivery.
	it('reads a range replay’s times the same way in both', async () => {
		const api = await app.inject({
			method: 'POST',
			url: '/admin/replay',
			headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
			payload: JSON.stringify({ from: '2026-01-01T12:00', to: '2026-01-01T14:00', target: PAY }),
		});
		const confirm = await page(
			`/replay?from=${encodeURIComponent('2026-01-01T12:00')}&to=${encodeURIComponent('2026-01-01T14:00')}&target=*`,
		);
		expect([api.statusCode, confirm.statusCode]).toEqual([200, 200]);
		expect(api.json()).toEqual({ events: 1, deliveries: 1 });
		expect(confirm.body).toMatch(/This makes <b>1<\/b> new delivery/);
	});
});
