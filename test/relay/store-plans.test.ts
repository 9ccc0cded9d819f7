// The claim and result statements touch O(batch) rows however many delivered rows the store holds
// and whatever the planner's statistics say (once a backlog after a load cost 13× a standalone
// drain because PostgreSQL sorted every due delivery on every claim). Real databases: a PostgreSQL
// database of the test's own, run with the settings of the store's bookkeeping connections, and a
// real SQLite file.
import { join } from 'node:path';
import pg from 'pg';
import type { PoolClient } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOOKKEEPING_OPTIONS, PostgresStore } from '../../relay/src/store-postgres/store.ts';
import { PG_MIGRATIONS, migrate } from '../../relay/src/store-postgres/schema.ts';
import { CLAIM, RECORD_RESULTS, resultParams } from '../../relay/src/store-postgres/statements.ts';
import type { DeliveryResult } from '../../relay/src/store/types.ts';
import {
	MARK_DEAD,
	MARK_DELIVERED,
	MARK_RETRY,
	SQLITE_CLAIM,
} from '../../relay/src/store-sqlite/statements.ts';
import { openSqlite } from '../../relay/src/store-sqlite/schema.ts';
import { tempDir } from './helpers.ts';
import { PG_MISSING, createTestDatabase } from './pg.ts';
import type { TestDatabase } from './pg.ts';

const NOW = 2_000_000_000_000;
const BATCH = 16;
const DUE = 3_000;

interface PlanNode {
	'Node Type': string;
	'Relation Name'?: string;
	'Index Name'?: string;
	'Actual Rows'?: number;
	'Actual Loops'?: number;
	Plans?: PlanNode[];
}
const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

/** Delivered events (with their deliveries) and DUE due deliveries, in SQL. */
const fillPg = async (c: pg.Client, delivered: number, from: number) => {
	await c.query(
		`INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at)
		SELECT 'e' || g, 'payment', 'k' || g, 'text/plain', 'b', '{}', $3::bigint + g FROM generate_series($1::int, $2::int) g`,
		[from, from + delivered + DUE - 1, NOW - 1_000_000],
	);
	await c.query(
		`INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at, delivered_at)
		SELECT 'e' || g, 'http://t', CASE WHEN g < $2 THEN 'delivered' ELSE 'pending' END, 0, $4::bigint, $4::bigint, $4::bigint - g,
			CASE WHEN g < $2 THEN $4::bigint END
		FROM generate_series($1::int, $3::int) g`,
		[from, from + delivered, from + delivered + DUE - 1, NOW - 1_000_000],
	);
};

describe.skipIf(PG_MISSING)('PostgreSQL: the claim and the results read O(batch) rows', () => {
	let db: TestDatabase;
	let c: pg.Client;

	beforeAll(async () => {
		db = await createTestDatabase();
		await (await PostgresStore.open(db.url)).close(); // the schema, as the relay migrates it
		// The store's bookkeeping connection, as PostgresStore opens it.
		c = new pg.Client({ connectionString: db.url, options: BOOKKEEPING_OPTIONS });
		await c.connect();
	});
	afterAll(async () => {
		await c?.end();
		await db?.drop();
	});

	const explain = async (sql: string, params: unknown[]): Promise<PlanNode[]> => {
		await c.query('BEGIN');
		try {
			const { rows } = await c.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
				`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`,
				params,
			);
			return nodes(rows[0]['QUERY PLAN'][0].Plan);
		} finally {
			await c.query('ROLLBACK');
		}
	};
	const claimParams = [NOW + 60_000, 'owner', NOW, BATCH];

	/** Every plan node that reads deliveries does it by index, and reads O(batch) rows. */
	const expectBatchSized = (plan: PlanNode[], index: string) => {
		const reads = plan.filter(
			(n) => n['Relation Name'] === 'deliveries' && n['Node Type'] !== 'ModifyTable',
		);
		expect(reads.length).toBeGreaterThan(0);
		for (const n of reads) {
			expect(n['Node Type'], JSON.stringify(n)).toBe('Index Scan');
			expect(n['Actual Rows']! * (n['Actual Loops'] ?? 1)).toBeLessThanOrEqual(BATCH);
		}
		expect(reads.map((n) => n['Index Name'])).toContain(index);
		expect(plan.map((n) => n['Node Type'])).not.toContain('Bitmap Heap Scan');
	};

	it('a new store with a backlog and no statistics: the claim walks deliveries_due in order and stops after its batch', async () => {
		await fillPg(c, 0, 1);
		const plan = await explain(CLAIM, claimParams);
		expectBatchSized(plan, 'deliveries_due');
		// And run: the batch is the oldest due deliveries (next_attempt_at falls as g grows).
		await c.query('BEGIN');
		const { rows } = await c.query<{ event_id: string }>(CLAIM, claimParams);
		await c.query('ROLLBACK');
		expect(rows.map((r) => r.event_id).sort()).toEqual(
			Array.from({ length: BATCH }, (_, i) => `e${DUE - i}`).sort(),
		);
	});

	it('a store of delivered rows analyzed before the backlog formed (statistics: nothing due): the same, generic plan too', async () => {
		await c.query(`DELETE FROM deliveries`);
		await c.query(`DELETE FROM events`);
		await fillPg(c, 20_000, 100_000);
		await c.query(`UPDATE deliveries SET status = 'delivered' WHERE status = 'pending'`);
		await c.query('ANALYZE deliveries');
		await c.query(`UPDATE deliveries SET status = 'pending', delivered_at = NULL WHERE event_id IN (
			SELECT 'e' || g FROM generate_series(120000, ${120_000 + DUE - 1}) g)`);
		expectBatchSized(await explain(CLAIM, claimParams), 'deliveries_due');
		// The relay runs it as a prepared statement: after five calls PostgreSQL may keep a generic plan.
		await c.query('SET plan_cache_mode = force_generic_plan');
		try {
			await c.query(
				'PREPARE claim_g (bigint, text, bigint, integer) AS ' + CLAIM.replace(/\$(\d)/g, '$$$1'),
			);
			expectBatchSized(
				await explain(`EXECUTE claim_g (${NOW + 60_000}, 'owner', ${NOW}, ${BATCH})`, []),
				'deliveries_due',
			);
		} finally {
			await c.query('DEALLOCATE ALL');
			await c.query('RESET plan_cache_mode');
		}
	});

	it('a store migrated before version 6 gets the fixed vacuum and analyze thresholds of deliveries', async () => {
		const old = await createTestDatabase();
		try {
			const client = new pg.Client({ connectionString: old.url });
			await client.connect();
			try {
				await migrate(client as unknown as PoolClient, PG_MIGRATIONS.slice(0, 5));
				const options = async () =>
					(
						await client.query<{ o: string[] | null }>(
							"SELECT reloptions AS o FROM pg_class WHERE relname = 'deliveries'",
						)
					).rows[0].o;
				expect(await options()).toBeNull();
				await (await PostgresStore.open(old.url)).close();
				expect(await options()).toEqual([
					'autovacuum_vacuum_scale_factor=0',
					'autovacuum_vacuum_threshold=5000',
					'autovacuum_analyze_scale_factor=0',
					'autovacuum_analyze_threshold=5000',
				]);
			} finally {
				await client.end();
			}
		} finally {
			await old.drop();
		}
	});

	it('results prepared while the store was nearly empty still find their deliveries by primary key once it has grown (no generic plan kept from the empty table)', async () => {
		const fresh = await createTestDatabase();
		const book = new pg.Client({ connectionString: fresh.url, options: BOOKKEEPING_OPTIONS });
		try {
			await (await PostgresStore.open(fresh.url)).close();
			await book.connect();
			// No analyze in the middle of the test (autovacuum would replan the statement by chance).
			await book.query('ALTER TABLE deliveries SET (autovacuum_enabled = false)');
			await fillPg(book, 20, 1);
			const batch = async () =>
				(
					await book.query<{ id: string }>(
						`SELECT id FROM deliveries WHERE status = 'pending' ORDER BY id LIMIT ${BATCH}`,
					)
				).rows.map(
					(r): DeliveryResult => ({
						outcome: 'retry',
						id: Number(r.id),
						owner: 'nobody',
						now: NOW,
						nextAttemptAt: NOW,
						httpStatus: 503,
						error: 'HTTP 503',
						timing: { attempt: 1, startedAt: NOW, durationMs: 5 },
					}),
				);
			// The relay's way: a named (prepared) statement, run more than five times while small.
			const params = resultParams(await batch());
			for (let i = 0; i < 8; i++) {
				await book.query({ name: 'results_p', text: RECORD_RESULTS, values: params });
			}
			await fillPg(book, 20_000, 10_000);
			// The same prepared statement, explained: its arguments as array literals.
			const literal = (values: unknown) =>
				book.escapeLiteral(
					`{${(values as unknown[])
						.map((v) =>
							v === null || v === undefined ? 'NULL' : `"${String(v).replace(/["\\]/g, '\\$&')}"`,
						)
						.join(',')}}`,
				);
			const args = resultParams(await batch())
				.map(literal)
				.join(', ');
			await book.query('BEGIN');
			try {
				const { rows } = await book.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
					`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE results_p (${args})`,
				);
				expectBatchSized(nodes(rows[0]['QUERY PLAN'][0].Plan), 'deliveries_pkey');
			} finally {
				await book.query('ROLLBACK');
			}
		} finally {
			await book.end().catch(() => {});
			await fresh.drop();
		}
	});

	it('results of a batch find their deliveries by primary key', async () => {
		const { rows } = await c.query<{ id: string }>(
			`SELECT id FROM deliveries WHERE status = 'pending' ORDER BY id LIMIT ${BATCH}`,
		);
		expect(rows).toHaveLength(BATCH);
		const results = rows.map(
			(r): DeliveryResult => ({
				outcome: 'delivered',
				id: Number(r.id),
				now: NOW,
				httpStatus: 200,
				timing: { attempt: 1, startedAt: NOW, durationMs: 5 },
			}),
		);
		const plan = await explain(RECORD_RESULTS, resultParams(results));
		expectBatchSized(plan, 'deliveries_pkey');
		const modified = plan.find(
			(n) => n['Node Type'] === 'ModifyTable' && n['Relation Name'] === 'deliveries',
		);
		expect(modified?.['Actual Rows'] ?? 0).toBeLessThanOrEqual(BATCH);
	});
});

describe('SQLite: the claim and the results read O(batch) rows', () => {
	const { dir, cleanup } = tempDir();
	afterAll(cleanup);

	it('the claim reads deliveries_due in order (no scan, no sort); the marks use the primary key', () => {
		const db = openSqlite(join(dir, 'relay.sqlite'));
		try {
			db.exec('BEGIN');
			db.prepare(
				`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 20000)
				INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at)
				SELECT 'e' || n, 'payment', 'k' || n, 'text/plain', 'b', '{}', n FROM g`,
			).run();
			db.prepare(
				`INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at)
				SELECT id, 'http://t', CASE WHEN received_at <= 17000 THEN 'delivered' ELSE 'pending' END, 0, 0, 0, received_at
				FROM events`,
			).run();
			db.exec('COMMIT');
			const plan = (sql: string) =>
				(db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map(
					(r) => r.detail,
				);
			const claim = plan(SQLITE_CLAIM);
			expect(
				claim.some((d) => /SEARCH deliveries USING INDEX deliveries_due/.test(d)),
				claim.join('\n'),
			).toBe(true);
			expect(claim.filter((d) => /^SCAN deliveries\b/.test(d) || /TEMP B-TREE/.test(d))).toEqual(
				[],
			);
			for (const mark of [MARK_DELIVERED, MARK_RETRY, MARK_DEAD]) {
				const p = plan(mark);
				expect(p, p.join('\n')).toEqual(['SEARCH deliveries USING INTEGER PRIMARY KEY (rowid=?)']);
			}
			// And the claim run: the batch, oldest due first.
			const claimed = db.prepare(SQLITE_CLAIM).all(NOW, 'owner', NOW, NOW, BATCH) as Array<{
				event_id: string;
			}>;
			expect(claimed.map((r) => r.event_id).sort()).toEqual(
				Array.from({ length: BATCH }, (_, i) => `e${17_001 + i}`).sort(),
			);
		} finally {
			db.close();
		}
	});
});
