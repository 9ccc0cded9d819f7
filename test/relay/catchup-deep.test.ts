// The deep catch-up suite (catchup-deep-suite.ts) on both stores (a SQLite file, a PostgreSQL
// database of its own, dropped afterwards) and both sandbox profiles (`live`, `spec`).
import { catchupDeepSuite } from './catchup-deep-suite.ts';
import { onEveryStore } from './fresh-store.ts';

for (const profile of ['live', 'spec'] as const)
	onEveryStore(`deep catch-up, ${profile} profile`, (store) => catchupDeepSuite(store, profile));
