import { mergeConfig } from 'vitest/config';
import base from './vitest.config.mts';

/**
 * `npm run test:unit`: the suites that need no service (no PostgreSQL server, no browser), as the
 * publish workflow runs them. Everything else runs in `npm test`. test/unit/release.test.ts checks
 * that every suite using PostgreSQL or a browser is listed here.
 */
export const SERVICE_SUITES = [
	'test/relay/attacks/admin.test.ts',
	'test/relay/attacks/fifth-round-backup.test.ts',
	'test/relay/attacks/fifth-round.test.ts',
	'test/relay/attacks/forgery.test.ts',
	'test/relay/attacks/hostile-data.test.ts',
	'test/relay/attacks/limits.test.ts',
	'test/relay/attacks/network.test.ts',
	'test/relay/attacks/operator-lockout.test.ts',
	'test/relay/catchup-baseline.test.ts',
	'test/relay/catchup-deep.test.ts',
	'test/relay/catchup.test.ts',
	'test/relay/catchup-shapes.test.ts',
	'test/relay/catchup-window.test.ts',
	'test/relay/store-money-back-keys.test.ts',
	'test/relay/money-back.test.ts',
	'test/relay/console.browser.test.ts',
	'test/relay/console.test.ts',
	'test/relay/crash.test.ts',
	'test/relay/attacks/lookup-allowance.test.ts',
	'test/relay/network-faults.test.ts',
	'test/relay/operations.test.ts',
	'test/relay/ops.test.ts',
	'test/relay/postgres.test.ts',
	'test/relay/store-move.test.ts',
	'test/relay/store-indexes.test.ts',
	'test/relay/store-plans.test.ts',
	'test/relay/store.test.ts',
	'test/relay/statement.browser.test.ts',
	'test/relay/statement.test.ts',
	'test/relay/stores-parity.test.ts',
	'test/relay/trsid-bill.test.ts',
	'test/relay/attacks/trsid-canonical.test.ts',
	// Runs the console's browser test file (with no Chromium) to check the skip rule.
	'test/unit/browser-rule.test.ts',
];

export default mergeConfig(base, {
	test: { exclude: SERVICE_SUITES },
});
