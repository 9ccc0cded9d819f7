/**
 * The trigger confirms postbacks with the service before it starts a workflow. Each attack here is
 * what a dishonest customer can do with what they see in their own browser (a Success or Fail
 * redirect carries the payment signature) against a trigger whose credential points at the
 * sandbox; the genuine postbacks come from the sandbox itself.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { resetProcessMemory } from '../../dist/nodes/PayPalychTrigger/memory.js';
import {
	PROFILES,
	control,
	newMerchant,
	type Profile,
	type Sandbox,
	type TestMerchant,
} from '../helpers/sandbox.ts';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';
import { startTrigger, postForm } from '../helpers/trigger-harness.ts';
import { billOf, triggerSandbox, type Paid } from '../helpers/trigger-sandbox.ts';
import { paymentPostback } from '../../relay/src/catchup/events.ts';
import { waitFor, OUTSIDE } from '../../scripts/harness/wait.ts';

/** InvId at the top (bound to the order), or under unverified (Bill ID Only). */
const invIdOf = (json: Record<string, unknown>) =>
	json.InvId ?? (json.unverified as Record<string, unknown> | undefined)?.InvId;

const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex').toUpperCase();

let sb: Sandbox;
let merchant: TestMerchant;
let profile: Profile;
const open: WebhookHarness[] = [];

/**
 * A payment or payout trigger. On the spec profile the service shows no bill's order ID, so
 * Order Check is Bill ID Only unless a test chooses it (the default refuses every payment there).
 */
async function trigger(parameters: Record<string, unknown>): Promise<WebhookHarness> {
	const h = await startTrigger(
		profile === 'spec' && parameters.event === 'payment'
			? { orderCheck: 'billId', ...parameters }
			: parameters,
		merchant.credential,
	);
	open.push(h);
	return h;
}

/** A bill of the current merchant (a test may swap it). */
const bill = (amount: string, orderId: string, extra: Record<string, string> = {}) =>
	billOf(sb, merchant, amount, orderId, extra);

/** A customer's forgery: the fields of their own redirect (public signature), another TrsId, Status SUCCESS. */
const claimedPaid = (own: Paid, trsId: string) => ({
	...own.redirect.fields,
	TrsId: trsId,
	Status: 'SUCCESS',
});

describe.each(PROFILES)('sandbox profile %s', (sandboxProfile) => {
	/** The shop posts its genuine postbacks nowhere (a closed port): each test delivers them itself, in the order it wants. */
	const { pay } = triggerSandbox({
		profile: sandboxProfile,
		// The live service shows a bill's order_id (docs/developer/service.md): the default Order
		// Check needs it.
		// The spec profile never shows it, live extras or not.
		merchant: { liveExtras: true },
		open,
		started: (started, made) => {
			profile = sandboxProfile;
			sb = started;
			merchant = made;
		},
	});

	describe('payment postbacks are confirmed with payment/status', () => {
		it("starts the genuine postback once, with the service's payment in the item and a stable event key", async () => {
			const h = await trigger({ event: 'payment' });
			const paid = await pay(await bill('150.00', 'ord-genuine'));
			const genuine = paid.postback as Record<string, string>;
			const r = await postForm(h.url, genuine);
			expect(r).toMatchObject({ status: 200, receipt: 'accepted' });
			expect(h.executions).toHaveLength(1);
			const item = h.executions[0][0][0].json;
			expect(item).toMatchObject({
				confirmed: true,
				paid: true,
				status: 'SUCCESS',
				// Bill ID Only (spec): InvId is the sender's word, under unverified.
				...(profile === 'live'
					? { InvId: 'ord-genuine' }
					: { unverified: { InvId: 'ord-genuine' } }),
				orderConfirmed: profile === 'live',
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
			const r = await postForm(h.url, forged);
			expect(r.status).toBe(422);
			expect(r.receipt).toBe('rejected');
			expect(r.text).toContain('FAIL');
			expect(h.executions).toHaveLength(0);
			// With a made-up TrsId the service has no such payment: the sender is asked to retry, nothing starts.
			const madeUp = await postForm(h.url, {
				...redirect,
				TrsId: 'no-such-payment',
				Status: 'SUCCESS',
			});
			expect(madeUp).toMatchObject({ status: 503, receipt: 'retry', retryAfter: '60' });
			expect(h.executions).toHaveLength(0);
			// A TrsId with a line break cannot forge a line in the answer or the log.
			const broken = await postForm(h.url, {
				...redirect,
				TrsId: 'x\nforged line',
				Status: 'SUCCESS',
			});
			expect(broken.status).toBe(503);
			expect(broken.text).not.toContain('\n');
			expect(JSON.stringify(h.logs)).not.toContain('\\nforged line');
			// The genuine FAIL postback still starts, not paid.
			const genuine = await postForm(h.url, failed.postback as Record<string, string>);
			expect(genuine.receipt).toBe('accepted');
			expect(h.executions.map((e) => e[0][0].json.paid)).toEqual([false]);
		});

		it('refuses a borrowed TrsId: a cheap real payment on another bill, and a real payment of the same amount on another order', async () => {
			const h = await trigger({ event: 'payment' });
			const expensive = await pay(await bill('5000.00', 'ord-expensive'), 'fail');
			const cheap = await pay(await bill('1.00', 'ord-cheap'));
			const r1 = await postForm(h.url, claimedPaid(expensive, cheap.payment.id));
			expect(r1.status).toBe(422);
			expect(r1.text).toContain('OutSum 5000.00');
			const twinBill = await bill('5000.00', 'ord-twin');
			const twin = await pay(twinBill);
			const r2 = await postForm(h.url, claimedPaid(expensive, twin.payment.id));
			if (profile === 'live') {
				expect(r2.status).toBe(422);
				expect(r2.text).toContain('ord-twin');
				expect(h.executions).toHaveLength(0);
			} else {
				// Bill ID Only: InvId is not bound, the call can only confirm the twin's own payment as the
				// service shows it; the workflow finds the order by payment.bill_id (the twin's), and the
				// genuine postback after it starts nothing more.
				expect(r2.status).toBe(200);
				expect(h.executions.map((e) => e[0][0].json.payment)).toMatchObject([
					{ id: twin.payment.id, bill_id: twinBill },
				]);
				expect(h.executions[0][0][0].json.orderConfirmed).toBe(false);
				expect((await postForm(h.url, twin.postback as Record<string, string>)).receipt).toBe(
					'duplicate',
				);
				expect(h.executions).toHaveLength(1);
			}
		});

		it("a forged call sent first does not take the genuine postback's place", async () => {
			const h = await trigger({ event: 'payment' });
			const mine = await pay(await bill('300.00', 'ord-mine'), 'fail');
			const victimBill = await bill('300.00', 'ord-victim');
			const victim = await pay(victimBill);
			const forged = await postForm(h.url, claimedPaid(mine, victim.payment.id));
			const genuine = await postForm(h.url, victim.postback as Record<string, string>);
			if (profile === 'live') {
				expect(forged.status).toBe(422);
				expect(genuine.receipt).toBe('accepted');
				expect(h.executions.map((e) => e[0][0].json.InvId)).toEqual(['ord-victim']);
			} else {
				// Bill ID Only: the forged call confirms the victim's own payment, as the service shows it
				// (the workflow reads the order from payment.bill_id); the genuine postback is its duplicate.
				expect(forged.status).toBe(200);
				expect(genuine.receipt).toBe('duplicate');
				expect(
					h.executions.map((e) => (e[0][0].json.payment as { bill_id: string }).bill_id),
				).toEqual([victimBill]);
			}
		});

		it('takes a replay in another spelling of Status or TrsId for a duplicate', async () => {
			const h = await trigger({ event: 'payment' });
			const paid = await pay(await bill('42.00', 'ord-replay'));
			const genuine = paid.postback as Record<string, string>;
			expect((await postForm(h.url, genuine)).receipt).toBe('accepted');
			for (const Status of ['success', 'Success', 'SUCCESS ', ' SUCCESS']) {
				expect(await postForm(h.url, { ...genuine, Status })).toMatchObject({
					status: 200,
					receipt: 'duplicate',
				});
			}
			expect((await postForm(h.url, { ...genuine, TrsId: ` ${genuine.TrsId} ` })).receipt).toBe(
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
			expect(await postForm(h.url, short)).toMatchObject({ status: 200, receipt: 'accepted' });
			expect(await postForm(h.url, genuine)).toMatchObject({ status: 200, receipt: 'duplicate' });
			// A relay redelivery (the same body again), and again after n8n restarted: this process's
			// memory is gone, the workflow's static data is kept.
			expect((await postForm(h.url, genuine)).receipt).toBe('duplicate');
			resetProcessMemory();
			expect((await postForm(h.url, short)).receipt).toBe('duplicate');
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
			expect(await postForm(h2.url, rebuilt!)).toMatchObject({ status: 200, receipt: 'accepted' });
			expect((await postForm(h2.url, lost.postback as Record<string, string>)).receipt).toBe(
				'duplicate',
			);
			expect(h2.executions).toHaveLength(1);
			expect(h2.executions[0][0][0].json).toMatchObject({
				confirmed: true,
				TrsId: lost.payment.id,
			});
		});

		it('a refused call leaves no key behind, even when another call saves the static data while it is being confirmed', async () => {
			const storage = { staticData: '{}' };
			const h = await startTrigger(
				profile === 'spec' ? { event: 'payment', orderCheck: 'billId' } : { event: 'payment' },
				merchant.credential,
				{ storage },
			);
			open.push(h);
			// On spec (Bill ID Only) the forger's bill costs a kopeck more, so the amount refuses the call.
			const mine = await pay(
				await bill(profile === 'live' ? '400.00' : '400.01', 'ord-slow-forger'),
				'fail',
			);
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
			const slow = postForm(h.url, forged);
			// The fault is used up once the slow call's look-up reached the sandbox: it is in confirmation now.
			await waitFor(
				'the slow look-up to start',
				async () =>
					(await control<{ faults: unknown[] }>(sb, 'GET', '/faults')).faults.length === 0
						? true
						: undefined,
				OUTSIDE,
			);
			// The same forged call again while the first is being confirmed: asked to come back, not taken for a duplicate.
			expect(await postForm(h.url, forged)).toMatchObject({ status: 503, receipt: 'retry' });
			expect((await postForm(h.url, other.postback as Record<string, string>)).receipt).toBe(
				'accepted',
			);
			expect((await slow).status).toBe(422);
			// Sent again (as a relay forwards it after the direct attempt): refused again, never a "duplicate".
			expect(await postForm(h.url, forged)).toMatchObject({ status: 422, receipt: 'rejected' });
			expect(h.executions.map((e) => invIdOf(e[0][0].json))).toEqual(['ord-meanwhile']);
			expect((await postForm(h.url, victim.postback as Record<string, string>)).receipt).toBe(
				'accepted',
			);
		});

		it('asks for a retry while the API fails, remembers nothing, and starts once when it answers again', async () => {
			const h = await trigger({ event: 'payment' });
			const paid = await pay(await bill('77.00', 'ord-outage'));
			await control(sb, 'POST', '/faults', {
				kind: '500',
				path: '/api/v1/payment/status',
				count: 4, // two calls, each tried twice
			});
			for (let i = 0; i < 2; i++) {
				expect(await postForm(h.url, paid.postback as Record<string, string>)).toMatchObject({
					status: 503,
					receipt: 'retry',
				});
			}
			expect(h.executions).toHaveLength(0);
			expect((await postForm(h.url, paid.postback as Record<string, string>)).receipt).toBe(
				'accepted',
			);
			expect((await postForm(h.url, paid.postback as Record<string, string>)).receipt).toBe(
				'duplicate',
			);
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
			expect((await postForm(h.url, postback)).receipt).toBe('accepted');
			// The same signature moved onto an order ID: refused.
			const moved = {
				...postback,
				InvId: 'ord-other',
				SignatureValue: md5(`${postback.OutSum}:ord-other:${merchant.token}`),
			};
			// live binds InvId: refused. spec (Bill ID Only) does not: the same payment again, a duplicate.
			const again = await postForm(h.url, { ...moved, Status: 'SUCCESS' });
			expect(again.status).toBe(profile === 'live' ? 422 : 200);
			expect(again.receipt).toBe(profile === 'live' ? 'rejected' : 'duplicate');
			expect(h.executions).toHaveLength(1);
		});

		it('where the service shows no order ID for the bill: refused by default; Bill ID Only confirms the payment and not the InvId', async () => {
			// live: a merchant that hides it (billOrderId false); spec: no merchant shows it.
			const documentOnly = await newMerchant(sb, {
				liveExtras: profile === 'spec',
				billOrderId: false,
			});
			await control(sb, 'PATCH', `/shops/${documentOnly.shopId}`, {
				resultUrl: 'http://127.0.0.1:9/closed',
			});
			const saved = merchant;
			merchant = documentOnly;
			try {
				const strict = await trigger({ event: 'payment', orderCheck: 'orderId' });
				const billOnly = await trigger({ event: 'payment', orderCheck: 'billId' });
				const billId = await bill('20.00', 'ord-doc-only');
				const paid = await pay(billId);
				const refused = await postForm(strict.url, paid.postback as Record<string, string>);
				expect(refused.status).toBe(422);
				// The refusal names the fix in the answer (what the relay keeps as the dead letter's
				// reason) and in n8n's log.
				const fix =
					'this service shows no order ID for bills: set Order Check to Bill ID Only and find the order by bill_id';
				expect(refused.text).toBe(`Not confirmed by the service: ${fix} (bill ${billId})`);
				expect(strict.logs).toContainEqual(
					expect.objectContaining({
						level: 'warn',
						message: `PayPalych Trigger refused a payment call (HTTP 422): Not confirmed by the service: ${fix} (bill ${billId})`,
					}),
				);
				expect(
					(await postForm(billOnly.url, paid.postback as Record<string, string>)).receipt,
				).toBe('accepted');
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
						await postForm(billOnly.url, {
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
			expect((await postForm(h.url, forged)).receipt).toBe('accepted');
			expect(h.executions[0][0][0].json).toMatchObject({ confirmed: false, paid: true });
		});
	});

	it("confirms a postback whose OutSum includes the commission the payer paid when the service shows that amount; the postback's own Commission never counts", async () => {
		const h = await trigger({ event: 'payment' });
		const billId = await bill('100.00', 'ord-payer-fee', { payer_pays_commission: '1' });
		const paid = await pay(billId);
		const genuine = paid.postback as Record<string, string>;
		expect(genuine).toMatchObject({ OutSum: '103.00', Commission: '3.00' });
		// live: amount is what the payer paid (103); spec: it leaves the commission out (100), and
		// this merchant's payments show the commission (3), which the postback names.
		expect(await postForm(h.url, genuine)).toMatchObject({ status: 200, receipt: 'accepted' });
		expect(h.executions[0][0][0].json).toMatchObject({
			confirmed: true,
			paid: true,
			amount: '103.00',
			payment: { id: paid.payment.id, amount: profile === 'live' ? 103 : 100, commission: 3 },
		});
		const executions = h.executions.length;
		// Commission is not signed: a Fail redirect of an expensive bill with the TrsId of a cheap
		// real payment and Commission set to the difference is refused on the amount, in both profiles.
		const expensive = await pay(await bill('5000.00', 'ord-fee-expensive'), 'fail');
		const cheapBill = await bill('1.00', 'ord-fee-cheap');
		const cheap = await pay(cheapBill);
		const forged = {
			...expensive.redirect.fields,
			TrsId: cheap.payment.id,
			Status: 'SUCCESS',
			Commission: '4999.00',
		};
		const refusedForgery = await postForm(h.url, forged);
		expect(refusedForgery.status).toBe(422);
		expect(refusedForgery.text).toContain('OutSum 5000.00');
		expect(h.executions).toHaveLength(executions);
		// A negative Commission is never read as one.
		const under: Record<string, string> = { ...genuine, OutSum: '90.00', Commission: '-10.00' };
		under.SignatureValue = md5(`90.00:ord-payer-fee:${merchant.token}`);
		expect((await postForm(h.url, under)).status).toBe(422);
	});

	describe('payout postbacks are confirmed with payout/status', () => {
		/** A payout of 100.00 in `status`, and the signed fields of a payout postback for it. */
		async function payoutIn(status: 'FAIL' | 'ERROR' | 'DECLINED' | 'SUCCESS', orderId: string) {
			const res = await fetch(`${sb.url}/api/v1/payout/personal/create`, {
				method: 'POST',
				headers: { authorization: `Bearer ${merchant.token}`, accept: 'application/json' },
				body: new URLSearchParams({
					amount: '100.00',
					payout_account_id: merchant.payoutAccountId,
					order_id: orderId,
				}),
			});
			const id = ((await res.json()) as { data: Array<{ id: string }> }).data[0].id;
			await control(sb, 'POST', `/payouts/${id}/advance`, { status });
			// Amount = 100.00 + the sandbox's fee (2 % + 10.00): the signature covers Amount and TrsId.
			const signed = (Status: string) => ({
				TrsId: id,
				Amount: '112.00',
				Status,
				SignatureValue: md5(`112.00:${id}:${merchant.token}`),
			});
			return { id, signed };
		}

		it('a FAIL postback is confirmed by a FAIL or an ERROR record; DECLINED only by DECLINED; SUCCESS only by SUCCESS', async () => {
			const h = await trigger({ event: 'payout' });
			const error = await payoutIn('ERROR', 'po-family-error');
			expect(await postForm(h.url, error.signed('FAIL'))).toMatchObject({
				status: 200,
				receipt: 'accepted',
			});
			expect(h.executions.at(-1)?.[0][0].json).toMatchObject({
				confirmed: true,
				Status: 'FAIL',
				status: 'ERROR',
				payout: { id: error.id, status: 'ERROR' },
			});
			const failed = await payoutIn('FAIL', 'po-family-fail');
			expect((await postForm(h.url, failed.signed('FAIL'))).receipt).toBe('accepted');
			for (const [record, postback] of [
				['ERROR', 'SUCCESS'],
				['ERROR', 'DECLINED'],
				['FAIL', 'DECLINED'],
				['DECLINED', 'FAIL'],
				['SUCCESS', 'FAIL'],
			] as const) {
				const other = await payoutIn(record, `po-family-${record}-${postback}`);
				const refused = await postForm(h.url, other.signed(postback));
				expect(refused.status, `${postback} postback, ${record} record`).toBe(422);
				expect(refused.text).toContain(`the service shows the payout as ${record}`);
			}
			const declined = await payoutIn('DECLINED', 'po-family-declined');
			expect((await postForm(h.url, declined.signed('DECLINED'))).receipt).toBe('accepted');
			expect(h.executions).toHaveLength(3);
		});

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
			const genuine = await waitFor(
				`the payout postback of ${id}`,
				async () => {
					const { data } = await control<{ data: Array<{ body: Record<string, string> }> }>(
						sb,
						'GET',
						`/deliveries?kind=payout&trsId=${id}`,
					);
					return data[0]?.body;
				},
				OUTSIDE,
			);
			// The signature covers Amount and TrsId only: the same call saying DECLINED would make a
			// workflow pay again. The service says SUCCESS.
			const declined = await postForm(h.url, { ...genuine, Status: 'DECLINED' });
			expect(declined.status).toBe(422);
			expect((await postForm(h.url, genuine)).receipt).toBe('accepted');
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
			const r = await postForm(h.url, failed.redirect.fields);
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
});
