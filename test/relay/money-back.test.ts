// Refund and chargeback postbacks through the relay (money-back-suite.ts) on both stores (a SQLite
// file and a PostgreSQL database of its own, dropped afterwards) and both sandbox profiles.
import { moneyBackSuite } from './money-back-suite.ts';
import { onEveryStore } from './fresh-store.ts';

for (const profile of ['live', 'spec'] as const)
	onEveryStore(`refunds and chargebacks, ${profile} profile`, (store) =>
		moneyBackSuite(store, profile),
	);
