/**
 * The trigger confirms postbacks with the service before it starts a workflow. Each attack here is
 * what a dishonest customer can do with what they see in their own browser (a Success or Fail
 * redirect carries the payment signature) against a trigger whose credential points at the
 * sandbox; the genuine postbacks come from the sandbox itself.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PayPalychTrigger } from '../../dist/nodes/PayPalychTrigger/PayPalychTrigger.node.js';
import { resetProcessMemory } from '../../dist/nodes/PayPalychTrigger/receive.js';
import {
	control,
	newMerchant,
	start,
	type Sandbox,
	type TestMerchant,
} from '../helpers/sandbox.ts';
import { startWebhookHarness, type WebhookHarness } from '../helpers/webhook-harness.ts';
import { waitFor } from '../../scripts/harness/proc.ts';
import { paymentPostback } from '../../relay/src/catchup/events.ts';

const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex').toUpperCase();
const FORM = 'application/x-www-form-urlencoded';

let sb: Sandbox;
let merchant: TestMerchant;
const open: WebhookHarness[] = [];

async function trigger(parameters: Record<string, unknown>): Promise<WebhookHarness> {
	const h = await startWebhookHarness({
		nodeType: new PayPalychTrigger(),
		typeName: 'n8n-nodes-paypalych.payPalychTrigger',
		parameters: parameters as never,
		credentialType: 'payPalychApi',
		credentials: merchant.credential,
	});
	open.push(h);
	return h;
}

async function post(url: string, fields: Record<string, string>) {
	const res = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': FORM },
		body: new URLSearchParams(fields).toString(),
		redirect: 'manual',
	});
	return {
		status: res.status,
		text: await res.text(),
		receipt: res.headers.get('x-paypalych-receipt'),
		retryAfter: res.headers.get('retry-after'),
	};
}

async function bill(amount: string, orderId: string, extra: Record<string, string> = {}) {
	const res = await fetch(`${sb.url}/api/v1/bill/create`, {
		method: 'POST',
		headers: { authorization: `Bearer ${merchant.token}`, accept: 'application/json' },
		body: new URLSearchParams({ amount, shop_id: merchant.shopId, order_id: orderId, ...extra }),
	});
	const body = (await res.json()) as { bill_id: string };
	if (!res.ok) throw new Error(`bill/create: ${res.status} ${JSON.stringify(body)}`);
	return body.bill_id;
}

type Paid = {
	payment: { id: string };
	postback: Record<string, string> | null;
	redirect: { url: string | null; fields: Record<string, string> };
};
async function pay(
	billId: string,
	outcome: 'full' | 'fail' | 'over' | 'under' = 'full',
): Promise<Paid> {
	return await control<Paid>(sb, 'POST', `/bills/${billId}/pay`, { outcome });
}

/** A customer's forgery: the fields of their own redirect (public signature), another TrsId, Status SUCCESS. */
const claimedPaid = (own: Paid, trsId: string) => ({
	...own.redirect.fields,
	TrsId: trsId,
	Status: 'SUCCESS',
});

/** The shop posts its genuine postbacks nowhere (a closed port): each test delivers them itself, in the order it wants. */
beforeAll(async () => {
	sb = await start();
	// The live service shows a bill's order_id (service-facts.md): the default Order Check needs it.
	merchant = await newMerchant(sb, { liveExtras: true });
	await control(sb, 'PATCH', `/shops/${merchant.shopId}`, {
		resultUrl: 'http://127.0.0.1:9/closed',
		successUrl: null,
		failUrl: null,
	});
});

beforeEach(() => resetProcessMemory());

afterAll(async () => {
	for (const h of open.splice(0)) await h.close();
	await sb?.close();
});

describe('payment postbacks are confirmed with payment/status', () => {
	it("starts the genuine postback once, with the service's payment in the item and a stable event key", async () => {
		const h = await trigger({ event: 'payment' });
		const paid = await pay(await bill('150.00', 'ord-genuine'));
		const genuine = paid.postback as Record<string, string>;
		const r = await post(h.url, genuine);
		expect(r).toMatchObject({ status: 200, receipt: 'accepted' });
		expect(h.executions).toHaveLength(1);
		const item = h.executions[0][0][0].json;
		expect(item).toMatchObject({
			confirmed: true,
			paid: true,
			status: 'SUCCESS',
			InvId: 'ord-genuine',
			orderConfirmed: true,
			eventKey: `payment-${paid.payment.id}-SUCCESS`,
			payment: { id: paid.payment.id, status: 'SUCCESS', amount: 150 },
		});
		expect((item.payment as Record<string, unknown>).success).toBeUndefined();
	});

	it("refuses a Fail redirect turned into a SUCCESS postback (the redirect's public signature, the failed payment's TrsId)", async () => {
		const h = await trigger({ event: 'payment' });
		const failed = await pay(await bill('990.00', 'ord-failed'), 'fail');
		// The customer saw this form in their browser.
		const redirect = failed.redirect.fields;
		const forged = { ...redirect, TrsId: failed.payment.id, Status: 'SUCCESS' };
		const r = await post(h.url, forged);
		expect(r.status).toBe(422);
		expect(r.receipt).toBe('rejected');
		expect(r.text).toContain('FAIL');
		expect(h.executions).toHaveLength(0);
		// With a made-up TrsId the service has no such payment: the sender is asked to retry, nothing starts.
		const madeUp = await post(h.url, { ...redirect, TrsId: 'no-such-payment', Status: 'SUCCESS' });
		expect(madeUp).toMatchObject({ status: 503, receipt: 'retry', retryAfter: '60' });
		expect(h.executions).toHaveLength(0);
		// A TrsId with a line break cannot forge a line in the answer or the log.
		const broken = await post(h.url, { ...redirect, TrsId: 'x\nforged line', Status: 'SUCCESS' });
		expect(broken.status).toBe(503);
		expect(broken.text).not.toContain('\n');
		expect(JSON.stringify(h.logs)).not.toContain('\\nforged line');
		// The genuine FAIL postback still starts, not paid.
		const genuine = await post(h.url, failed.postback as Record<string, string>);
		expect(genuine.receipt).toBe('accepted');
		expect(h.executions.map((e) => e[0][0].json.paid)).toEqual([false]);
	});

	it('refuses a borrowed TrsId: a cheap real payment on another bill, and a real payment of the same amount on another order', async () => {
		const h = await trigger({ event: 'payment' });
		const expensive = await pay(await bill('5000.00', 'ord-expensive'), 'fail');
		const cheap = await pay(await bill('1.00', 'ord-cheap'));
		const r1 = await post(h.url, claimedPaid(expensive, cheap.payment.id));
		expect(r1.status).toBe(422);
		expect(r1.text).toContain('OutSum 5000.00');
		const twin = await pay(await bill('5000.00', 'ord-twin'));
		const r2 = await post(h.url, claimedPaid(expensive, twin.payment.id));
		expect(r2.status).toBe(422);
		expect(r2.text).toContain('ord-twin');
		expect(h.executions).toHaveLength(0);
	});

	it("a forged call sent first does not take the genuine postback's place", async () => {
		const h = await trigger({ event: 'payment' });
		const mine = await pay(await bill('300.00', 'ord-mine'), 'fail');
		const victim = await pay(await bill('300.00', 'ord-victim'));
		expect((await post(h.url, claimedPaid(mine, victim.payment.id))).status).toBe(422);
		const genuine = await post(h.url, victim.postback as Record<string, string>);
		expect(genuine.receipt).toBe('accepted');
		expect(h.executions.map((e) => e[0][0].json.InvId)).toEqual(['ord-victim']);
	});

	it('takes a replay in another spelling of Status or TrsId for a duplicate', async () => {
		const h = await trigger({ event: 'payment' });
		const paid = await pay(await bill('42.00', 'ord-replay'));
		const genuine = paid.postback as Record<string, string>;
		expect((await post(h.url, genuine)).receipt).toBe('accepted');
		for (const Status of ['success', 'Success', 'SUCCESS ', ' SUCCESS']) {
			expect(await post(h.url, { ...genuine, Status })).toMatchObject({
				status: 200,
				receipt: 'duplicate',
			});
		}
		expect((await post(h.url, { ...genuine, TrsId: ` ${genuine.TrsId} ` })).receipt).toBe(
			'duplicate',
		);
		expect(h.executions).toHaveLength(1);
	});

	it('starts one execution per payment and status whatever the route: OutSum spelled 100.5, the relay catch-up event first, a redelivery after a restart', async () => {
		const h = await trigger({ event: 'payment' });
		const paid = await pay(await bill('100.50', 'ord-routes'));
		const genuine = paid.postback as Record<string, string>;
		expect(genuine.OutSum).toBe('100.50');
		// The service's postback with OutSum spelled 100.5 (signed over that spelling) comes first.
		const short = {
			...genuine,
			OutSum: '100.5',
			SignatureValue: md5(`100.5:ord-routes:${merchant.token}`),
		};
		expect(await post(h.url, short)).toMatchObject({ status: 200, receipt: 'accepted' });
		expect(await post(h.url, genuine)).toMatchObject({ status: 200, receipt: 'duplicate' });
		// A relay redelivery (the same body again), and again after n8n restarted: this process's
		// memory is gone, the workflow's static data is kept.
		expect((await post(h.url, genuine)).receipt).toBe('duplicate');
		resetProcessMemory();
		expect((await post(h.url, short)).receipt).toBe('duplicate');
		expect(h.executions).toHaveLength(1);
		expect(h.executions[0][0][0].json).toMatchObject({ confirmed: true, paid: true });

		// The relay's catch-up rebuilds a lost postback from the service's records; the late genuine
		// postback after it starts nothing more.
		const h2 = await trigger({ event: 'payment' });
		const lost = await pay(await bill('77.70', 'ord-lost'));
		// The payment as the API shows it (the control answer carries the same view).
		const payment = lost.payment as unknown as Record<string, unknown>;
		const rebuilt = paymentPostback(payment, 'ord-lost', merchant.token);
		expect(rebuilt).toBeDefined();
		expect(await post(h2.url, rebuilt!)).toMatchObject({ status: 200, receipt: 'accepted' });
		expect((await post(h2.url, lost.postback as Record<string, string>)).receipt).toBe('duplicate');
		expect(h2.executions).toHaveLength(1);
		expect(h2.executions[0][0][0].json).toMatchObject({ confirmed: true, TrsId: lost.payment.id });
	});

	it('a refused call leaves no key behind, even when another call saves the static data while it is being confirmed', async () => {
		const storage = { staticData: '{}' };
		const h = await startWebhookHarness({
			nodeType: new PayPalychTrigger(),
			typeName: 'n8n-nodes-paypalych.payPalychTrigger',
			parameters: { event: 'payment' } as never,
			credentialType: 'payPalychApi',
			credentials: merchant.credential,
			storage,
		});
		open.push(h);
		const mine = await pay(await bill('400.00', 'ord-slow-forger'), 'fail');
		const victim = await pay(await bill('400.00', 'ord-slow-victim'));
		const other = await pay(await bill('41.00', 'ord-meanwhile'));
		const forged = claimedPaid(mine, victim.payment.id);
		// The forged call's look-up is slow; meanwhile a genuine postback is accepted and its call saves the static data.
		await control(sb, 'POST', '/faults', {
			kind: 'delay',
			delayMs: 2000,
			path: '/api/v1/payment/status',
			count: 1,
		});
		const slow = post(h.url, forged);
		// The fault is used up once the slow call's look-up reached the sandbox: it is in confirmation now.
		await waitFor('the slow look-up to start', async () =>
			(await control<{ faults: unknown[] }>(sb, 'GET', '/faults')).faults.length === 0
				? true
				: undefined,
		);
		// The same forged call again while the first is being confirmed: asked to come back, not taken for a duplicate.
		expect(await post(h.url, forged)).toMatchObject({ status: 503, receipt: 'retry' });
		expect((await post(h.url, other.postback as Record<string, string>)).receipt).toBe('accepted');
		expect((await slow).status).toBe(422);
		// Sent again (as a relay forwards it after the direct attempt): refused again, never a "duplicate".
		expect(await post(h.url, forged)).toMatchObject({ status: 422, receipt: 'rejected' });
		expect(h.executions.map((e) => e[0][0].json.InvId)).toEqual(['ord-meanwhile']);
		expect((await post(h.url, victim.postback as Record<string, string>)).receipt).toBe('accepted');
	});

	it('asks for a retry while the API fails, remembers nothing, and starts once when it answers again', async () => {
		const h = await trigger({ event: 'payment' });
		const paid = await pay(await bill('77.00', 'ord-outage'));
		await control(sb, 'POST', '/faults', { kind: '500', path: '/api/v1/payment/status', count: 2 });
		for (let i = 0; i < 2; i++) {
			expect(await post(h.url, paid.postback as Record<string, string>)).toMatchObject({
				status: 503,
				receipt: 'retry',
			});
		}
		expect(h.executions).toHaveLength(0);
		expect((await post(h.url, paid.postback as Record<string, string>)).receipt).toBe('accepted');
		expect((await post(h.url, paid.postback as Record<string, string>)).receipt).toBe('duplicate');
		expect(h.executions).toHaveLength(1);
	});

	it('reads the order ID from the bill, so a bill created without order_id confirms an empty InvId', async () => {
		const h = await trigger({ event: 'payment' });
		const res = await fetch(`${sb.url}/api/v1/bill/create`, {
			method: 'POST',
			headers: { authorization: `Bearer ${merchant.token}`, accept: 'application/json' },
			body: new URLSearchParams({ amount: '10.00', shop_id: merchant.shopId }),
		});
		const { bill_id } = (await res.json()) as { bill_id: string };
		const paid = await pay(bill_id);
		const postback = paid.postback as Record<string, string>;
		expect(postback.InvId).toBe('');
		expect((await post(h.url, postback)).receipt).toBe('accepted');
		// The same signature moved onto an order ID: refused.
		const moved = {
			...postback,
			InvId: 'ord-other',
			SignatureValue: md5(`${postback.OutSum}:ord-other:${merchant.token}`),
		};
		expect((await post(h.url, { ...moved, Status: 'SUCCESS' })).status).toBe(422);
		expect(h.executions).toHaveLength(1);
	});

	it('where the service shows no order ID for the bill: refused by default; Bill ID Only confirms the payment and not the InvId', async () => {
		const documentOnly = await newMerchant(sb, { liveExtras: false });
		await control(sb, 'PATCH', `/shops/${documentOnly.shopId}`, {
			resultUrl: 'http://127.0.0.1:9/closed',
		});
		const saved = merchant;
		merchant = documentOnly;
		try {
			const strict = await trigger({ event: 'payment' });
			const billOnly = await trigger({ event: 'payment', orderCheck: 'billId' });
			const billId = await bill('20.00', 'ord-doc-only');
			const paid = await pay(billId);
			const refused = await post(strict.url, paid.postback as Record<string, string>);
			expect(refused.status).toBe(422);
			expect(refused.text).toContain('returned no order ID for bill');
			expect((await post(billOnly.url, paid.postback as Record<string, string>)).receipt).toBe(
				'accepted',
			);
			expect(billOnly.executions[0][0][0].json).toMatchObject({
				confirmed: true,
				paid: true,
				orderConfirmed: false,
				payment: { bill_id: billId },
			});
			// Still compared: the amount and the status.
			const failed = await pay(await bill('20.00', 'ord-doc-only-2'), 'fail');
			expect(
				(
					await post(billOnly.url, {
						...failed.redirect.fields,
						TrsId: failed.payment.id,
						Status: 'SUCCESS',
					})
				).status,
			).toBe(422);
			expect(strict.executions).toHaveLength(0);
		} finally {
			merchant = saved;
		}
	});

	it('with confirmation off trusts the postback, and says so in the item', async () => {
		const h = await trigger({ event: 'payment', confirmWithApi: false });
		const failed = await pay(await bill('12.00', 'ord-trusting'), 'fail');
		const forged = { ...failed.redirect.fields, TrsId: 'anything', Status: 'SUCCESS' };
		expect((await post(h.url, forged)).receipt).toBe('accepted');
		expect(h.executions[0][0][0].json).toMatchObject({ confirmed: false, paid: true });
	});
});

describe('payout postbacks are confirmed with payout/status', () => {
	it('starts the genuine postback with the payout record, and refuses its signature under another status', async () => {
		const h = await trigger({ event: 'payout' });
		await control(sb, 'PATCH', `/merchants/${merchant.merchantId}`, {
			payoutWebhookUrl: 'http://127.0.0.1:9/closed',
		});
		const res = await fetch(`${sb.url}/api/v1/payout/personal/create`, {
			method: 'POST',
			headers: { authorization: `Bearer ${merchant.token}`, accept: 'application/json' },
			body: new URLSearchParams({
				amount: '100.00',
				payout_account_id: merchant.payoutAccountId,
				order_id: 'po-confirm-1',
			}),
		});
		const created = (await res.json()) as { data: Array<{ id: string }> };
		const id = created.data[0].id;
		await control(sb, 'POST', `/payouts/${id}/advance`, { status: 'SUCCESS' });
		// The sandbox posts the payout postback in the background (to a closed port): its log has the body once tried.
		const genuine = await waitFor(`the payout postback of ${id}`, async () => {
			const { data } = await control<{ data: Array<{ body: Record<string, string> }> }>(
				sb,
				'GET',
				`/deliveries?kind=payout&trsId=${id}`,
			);
			return data[0]?.body;
		});
		// The signature covers Amount and TrsId only: the same call saying DECLINED would make a
		// workflow pay again. The service says SUCCESS.
		const declined = await post(h.url, { ...genuine, Status: 'DECLINED' });
		expect(declined.status).toBe(422);
		expect((await post(h.url, genuine)).receipt).toBe('accepted');
		expect(h.executions).toHaveLength(1);
		expect(h.executions[0][0][0].json).toMatchObject({
			confirmed: true,
			status: 'SUCCESS',
			eventKey: `payout-${id}-SUCCESS`,
			payout: { id, status: 'SUCCESS', amount: 100 },
		});
		expect(h.executions[0][0][0].json).not.toHaveProperty('paid');
	});
});

describe('redirects', () => {
	it('a Fail redirect posted to the Success URL claims nothing', async () => {
		const h = await trigger({ event: 'success', redirectUrl: 'https://shop.example.com/thanks' });
		const failed = await pay(await bill('55.00', 'ord-redirect'), 'fail');
		const r = await post(h.url, failed.redirect.fields);
		expect(r.status).toBe(303);
		const item = h.executions[0][0][0].json;
		expect(item).toMatchObject({
			event: 'success',
			paymentProof: false,
			customerSentTo: 'https://shop.example.com/thanks',
		});
		expect(item).not.toHaveProperty('paid');
		expect(item).not.toHaveProperty('confirmed');
	});
});
