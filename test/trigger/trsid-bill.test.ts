/**
 * Confirmation that works whichever id TrsId is: the payment's id, or (some deployments) the
 * bill's. When it names a bill, each payment of the bill is one event and one execution.
 */
import { describe, expect, it } from 'vitest';
import { resetProcessMemory } from '../../dist/nodes/PayPalychTrigger/memory.js';
import { PROFILES, type TestMerchant } from '../helpers/sandbox.ts';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';
import { startTrigger, postForm } from '../helpers/trigger-harness.ts';
import { triggerSandbox, type Paid } from '../helpers/trigger-sandbox.ts';

describe.each(PROFILES)('sandbox profile %s, TrsId is the bill id', (profile) => {
	let merchant: TestMerchant;
	const open: WebhookHarness[] = [];

	const { bill, pay } = triggerSandbox({
		profile,
		// No live extras: the postbacks of one MULTI link's payments are then byte-identical.
		// Two payments a page: bill/payments must be read to its last page.
		merchant: { liveExtras: false, trsId: 'bill', paymentsPageSize: 2, errorForm: 'error_code' },
		open,
		started: (_sb, made) => {
			merchant = made;
		},
	});

	/** The spec profile shows no bill's order ID: Bill ID Only there. */
	async function trigger(parameters: Record<string, unknown> = {}) {
		const h = await startTrigger(
			{ event: 'payment', ...(profile === 'spec' ? { orderCheck: 'billId' } : {}), ...parameters },
			merchant.credential,
		);
		open.push(h);
		return h;
	}

	it('a NORMAL bill: its payment starts one execution with payment.id the service payment id; retries start nothing', async () => {
		const h = await trigger();
		const billId = await bill('60.00', `ord-normal-${profile}`);
		const paid = await pay(billId);
		const postback = paid.postback as Record<string, string>;
		expect(postback.TrsId).toBe(billId);
		expect(await postForm(h.url, postback)).toMatchObject({ status: 200, receipt: 'accepted' });
		for (let i = 0; i < 2; i++) expect((await postForm(h.url, postback)).receipt).toBe('duplicate');
		expect(h.executions).toHaveLength(1);
		expect(h.executions[0][0][0].json).toMatchObject({
			confirmed: true,
			paid: true,
			trsIdNames: 'bill',
			TrsId: billId,
			billId,
			amount: '60.00',
			eventKey: `payment-${paid.payment.id}-SUCCESS`,
			payment: { id: paid.payment.id, bill_id: billId },
		});
	});

	it('five payments of one MULTI link, their postbacks byte-identical, start five executions each with its own payment.id; retries start nothing more', async () => {
		const h = await trigger();
		const billId = await bill('25.00', `link-${profile}`, { type: 'multi' });
		const paid: Paid[] = [];
		for (let i = 0; i < 5; i++) paid.push(await pay(billId));
		const bodies = paid.map((p) => new URLSearchParams(p.postback!).toString());
		expect(new Set(bodies).size).toBe(1);
		const postback = paid[0].postback as Record<string, string>;
		for (let i = 0; i < 5; i++) {
			expect(await postForm(h.url, postback), `postback ${i + 1}`).toMatchObject({
				status: 200,
				receipt: 'accepted',
			});
		}
		// The service's retries (of any of them): none left to claim.
		for (let i = 0; i < 3; i++) expect((await postForm(h.url, postback)).receipt).toBe('duplicate');
		resetProcessMemory(); // a restarted n8n keeps the workflow's static data
		expect((await postForm(h.url, postback)).receipt).toBe('duplicate');
		const ids = h.executions.map((e) => (e[0][0].json.payment as { id: string }).id);
		expect(ids.sort()).toEqual(paid.map((p) => p.payment.id).sort());
		expect(new Set(h.executions.map((e) => e[0][0].json.eventKey)).size).toBe(5);
		// A sixth payment of the link later: its postback (the same fields again) starts it.
		const sixth = await pay(billId);
		expect((await postForm(h.url, sixth.postback!)).receipt).toBe('accepted');
		expect(h.executions.at(-1)?.[0][0].json.payment).toMatchObject({ id: sixth.payment.id });
	});

	it('a forged or unknown TrsId is refused with the error_code form: asked to retry, then 422 once the relay has waited 15 minutes', async () => {
		const h = await trigger();
		const failed = await pay(await bill('70.00', `ord-forged-${profile}`), 'fail');
		const forged = { ...failed.redirect.fields, TrsId: 'no-such-id', Status: 'SUCCESS' };
		const r = await postForm(h.url, forged);
		expect(r).toMatchObject({ status: 503, receipt: 'retry' });
		expect(r.text).toContain('payment_not_found');
		// As the relay forwards it 16 minutes after it received it.
		const late = await fetch(h.url, {
			method: 'POST',
			headers: {
				'content-type': 'application/x-www-form-urlencoded',
				'x-paypalych-received-at': String(Date.now() - 16 * 60_000),
			},
			body: new URLSearchParams(forged).toString(),
		});
		expect(late.status).toBe(422);
		// The bill of a failed payment named as TrsId with Status SUCCESS: refused (its only payment failed).
		const asBill = await postForm(h.url, { ...forged, TrsId: failed.postback!.TrsId });
		expect(asBill.status).toBe(422);
		expect(h.executions).toHaveLength(0);
	});
});
