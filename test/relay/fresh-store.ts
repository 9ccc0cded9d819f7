import { join } from 'node:path';
import { describe } from 'vitest';
import { PostgresStore } from '../../relay/src/store-postgres/store.ts';
import { SqliteStore, type SqliteStoreOptions } from '../../relay/src/store-sqlite/store.ts';
import { tempDir } from './helpers.ts';
import { createTestDatabase, type TestDatabase } from './pg.ts';
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

/** How a suite that starts relays gets a fresh, empty store of one kind. */
export interface SuiteStore {
	/** RELAY_DATABASE of a fresh, empty store. */
	database: () => Promise<string>;
	cleanup: () => Promise<void>;
}

/**
 * `suite` under two describes, `<title>, SQLite store` (a new file per database) and
 * `<title>, PostgreSQL store` (a new database per call, dropped afterwards).
 */
export function onEveryStore(title: string, suite: (store: SuiteStore) => void): void {
	describe(`${title}, SQLite store`, () => {
		const tmp = tempDir();
		let n = 0;
		suite({
			database: async () => join(tmp.dir, `relay-${++n}.sqlite`),
			cleanup: async () => tmp.cleanup(),
		});
	});
	describe(`${title}, PostgreSQL store`, () => {
		const dbs: TestDatabase[] = [];
		suite({
			database: async () => {
				const db = await createTestDatabase();
				dbs.push(db);
				return db.url;
			},
			cleanup: async () => {
				await Promise.all(dbs.map((db) => db.drop()));
			},
		});
	});
}
