// The catch-up suite (catchup-suite.ts) on both stores: a SQLite file and a PostgreSQL database
// of its own (dropped afterwards).
import { describe } from 'vitest';
import { join } from 'node:path';
import { catchupSuite } from './catchup-suite.ts';
import { tempDir } from './helpers.ts';
import { createTestDatabase } from './pg.ts';
import type { TestDatabase } from './pg.ts';

describe('catch-up on the SQLite store', () => {
	const tmp = tempDir();
	let n = 0;
	catchupSuite({
		database: async () => join(tmp.dir, `relay-${++n}.sqlite`),
		cleanup: async () => tmp.cleanup(),
	});
});

describe('catch-up on the PostgreSQL store', () => {
	const dbs: TestDatabase[] = [];
	catchupSuite({
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
