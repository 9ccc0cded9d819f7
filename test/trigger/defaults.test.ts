/**
 * Safe defaults: a version 2 payment trigger starts only for the paid statuses unless told
 * otherwise; a version 1 node (an existing workflow) keeps the default it had (every status).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { PayPalychTrigger } from '../../dist/nodes/PayPalychTrigger/PayPalychTrigger.node.js';
import { resetProcessMemory } from '../../dist/nodes/PayPalychTrigger/memory.js';
import { startTrigger, postForm } from '../helpers/trigger-harness.ts';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';

const TOKEN = 'defaults|token';
const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex').toUpperCase();
const open: WebhookHarness[] = [];

/** A signed payment postback (confirmation off: the status filter is what is tested). */
const postback = (TrsId: string, Status: string) => ({
	InvId: 'ord-1',
	OutSum: '10.00',
	TrsId,
	Status,
	SignatureValue: md5(`10.00:ord-1:${TOKEN}`),
});

async function trigger(typeVersion: number, parameters: Record<string, unknown> = {}) {
	const h = await startTrigger(
		{ event: 'payment', confirmWithApi: false, ...parameters },
		{ apiToken: TOKEN, baseUrl: 'http://127.0.0.1:9' },
		{ typeVersion },
	);
	open.push(h);
	return h;
}

beforeEach(() => resetProcessMemory());
afterAll(async () => {
	for (const h of open.splice(0)) await h.close();
});

describe('the default Statuses of a payment trigger', () => {
	it('new nodes are version 2', () => {
		const description = new PayPalychTrigger().description;
		expect(description.version).toEqual([1, 2]);
		expect(description.defaultVersion).toBe(2);
	});

	it('version 2: only SUCCESS and OVERPAID start the workflow; UNDERPAID, FAIL and unknown statuses are ignored', async () => {
		const h = await trigger(2);
		const receipts: Record<string, string | null> = {};
		for (const status of ['SUCCESS', 'OVERPAID', 'UNDERPAID', 'FAIL', 'CANCELLED'])
			receipts[status] = (await postForm(h.url, postback(`v2-${status}`, status))).receipt;
		expect(receipts).toEqual({
			SUCCESS: 'accepted',
			OVERPAID: 'accepted',
			UNDERPAID: 'ignored',
			FAIL: 'ignored',
			CANCELLED: 'ignored',
		});
		expect(h.executions.map((e) => e[0][0].json.status)).toEqual(['SUCCESS', 'OVERPAID']);
	});

	it('version 2: the others are a click away', async () => {
		const h = await trigger(2, { paymentStatuses: ['FAIL'] });
		expect((await postForm(h.url, postback('v2-chosen', 'FAIL'))).receipt).toBe('accepted');
	});

	it('version 1 (existing workflows) keeps every status by default', async () => {
		const h = await trigger(1);
		for (const status of ['SUCCESS', 'UNDERPAID', 'FAIL', 'CANCELLED'])
			expect((await postForm(h.url, postback(`v1-${status}`, status))).receipt, status).toBe(
				'accepted',
			);
	});
});
