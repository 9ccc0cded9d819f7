/**
 * What the confirmation costs the service and the sender: the API calls a postback makes (none
 * for a duplicate, one where the payment's answer suffices), and a bounded wait when the service
 * is slow (a clear "retry later" within the budget, never a hang).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
	CONFIRM_BUDGET_MS,
	CONFIRM_TIMEOUT_MS,
} from '../../dist/nodes/PayPalychTrigger/confirm.js';
import { resetProcessMemory } from '../../dist/nodes/PayPalychTrigger/memory.js';
import {
	control,
	newMerchant,
	start,
	type Sandbox,
	type TestMerchant,
} from '../helpers/sandbox.ts';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';
import { startTrigger, postForm } from '../helpers/trigger-harness.ts';

let sb: Sandbox;
let merchant: TestMerchant;
const open: WebhookHarness[] = [];

async function trigger(parameters: Record<string, unknown>): Promise<WebhookHarness> {
	const h = await startTrigger(parameters, merchant.credential);
	open.push(h);
	return h;
}

/** A paid bill's genuine postback. */
async function paidPostback(orderId: string): Promise<Record<string, string>> {
	const res = await fetch(`${sb.url}/api/v1/bill/create`, {
		method: 'POST',
		headers: { authorization: `Bearer ${merchant.token}`, accept: 'application/json' },
		body: new URLSearchParams({ amount: '50.00', shop_id: merchant.shopId, order_id: orderId }),
	});
	const { bill_id } = (await res.json()) as { bill_id: string };
	const paid = await control<{ postback: Record<string, string> }>(
		sb,
		'POST',
		`/bills/${bill_id}/pay`,
		{ outcome: 'full' },
	);
	return paid.postback;
}

/**
 * Counts the API calls from here on: a fault that changes nothing (no delay) on every API path,
 * whose remaining count goes down by one per call.
 */
async function countCalls(): Promise<() => Promise<number>> {
	await control(sb, 'DELETE', '/faults');
	const start = 1_000_000;
	await control(sb, 'POST', '/faults', { kind: 'delay', delayMs: 0, path: '/api/', count: start });
	return async () => {
		const { faults } = await control<{ faults: Array<{ remaining: number }> }>(
			sb,
			'GET',
			'/faults',
		);
		return start - (faults[0]?.remaining ?? 0);
	};
}

describe('the confirmation calls the service no more than it must', () => {
	beforeAll(async () => {
		sb = await start('live');
		merchant = await newMerchant(sb, { liveExtras: true });
		await control(sb, 'PATCH', `/shops/${merchant.shopId}`, {
			resultUrl: 'http://127.0.0.1:9/closed',
		});
	});
	beforeEach(() => resetProcessMemory());
	afterAll(async () => {
		for (const h of open.splice(0)) await h.close();
		await sb?.close();
	});

	it('a duplicate makes no API call; a new postback under Bill ID Only makes one (payment/status)', async () => {
		const h = await trigger({ event: 'payment', orderCheck: 'billId' });
		const postback = await paidPostback('ord-cost-1');
		const calls = await countCalls();
		expect(await postForm(h.url, postback)).toMatchObject({ status: 200, receipt: 'accepted' });
		expect(await calls()).toBe(1);
		for (let i = 0; i < 3; i++) {
			expect(await postForm(h.url, postback)).toMatchObject({ status: 200, receipt: 'duplicate' });
		}
		expect(await calls()).toBe(1);
		expect(h.executions).toHaveLength(1);
	});

	it('the default (InvId) check asks bill/status only because the payment answer has no order ID', async () => {
		const h = await trigger({ event: 'payment' });
		const postback = await paidPostback('ord-cost-2');
		const calls = await countCalls();
		expect(await postForm(h.url, postback)).toMatchObject({ status: 200, receipt: 'accepted' });
		expect(await calls()).toBe(2);
		expect(h.executions[0][0][0].json).toMatchObject({ orderConfirmed: true });
		expect(await postForm(h.url, postback)).toMatchObject({ receipt: 'duplicate' });
		expect(await calls()).toBe(2);
	});

	it('at most one credential read per postback, shared by the signature check and every service call', async () => {
		// n8n resolves a credential through its database and expression sandbox on each read, and
		// its authenticated request helper reads it again and resolves the Authorization expression
		// per request: the trigger reads it once and sends the calls with that token.
		const sent: Array<[string, Record<string, unknown>, Record<string, string>]> = [];
		const base = await paidPostback('ord-reads-dup');
		sent.push([
			'InvId, two service calls',
			{ event: 'payment' },
			await paidPostback('ord-reads-1'),
		]);
		sent.push(['Bill ID Only', { event: 'payment', orderCheck: 'billId' }, base]);
		sent.push(['confirmation off', { event: 'payment', confirmWithApi: false }, base]);
		for (const [what, parameters, postback] of sent) {
			const h = await trigger(parameters);
			const calls = await countCalls();
			expect(await postForm(h.url, postback), what).toMatchObject({ receipt: 'accepted' });
			expect(h.credentialCounts, what).toEqual({ reads: 1, authentications: 0 });
			expect(await postForm(h.url, postback), what).toMatchObject({ receipt: 'duplicate' });
			// A confirming node keeps its read for the next call (credential-keep.test.ts); with
			// confirmation off every call reads the credential.
			expect(h.credentialCounts, what).toEqual({
				reads: what === 'confirmation off' ? 2 : 1,
				authentications: 0,
			});
			expect(await calls(), what).toBe(
				what.startsWith('InvId') ? 2 : what === 'Bill ID Only' ? 1 : 0,
			);
		}
	});

	it('a service slower than the budget: a clear 503 "retry later" within the budget, one retry, nothing remembered', async () => {
		const h = await trigger({ event: 'payment', orderCheck: 'billId' });
		const postback = await paidPostback('ord-slow');
		await control(sb, 'DELETE', '/faults');
		await control(sb, 'POST', '/faults', {
			kind: 'delay',
			delayMs: 20_000,
			path: '/api/v1/payment/status',
			count: 10,
		});
		const began = Date.now();
		expect(await postForm(h.url, postback)).toMatchObject({ status: 503, receipt: 'retry' });
		const took = Date.now() - began;
		expect(took).toBeGreaterThanOrEqual(2 * CONFIRM_TIMEOUT_MS - 100);
		expect(took).toBeLessThan(CONFIRM_BUDGET_MS + 1000);
		const { faults } = await control<{ faults: Array<{ remaining: number }> }>(
			sb,
			'GET',
			'/faults',
		);
		expect(faults[0].remaining).toBe(8); // two attempts: the call and one retry
		expect(h.executions).toHaveLength(0);
		await control(sb, 'DELETE', '/faults');
		expect(await postForm(h.url, postback)).toMatchObject({ status: 200, receipt: 'accepted' });
	});
});
