/**
 * End-to-end, a credential changed while n8n runs: the PayPalych Trigger keeps a credential read
 * between calls (nodes/PayPalychTrigger/credential.ts), and a change made in n8n (here through its
 * REST API, as the editor's Save button makes it) is seen at once.
 *
 * A merchant moves a confirming Payment trigger (example 01) from shop A's token to shop B's (a
 * token the service also accepts). Seconds after the change, while the read of A's token made by
 * the last call is still kept, a genuine postback of shop A arrives: it verifies with A's token and
 * the service confirms it with A's token, yet it is refused (401) and starts nothing, because the
 * credential as it is now (B's token) does not verify it. A genuine postback of shop B starts the
 * workflow. The credential is put back afterwards, and shop A's postbacks start it again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
	EXAMPLE_IDS,
	configureWorkflow,
	loadExamples,
	sandboxCredential,
} from '../../scripts/harness/examples.ts';
import type { WorkflowJson } from '../../scripts/harness/n8n.ts';
import { Phases } from '../../scripts/harness/proc.ts';
import { startSink, type Sink } from '../../scripts/harness/sink.ts';
import { startStack, type Stack } from '../../scripts/harness/stack.ts';
import { ownerFor } from '../../scripts/harness/suite.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Json = Record<string, any>;

const WORKFLOW = EXAMPLE_IDS.paymentPaid;
const PAID = '/api/orders/paid';
/** How long after the change shop A's postback arrives (well inside the 60 s a read is kept). */
const AFTER_CHANGE_MS = 5_000;

const phases = new Phases('e2e credential change');
let stack: Stack;
let sink: Sink;
let stateDir: string;
let triggerUrl: string;

interface Shop {
	token: string;
	shopId: string;
}

beforeAll(async () => {
	stateDir = mkdtempSync(join(tmpdir(), 'paypalych-e2e-credential-'));
	sink = await startSink();
	stack = await startStack({
		stateDir,
		shopBackend: sink.url,
		owner: ownerFor('E2E'),
		timeFactor: 0.01,
		workflows: (settings) => [
			configureWorkflow(
				loadExamples().find((e) => e.workflow.id === WORKFLOW)?.workflow as WorkflowJson,
				settings,
			),
		],
		relayEnv: { LOG_LEVEL: 'warn', RELAY_CATCHUP_INTERVAL_S: '0' },
		phases,
	});
	triggerUrl = stack.triggerUrls[WORKFLOW];
}, 900_000);

afterAll(async () => {
	await stack?.stop();
	await sink?.close();
	phases.mark('stopped');
	phases.total();
	if (stateDir && !process.env.PAYPALYCH_E2E_KEEP)
		rmSync(stateDir, { recursive: true, force: true });
});

/** The service API as the merchant holding `token`. */
async function apiAs(token: string, path: string, params: Record<string, string>): Promise<Json> {
	const res = await fetch(`${stack.sandbox.url}${path}`, {
		method: 'POST',
		headers: {
			authorization: `Bearer ${token}`,
			accept: 'application/json',
			'content-type': 'application/x-www-form-urlencoded',
		},
		body: new URLSearchParams(params).toString(),
	});
	const text = await res.text();
	if (!res.ok) throw new Error(`POST ${path} answered HTTP ${res.status}: ${text}`);
	return JSON.parse(text) as Json;
}

/**
 * A payment of a new bill of `shop`, its postback held back (lost by the service): the caller
 * posts it to the trigger when the case needs it, exactly as the service would have sent it.
 */
async function paidPostback(shop: Shop, label: string): Promise<{ orderId: string; body: Json }> {
	const orderId = `${label}-${randomBytes(4).toString('hex')}`;
	const bill = await apiAs(shop.token, '/api/v1/bill/create', {
		amount: '5000.00',
		shop_id: shop.shopId,
		order_id: orderId,
	});
	const paid = await stack.control<Json>('POST', `/bills/${String(bill.bill_id)}/pay`, {
		outcome: 'full',
		method: 'BANK_CARD',
		losePostback: true,
	});
	return { orderId, body: paid.postback as Json };
}

/** Posts a postback to the trigger as the live service does (form fields). */
async function post(body: Json) {
	const res = await fetch(triggerUrl, {
		method: 'POST',
		headers: { 'content-type': 'application/x-www-form-urlencoded' },
		body: new URLSearchParams(body as Record<string, string>).toString(),
	});
	return { status: res.status, text: await res.text() };
}

const paidCalls = (orderId: string) =>
	sink.on(PAID).filter((r) => (r.body as Json).orderId === orderId);

async function waitForPaid(orderId: string) {
	return await waitFor(`the shop told ${orderId} is paid`, () => paidCalls(orderId)[0], {
		timeoutMs: 60_000,
		everyMs: 200,
	});
}

/** The credential as imported, with other fields. */
async function saveCredential(data: Json): Promise<void> {
	const credential = sandboxCredential(stack.sandbox);
	await stack.n8n.updateCredential({ ...credential, data: { ...credential.data, ...data } });
}

describe('a credential changed in a running n8n', () => {
	it("moved to another shop's token: 5 s later a genuine postback of the old shop is refused (401) and starts nothing; the new shop's postback starts the workflow; put back, the old shop's do again", async () => {
		const shopA: Shop = { token: stack.sandbox.token, shopId: stack.sandbox.shopId };
		const other = await stack.control<{ token: string; shopId: string }>('POST', '/merchants', {
			verified: true,
			subscription: 'active',
			// A Result URL, or the service makes no postback (this one is lost: the case posts it).
			shop: { name: 'Another shop', resultUrl: `${sink.url}/api/e2e/elsewhere` },
		});
		const shopB: Shop = { token: other.token, shopId: other.shopId };
		const before = (await stack.n8n.settledExecutions(WORKFLOW)).length;

		// A postback of shop A starts the workflow: its credential read is kept for the next calls.
		const first = await paidPostback(shopA, 'shop-a-first');
		const late = await paidPostback(shopA, 'shop-a-late');
		const ofB = await paidPostback(shopB, 'shop-b');
		expect(await post(first.body)).toMatchObject({ status: 200 });
		await waitForPaid(first.orderId);
		expect(await stack.n8n.settledExecutions(WORKFLOW)).toHaveLength(before + 1);

		await saveCredential({ apiToken: shopB.token, shopId: shopB.shopId });
		try {
			phases.mark("credential moved to shop B's token");
			await new Promise((resolve) => setTimeout(resolve, AFTER_CHANGE_MS));
			// Shop A's genuine 5,000.00 postback: its token still works at the service, but it is no
			// longer this credential's.
			const refused = await post(late.body);
			expect(refused.status, refused.text).toBe(401);
			// The kept read is gone: the same postback again is refused on its signature.
			expect((await post(late.body)).status).toBe(401);

			// Shop B's genuine postback, checked and confirmed with B's token: it starts the workflow.
			const accepted = await post(ofB.body);
			expect(accepted.status, accepted.text).toBe(200);
			const paid = await waitForPaid(ofB.orderId);
			expect(paid.body).toMatchObject({ orderId: ofB.orderId, paymentId: ofB.body.TrsId });

			const runs = await stack.n8n.settledExecutions(WORKFLOW);
			expect(runs).toHaveLength(before + 2);
			expect(runs.every((e) => e.status === 'success')).toBe(true);
			expect(paidCalls(late.orderId)).toHaveLength(0);
			expect(sink.orders.has(late.orderId)).toBe(false);
			phases.mark("shop A's postback refused, shop B's started the workflow");
		} finally {
			await saveCredential({});
		}

		// Put back: shop A's postback starts the workflow again, once.
		expect(await post(late.body)).toMatchObject({ status: 200 });
		await waitForPaid(late.orderId);
		expect(await stack.n8n.settledExecutions(WORKFLOW)).toHaveLength(before + 3);
		expect(paidCalls(late.orderId)).toHaveLength(1);
		phases.mark("credential put back: shop A's postback started the workflow");
	});
});
