// The catch-up suite (catchup-suite.ts) on both stores (a SQLite file and a PostgreSQL database
// of its own, dropped afterwards) and both sandbox profiles (`live`, `spec`).
import { describe } from 'vitest';
import { join } from 'node:path';
import { catchupSuite } from './catchup-suite.ts';
import { tempDir } from './helpers.ts';
import { createTestDatabase } from './pg.ts';
import type { TestDatabase } from './pg.ts';

for (const profile of ['live', 'spec'] as const) {
	describe(`catch-up, ${profile} profile, SQLite store`, () => {
		const tmp = tempDir();
		let n = 0;
		catchupSuite(
			{
				database: async () => join(tmp.dir, `relay-${++n}.sqlite`),
				cleanup: async () => tmp.cleanup(),
			},
			profile,
		);
	});

	describe(`catch-up, ${profile} profile, PostgreSQL store`, () => {
		const dbs: TestDatabase[] = [];
		catchupSuite(
			{
				database: async () => {
					const db = await createTestDatabase();
					dbs.push(db);
					return db.url;
				},
				cleanup: async () => {
					await Promise.all(dbs.map((db) => db.drop()));
				},
			},
			profile,
		);
	});
}
