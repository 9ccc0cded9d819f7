// What only the PostgreSQL store does: migrations, several instances on one database (claims,
// wake-ups), and riding out a database that goes away and comes back.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { start } from '../../relay/src/server.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import { PG_MIGRATIONS, migrate } from '../../relay/src/store-postgres/schema.ts';
import { PostgresStore } from '../../relay/src/store-postgres/store.ts';
import { ADMIN_TOKEN, LogSink, Target, baseEnv, form, paymentFields, tempDir } from './helpers.ts';
import { PG_MISSING, adminQuery, createTestDatabase } from './pg.ts';
import type { TestDatabase } from './pg.ts';
import { storeEvent } from './store-suite.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

const T0 = 2_000_000_000_000;

describe.skipIf(PG_MISSING)('PostgreSQL store', () => {
	let db: TestDatabase;
	const stores: PostgresStore[] = [];
	const open = async (url = db.url) => {
		const s = await PostgresStore.open(url);
		stores.push(s);
		return s;
	};

	beforeAll(async () => {
		db = await createTestDatabase();
	});
	afterEach(async () => {
		await Promise.all(stores.splice(0).map((s) => s.close()));
	});
	afterAll(async () => {
		await db?.drop();
	});

	it('applies versioned migrations once, also when instances start together, and refuses a newer schema', async () => {
		await Promise.all([open(), open(), open()]);
		const versions = await adminQuery(
			'SELECT version, name FROM relay_schema_migrations ORDER BY version',
			db.url,
		);
		expect(versions.rows).toEqual(PG_MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
		const client = new pg.Client({ connectionString: db.url });
		await client.connect();
		try {
			expect(await migrate(client as unknown as pg.PoolClient)).toEqual([]);
			await client.query(
				`INSERT INTO relay_schema_migrations (version, name) VALUES (99, 'from the future')`,
			);
			await expect(PostgresStore.open(db.url)).rejects.toThrow(
				/schema is at version 99, newer than this relay knows/,
			);
			await client.query('DELETE FROM relay_schema_migrations WHERE version = 99');
		} finally {
			await client.end();
		}
	});

	it('gives the events of the last day stored without a signed pair (an older relay) theirs at start, so the pair limit counts them', async () => {
		const store = await open();
		const now = Date.now();
		const fields = (trsId: string) => ({ TrsId: trsId, InvId: 'inv-pg-old', OutSum: '7' });
		for (const [trsId, at] of [
			['PGO-1', now - 60_000],
			['PGO-2', now - 30_000],
			['PGO-0', now - 3 * 86_400_000],
		] as const)
			await store.insertEvent({ ...storeEvent(trsId, [], at), fields: fields(trsId) });
		await adminQuery(
			`UPDATE events SET pair_key = NULL WHERE fields_json ->> 'InvId' = 'inv-pg-old'`,
			db.url,
		);
		const again = await open();
		const third = await again.insertEvent({
			...storeEvent('PGO-3', [], now),
			fields: fields('PGO-3'),
			pairLimit: { max: 2, since: now - 3_600_000 },
		});
		expect(third.limited).toBe(true);
		const keys = await adminQuery(
			`SELECT fields_json ->> 'TrsId' AS trs, pair_key FROM events WHERE fields_json ->> 'InvId' = 'inv-pg-old' ORDER BY 1`,
			db.url,
		);
		expect(keys.rows).toEqual([
			{ trs: 'PGO-0', pair_key: null },
			{ trs: 'PGO-1', pair_key: '["payment",700,"inv-pg-old"]' },
			{ trs: 'PGO-2', pair_key: '["payment",700,"inv-pg-old"]' },
		]);
	});

	it('never lets two instances claim the same delivery at once (FOR UPDATE SKIP LOCKED)', async () => {
		const [a, b] = await Promise.all([open(), open()]);
		const n = 300;
		for (let i = 0; i < n; i += 50) {
			await Promise.all(
				Array.from({ length: 50 }, (_, j) =>
					a.insertEvent(storeEvent(`P-claim-${i + j}`, ['http://t/x'], T0)),
				),
			);
		}
		const claimedBy = new Map<number, string>();
		const claimer = async (store: PostgresStore, owner: string) => {
			for (;;) {
				const got = await store.claimDue(T0 + 1, 7, 60_000, owner);
				if (got.length === 0) return;
				for (const d of got) {
					expect(claimedBy.get(d.id), `delivery ${d.id} claimed twice`).toBeUndefined();
					claimedBy.set(d.id, owner);
				}
			}
		};
		await Promise.all([claimer(a, 'A'), claimer(b, 'B'), claimer(a, 'A2'), claimer(b, 'B2')]);
		expect(claimedBy.size).toBe(n);
		const owners = new Set(claimedBy.values());
		expect(owners.size).toBeGreaterThan(1);
		expect(await a.counts()).toMatchObject({ delivering: n, pending: 0 });
	});

	it('wakes the other instances when one stores new work (LISTEN/NOTIFY), and not itself', async () => {
		const [a, b] = await Promise.all([open(), open()]);
		let wokenA = 0;
		let wokenB = 0;
		a.onNewWork(() => (wokenA += 1));
		const unsubscribe = b.onNewWork(() => (wokenB += 1));
		await a.insertEvent(storeEvent('P-wake-1', ['http://t/x'], T0));
		await waitFor('instance B woken', () => wokenB > 0);
		await b.insertEvent(storeEvent('P-wake-2', ['http://t/x'], T0));
		await waitFor('instance A woken', () => wokenA > 0);
		// After unsubscribing B hears nothing; A hears B's notification once, never its own.
		unsubscribe();
		const [a0, b0] = [wokenA, wokenB];
		await b.insertEvent(storeEvent('P-wake-3', ['http://t/x'], T0));
		await waitFor('instance A woken again', () => wokenA > a0);
		expect(wokenB).toBe(b0);
		expect(wokenA).toBe(a0 + 1);
	});

	it('recovers by itself when its connections are cut (server restart): calls, and the listener', async () => {
		const [a, b] = await Promise.all([open(), open()]);
		let woken = 0;
		b.onNewWork(() => (woken += 1));
		await a.ping();
		await b.ping();
		const cut = await adminQuery(
			`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = '${db.name}' AND pid <> pg_backend_pid()`,
		);
		expect(cut.rows.length).toBeGreaterThanOrEqual(2);
		// A pooled connection that was cut fails the call that finds it; the next ones reconnect.
		await waitFor('the store answering again', async () =>
			a.ping().then(
				() => true,
				() => false,
			),
		);
		await waitFor(
			'both listeners back',
			async () =>
				Number(
					(
						await adminQuery(
							`SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = '${db.name}' AND query LIKE 'LISTEN%'`,
						)
					).rows[0].n,
				) >= 2,
		);
		const wokenBefore = woken;
		await a.insertEvent(storeEvent('P-after-cut', ['http://t/x'], T0));
		await waitFor('instance B woken after the cut', () => woken > wokenBefore);
	});
});

describe.skipIf(PG_MISSING)('relay on PostgreSQL while the database goes away', () => {
	let db: TestDatabase;
	const tmp = tempDir();
	const sink = new LogSink();
	const target = new Target();
	let relay: RunningRelay;
	const post = (fields: Record<string, string>) =>
		fetch(`${relay.url}/postback/payment`, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body: form(fields),
		});
	const ready = async () => (await fetch(`${relay.url}/readyz`)).status;
	const cutConnections = () =>
		adminQuery(
			`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db.name}' AND pid <> pg_backend_pid()`,
		);

	beforeAll(async () => {
		db = await createTestDatabase();
		await target.listen();
		// Trust authentication ignores the password; the relay must not log it.
		const url = new URL(db.url);
		url.password = 'secret-db-password';
		relay = await start(
			baseEnv(tmp.dir, { payment: [target.url('/pay')] }, { RELAY_DATABASE: url.href }),
			{ deps: { logStream: sink } },
		);
	});
	afterAll(async () => {
		await relay?.close();
		await target.close();
		await db?.drop();
		tmp.cleanup();
	});

	it('answers 503 and fails readiness while the database refuses connections, then recovers with nothing lost', async () => {
		expect((await post(paymentFields('P-before'))).status).toBe(200);
		await waitFor('delivery before the outage', () =>
			target.received.some((r) => r.body.includes('TrsId=P-before&')),
		);
		expect(await ready()).toBe(200);

		await adminQuery(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS false`);
		await cutConnections();
		await waitFor('readiness failing', async () => (await ready()) === 503);
		const during = await post(paymentFields('P-during'));
		expect(during.status).toBe(503);

		await adminQuery(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS true`);
		await waitFor('readiness back', async () => (await ready()) === 200);
		// The service retries the postback that got a 503; now it is stored and delivered.
		expect((await post(paymentFields('P-during'))).status).toBe(200);
		expect((await post(paymentFields('P-after'))).status).toBe(200);
		await waitFor('deliveries after the outage', () =>
			['P-during', 'P-after'].every((id) =>
				target.received.some((r) => r.body.includes(`TrsId=${id}&`)),
			),
		);
		expect(sink.text).toContain('PostgreSQL connection lost');
		expect(sink.text).toContain(`"database":"postgres://postgres:***@127.0.0.1:5432/${db.name}"`);
		expect(sink.text).not.toContain('secret-db-password');
	});

	it('fails readiness when the database can be read but not written', async () => {
		await adminQuery(`ALTER DATABASE ${db.name} SET default_transaction_read_only = on`);
		try {
			await cutConnections();
			await waitFor(
				'readiness failing on a read-only database',
				async () => (await ready()) === 503,
			);
			const events = await fetch(`${relay.url}/admin/events?limit=1`, {
				headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
			});
			expect(events.status).toBe(200);
			expect((await post(paymentFields('P-read-only'))).status).toBe(503);
		} finally {
			await adminQuery(`ALTER DATABASE ${db.name} RESET default_transaction_read_only`);
			await cutConnections();
		}
		await waitFor('readiness back', async () => (await ready()) === 200);
	});
});
