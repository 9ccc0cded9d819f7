// `npm test` on a machine without Chromium: the browser tests are skipped with one line saying
// how to run them, unless the run requires them (CI), where they fail instead of skipping.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
	INSTALL_CHROMIUM,
	MISSING_LINE,
	SKIP_LINE,
	browserVerdict,
} from '../helpers/browser-rule.ts';

const ROOT = join(__dirname, '..', '..');

describe('the rule', () => {
	it('runs where Chromium is, skips where it is not, fails where CI requires it', () => {
		expect(browserVerdict({}, true)).toBe('run');
		expect(browserVerdict({ CI: 'true' }, true)).toBe('run');
		expect(browserVerdict({}, false)).toBe('skip');
		expect(browserVerdict({ CI: 'false' }, false)).toBe('skip');
		expect(browserVerdict({ CI: 'true' }, false)).toBe('missing');
		expect(browserVerdict({ CI: '1' }, false)).toBe('missing');
		expect(browserVerdict({ PAYPALYCH_REQUIRE_BROWSER: '1' }, false)).toBe('missing');
		expect(SKIP_LINE).toContain(INSTALL_CHROMIUM);
		expect(MISSING_LINE).toContain(INSTALL_CHROMIUM);
	});

	it('every browser test follows it, and .ci/run requires the browser tests', () => {
		const browserTests = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
			.filter((f) => f.endsWith('.browser.test.ts'))
			.map((f) => join(ROOT, 'test', f));
		expect(browserTests.length).toBeGreaterThan(0);
		for (const file of [...browserTests, join(ROOT, 'test/e2e/editor.test.ts')]) {
			const text = readFileSync(file, 'utf8');
			expect(text, file).toContain('describeWithBrowser(');
			expect(text, file).not.toMatch(/'\/usr\/bin\/chromium'/);
		}
		expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(
			/export PAYPALYCH_REQUIRE_BROWSER=1/,
		);
	});
});

describe('a run of the console browser test without Chromium', () => {
	const run = (env: Record<string, string>) => {
		const clean = Object.fromEntries(
			Object.entries(process.env).filter(([k]) => k !== 'CI' && k !== 'PAYPALYCH_REQUIRE_BROWSER'),
		);
		const result = spawnSync(
			process.execPath,
			[join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', 'test/relay/console.browser.test.ts'],
			{
				cwd: ROOT,
				env: { ...clean, PAYPALYCH_CHROMIUM: '/nonexistent/chromium', ...env },
				encoding: 'utf8',
				timeout: 120_000,
			},
		);
		return { status: result.status, output: `${result.stdout}${result.stderr}` };
	};

	it('passes with the tests skipped and one line naming the install command', () => {
		const { status, output } = run({});
		expect(status, output).toBe(0);
		// SKIP_LINE names the Chromium of this process; the child's is /nonexistent/chromium.
		const line = SKIP_LINE.replace(/at \S+;/, 'at /nonexistent/chromium;');
		expect(output.split(line).length - 1).toBe(1);
		expect(output).toMatch(/skipped/i);
	});

	it('fails, never skips, where the run requires the browser tests', () => {
		const required: Array<Record<string, string>> = [
			{ CI: 'true' },
			{ PAYPALYCH_REQUIRE_BROWSER: '1' },
		];
		for (const env of required) {
			const { status, output } = run(env);
			expect(status, output).not.toBe(0);
			expect(output).toContain('/nonexistent/chromium is missing and this run requires');
			expect(output).toContain(INSTALL_CHROMIUM);
			expect(output).not.toContain('SKIPPED');
		}
	});
});
