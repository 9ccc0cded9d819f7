// Schema version 9 of both stores (store/money-back-keys.ts): a store made by the relay of before
// the one money-back identity (its rows inserted here in their old form, at schema version 8) is
// rewritten at open: chargeback events under ["chargeback", Id, STATUS], the catch-up's marks
// `refund:<Id>:<STATUS>` and `chargeback:<Id>` under the same keys, so the genuine postback
// arriving again and the catch-up finding the record again are duplicates, never a second event.
// And a pruned refund or chargeback leaves its key as a catch-up mark.
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { moneyBackKey, moneyBackKeyOf } from '../../nodes/shared/money-back.ts';
import { moneyBackRewrite } from '../../relay/src/store/money-back-keys.ts';
import type { Store } from '../../relay/src/store/types.ts';
import { SQLITE_MIGRATIONS } from '../../relay/src/store-sqlite/schema.ts';
import { SqliteStore } from '../../relay/src/store-sqlite/store.ts';
import { PG_MIGRATIONS, migrate } from '../../relay/src/store-postgres/schema.ts';
import { PostgresStore } from '../../relay/src/store-postgres/store.ts';
import { tempDir } from './helpers.ts';
import { PG_MISSING, createTestDatabase } from './pg.ts';
import type { TestDatabase } from './pg.ts';

const NOW = Date.now();
const DAY_MS = 86_400_000;

/** The chargeback postback's fields as the relay of before stored them (no SignatureValue). */
const chargeback = (id: string, status?: string) => ({
	Id: id,
	...(status === undefined ? {} : { Status: status }),
	InvId: 'o-1',
	BillId: 'B-1',
	PaymentId: 'P-1',
});

/** Rows of the old form: [id, kind, dedupe key, fields]. */
const OLD_EVENTS: Array<[string, string, string, Record<string, string>]> = [
	['e-cb1', 'chargeback', '["chargeback","CB-1"]', chargeback('CB-1', ' success')],
	['e-cb2', 'chargeback', '["chargeback","CB-2"]', chargeback('CB-2')],
	[
		'e-rf1',
		'refund',
		'["refund","RF-1","SUCCESS"]',
		{ ...chargeback('RF-1', 'SUCCESS'), Amount: '10.00', Currency: 'RUB' },
	],
];
/** Marks of the old form (and two others the rewrite leaves alone): [mark, at]. */
const OLD_MARKS: Array<[string, number]> = [
	['refund:RF-2:SUCCESS', NOW - DAY_MS],
	['chargeback:CB-1', NOW - 2 * DAY_MS],
	['chargeback:CB-3', NOW - 3 * DAY_MS],
	['bill:B-9:SUCCESS', NOW - DAY_MS],
	['baseline:first-start', NOW - 10 * DAY_MS],
];

/** What the store holds after the rewrite, read through the store and its own SQL. */
async function expectRewritten(
	store: Store,
	keysOf: () => Promise<Record<string, string | null>>,
	marks: () => Promise<Array<[string, number]>>,
) {
	expect(await keysOf()).toEqual({
		'e-cb1': moneyBackKey('chargeback', 'CB-1', 'SUCCESS'),
		'e-cb2': '["chargeback","CB-2",""]',
		'e-rf1': '["refund","RF-1","SUCCESS"]',
	});
	expect(await marks()).toEqual(
		[
			['["chargeback","CB-1","SUCCESS"]', NOW - 2 * DAY_MS],
			['["chargeback","CB-3","FAIL"]', NOW - 3 * DAY_MS],
			['["chargeback","CB-3","SUCCESS"]', NOW - 3 * DAY_MS],
			['["refund","RF-2","SUCCESS"]', NOW - DAY_MS],
			['baseline:first-start', NOW - 10 * DAY_MS],
			['bill:B-9:SUCCESS', NOW - DAY_MS],
		].sort(),
	);
	// The genuine postback again, keyed as the intake keys it now: a duplicate of the stored event.
	const again = await store.insertEvent({
		kind: 'chargeback',
		dedupeKey: moneyBackKeyOf('chargeback', { ...chargeback('CB-1', 'SUCCESS') }),
		contentType: 'application/x-www-form-urlencoded',
		body: 'Id=CB-1',
		fields: chargeback('CB-1', 'SUCCESS'),
		receivedAt: NOW,
		targets: ['http://t/x'],
	});
	expect(again).toMatchObject({ duplicate: true, eventId: 'e-cb1' });
	// The catch-up's marks as it now asks for them.
	expect(
		(
			await store.catchupMarks([
				moneyBackKey('refund', 'RF-2', 'success'),
				moneyBackKey('chargeback', 'CB-1', 'SUCCESS'),
				moneyBackKey('chargeback', 'CB-3', 'SUCCESS'),
				moneyBackKey('chargeback', 'CB-3', 'FAIL'),
				'refund:RF-2:SUCCESS',
				'chargeback:CB-1',
			])
		).sort(),
	).toEqual(
		[
			'["chargeback","CB-1","SUCCESS"]',
			'["chargeback","CB-3","FAIL"]',
			'["chargeback","CB-3","SUCCESS"]',
			'["refund","RF-2","SUCCESS"]',
		].sort(),
	);
}

/** A pruned refund's and chargeback's keys stay as catch-up marks; a payment's does not. */
async function expectPrunedKeysKept(store: Store) {
	const old = NOW - 40 * DAY_MS;
	const base = { contentType: 'x', body: 'x', receivedAt: old, targets: [] as string[] };
	const refundKey = moneyBackKey('refund', 'RF-P', 'SUCCESS');
	const chargebackKey = moneyBackKey('chargeback', 'CB-P', 'FAIL');
	await store.insertEvent({ ...base, kind: 'refund', dedupeKey: refundKey, fields: {} });
	await store.insertEvent({ ...base, kind: 'chargeback', dedupeKey: chargebackKey, fields: {} });
	await store.insertEvent({ ...base, kind: 'payment', dedupeKey: 'payment-P', fields: {} });
	expect(await store.prune(NOW - 30 * DAY_MS, 100)).toBeGreaterThanOrEqual(3);
	expect((await store.catchupMarks([refundKey, chargebackKey, 'payment-P', 'e-x'])).sort()).toEqual(
		[chargebackKey, refundKey].sort(),
	);
}

describe('money-back keys, SQLite store: a store of before is rewritten at open', () => {
	const tmp = tempDir();
	afterAll(() => tmp.cleanup());

	for (const mode of ['thread', 'inline'] as const)
		it(`rewrites chargeback keys and old marks once, at version 9 (${mode})`, async () => {
			const path = join(tmp.dir, `v8-${mode}.sqlite`);
			const old = new DatabaseSync(path);
			for (const sql of SQLITE_MIGRATIONS.slice(0, 8)) old.exec(sql);
			old.exec('PRAGMA user_version = 8');
			const addEvent = old.prepare(
				`INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at) VALUES (?, ?, ?, 'x', 'x', ?, ?)`,
			);
			for (const [id, kind, key, fields] of OLD_EVENTS)
				addEvent.run(id, kind, key, JSON.stringify(fields), NOW - DAY_MS);
			const addMark = old.prepare('INSERT INTO catchup_marks (mark, at) VALUES (?, ?)');
			for (const [mark, at] of OLD_MARKS) addMark.run(mark, at);
			old.close();

			const read = () => new DatabaseSync(path, { readOnly: true });
			const keysOf = async () => {
				const db = read();
				const rows = db.prepare('SELECT id, dedupe_key FROM events ORDER BY id').all();
				db.close();
				return Object.fromEntries(rows.map((r) => [String(r.id), r.dedupe_key as string]));
			};
			const marks = async () => {
				const db = read();
				const rows = db.prepare('SELECT mark, at FROM catchup_marks ORDER BY mark').all();
				db.close();
				return rows.map((r) => [String(r.mark), Number(r.at)] as [string, number]);
			};
			const store = await SqliteStore.open(path, { mode });
			try {
				await expectRewritten(store, keysOf, marks);
			} finally {
				await store.close();
			}
			const probe = read();
			expect(probe.prepare('PRAGMA user_version').get()).toEqual({
				user_version: SQLITE_MIGRATIONS.length,
			});
			expect(probe.prepare('SELECT name FROM store_rewrites').all()).toEqual([]);
			probe.close();
			// Opened again: nothing left to rewrite, nothing changes.
			const before = [await keysOf(), await marks()];
			await (await SqliteStore.open(path, { mode })).close();
			expect([await keysOf(), await marks()]).toEqual(before);
		});

	it('keeps the key of a pruned refund and chargeback as a catch-up mark', async () => {
		const store = await SqliteStore.open(join(tmp.dir, 'prune.sqlite'));
		try {
			await expectPrunedKeysKept(store);
		} finally {
			await store.close();
		}
	});
});

describe.skipIf(PG_MISSING)(
	'money-back keys, PostgreSQL store: a database of before is rewritten at open',
	() => {
		const dbs: TestDatabase[] = [];
		afterAll(async () => {
			await Promise.all(dbs.map((db) => db.drop()));
		});

		it('rewrites chargeback keys and old marks once, in migration 9', async () => {
			const db = await createTestDatabase();
			dbs.push(db);
			const client = new pg.Client({ connectionString: db.url });
			await client.connect();
			try {
				await migrate(client as unknown as pg.PoolClient, PG_MIGRATIONS.slice(0, 8));
				for (const [id, kind, key, fields] of OLD_EVENTS)
					await client.query(
						`INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at) VALUES ($1, $2, $3, 'x', 'x', $4, $5)`,
						[id, kind, key, JSON.stringify(fields), NOW - DAY_MS],
					);
				for (const [mark, at] of OLD_MARKS)
					await client.query('INSERT INTO catchup_marks (mark, at) VALUES ($1, $2)', [mark, at]);
				const keysOf = async () =>
					Object.fromEntries(
						(await client.query('SELECT id, dedupe_key FROM events ORDER BY id')).rows.map((r) => [
							r.id as string,
							r.dedupe_key as string,
						]),
					);
				const marks = async () =>
					(
						await client.query('SELECT mark, at FROM catchup_marks ORDER BY mark COLLATE "C"')
					).rows.map((r) => [r.mark as string, Number(r.at)] as [string, number]);
				// Two instances starting together: the migration runs once, under its lock.
				const [store, other] = await Promise.all([
					PostgresStore.open(db.url),
					PostgresStore.open(db.url),
				]);
				try {
					await expectRewritten(store, keysOf, marks);
				} finally {
					await Promise.all([store.close(), other.close()]);
				}
				const versions = await client.query('SELECT version FROM relay_schema_migrations');
				expect(versions.rows.map((r) => r.version)).toContain(9);
				const before = [await keysOf(), await marks()];
				await (await PostgresStore.open(db.url)).close();
				expect([await keysOf(), await marks()]).toEqual(before);
			} finally {
				await client.end();
			}
		});

		it('keeps the key of a pruned refund and chargeback as a catch-up mark', async () => {
			const db = await createTestDatabase();
			dbs.push(db);
			const store = await PostgresStore.open(db.url);
			try {
				await expectPrunedKeysKept(store);
			} finally {
				await store.close();
			}
		});
	},
);

describe('moneyBackRewrite', () => {
	it('leaves rows of the new form alone, and gives an old chargeback mark the status its event holds', () => {
		const rewrite = moneyBackRewrite(
			[
				{ id: 'a', dedupeKey: '["chargeback","X",  "FAIL"]', fields: chargeback('X', 'FAIL') },
				{ id: 'b', dedupeKey: '["chargeback"," Y "]', fields: chargeback(' Y ', 'Fail') },
			],
			[
				{ mark: 'chargeback:X', at: 1 },
				{ mark: 'refund:a:b:SUCCESS', at: 2 },
				{ mark: 'refund:', at: 3 },
			],
		);
		expect(rewrite.events).toEqual([{ id: 'b', key: '["chargeback","Y","FAIL"]' }]);
		expect(rewrite.marks).toEqual([
			{ old: 'chargeback:X', marks: ['["chargeback","X","FAIL"]'], at: 1 },
			{ old: 'refund:a:b:SUCCESS', marks: ['["refund","a:b","SUCCESS"]'], at: 2 },
		]);
	});
});
