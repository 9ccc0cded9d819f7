// A describe for browser tests that follows the rule of browser-rule.ts: it runs where Chromium
// is; where it is not, it is skipped and the run prints one line (the first skipped file of the
// run prints it: vitest's workers share the parent process id); where the run requires the
// browser tests, it fails with the install command.
import { openSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { MISSING_LINE, SKIP_LINE, browserVerdictHere } from './browser-rule.ts';

export { CHROMIUM } from './browser-rule.ts';

/** True for the first caller of this run only. */
function firstOfRun(): boolean {
	try {
		closeSync(openSync(join(tmpdir(), `paypalych-browser-skip-${process.ppid}`), 'wx'));
		return true;
	} catch {
		return false;
	}
}

export function describeWithBrowser(name: string, suite: () => void): void {
	const verdict = browserVerdictHere();
	if (verdict === 'missing') {
		describe(name, () => {
			it('has Chromium', () => {
				throw new Error(MISSING_LINE);
			});
		});
		return;
	}
	if (verdict === 'skip' && firstOfRun()) console.warn(`\n!!!!!!!! ${SKIP_LINE}\n`);
	describe.skipIf(verdict === 'skip')(name, suite);
}
