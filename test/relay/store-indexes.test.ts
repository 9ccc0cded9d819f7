// Indexes only for the queries the relay runs. The schema version that replaced the deliveries'
// status and target indexes with one partial index of the dead deliveries is applied in place to a
// store of the version before it that holds a backlog (pending, delivering, dead and delivered
// deliveries, with their attempts): nothing is lost, the backlog is claimed as before, and the
// reads those indexes served (the dead list, of one target, the oldest undelivered event) read the
// new index, on a real SQLite file and a real PostgreSQL database; on PostgreSQL the same version
// drops the foreign keys of deliveries and attempts (a trigger per row stored). The migration is found by what
// it creates, not by its number: it keeps its meaning wherever it lands in the list. So is the
// PostgreSQL version after it that folds the attempts' primary-key index into attempts_delivery
// (unique, the replica identity), applied to a store of version 11 with the same backlog.
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_MIGRATIONS, migrate } from '../../relay/src/store-postgres/schema.ts';
import { PostgresStore } from '../../relay/src/store-postgres/store.ts';
import * as pgSql from '../../relay/src/store-postgres/statements.ts';
import { SQLITE_MIGRATIONS } from '../../relay/src/store-sqlite/schema.ts';
import * as sqlite from '../../relay/src/store-sqlite/statements.ts';
import { SqliteStore } from '../../relay/src/store-sqlite/store.ts';
import type { Store } from '../../relay/src/store/types.ts';
import { tempDir } from './helpers.ts';
import { PG_MISSING, createTestDatabase } from './pg.ts';
import type { TestDatabase } from './pg.ts';

const NOW = Date.now();
const T1 = 'http://target-one.invalid/hook';
const T2 = 'http://target-two.invalid/hook';
const SQLITE_BEFORE = SQLITE_MIGRATIONS.findIndex((sql) => sql.includes('deliveries_dead'));
const PG_BEFORE = PG_MIGRATIONS.findIndex((m) => m.sql.includes('deliveries_dead'));
/** The PostgreSQL version that folds the attempts' primary key into attempts_delivery. */
const PG_ATTEMPTS_KEY = PG_MIGRATIONS.findIndex((m) =>
	m.sql.includes('REPLICA IDENTITY USING INDEX attempts_delivery'),
);

/** The indexes of `deliveries` after the migration (SQLite's integer key is the table itself). */
const DELIVERY_INDEXES = [
	'deliveries_dead',
	'deliveries_delivered',
	'deliveries_due',
	'deliveries_event',
];

/**
 * The backlog, as rows: events e0…e5, each with one delivery. e0 delivered (with its attempt),
 * e1 dead at T2 (two attempts), e2 delivering under a lease that has run out, e3-e5 pending.
 * Parameters of each statement as positional lists, so both engines insert the same rows.
 */
const EVENTS = Array.from({ length: 6 }, (_, i) => [
	`e${i}`,
	'payment',
	`payment:T${i}:SUCCESS`,
	'application/x-www-form-urlencoded',
	`TrsId=T${i}`,
	JSON.stringify({ TrsId: `T${i}`, InvId: `o-${i}`, OutSum: '10.00' }),
	NOW - 60_000 + i * 1_000,
]);
const DELIVERIES: Array<[string, string, string, number, number | null, string | null]> = [
	['e0', T1, 'delivered', 1, null, null],
	['e1', T2, 'dead', 2, null, null],
	['e2', T1, 'delivering', 1, NOW - 5_000, 'gone-instance'],
	['e3', T1, 'pending', 0, null, null],
	['e4', T2, 'pending', 0, null, null],
	['e5', T1, 'pending', 0, null, null],
];

/** What the store answers about its backlog, read through the store's own methods. */
async function expectBacklogKept(store: Store): Promise<void> {
	const counts = await store.counts();
	expect(counts).toMatchObject({ pending: 3, delivering: 1, delivered: 1, dead: 1 });
	const dead = await store.deadDeliveries();
	expect(dead.map((d) => [d.eventId, d.target, d.attempts])).toEqual([['e1', T2, 2]]);
	expect((await store.deadDeliveries(T2)).map((d) => d.eventId)).toEqual(['e1']);
	expect(await store.deadDeliveries(T1)).toEqual([]);
	const listed = await store.listDeliveries({ status: 'dead', limit: 10 });
	expect(listed.map((d) => d.eventId)).toEqual(['e1']);
	expect((await store.listDeliveries({ target: T2, limit: 10 })).map((d) => d.eventId)).toEqual([
		'e4',
		'e1',
	]);
	expect(await store.oldestUndelivered()).toBe(EVENTS[1][6]);
	expect((await store.listAttempts(dead.map((d) => d.id))).length).toBe(2);
	// The backlog is claimed as before: the pending ones and the one whose lease ran out.
	const claimed = await store.claimDue(NOW, 100, 60_000, 'new-instance');
	expect(claimed.map((d) => d.eventId).sort()).toEqual(['e2', 'e3', 'e4', 'e5']);
	// Requeued, the dead one leaves the dead index and is due again.
	expect(await store.requeueDead(undefined, NOW)).toBe(1);
	expect(await store.deadDeliveries()).toEqual([]);
	expect(await store.oldestUndelivered()).toBe(EVENTS[1][6]);
}

describe('SQLite: a store with a backlog migrated in place to the dead-delivery index', () => {
	const tmp = tempDir();
	afterAll(() => tmp.cleanup());

	const oldStore = (path: string) => {
		const old = new DatabaseSync(path);
		for (const sql of SQLITE_MIGRATIONS.slice(0, SQLITE_BEFORE)) old.exec(sql);
		old.exec(`PRAGMA user_version = ${SQLITE_BEFORE}`);
		const event = old.prepare(
			'INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
		);
		for (const e of EVENTS) event.run(...e);
		const delivery = old.prepare(
			`INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at, lease_until, lease_owner, delivered_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		);
		for (const [id, target, status, attempts, until, owner] of DELIVERIES)
			delivery.run(
				id,
				target,
				status,
				attempts,
				NOW - 60_000,
				NOW - 60_000,
				until ?? NOW - 60_000,
				until,
				owner,
				status === 'delivered' ? NOW - 50_000 : null,
			);
		old.exec(`INSERT INTO attempts (delivery_id, target, attempt, started_at, duration_ms, http_status, error, outcome)
			SELECT id, target, n.a, ${NOW - 40_000}, 5, 500, 'HTTP 500', CASE WHEN n.a = 2 THEN 'dead' ELSE 'retry' END
			FROM deliveries, (SELECT 1 AS a UNION ALL SELECT 2) n WHERE status = 'dead'`);
		old.close();
	};

	it('keeps every row, claims the backlog as before, and drops the indexes no query needs', async () => {
		const path = join(tmp.dir, 'backlog.sqlite');
		oldStore(path);
		const store = await SqliteStore.open(path);
		try {
			await expectBacklogKept(store);
		} finally {
			await store.close();
		}
		const probe = new DatabaseSync(path, { readOnly: true });
		try {
			expect(probe.prepare('PRAGMA user_version').get()).toEqual({
				user_version: SQLITE_MIGRATIONS.length,
			});
			const names = probe
				.prepare(
					"SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'deliveries' ORDER BY name",
				)
				.all()
				.map((r) => String(r.name));
			expect(names).toEqual(DELIVERY_INDEXES);
			expect(probe.prepare('SELECT COUNT(*) AS n FROM attempts').get()).toEqual({ n: 2 });
		} finally {
			probe.close();
		}
	});

	it('reads the dead list, one target’s dead and the oldest undelivered event through the partial indexes', async () => {
		const path = join(tmp.dir, 'plans.sqlite');
		await (await SqliteStore.open(path)).close();
		const db = new DatabaseSync(path, { readOnly: true });
		const plan = (sql: string, ...params: Array<string | number>) =>
			db
				.prepare(`EXPLAIN QUERY PLAN ${sql}`)
				.all(...params)
				.map((r) => String(r.detail));
		try {
			const deadList = sqlite.deliveriesQuery({ status: 'dead', limit: 100 });
			for (const steps of [
				plan(sqlite.DEAD),
				plan(sqlite.DEAD_OF_TARGET, T1),
				plan(deadList.sql, ...(deadList.params as number[])),
			]) {
				expect(steps.join(' | ')).toMatch(/deliveries USING INDEX deliveries_dead/);
				expect(steps).not.toContain('SCAN deliveries');
			}
			const oldest = plan(sqlite.OLDEST_UNDELIVERED).join(' | ');
			expect(oldest).toMatch(/SEARCH d USING INDEX deliveries_due/);
			expect(oldest).toMatch(/SEARCH d USING INDEX deliveries_dead/);
		} finally {
			db.close();
		}
	});
});

describe.skipIf(PG_MISSING)(
	'PostgreSQL: a store with a backlog migrated in place to the dead-delivery index',
	() => {
		const dbs: TestDatabase[] = [];
		afterAll(async () => {
			await Promise.all(dbs.map((db) => db.drop()));
		});

		const oldDatabase = async (delivered = 0, before = PG_BEFORE) => {
			const db = await createTestDatabase();
			dbs.push(db);
			const c = new pg.Client({ connectionString: db.url });
			await c.connect();
			try {
				await migrate(c as unknown as pg.PoolClient, PG_MIGRATIONS.slice(0, before));
				for (const e of EVENTS)
					await c.query(
						'INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
						e,
					);
				for (const [id, target, status, attempts, until, owner] of DELIVERIES)
					await c.query(
						`INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at, lease_until, lease_owner, delivered_at)
						VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9)`,
						[
							id,
							target,
							status,
							attempts,
							NOW - 60_000,
							until ?? NOW - 60_000,
							until,
							owner,
							status === 'delivered' ? NOW - 50_000 : null,
						],
					);
				await c.query(`INSERT INTO attempts (delivery_id, target, attempt, started_at, duration_ms, http_status, error, outcome)
					SELECT id, target, n.a, ${NOW - 40_000}, 5, 500, 'HTTP 500', CASE WHEN n.a = 2 THEN 'dead' ELSE 'retry' END
					FROM deliveries, generate_series(1, 2) AS n (a) WHERE status = 'dead'`);
				if (delivered > 0) {
					await c.query(
						`INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at)
						SELECT 'd' || g, 'payment', 'k' || g, 'x', 'x', '{}', $2::bigint - g FROM generate_series(1, $1::int) g`,
						[delivered, NOW - 100_000],
					);
					await c.query(
						`INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at, delivered_at)
						SELECT 'd' || g, $2, 'delivered', 1, $3::bigint, $3::bigint, $3::bigint, $3::bigint FROM generate_series(1, $1::int) g`,
						[delivered, T1, NOW - 90_000],
					);
					await c.query(`INSERT INTO attempts (delivery_id, target, attempt, started_at, duration_ms, http_status, outcome)
						SELECT id, target, 1, delivered_at, 5, 200, 'delivered' FROM deliveries WHERE event_id LIKE 'd%'`);
				}
			} finally {
				await c.end();
			}
			return db;
		};

		it('keeps every row, claims the backlog as before, and drops the indexes no query needs', async () => {
			const db = await oldDatabase();
			const store = await PostgresStore.open(db.url);
			try {
				await expectBacklogKept(store);
			} finally {
				await store.close();
			}
			const c = new pg.Client({ connectionString: db.url });
			await c.connect();
			try {
				const { rows } = await c.query<{ v: number }>(
					'SELECT MAX(version) AS v FROM relay_schema_migrations',
				);
				expect(rows[0].v).toBe(PG_MIGRATIONS.at(-1)?.version);
				const names = await c.query<{ indexname: string }>(
					"SELECT indexname FROM pg_indexes WHERE tablename = 'deliveries' ORDER BY indexname",
				);
				expect(names.rows.map((r) => r.indexname)).toEqual([
					...DELIVERY_INDEXES,
					'deliveries_pkey',
				]);
				expect((await c.query('SELECT 1 FROM attempts')).rowCount).toBe(2);
				// No foreign-key trigger runs per delivery or attempt stored.
				const fks = await c.query(
					`SELECT conname FROM pg_constraint WHERE contype = 'f'
					AND conrelid IN ('deliveries'::regclass, 'attempts'::regclass)`,
				);
				expect(fks.rows).toEqual([]);
			} finally {
				await c.end();
			}
		});

		it('reads the dead list, one target’s dead and the oldest undelivered event through the partial indexes', async () => {
			const db = await oldDatabase(20_000);
			await (await PostgresStore.open(db.url)).close();
			const c = new pg.Client({ connectionString: db.url });
			await c.connect();
			const indexes = async (sql: string, params: unknown[] = []) => {
				const { rows } = await c.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params);
				const text = rows.map((r) => r['QUERY PLAN']).join('\n');
				expect(text).not.toMatch(/Seq Scan on deliveries/);
				return text;
			};
			try {
				await c.query('ANALYZE');
				const deadList = pgSql.deliveriesQuery({ status: 'dead', limit: 100 });
				expect(await indexes(pgSql.DEAD)).toMatch(/deliveries_dead/);
				expect(await indexes(pgSql.DEAD_OF_TARGET, [T2])).toMatch(/deliveries_dead/);
				expect(await indexes(deadList.sql, deadList.params)).toMatch(/deliveries_dead/);
				const oldest = await indexes(pgSql.OLDEST_UNDELIVERED);
				expect(oldest).toMatch(/deliveries_due/);
				expect(oldest).toMatch(/deliveries_dead/);
				// A delivery's attempts (20,000 in the table) through attempts_delivery.
				const attempts = await indexes(pgSql.ATTEMPTS, [[1, 2]]);
				expect(attempts).toMatch(/attempts_delivery/);
				expect(attempts).not.toMatch(/Seq Scan on attempts/);
			} finally {
				await c.end();
			}
		});

		it('schema 12: attempts of a backlog kept and listed in order, with attempts_delivery as the key and replica identity', async () => {
			expect(PG_ATTEMPTS_KEY).toBeGreaterThan(PG_BEFORE);
			const db = await oldDatabase(0, PG_ATTEMPTS_KEY);
			const store = await PostgresStore.open(db.url);
			try {
				await expectBacklogKept(store);
				// A new attempt after the migration: ids still increase, the order is the delivery's.
				const [dead] = await store.listDeliveries({ eventId: 'e1', limit: 1 });
				const claimed = await store.claimDue(NOW + 1_000, 10, 60_000, 'after');
				const again = claimed.find((d) => d.id === dead.id);
				if (!again) throw new Error('the requeued delivery was not claimed');
				await store.recordResults([
					{
						id: dead.id,
						outcome: 'delivered',
						owner: 'after',
						httpStatus: 200,
						now: NOW + 2_000,
						timing: { attempt: again.attempts, startedAt: NOW + 1_500, durationMs: 5 },
					},
				]);
				const attempts = await store.listAttempts([dead.id]);
				expect(attempts.map((a) => [a.attempt, a.outcome])).toEqual([
					[1, 'retry'],
					[2, 'dead'],
					[3, 'delivered'],
				]);
				expect(attempts[2].id).toBeGreaterThan(attempts[1].id);
			} finally {
				await store.close();
			}
			const c = new pg.Client({ connectionString: db.url });
			await c.connect();
			try {
				const names = await c.query<{ indexname: string }>(
					"SELECT indexname FROM pg_indexes WHERE tablename = 'attempts' ORDER BY indexname",
				);
				expect(names.rows.map((r) => r.indexname)).toEqual([
					'attempts_delivery',
					'attempts_started',
					'attempts_target_error',
				]);
				const key = await c.query(
					`SELECT i.indisunique, i.indisreplident, t.relreplident FROM pg_index i
					JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
					WHERE x.relname = 'attempts_delivery'`,
				);
				expect(key.rows).toEqual([{ indisunique: true, indisreplident: true, relreplident: 'i' }]);
				expect((await c.query('SELECT 1 FROM attempts')).rowCount).toBe(3);
			} finally {
				await c.end();
			}
		});
	},
);
