// The catch-up's baseline (catchup-baseline-suite.ts) on both stores (a SQLite file and a
// PostgreSQL database of its own, dropped afterwards) and both sandbox profiles (`live`, `spec`).
import { catchupBaselineSuite } from './catchup-baseline-suite.ts';
import { onEveryStore } from './fresh-store.ts';

for (const profile of ['live', 'spec'] as const)
	onEveryStore(`catch-up baseline, ${profile} profile`, (store) =>
		catchupBaselineSuite(store, profile),
	);
