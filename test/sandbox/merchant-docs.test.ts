// docs/merchant/sandbox.md followed as a merchant would: the sandbox started as `npm run sandbox`
// starts it, then every shell block of the page run as written, with the values the page asks the
// reader to copy (the printed line, the trigger's Production URLs, the bill id) filled in. A local
// listener stands in for the merchant's n8n.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listener, md5 } from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Listener = Awaited<ReturnType<typeof listener>>;

const PAGE = readFileSync('docs/merchant/sandbox.md', 'utf8');
const BLOCKS = [...PAGE.matchAll(/```bash\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');

/** The variables the page asks the reader to set by hand (lines `NAME=value`). */
const ASSIGNMENT = /^([A-Z_]+)=.*$/;

let child: ChildProcess;
let n8n: Listener;
let printed: {
	url: string;
	token: string;
	shopId: string;
	merchantId: string;
	payoutAccountId: string;
};
const values: Record<string, string> = {};

beforeAll(async () => {
	n8n = await listener();
	// What `npm run sandbox` runs (package.json), on a free port and with short retries.
	const scripts = (
		JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }
	).scripts;
	expect(scripts['sandbox']).toBe('node sandbox/src/bin.ts');
	const env = { ...process.env };
	for (const name of Object.keys(env)) if (name.startsWith('SANDBOX_')) delete env[name];
	child = spawn(process.execPath, ['sandbox/src/bin.ts', '--port', '0', '--time-factor', '0.001'], {
		stdio: ['ignore', 'pipe', 'pipe'],
		env,
	});
	const line = await new Promise<string>((resolve, reject) => {
		createInterface({ input: child.stdout! }).once('line', resolve);
		child.once('exit', (code) => reject(new Error(`sandbox exited with ${code}`)));
	});
	printed = JSON.parse(line);
	Object.assign(values, {
		SB: printed.url,
		TOKEN: printed.token,
		SHOP: printed.shopId,
		MERCHANT: printed.merchantId,
		WEBHOOK_URL: `${n8n.url}/webhook/abc/payment`,
		PAYOUT_WEBHOOK_URL: `${n8n.url}/webhook/abc/payout`,
	});
});
afterAll(async () => {
	if (child && child.exitCode === null) {
		child.kill('SIGTERM');
		await new Promise((resolve) => child.once('exit', resolve));
	}
	await n8n?.close();
});

/** Runs one block of the page with bash; the page's hand-set variables come from `values`. */
function run(block: string): string {
	const lines = block.split('\n');
	for (const line of lines) {
		const name = ASSIGNMENT.exec(line)?.[1];
		if (name !== undefined)
			expect(values, `the page asks the reader to set ${name}`).toHaveProperty(name);
	}
	const script = lines.filter((line) => !ASSIGNMENT.test(line)).join('\n');
	const result = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
		env: {
			PATH: process.env['PATH'] ?? '/usr/bin:/bin',
			HOME: process.env['HOME'] ?? '/tmp',
			...values,
		},
		encoding: 'utf8',
		timeout: 30_000,
	});
	expect(result.status, `${script}\n${result.stderr}`).toBe(0);
	return result.stdout;
}

const blockWith = (text: string) => {
	const found = BLOCKS.filter((block) => block.includes(text));
	expect(found, `one shell block of the page has ${text}`).toHaveLength(1);
	return found[0]!;
};

describe('docs/merchant/sandbox.md, followed step by step', () => {
	it('starts with npm run sandbox and names every value the reader copies', () => {
		expect(blockWith('npm run sandbox')).toContain('npm install');
		for (const name of ['SB', 'TOKEN', 'SHOP', 'MERCHANT'])
			expect(blockWith('MERCHANT=')).toMatch(new RegExp(`^${name}=`, 'm'));
		expect(blockWith('PAYOUT_WEBHOOK_URL=')).toMatch(/^WEBHOOK_URL=/m);
		expect(printed.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
	});

	it("sets the Result URL and the payout webhook; a bill paid on the default merchant reaches the merchant's n8n, signed, with its order_id confirmed by bill/status", async () => {
		const shop = JSON.parse(run(blockWith('resultUrl')).split('\n')[0] ?? '') as {
			resultUrl: string;
		};
		expect(shop.resultUrl).toBe(values['WEBHOOK_URL']);
		const merchant = await (
			await fetch(`${printed.url}/_sandbox/merchants/${printed.merchantId}`)
		).json();
		expect(merchant).toMatchObject({ payoutWebhookUrl: values['PAYOUT_WEBHOOK_URL'] });

		const created = JSON.parse(run(blockWith('bill/create'))) as {
			bill_id: string;
			link_page_url: string;
		};
		expect(created.link_page_url).toContain(created.bill_id);
		values['BILL'] = created.bill_id;
		const paid = JSON.parse(run(blockWith('/pay"'))) as { payment: { id: string; status: string } };
		expect(paid.payment.status).toBe('SUCCESS');

		const postback = await waitFor('the payment postback at n8n', () =>
			n8n.received.find((entry) => entry.path === '/webhook/abc/payment'),
		);
		expect(postback.fields).toMatchObject({
			InvId: 'rehearsal-1',
			OutSum: '100.00',
			TrsId: paid.payment.id,
			Status: 'SUCCESS',
		});
		expect(postback.fields['SignatureValue']).toBe(md5(`100.00:rehearsal-1:${printed.token}`));
		// The default merchant shows the bill's order_id, as the service's current reference does,
		// so the trigger's default Order Check can confirm InvId.
		const status = await (
			await fetch(`${printed.url}/api/v1/bill/status?id=${created.bill_id}`, {
				headers: { authorization: `Bearer ${printed.token}` },
			})
		).json();
		expect(status).toMatchObject({
			id: created.bill_id,
			status: 'SUCCESS',
			order_id: 'rehearsal-1',
		});

		// The payout webhook: a payout made through the API and ended posts there.
		const payout = (await (
			await fetch(`${printed.url}/api/v1/payout/personal/create`, {
				method: 'POST',
				headers: { authorization: `Bearer ${printed.token}` },
				body: new URLSearchParams({ amount: '50.00', payout_account_id: printed.payoutAccountId }),
			})
		).json()) as { data: Array<{ id: string }> };
		const payoutId = payout.data[0]!.id;
		const advanced = await fetch(`${printed.url}/_sandbox/payouts/${payoutId}/advance`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ status: 'SUCCESS' }),
		});
		expect(advanced.status).toBe(200);
		const payoutPostback = await waitFor('the payout postback at n8n', () =>
			n8n.received.find((entry) => entry.path === '/webhook/abc/payout'),
		);
		expect(payoutPostback.fields).toMatchObject({ TrsId: payoutId, Status: 'SUCCESS' });

		// Step 5: the delivery log shows both, with n8n's answer.
		const log = JSON.parse(run(blockWith('/_sandbox/deliveries'))) as {
			data: Array<{ url: string; status: number; delivered: boolean }>;
		};
		expect(log.data.map((entry) => [entry.url, entry.status, entry.delivered])).toEqual(
			expect.arrayContaining([
				[values['WEBHOOK_URL'], 200, true],
				[values['PAYOUT_WEBHOOK_URL'], 200, true],
			]),
		);
	});
});
