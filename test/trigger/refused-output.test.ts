/**
 * A refusal a merchant can see: with Output Refused Calls on, a signed call the service's record
 * contradicts starts an execution on the second output (Refused) with the reason, never on the
 * first; off (the default), nothing starts and the reason is in n8n's log only.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { PayPalychTrigger } from '../../dist/nodes/PayPalychTrigger/PayPalychTrigger.node.js';
import { resetProcessMemory } from '../../dist/nodes/PayPalychTrigger/memory.js';
import { startTrigger, postForm } from '../helpers/trigger-harness.ts';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';

const TOKEN = 'refused|token';
const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex').toUpperCase();
let server: Server;
let base = '';
const open: WebhookHarness[] = [];

beforeAll(async () => {
	// The service: every payment failed, and its bill's order is ord-1.
	server = createServer((req, res) => {
		const url = new URL(req.url ?? '/', 'http://local');
		res.setHeader('content-type', 'application/json');
		const id = url.searchParams.get('id');
		res.end(
			JSON.stringify(
				url.pathname === '/api/v1/payment/status'
					? { success: true, id, bill_id: 'B-1', status: 'FAIL', amount: 10, order_id: 'ord-1' }
					: { success: true, id, status: 'FAIL', amount: 10, order_id: 'ord-1' },
			),
		);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
beforeEach(() => resetProcessMemory());
afterAll(async () => {
	for (const h of open.splice(0)) await h.close();
	await new Promise<void>((resolve) => server.close(() => resolve()));
});

const claimedPaid = {
	InvId: 'ord-1',
	OutSum: '10.00',
	TrsId: 'P-1',
	Status: 'SUCCESS',
	SignatureValue: md5(`10.00:ord-1:${TOKEN}`),
};

async function trigger(parameters: Record<string, unknown>) {
	const h = await startTrigger(
		{ event: 'payment', paymentStatuses: ['SUCCESS'], ...parameters },
		{ apiToken: TOKEN, baseUrl: base },
		{ typeVersion: 2 },
	);
	open.push(h);
	return h;
}

it('on: the refusal starts an execution on the Refused output only, with the reason and nothing paid', async () => {
	const h = await trigger({ refusedOutput: true });
	const r = await postForm(h.url, claimedPaid);
	expect(r).toMatchObject({ status: 422, receipt: 'rejected' });
	expect(h.executions).toHaveLength(1);
	const [confirmedPath, refusedPath] = h.executions[0];
	expect(confirmedPath).toEqual([]);
	expect(refusedPath).toHaveLength(1);
	const item = refusedPath[0].json;
	expect(item).toMatchObject({
		event: 'payment',
		refused: true,
		confirmed: false,
		httpStatus: 422,
		reason: expect.stringContaining('the service shows the payment as FAIL'),
		unverified: { TrsId: 'P-1', Status: 'SUCCESS', InvId: 'ord-1' },
	});
	expect(item).not.toHaveProperty('paid');
	expect(item).not.toHaveProperty('payment');
	// A forged signature (401) never starts anything, even with the option on.
	const forged = await postForm(h.url, { ...claimedPaid, SignatureValue: md5('x') });
	expect(forged.status).toBe(401);
	expect(h.executions).toHaveLength(1);
});

it('off (the default): nothing starts; the reason is in the log', async () => {
	const h = await trigger({});
	expect((await postForm(h.url, claimedPaid)).status).toBe(422);
	expect(h.executions).toHaveLength(0);
	expect(h.logs).toContainEqual(
		expect.objectContaining({
			level: 'warn',
			message: expect.stringContaining('PayPalych Trigger refused a payment call (HTTP 422)'),
		}),
	);
});

it('two outputs only when the option is on', () => {
	const outputs = new PayPalychTrigger().description.outputs as string;
	expect(outputs).toContain('$parameter["refusedOutput"] === true');
	expect(outputs).toContain('"Refused"');
});
