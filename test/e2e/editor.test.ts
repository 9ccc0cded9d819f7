/**
 * What a merchant meets in the real n8n editor (the n8n N8N_VERSION names, 2.41.1 by default),
 * in headless Chromium driven by playwright-core, logged in as the owner:
 * - the trigger panel of a PayPalych Trigger says which URL goes into which field of the shop
 *   settings, and on n8n 2.x never names 1.x's "Listen for test event" button;
 * - the nodes panel lists the trigger's events by their names ("On payment reported", ...);
 * - Bill › Create shows Order ID without opening Additional Fields.
 * Screenshots go to $EDITOR_SCREENSHOTS_DIR, or to a temporary folder when it is unset
 * (`EDITOR_SCREENSHOTS_DIR=docs/merchant` refreshes the committed ones; docs/merchant/trigger.md).
 */
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { N8N_VERSION, TRIGGER_TYPE, n8nMajor } from '../../scripts/harness/n8n-install.ts';
import { N8n, NODE_TYPE, type WorkflowJson } from '../../scripts/harness/n8n.ts';
import { ownerFor } from '../../scripts/harness/suite.ts';
import { CHROMIUM, describeWithBrowser } from '../helpers/browser.ts';

const WORKFLOW = 'ppEditorLook';
const CREDENTIAL = { id: 'ppEditorCred0001', name: 'PayPalych sandbox' };
const NODES = { trigger: 'edTrigger0000001', bill: 'edBillCreate0001' } as const;
const owner = ownerFor('Editor');
const TIMEOUT = 60_000;

function editorWorkflow(): WorkflowJson {
	const credentials = { payPalychApi: CREDENTIAL };
	return {
		id: WORKFLOW,
		name: 'What a merchant sees',
		active: false,
		settings: { executionOrder: 'v1' },
		connections: {},
		nodes: [
			{
				id: NODES.trigger,
				name: 'PayPalych Trigger',
				type: TRIGGER_TYPE,
				typeVersion: 2,
				position: [0, 0],
				webhookId: '6a2d8b3f-1e2c-4d66-8b4f-8c2a1d3e0f21',
				parameters: {},
				credentials,
			},
			{
				id: NODES.bill,
				name: 'Create a bill',
				type: NODE_TYPE,
				typeVersion: 1,
				position: [320, 0],
				parameters: { resource: 'bill', operation: 'create' },
				credentials,
			},
		],
	} as WorkflowJson;
}

describeWithBrowser(`the n8n ${N8N_VERSION} editor`, () => {
	const userFolder = mkdtempSync(join(tmpdir(), 'paypalych-editor-'));
	const shots = resolve(process.env.EDITOR_SCREENSHOTS_DIR || join(userFolder, 'screenshots'));
	const n8n = new N8n({ userFolder });
	let browser: Browser;
	let page: Page;

	const shot = async (name: string) => {
		const file = join(shots, `${name}.png`);
		await page.screenshot({ path: file });
		expect(statSync(file).size).toBeGreaterThan(5_000);
	};

	/** Opens a node's details view, as a link to it does. */
	const openNode = async (nodeId: string) => {
		await page.goto(`${n8n.url}/workflow/${WORKFLOW}/${nodeId}`);
		await page.locator('[data-test-id="ndv"]').first().waitFor({ timeout: TIMEOUT });
	};

	beforeAll(async () => {
		mkdirSync(shots, { recursive: true });
		await n8n.prepare();
		await n8n.importCredentials([
			{
				...CREDENTIAL,
				type: 'payPalychApi',
				data: { apiToken: 'editor-token', baseUrl: 'http://127.0.0.1:9', shopId: '' },
			},
		]);
		await n8n.importWorkflows([editorWorkflow()]);
		await n8n.start();
		await n8n.ensureOwner(owner);
		browser = await chromium.launch({
			executablePath: CHROMIUM,
			args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
		});
		const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
		// The owner's session cookie, set in the browser as the login page would.
		const login = await context.request.post(`${n8n.url}/rest/login`, {
			data: { emailOrLdapLoginId: owner.email, password: owner.password },
		});
		expect(login.status()).toBe(200);
		page = await context.newPage();
		page.setDefaultTimeout(TIMEOUT);
	});

	afterAll(async () => {
		await browser?.close();
		await n8n.stop();
		rmSync(userFolder, { recursive: true, force: true });
	});

	it('the trigger panel says which URL goes into which shop field, in words of this n8n', async () => {
		await openNode(NODES.trigger);
		const ndv = page.locator('[data-test-id="ndv"]').first();
		await expect
			.poll(async () => await ndv.innerText(), { timeout: TIMEOUT })
			.toContain("Paste this node's URL into your PayPalych shop settings");
		const help = page.getByText('When will this node trigger my flow?');
		if ((await help.count()) > 0) await help.first().click();
		await expect
			.poll(async () => await ndv.innerText(), { timeout: TIMEOUT })
			.toContain('Result URL');
		const text = await ndv.innerText();
		expect(text).toContain('Test URL');
		expect(text).toContain('Production URL');
		// The default event's notice: the field the URL goes into, without bold lost in the orange.
		expect(text).toContain('Result URL field of your PayPalych shop settings');
		if (n8nMajor() >= 2) expect(text).not.toContain('Listen for test event');
		expect(text).not.toMatch(/URL above/i);
		await shot('editor-trigger-panel');
	});

	it("the nodes panel lists the trigger's events by their names, Payment first", async () => {
		await page.goto(`${n8n.url}/workflow/new`);
		await page.locator('[data-test-id="canvas-add-button"]').first().click();
		const search = page.locator(
			'[data-test-id="node-creator-search-bar"] input, input[placeholder*="Search"]',
		);
		await search.first().fill('PayPalych');
		await page.keyboard.press('Enter');
		const panel = page.locator('[data-test-id="node-creator"]').first();
		await expect
			.poll(async () => await panel.innerText(), { timeout: TIMEOUT })
			.toContain('On payment reported');
		const text = await panel.innerText();
		const names = [
			'On payment reported',
			'On refund reported',
			'On chargeback reported',
			'On payout reported',
			'On customer returned after paying',
			'On customer returned after a failed payment',
		];
		const at = names.map((name) => text.indexOf(name));
		expect(
			at.every((i) => i >= 0),
			text,
		).toBe(true);
		expect([...at].sort((a, b) => a - b)).toEqual(at);
		expect(text).not.toMatch(/postback result url|postback chargeback url/i);
		await shot('editor-trigger-events');
	});

	it('Bill › Create shows Order ID without opening Additional Fields', async () => {
		await openNode(NODES.bill);
		const parameters = page.locator('[data-test-id="node-parameters"]').first();
		await parameters.waitFor();
		await shot('editor-bill-create');
		const labels = await parameters
			.locator('label, [data-test-id="parameter-input-label"]')
			.allInnerTexts();
		// A label's text may carry the field's hint or a line of its own after the name.
		const names = labels.map((l) => l.trim().split('\n')[0]?.trim());
		expect(names, JSON.stringify(labels)).toContain('Order ID');
	});
});
