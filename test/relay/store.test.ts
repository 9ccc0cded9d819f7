import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidV7 } from '../../relay/src/store/ids.ts';
import { SqliteStore } from '../../relay/src/store-sqlite/store.ts';
import { SQLITE_MIGRATIONS } from '../../relay/src/store-sqlite/schema.ts';
import { tempDir } from './helpers.ts';
import { PG_MISSING } from './pg.ts';
import { freshPostgresStore, freshSqliteStore } from './fresh-store.ts';
import { storeContract, storeEvent } from './store-suite.ts';

for (const mode of ['thread', 'inline'] as const) {
	storeContract(`SQLite (${mode})`, () => freshSqliteStore({ mode }));

	describe(`SqliteStore (${mode})`, () => {
		const tmp = tempDir();
		const path = join(tmp.dir, 'nested', 'store.sqlite');
		let store: SqliteStore;

		beforeAll(async () => {
			store = await SqliteStore.open(path, { mode });
		});
		afterAll(async () => {
			await store?.close();
			tmp.cleanup();
		});

		it('creates the file (and its directory) in WAL mode with one delivery row per target', async () => {
			const first = await store.insertEvent(storeEvent('S-1'));
			const probe = new DatabaseSync(path, { readOnly: true });
			expect(
				(probe.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode,
			).toBe('wal');
			expect(
				probe.prepare('SELECT COUNT(*) AS n FROM deliveries WHERE event_id = ?').get(first.eventId),
			).toEqual({ n: 2 });
			probe.close();
		});

		it('commits concurrent calls together, durably', async () => {
			const before = await store.stats();
			const results = await Promise.all(
				Array.from({ length: 40 }, (_, i) => store.insertEvent(storeEvent(`S-batch-${i}`))),
			);
			expect(results.every((r) => !r.duplicate)).toBe(true);
			const after = await store.stats();
			expect(after.calls - before.calls).toBe(41); // the 40 inserts and the first stats() call
			expect(after.commits - before.commits).toBeLessThanOrEqual(2);
			expect(after.syncedCommits - before.syncedCommits).toBe(1); // the inserts' commit is fsynced; the stats() one was not
		});
	});
}

describe('SQLite schema versions', () => {
	it('migrates a file from before the versions, keeping its rows, and refuses a newer one', async () => {
		const tmp = tempDir();
		try {
			const path = join(tmp.dir, 'old.sqlite');
			const old = new DatabaseSync(path);
			old.exec(SQLITE_MIGRATIONS[0]);
			old
				.prepare(
					`INSERT INTO events VALUES ('e-old', 'payment', 'payment:OLD:SUCCESS', 'x', 'TrsId=OLD', '{"TrsId":"OLD"}', 5)`,
				)
				.run();
			old.close();
			const store = await SqliteStore.open(path, { mode: 'inline' });
			expect((await store.listEvents({ trsId: 'OLD', limit: 5 })).map((e) => e.id)).toEqual([
				'e-old',
			]);
			expect((await store.insertEvent(storeEvent('OLD'))).duplicate).toBe(true);
			await store.close();
			const probe = new DatabaseSync(path);
			expect(probe.prepare('PRAGMA user_version').get()).toEqual({
				user_version: SQLITE_MIGRATIONS.length,
			});
			probe.exec('PRAGMA user_version = 99');
			probe.close();
			await expect(SqliteStore.open(path, { mode: 'inline' })).rejects.toThrow(
				/schema version 99, newer than this relay knows/,
			);
		} finally {
			tmp.cleanup();
		}
	});

	it('gives the events of the last day stored before version 6 their signed pair, so the pair limit counts them', async () => {
		const tmp = tempDir();
		try {
			const path = join(tmp.dir, 'v5.sqlite');
			const old = new DatabaseSync(path);
			for (const sql of SQLITE_MIGRATIONS.slice(0, 5)) old.exec(sql);
			old.exec('PRAGMA user_version = 5');
			const now = Date.now();
			const add = old.prepare(
				`INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at) VALUES (?, 'payment', ?, 'x', 'x', ?, ?)`,
			);
			const fields = (trsId: string) =>
				JSON.stringify({ TrsId: trsId, InvId: 'inv-v5', OutSum: '10.5' });
			add.run('e-1', 'payment:V5-1:SUCCESS', fields('V5-1'), now - 60_000);
			add.run('e-2', 'payment:V5-2:SUCCESS', fields('V5-2'), now - 30_000);
			add.run('e-old', 'payment:V5-0:SUCCESS', fields('V5-0'), now - 3 * 24 * 3_600_000);
			old.close();
			const store = await SqliteStore.open(path);
			const third = await store.insertEvent({
				...storeEvent('V5-3', ['http://a/'], now),
				fields: { TrsId: 'V5-3', InvId: 'inv-v5', OutSum: '10.50' },
				pairLimit: { max: 2, since: now - 3_600_000 },
			});
			expect(third.limited).toBe(true);
			await store.close();
			const probe = new DatabaseSync(path);
			expect(probe.prepare('SELECT id, pair_key FROM events ORDER BY id').all()).toEqual([
				{ id: 'e-1', pair_key: '["payment",1050,"inv-v5"]' },
				{ id: 'e-2', pair_key: '["payment",1050,"inv-v5"]' },
				{ id: 'e-old', pair_key: null },
			]);
			probe.close();
		} finally {
			tmp.cleanup();
		}
	});
});

describe('event ids', () => {
	it('are version-7 UUIDs ordered by time', () => {
		const a = uuidV7(1_700_000_000_000);
		const b = uuidV7(1_700_000_000_001);
		expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
		expect(a < b).toBe(true);
	});
});

if (!PG_MISSING) storeContract('PostgreSQL', freshPostgresStore);
