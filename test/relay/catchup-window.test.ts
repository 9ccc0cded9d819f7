// The catch-up's reach (catchup-window-suite.ts) on both stores (a SQLite file, a PostgreSQL
// database of its own, dropped afterwards) and both sandbox profiles (`live`, `spec`).
import { catchupWindowSuite } from './catchup-window-suite.ts';
import { onEveryStore } from './fresh-store.ts';

for (const profile of ['live', 'spec'] as const)
	onEveryStore(`catch-up window, ${profile} profile`, (store) =>
		catchupWindowSuite(store, profile),
	);
