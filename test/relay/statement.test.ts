// The relay's daily statement (statement-suite.ts) on both stores (a SQLite file, a PostgreSQL
// database of its own, dropped afterwards) and both sandbox profiles (`live`, `spec`).
import { onEveryStore } from './fresh-store.ts';
import { statementSuite } from './statement-suite.ts';

for (const profile of ['live', 'spec'] as const)
	onEveryStore(`statement, ${profile} profile`, (store) => statementSuite(store, profile));
