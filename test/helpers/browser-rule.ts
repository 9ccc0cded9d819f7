// When the browser tests (the relay console's, the n8n editor's) run: always where Chromium is;
// where it is missing, `npm test` skips them with one loud line naming the command that enables
// them, unless CI (CI=true, or PAYPALYCH_REQUIRE_BROWSER=1, which .ci/run sets) requires them:
// then they fail, never skip.
import { existsSync } from 'node:fs';

/** Debian's Chromium, which playwright-core drives (PAYPALYCH_CHROMIUM names another). */
export const CHROMIUM = process.env.PAYPALYCH_CHROMIUM || '/usr/bin/chromium';
export const INSTALL_CHROMIUM = 'apt-get install -y chromium';
export const REQUIRE_BROWSER_ENV = 'PAYPALYCH_REQUIRE_BROWSER';

export type BrowserVerdict = 'run' | 'skip' | 'missing';

/** Whether this run must have the browser tests. */
export function browserRequired(env: NodeJS.ProcessEnv): boolean {
	const on = (value: string | undefined) => value !== undefined && /^(1|true|yes)$/i.test(value);
	return on(env.CI) || on(env[REQUIRE_BROWSER_ENV]);
}

/** run: Chromium is there; skip: it is not and nothing requires it; missing: required, absent. */
export function browserVerdict(env: NodeJS.ProcessEnv, hasChromium: boolean): BrowserVerdict {
	if (hasChromium) return 'run';
	return browserRequired(env) ? 'missing' : 'skip';
}

/** The verdict on this machine. */
export const browserVerdictHere = (): BrowserVerdict =>
	browserVerdict(process.env, existsSync(CHROMIUM));

/** The one line a run without Chromium prints. */
export const SKIP_LINE = `SKIPPED: the browser tests (*.browser.test.ts: the relay console) need Chromium at ${CHROMIUM}; to run them: ${INSTALL_CHROMIUM}`;

/** Why a run that requires the browser tests fails without Chromium. */
export const MISSING_LINE = `${CHROMIUM} is missing and this run requires the browser tests (CI or ${REQUIRE_BROWSER_ENV}=1): ${INSTALL_CHROMIUM}`;
