/**
 * Operations basics: the start-up log names the migrations a start ran (or says the schema is up
 * to date), log times are ISO 8601, every delivery has an info line, `/readyz` names what is wrong
 * with the store, and the relay's root says what it is (a page, or JSON when asked).
 */
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../relay/src/app.ts';
import { loadConfig } from '../../relay/src/config.ts';
import { storeProblem } from '../../relay/src/routes/health.ts';
import { migrationsOf } from '../../relay/src/schema-log.ts';
import { SqliteStore } from '../../relay/src/store-sqlite/store.ts';
import { onEveryStore } from './fresh-store.ts';
import { waitFor } from '../../scripts/harness/wait.ts';
import { LogSink, Target, baseEnv, form, paymentFields, tempDir } from './helpers.ts';
import { PG_ADMIN_URL, adminQuery, createTestDatabase } from './pg.ts';

type Line = Record<string, any>;
const linesOf = (sink: LogSink): Line[] =>
	sink.text
		.split('\n')
		.filter((l) => l.trim() !== '')
		.map((l) => JSON.parse(l) as Line);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

onEveryStore('start-up log and delivery log', (suiteStore) => {
	const tmp = tempDir();
	const target = new Target();
	afterAll(async () => {
		await target.close();
		await suiteStore.cleanup();
		tmp.cleanup();
	});

	const app = async (database: string, sink: LogSink) => {
		if (target.port === 0) await target.listen();
		const config = loadConfig(
			baseEnv(
				tmp.dir,
				{ payment: [target.url('/n8n/pay')] },
				{ RELAY_DATABASE: database, RELAY_CATCHUP_INTERVAL_S: '0' },
			),
		);
		return await buildApp(config, { logStream: sink });
	};

	it('names the migrations a new store ran, then says the schema is up to date; times are ISO', async () => {
		const database = await suiteStore.database();
		const newest = migrationsOf(database).at(-1)!.version;
		const first = new LogSink();
		await (await app(database, first)).close();
		const migrated = linesOf(first).find((l) => l.schema !== undefined);
		expect(migrated?.msg).toMatch(
			new RegExp(`^store schema migrated from version 0 to ${newest}: 1 \\(`),
		);
		expect(migrated?.schema).toMatchObject({ from: 0, to: newest });
		expect(migrated?.schema.migrations).toHaveLength(newest);
		if (database.startsWith('postgres'))
			expect(migrated?.msg).toContain('(events, deliveries, attempts)');

		const second = new LogSink();
		await (await app(database, second)).close();
		const upToDate = linesOf(second).find((l) => l.schema !== undefined);
		expect(upToDate?.msg).toBe(`store schema up to date (version ${newest})`);
		for (const line of [...linesOf(first), ...linesOf(second)]) expect(line.time).toMatch(ISO);
	});

	it('logs each successful delivery at info, with the target, the receipt and the event id; a duplicate at info too', async () => {
		const sink = new LogSink();
		const relay = await app(await suiteStore.database(), sink);
		try {
			await relay.ready();
			const post = () =>
				relay.inject({
					method: 'POST',
					url: '/postback/payment',
					headers: { 'content-type': 'application/x-www-form-urlencoded' },
					payload: form(paymentFields('T-log-1')),
				});
			const posted = await post();
			expect(posted.statusCode).toBe(200);
			const delivered = await waitFor('the delivered line', () =>
				linesOf(sink).find((l) => l.msg === 'delivered'),
			);
			expect(delivered).toMatchObject({
				level: 30,
				kind: 'payment',
				target: target.url('/n8n/pay'),
				status: 200,
				receipt: 'accepted',
			});
			expect(delivered.time).toMatch(ISO);
			// The new postback's own line is at debug (its delivery says it at info: a tenth of an
			// ingested postback's CPU); a duplicate is still said at info, with the same event id.
			expect(linesOf(sink).filter((l) => l.msg === 'stored')).toEqual([]);
			expect((await post()).statusCode).toBe(200);
			const duplicate = await waitFor('the duplicate line', () =>
				linesOf(sink).find((l) => l.msg === 'duplicate acknowledged'),
			);
			expect(duplicate).toMatchObject({ level: 30, eventId: delivered.eventId, duplicate: true });
			// The request's own line carries the request id and the request and reply.
			expect(duplicate).toMatchObject({
				reqId: expect.stringMatching(/^req-/),
				req: { method: 'POST', url: '/postback/payment' },
				res: { statusCode: 200 },
			});
		} finally {
			await relay.close();
		}
	});
});

describe('/readyz names what is wrong with the store', () => {
	it('reads the problem from the error: PostgreSQL codes, network codes, SQLite messages', () => {
		const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
		expect(storeProblem(coded('25006', 'cannot execute INSERT in a read-only transaction'))).toBe(
			'read-only',
		);
		expect(storeProblem(new Error('attempt to write a readonly database'))).toBe('read-only');
		expect(storeProblem(coded('53100'))).toBe('full');
		expect(storeProblem(new Error('database or disk is full'))).toBe('full');
		expect(storeProblem(new Error('database is locked'))).toBe('busy');
		expect(storeProblem(coded('57014', 'canceling statement due to statement timeout'))).toBe(
			'busy',
		);
		expect(storeProblem(coded('ECONNREFUSED'))).toBe('unreachable');
		expect(storeProblem(coded('3D000', 'database "x" does not exist'))).toBe('unreachable');
		expect(storeProblem(coded('57P01'))).toBe('unreachable');
		expect(storeProblem(new Error('timeout exceeded when trying to connect'))).toBe('unreachable');
		expect(storeProblem(new Error('store is closed'))).toBe('closed');
		expect(storeProblem(new Error('something else'))).toBe('failing');
	});

	const cleanups: Array<() => Promise<void>> = [];
	afterEach(async () => {
		for (const c of cleanups.splice(0).reverse()) await c();
	});

	const relayOn = async (database: string) => {
		const tmp = tempDir();
		cleanups.push(async () => tmp.cleanup());
		const config = loadConfig(
			baseEnv(
				tmp.dir,
				{ payment: ['http://127.0.0.1:9/x'] },
				{ RELAY_DATABASE: database, LOG_LEVEL: 'silent', RELAY_CATCHUP_INTERVAL_S: '0' },
			),
		);
		const app = await buildApp(config, { forwarder: false });
		cleanups.push(() => app.close());
		const ready = async () => {
			const res = await app.inject({ method: 'GET', url: '/readyz' });
			return { code: res.statusCode, ...(res.json() as Line) } as Line;
		};
		expect(await ready()).toEqual({ code: 200, status: 'ready' });
		return { app, ready };
	};

	it('SQLite locked by another connection: "busy"; closed: "closed"', async () => {
		const tmp = tempDir();
		cleanups.push(async () => tmp.cleanup());
		const file = join(tmp.dir, 'locked.sqlite');
		const store = await SqliteStore.open(file);
		const config = loadConfig(
			baseEnv(
				tmp.dir,
				{ payment: ['http://127.0.0.1:9/x'] },
				{ RELAY_DATABASE: file, LOG_LEVEL: 'silent', RELAY_CATCHUP_INTERVAL_S: '0' },
			),
		);
		const app = await buildApp(config, { store, forwarder: false });
		cleanups.push(() => app.close());
		const ready = async () => {
			const res = await app.inject({ method: 'GET', url: '/readyz' });
			return { code: res.statusCode, ...(res.json() as Line) } as Line;
		};
		expect((await ready()).code).toBe(200);
		const other = new DatabaseSync(file);
		other.exec('PRAGMA busy_timeout = 0');
		other.exec('BEGIN IMMEDIATE');
		try {
			expect(await ready()).toMatchObject({ code: 503, problem: 'busy' });
		} finally {
			other.exec('ROLLBACK');
			other.close();
		}
		expect((await ready()).code).toBe(200);
		await store.close();
		expect(await ready()).toMatchObject({ code: 503, problem: 'closed' });
	}, 30_000);

	it('PostgreSQL made read-only: "read-only", not "not reachable"', async () => {
		const db = await createTestDatabase();
		cleanups.push(() => db.drop());
		const { ready } = await relayOn(db.url);
		await adminQuery(`ALTER DATABASE ${db.name} SET default_transaction_read_only = on`);
		// The pools' connections are replaced by new ones, which start read-only.
		await adminQuery(
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db.name}'`,
		);
		const answer = await waitFor('a read-only answer', async () => {
			const r = await ready();
			return r.problem === 'read-only' ? r : undefined;
		});
		expect(answer).toMatchObject({
			code: 503,
			status: 'unavailable',
			problem: 'read-only',
			reason: expect.stringMatching(/answers but refuses writes/),
		});
		await adminQuery(`ALTER DATABASE ${db.name} SET default_transaction_read_only = off`);
		await adminQuery(
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db.name}'`,
		);
		await waitFor('ready again', async () => (await ready()).code === 200);
	}, 60_000);

	it('PostgreSQL gone: "unreachable"', async () => {
		const db = await createTestDatabase();
		const { ready } = await relayOn(db.url);
		await db.drop();
		const answer = await waitFor('a 503', async () => {
			const r = await ready();
			return r.code === 503 ? r : undefined;
		});
		expect(answer).toMatchObject({ code: 503, problem: 'unreachable' });
		expect(PG_ADMIN_URL).toBeTruthy();
	}, 60_000);
});

describe("the relay's root", () => {
	const tmp = tempDir();
	afterAll(() => tmp.cleanup());
	const withApp = async (fn: (app: Awaited<ReturnType<typeof buildApp>>) => Promise<void>) => {
		const config = loadConfig(
			baseEnv(
				tmp.dir,
				{ payment: ['http://127.0.0.1:9/x'] },
				{ LOG_LEVEL: 'silent', RELAY_CATCHUP_INTERVAL_S: '0' },
			),
		);
		const app = await buildApp(config, { forwarder: false });
		try {
			await fn(app);
		} finally {
			await app.close();
		}
	};

	it('is a page for a browser, JSON for a client that asks for it, never a 404', async () => {
		await withApp(async (app) => {
			const browser = await app.inject({
				method: 'GET',
				url: '/',
				headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
			});
			expect(browser.statusCode).toBe(200);
			expect(browser.headers['content-type']).toMatch(/^text\/html/);
			expect(browser.body).toContain('<h1>PayPalych relay</h1>');
			expect(browser.body).toContain('/admin/console');
			expect(browser.headers['content-security-policy']).toContain("default-src 'none'");
			expect(browser.headers.vary).toContain('Accept');

			const json = await app.inject({
				method: 'GET',
				url: '/',
				headers: { accept: 'application/json' },
			});
			expect(json.statusCode).toBe(200);
			expect(json.headers['content-type']).toMatch(/^application\/json/);
			expect(json.json()).toMatchObject({
				name: 'paypalych-relay',
				routes: { postbacks: ['POST /postback/payment', 'POST /postback/payout'] },
			});
			// No version, target or setting on a public page.
			expect(JSON.stringify(json.json())).not.toMatch(/127\.0\.0\.1|\d+\.\d+\.\d+/);

			const plain = await app.inject({ method: 'GET', url: '/' });
			expect(plain.statusCode).toBe(200);
			expect(plain.headers['content-type']).toMatch(/^text\/html/);
			expect((await app.inject({ method: 'HEAD', url: '/' })).statusCode).toBe(200);
		});
	});
});
