// The relay console in a real browser: Debian's Chromium driven by playwright-core, a relay
// listening on a real socket with its SQLite file and forwarder, and local webhook targets.
// Screenshots of every page (desktop and phone) go to $CONSOLE_SCREENSHOTS_DIR, or to a
// temporary folder when it is unset (`docs/console/` holds the committed ones; see docs/operator/admin.md).
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { start } from '../../relay/src/server.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import {
	ADMIN_TOKEN,
	LogSink,
	Target,
	baseEnv,
	form,
	freePort,
	paymentFields,
	payoutFields,
	tempDir,
} from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';
import { CHROMIUM, describeWithBrowser } from '../helpers/browser.ts';

/** Flags for headless Chromium in a container without a GPU or a user namespace, plus a name for the forger's site. */
const ARGS = [
	'--no-sandbox',
	'--disable-gpu',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
	'--no-first-run',
	'--host-resolver-rules=MAP forger.test 127.0.0.1',
];
const DESKTOP = { viewport: { width: 1280, height: 800 } };
const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const FORM = 'application/x-www-form-urlencoded';

interface AdminDelivery {
	id: number;
	eventId: string;
	target: string;
	status: string;
}

describeWithBrowser('relay console in headless Chromium', () => {
	const tmp = tempDir();
	const shots = resolve(process.env.CONSOLE_SCREENSHOTS_DIR || join(tmp.dir, 'screenshots'));
	const sink = new LogSink();
	const payments = new Target();
	const payouts = new Target();
	let relay: RunningRelay;
	let browser: Browser;
	let desktop: BrowserContext;
	let page: Page;
	let forger: Server;
	const dialogs: string[] = [];

	const admin = async <T>(path: string): Promise<T> => {
		const res = await fetch(`${relay.url}${path}`, {
			headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
		});
		expect(res.status).toBe(200);
		return ((await res.json()) as { data: T }).data;
	};
	const postback = (path: string, fields: Record<string, string>) =>
		fetch(`${relay.url}${path}`, {
			method: 'POST',
			body: form(fields),
			headers: { 'content-type': FORM },
		});
	const shot = async (p: Page, name: string) => {
		const file = join(shots, `${name}.png`);
		await p.screenshot({ path: file, fullPage: true });
		expect(statSync(file).size).toBeGreaterThan(5_000);
	};

	beforeAll(async () => {
		expect(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium`).toBe(true);
		mkdirSync(shots, { recursive: true });
		// Payments go to a trigger that refuses them for good (410: dead at once) until it is fixed,
		// and to one that is down (retried); payouts to one that accepts them.
		payments.responder = () => ({ status: 410, receipt: null, body: 'Gone' });
		await payments.listen();
		await payouts.listen();
		const down = `http://127.0.0.1:${await freePort()}/webhook/down`;
		relay = await start(
			baseEnv(
				tmp.dir,
				{ payment: [payments.url('/webhook/pay'), down], payout: [payouts.url('/webhook/payout')] },
				{ RELAY_BASE_DELAY_MS: '2000', RELAY_MAX_DELAY_MS: '10000' },
			),
			{ deps: { logStream: sink } },
		);
		for (let i = 1; i <= 3; i++)
			expect((await postback('/postback/payout', payoutFields(`P-${i}`))).status).toBe(200);
		expect((await postback('/postback/payment', paymentFields('T-browser-1'))).status).toBe(200);
		const xss = {
			...paymentFields('T-browser-xss', { invId: '"><img src=x onerror=alert(1)>' }),
			custom: '<script>alert("custom")</script>',
		};
		expect((await postback('/postback/payment', xss)).status).toBe(200);
		await waitFor(
			'two dead payment deliveries',
			async () => (await admin<AdminDelivery[]>('/admin/dead')).length === 2,
		);
		await waitFor(
			'three delivered payouts',
			async () => (await admin<AdminDelivery[]>('/admin/deliveries?status=delivered')).length === 3,
		);

		// A page on another site that posts to the console: without the SameSite=Strict cookie and the CSRF token.
		forger = createServer((_req, res) => {
			res.writeHead(200, { 'content-type': 'text/html' });
			res.end(`<form id="f" method="post" action="${relay.url}/admin/console/dead/requeue-target">
				<input name="target" value="${payments.url('/webhook/pay')}"><input name="_csrf" value="guessed"></form>
				<script>document.getElementById('f').submit()</script>`);
		});
		await new Promise<void>((r) => forger.listen(0, '127.0.0.1', () => r()));

		browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
		desktop = await browser.newContext(DESKTOP);
		page = await desktop.newPage();
		page.on('dialog', (d) => {
			dialogs.push(d.message());
			void d.dismiss();
		});
	});

	afterAll(async () => {
		await browser?.close();
		await new Promise<void>((r) => (forger ? forger.close(() => r()) : r()));
		await relay?.close();
		await payments.close();
		await payouts.close();
		tmp.cleanup();
	});

	it('refuses a wrong token, then logs in with the right one', async () => {
		await page.goto(`${relay.url}/admin/console`);
		expect(new URL(page.url()).pathname).toBe('/admin/login');
		await shot(page, 'login-desktop');
		await page.fill('input[name=token]', 'this-is-not-the-admin-token');
		await page.click('button[type=submit]');
		await expect
			.poll(() => page.locator('[role=alert]').textContent())
			.toContain('Wrong admin token.');
		expect(new URL(page.url()).pathname).toBe('/admin/login');
		expect((await desktop.cookies()).map((c) => c.name)).not.toContain('relay_console');

		await page.fill('input[name=token]', ADMIN_TOKEN);
		await page.click('button[type=submit]');
		await page.waitForURL(`${relay.url}/admin/console`);
		const session = (await desktop.cookies()).find((c) => c.name === 'relay_console');
		expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/admin' });
		expect(session?.value).not.toContain(ADMIN_TOKEN);
		await expect.poll(() => page.locator('h1').textContent()).toBe('Overview');
		expect(await page.locator('.chart').count()).toBeGreaterThanOrEqual(4);
		await shot(page, 'overview-desktop');
	});

	it('shows the dead delivery, which a forged cross-site form cannot requeue', async () => {
		await page.goto(`${relay.url}/admin/console/dead`);
		const row = page.locator('tr', { hasText: 'HTTP 410' });
		await expect.poll(() => row.count()).toBe(2);
		await shot(page, 'dead-letters-desktop');

		const forged = await desktop.newPage();
		const answer = forged.waitForResponse((r) =>
			r.url().endsWith('/admin/console/dead/requeue-target'),
		);
		await forged.goto(`http://forger.test:${(forger.address() as AddressInfo).port}/`);
		expect((await answer).status()).toBe(401);
		await forged.close();
		expect((await admin<AdminDelivery[]>('/admin/dead')).length).toBe(2);
	});

	it('refuses an action whose CSRF token is missing, and changes nothing', async () => {
		await page.goto(`${relay.url}/admin/console/dead`);
		const form = page
			.locator('form', { has: page.locator('button', { hasText: 'Requeue' }) })
			.first();
		await form.locator('input[name=_csrf]').evaluate((input) => input.remove());
		await form.locator('button').click();
		await expect
			.poll(() => page.locator('[role=alert]').textContent())
			.toContain('missing its CSRF token');
		expect(await page.locator('[role=alert]').textContent()).toContain('Nothing was changed.');
		expect((await admin<AdminDelivery[]>('/admin/dead')).length).toBe(2);
	});

	it('requeues a dead delivery once its target is fixed, and shows it become delivered', async () => {
		payments.responder = () => ({ status: 200 });
		const [dead] = await admin<AdminDelivery[]>('/admin/dead');
		await page.goto(`${relay.url}/admin/console/events/${dead.eventId}`);
		const card = page.locator(`#delivery-${dead.id}`);
		expect(await card.locator('.badge').first().textContent()).toBe('dead');
		await card.locator('button', { hasText: `Requeue delivery ${dead.id}` }).click();
		await expect
			.poll(() => page.locator('[role=status]').textContent())
			.toContain('Requeued 1 dead delivery');
		// The page reloads itself while a delivery is pending: no click needed to see it land.
		await expect
			.poll(() => page.locator(`#delivery-${dead.id} .badge`).first().textContent(), {
				timeout: 20_000,
				interval: 250,
			})
			.toBe('delivered');
		// Both attempts stay in its history: refused for good, then delivered.
		const attempts = page.locator(`#delivery-${dead.id} tbody tr`);
		expect(await attempts.count()).toBe(2);
		expect(await attempts.nth(0).textContent()).toContain('410');
		expect(await attempts.nth(0).locator('.badge').textContent()).toBe('dead');
		expect(await attempts.nth(1).locator('.badge').textContent()).toBe('delivered');
		await shot(page, 'event-desktop');
		expect(
			payments.received.filter((r) => r.headers['x-paypalych-event-id'] === dead.eventId).length,
		).toBeGreaterThanOrEqual(2);
	});

	it('lists events with their fields as text, and filters them', async () => {
		await page.goto(`${relay.url}/admin/console/events`);
		await expect.poll(() => page.locator('tbody tr').count()).toBe(5);
		expect(await page.locator('tbody').textContent()).toContain('"><img src=x onerror=alert(1)>');
		await page.selectOption('select[name=kind]', 'payout');
		await page.click('button:has-text("Filter")');
		await expect.poll(() => page.locator('tbody tr').count()).toBe(3);
		await page.goto(`${relay.url}/admin/console/events`);
		await shot(page, 'events-desktop');
		const xss = page.locator('tr', { hasText: 'onerror' }).locator('a').first();
		await xss.click();
		await expect
			.poll(() =>
				page.locator('.card', { has: page.locator('h2', { hasText: 'Fields' }) }).textContent(),
			)
			.toContain('<script>alert("custom")</script>');
		expect(await page.content()).not.toContain('SignatureValue');
		expect(dialogs).toEqual([]);
	});

	it('confirms a replay with the number of deliveries before making them', async () => {
		await page.goto(`${relay.url}/admin/console/dead`);
		await page.selectOption('select[name=target]', payments.url('/webhook/pay'));
		await page.click('button:has-text("Count deliveries")');
		await expect
			.poll(() => page.locator('#replay-count').textContent())
			.toBe('This makes 2 new deliveries.');
		await shot(page, 'replay-confirm-desktop');
		const before = payments.received.length;
		await page.click('button:has-text("Make 2 deliveries")');
		await expect
			.poll(() => page.locator('[role=status]').textContent())
			.toContain('Replayed 2 events: 2 new deliveries.');
		await waitFor('replayed deliveries', () => payments.received.length >= before + 2);
	});

	it('fits a phone screen', async () => {
		const phone = await browser.newContext(PHONE);
		await phone.addCookies((await desktop.cookies()).filter((c) => c.name === 'relay_console'));
		const p = await phone.newPage();
		const [anEvent] = await admin<Array<{ id: string }>>('/admin/events?kind=payment&limit=1');
		for (const [name, path] of [
			['overview', '/admin/console'],
			['events', '/admin/console/events'],
			['event', `/admin/console/events/${anEvent.id}`],
			['dead-letters', '/admin/console/dead'],
			[
				'replay-confirm',
				`/admin/console/replay?from=${Date.now() - 86_400_000}&to=${Date.now()}&target=*`,
			],
		] as const) {
			await p.goto(`${relay.url}${path}`);
			expect(`${new URL(p.url()).pathname}${new URL(p.url()).search}`, name).toBe(path);
			// Nothing wider than the screen except inside the scrolling table boxes.
			const overflow = Number(
				await p.evaluate(
					'document.documentElement.scrollWidth - document.documentElement.clientWidth',
				),
			);
			expect(overflow, name).toBeLessThanOrEqual(0);
			await shot(p, `${name}-phone`);
		}
		await p.goto(`${relay.url}/admin/login`);
		await phone.clearCookies();
		await p.goto(`${relay.url}/admin/login`);
		await shot(p, 'login-phone');
		await phone.close();
	});
});
