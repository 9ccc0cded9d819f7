import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../sandbox/src/index.ts';
import type { RunningSandbox } from '../../sandbox/src/index.ts';
import { start } from '../../relay/src/server.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import { TOKEN, Target, baseEnv, md5, tempDir } from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

// The sandbox implements the service on its own (the test oracle): its postbacks must pass the
// relay's verification and reach the target unchanged, even while the target is failing.
describe('relay behind the sandbox service', () => {
	const tmp = tempDir();
	const target = new Target();
	let sandbox: RunningSandbox;
	let relay: RunningRelay;

	const api = (path: string, form: Record<string, string>) =>
		fetch(`${sandbox.url}/api/v1${path}`, {
			method: 'POST',
			headers: {
				authorization: `Bearer ${sandbox.token}`,
				'content-type': 'application/x-www-form-urlencoded',
			},
			body: new URLSearchParams(form).toString(),
		}).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
	const control = (method: string, path: string, body?: unknown) =>
		fetch(`${sandbox.url}/_sandbox${path}`, {
			method,
			headers: body === undefined ? {} : { 'content-type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		}).then(async (r) => (await r.json()) as Record<string, unknown>);

	beforeAll(async () => {
		await target.listen();
		sandbox = await startSandbox({ port: 0, token: TOKEN, timeFactor: 0.001 });
		relay = await start(
			baseEnv(
				tmp.dir,
				{ payment: [target.url('/n8n/payment')], payout: [target.url('/n8n/payout')] },
				{ PAYPALYCH_API_TOKEN: TOKEN, LOG_LEVEL: 'silent' },
			),
		);
		await control('PATCH', `/shops/${sandbox.shopId}`, {
			resultUrl: `${relay.url}/postback/payment`,
		});
		await control('PATCH', `/merchants/${sandbox.merchantId}`, {
			payoutWebhookUrl: `${relay.url}/postback/payout`,
		});
	});

	afterAll(async () => {
		await relay?.close();
		await sandbox?.close();
		await target.close();
		tmp.cleanup();
	});

	it('acknowledges a paid bill at once and delivers it once n8n answers', async () => {
		// n8n is failing for the first two attempts.
		target.responder = (_req, nth) => (nth <= 2 ? { status: 503 } : { status: 200 });
		const bill = await api('/bill/create', {
			amount: '150.00',
			shop_id: sandbox.shopId,
			order_id: 'relay-order-1',
		});
		expect(bill.status).toBe(200);
		const paid = await control('POST', `/bills/${String(bill.body.bill_id)}/pay`, {
			outcome: 'full',
		});
		const trsId = String((paid.payment as { id: string }).id);

		const got = await waitFor('delivery', () =>
			target.received.find(
				(r) => r.path === '/n8n/payment' && r.headers['x-paypalych-delivery-attempt'] === '3',
			),
		);
		const fields = Object.fromEntries(new URLSearchParams(got.body));
		expect(fields.TrsId).toBe(trsId);
		expect(fields.InvId).toBe('relay-order-1');
		expect(fields.SignatureValue).toBe(md5(`${fields.OutSum}:${fields.InvId}:${TOKEN}`));

		// The service saw one attempt, answered 200: its five retries were never needed.
		const deliveries = (await control(
			'GET',
			`/deliveries?kind=payment&trsId=${encodeURIComponent(trsId)}`,
		)) as { data: Array<{ status: number }> };
		expect(deliveries.data.map((d) => d.status)).toEqual([200]);
	});

	it('relays a payout postback', async () => {
		target.responder = () => ({ status: 200 });
		const created = await api('/payout/personal/create', {
			amount: '100.00',
			payout_account_id: sandbox.payoutAccountId,
			order_id: 'relay-payout-1',
		});
		expect(created.status).toBe(200);
		const payoutId = String((created.body.data as Array<{ id: string }>)[0].id);
		await control('POST', `/payouts/${payoutId}/advance`, { status: 'SUCCESS' });
		const got = await waitFor('payout delivery', () =>
			target.received.find(
				(r) => r.path === '/n8n/payout' && r.body.includes(encodeURIComponent(payoutId)),
			),
		);
		const fields = Object.fromEntries(new URLSearchParams(got.body));
		expect(fields.Status).toBe('SUCCESS');
		expect(fields.SignatureValue).toBe(md5(`${fields.Amount}:${fields.TrsId}:${TOKEN}`));
	});
});
