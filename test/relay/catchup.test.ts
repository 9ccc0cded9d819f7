// The catch-up suite (catchup-suite.ts) on both stores (a SQLite file and a PostgreSQL database
// of its own, dropped afterwards) and both sandbox profiles (`live`, `spec`).
import { catchupSuite } from './catchup-suite.ts';
import { onEveryStore } from './fresh-store.ts';

for (const profile of ['live', 'spec'] as const)
	onEveryStore(`catch-up, ${profile} profile`, (store) => catchupSuite(store, profile));
