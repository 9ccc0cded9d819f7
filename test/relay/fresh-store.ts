import { join } from 'node:path';
import { PostgresStore } from '../../relay/src/store/postgres.ts';
import { SqliteStore, type SqliteStoreOptions } from '../../relay/src/store/sqlite.ts';
import { tempDir } from './helpers.ts';
import { createTestDatabase } from './pg.ts';
import type { OpenedStore } from './store-suite.ts';

/** A new SQLite file in a temporary folder, removed by `cleanup`. */
export async function freshSqliteStore(options?: SqliteStoreOptions): Promise<OpenedStore> {
	const tmp = tempDir();
	const store = await SqliteStore.open(join(tmp.dir, 'store.sqlite'), options);
	return {
		store,
		cleanup: async () => {
			await store.close();
			tmp.cleanup();
		},
	};
}

/** A new PostgreSQL database on the test server, dropped by `cleanup`. */
export async function freshPostgresStore(): Promise<OpenedStore> {
	const db = await createTestDatabase();
	const store = await PostgresStore.open(db.url);
	return {
		store,
		cleanup: async () => {
			await store.close();
			await db.drop();
		},
	};
}
