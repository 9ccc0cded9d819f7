// The console's Statement page in a real browser (Debian's Chromium driven by playwright-core): a
// relay on a real socket reading the real sandbox over HTTP. The operator logs in, opens the
// page (its day chosen in the form), sees a day that ties out and a payment n8n never got, and
// downloads the day's movements as CSV through the page's link.
import { existsSync, readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dateIn } from '../../nodes/shared/dates.ts';
import { start } from '../../relay/src/server.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import { startSandbox } from '../../sandbox/src/index.ts';
import type { RunningSandbox } from '../../sandbox/src/index.ts';
import { waitFor } from '../../scripts/harness/wait.ts';
import { ADMIN_TOKEN, Target, baseEnv, tempDir } from './helpers.ts';
import { CHROMIUM, describeWithBrowser } from '../helpers/browser.ts';
import { sandboxMerchant } from './sandbox-merchant.ts';

const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'];
// The sandbox's `live` profile writes its times in UTC: the statement's days are UTC days.
const ZONE = 'UTC';

const tmp = tempDir();
const target = new Target();
let sandbox: RunningSandbox;
let relay: RunningRelay;
let browser: Browser;
let page: Page;
/** The relay's clock: the snapshot 2 s early, the statement 2 s late (the service's times are whole seconds). */
const clock = { offsetMs: -2_000 };

describeWithBrowser("the console's Statement page in headless Chromium", () => {
	beforeAll(async () => {
		expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`).toBe(true);
		await target.listen();
		sandbox = await startSandbox({ port: 0, timeFactor: 0.001, liveExtras: true });
		browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
		page = await (await browser.newContext({ acceptDownloads: true })).newPage();
	});
	afterAll(async () => {
		await browser?.close();
		await relay?.close();
		await sandbox?.close();
		await target.close();
		tmp.cleanup();
	});

	it('shows a chosen day that ties out, the payment n8n never got, and downloads the CSV', async () => {
		// The refund API on: refund/search is read to its end (off, the statement could not tie out).
		const m = await sandboxMerchant(sandbox.url, 'live', { refunds: true });
		relay = await start(
			baseEnv(
				tmp.dir,
				{ payment: [target.url('/n8n')] },
				{
					PAYPALYCH_API_TOKEN: m.token,
					PAYPALYCH_API_BASE_URL: sandbox.url,
					RELAY_CATCHUP_INTERVAL_S: '0',
					RELAY_STATEMENT_CHECK_S: '3600',
					RELAY_STATEMENT_TIME_ZONE: ZONE,
					LOG_LEVEL: 'silent',
				},
			),
			{ deps: { statementNow: () => Date.now() + clock.offsetMs } },
		);
		const today = dateIn(ZONE);
		await waitFor('the first balance snapshot', async () => {
			const res = await fetch(`${relay.url}/admin/statement?day=${today}`, {
				headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
			});
			return res.status === 200;
		});
		clock.offsetMs = 2_000;
		const lost = await m.pay((await m.bill('80.00')).billId);

		await page.goto(`${relay.url}/admin/console/statement`);
		await page.fill('input[name=token]', ADMIN_TOKEN);
		await page.click('button[type=submit]');
		await page.waitForURL(/\/admin\/console\/statement/);
		await expect.poll(() => page.locator('h1').textContent()).toBe('Statement');
		await page.fill('input[name=day]', today);
		await page.click('form.filters button[type=submit]');
		await page.waitForURL(`${relay.url}/admin/console/statement?day=${today}`);
		const rub = page.locator('section.statement-currency', { hasText: 'RUB' });
		expect(await rub.locator('[data-unexplained]').getAttribute('data-unexplained')).toBe('0');
		expect(await page.locator('table.not-delivered').textContent()).toContain(lost.paymentId);

		const [download] = await Promise.all([
			page.waitForEvent('download'),
			page.click('a:has-text("Movements as CSV")'),
		]);
		expect(download.suggestedFilename()).toBe(`statement-${today}.csv`);
		const csv = readFileSync((await download.path()) as string, 'utf8');
		expect(csv.split('\r\n')[0]).toMatch(/^kind,id,createdAt,status,currency,amount/);
		expect(csv).toContain(`payment,${lost.paymentId},`);
	}, 120_000); // a sandbox day, a relay's statement and a browser: minutes on a loaded 2-core machine
});
