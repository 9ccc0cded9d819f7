// The trigger's other events and answers: receipts a relay reads, payout postbacks, the item's
// fields, success and fail redirects, lifecycle and memory. Payment postbacks: trigger.test.ts.
import type { IDataObject } from 'n8n-workflow';
import { describe, expect, it } from 'vitest';
import { PayPalychTrigger } from '../../dist/nodes/PayPalychTrigger/PayPalychTrigger.node.js';
import { CONFIRMABLE_FIELDS as CONFIRMABLE } from '../../dist/nodes/shared/index.js';
import { SEEN_HASHES_FIELD, SeenPostbacks } from '../../dist/nodes/PayPalychTrigger/memory.js';
import { MAX_BODY_BYTES } from '../../dist/nodes/PayPalychTrigger/request.js';
import { callWebhookMethod } from '../helpers/webhook-harness.ts';
import {
	FORM,
	TOKEN,
	TYPE,
	form,
	harness,
	hashOf,
	md5,
	payment,
	payout,
	post,
	redirect,
	useTriggerHarness,
} from './postbacks.ts';

useTriggerHarness();

describe('answers a relay can read', () => {
	const receipt = (r: { headers: Headers }) => r.headers.get('x-paypalych-receipt');

	it('says what it did in X-PayPalych-Receipt on every answer', async () => {
		const h = await harness({ event: 'payment', paymentStatuses: ['SUCCESS'] });
		expect(receipt(await post(h.url, form(payment())))).toBe('accepted');
		expect(receipt(await post(h.url, form(payment())))).toBe('duplicate');
		expect(receipt(await post(h.url, form(payment({ Status: 'FAIL', TrsId: 'F' }))))).toBe(
			'ignored',
		);
		const forged = await post(h.url, form(payment({}, 'forger')));
		expect([forged.status, receipt(forged)]).toEqual([401, 'rejected']);
		const garbage = await post(h.url, 'a=1&a=2');
		expect([garbage.status, receipt(garbage)]).toEqual([400, 'rejected']);
		const r = await harness({ event: 'success', redirectUrl: 'https://shop.example/thanks' });
		const redirected = await post(r.url, form(redirect()));
		expect([redirected.status, receipt(redirected)]).toEqual([303, 'accepted']);
	});

	it('ignores a call a relay forwarded as another event (success and fail redirects look alike)', async () => {
		const h = await harness({ event: 'success' });
		const other = await post(h.url, form(redirect()), FORM, { 'X-PayPalych-Event': 'fail' });
		expect([other.status, other.text, receipt(other)]).toEqual([200, 'OK', 'ignored']);
		const own = await post(h.url, form(redirect()), FORM, { 'X-PayPalych-Event': 'success' });
		expect([own.status, receipt(own)]).toEqual([200, 'accepted']);
		const p = await harness({ event: 'payout' });
		const payment1 = await post(p.url, form(payment()), FORM, { 'X-PayPalych-Event': 'payment' });
		expect([payment1.status, receipt(payment1)]).toEqual([200, 'ignored']);
		expect(h.calls.map((c) => c.started)).toEqual([false, true]);
		expect(p.calls.map((c) => c.started)).toEqual([false]);
	});
});

describe('payout postback', () => {
	it('accepts a valid payout postback signed over Amount:TrsId', async () => {
		const h = await harness({ event: 'payout' });
		const fields = payout();
		expect(await post(h.url, form(fields))).toMatchObject({ status: 200, text: 'OK' });
		const item = h.executions[0][0][0].json;
		const unverified = item.unverified as Record<string, string>;
		for (const [name, value] of Object.entries(fields)) {
			if (CONFIRMABLE.payout.includes(name)) expect(item[name]).toBe(value);
			else expect(unverified[name]).toBe(value);
		}
		expect(item).toMatchObject({
			event: 'payout',
			verified: true,
			AmountNumber: 1000,
			unverified: { Commission: '15.00', IsAuto: 'false' },
		});
		expect(item).not.toHaveProperty('CommissionNumber');
	});

	it('refuses a payout signed over the fields in the wrong order, a forged one, a re-formatted one and one without Amount', async () => {
		const h = await harness({ event: 'payout' });
		expect(
			(await post(h.url, form(payout({ SignatureValue: md5(`PO-1:1000.00:${TOKEN}`) })))).status,
		).toBe(401);
		expect(await post(h.url, form(payout({}, 'nope')))).toMatchObject({ status: 401 });
		const noAmount = payout();
		delete noAmount.Amount;
		expect((await post(h.url, form(noAmount))).status).toBe(401);
		expect(
			(
				await post(
					h.url,
					form(payout({ Amount: '1000', SignatureValue: md5(`1000.00:PO-1:${TOKEN}`) })),
				)
			).status,
		).toBe(401);
		expect(h.executions).toHaveLength(0);
	});

	it('accepts a lower-case signature and a JSON body with a boolean', async () => {
		const h = await harness({ event: 'payout' });
		const fields = payout({ TrsId: 'PO-json' });
		const json = JSON.stringify({
			...fields,
			IsAuto: true,
			SignatureValue: fields.SignatureValue.toLowerCase(),
		});
		expect((await post(h.url, json, 'application/json')).status).toBe(200);
		expect(h.executions[0][0][0].json).toMatchObject({
			unverified: { IsAuto: 'true' },
			TrsId: 'PO-json',
		});
	});

	it('deduplicates and filters payout statuses', async () => {
		const h = await harness({ event: 'payout', payoutStatuses: ['DECLINED', 'FAIL'] });
		expect((await post(h.url, form(payout({ Status: 'SUCCESS' })))).status).toBe(200);
		expect((await post(h.url, form(payout({ Status: 'DECLINED' })))).status).toBe(200);
		expect((await post(h.url, form(payout({ Status: 'DECLINED' })))).status).toBe(200);
		expect(h.calls.map((c) => c.started)).toEqual([false, true, false]);
	});

	it('refuses an oversized payout body with 400', async () => {
		const h = await harness({ event: 'payout' });
		const r = await post(
			h.url,
			JSON.stringify({ ...payout(), Pad: 'p'.repeat(MAX_BODY_BYTES) }),
			'application/json',
		);
		expect(r.status).toBe(400);
		expect(h.executions).toHaveLength(0);
	});
});

describe("the item of every event: unsigned fields never sit under the trigger's names", () => {
	// What a sender adds to a body: the trigger's own names and the names a workflow reads as verdicts.
	const forged = {
		paid: 'true',
		confirmed: 'true',
		payment: 'forged',
		payout: 'forged',
		status: 'SUCCESS',
		orderConfirmed: 'true',
		eventKey: 'payment-forged-SUCCESS',
		event: 'payment',
		verified: 'yes',
		unverified: 'none',
		paymentProof: 'true',
		customerSentTo: 'https://evil.example',
		receivedAt: '2000-01-01',
		OutSumNumber: '999999',
	};
	for (const event of ['payment', 'payout', 'success', 'fail'] as const) {
		it(`${event}: forged verdict fields go under unverified, the trigger's values stay`, async () => {
			const h = await harness({ event, paymentStatuses: [], payoutStatuses: [] });
			const body =
				event === 'payment'
					? payment({ ...forged, Status: 'UNDERPAID' })
					: event === 'payout'
						? payout({ ...forged, Status: 'FAIL' })
						: redirect(forged);
			const r = await post(h.url, form(body));
			expect(r.status).toBeLessThan(400);
			expect(h.executions).toHaveLength(1);
			const item = h.executions[0][0][0].json as Record<string, unknown>;
			expect(item.unverified).toMatchObject(forged);
			expect(item.event).toBe(event);
			expect(item.verified).toBe(true);
			expect(typeof item.receivedAt).toBe('string');
			expect(item.receivedAt).not.toBe(forged.receivedAt);
			for (const name of ['confirmed', 'payment', 'payout', 'orderConfirmed'])
				expect(item[name], name).not.toBe((forged as Record<string, string>)[name]);
			if (event === 'payment') {
				expect(item).toMatchObject({ paid: false, status: 'UNDERPAID', confirmed: false });
				expect(item.eventKey).toBe('payment-PAY-7f3a-UNDERPAID');
			} else if (event === 'payout') {
				expect(item).toMatchObject({ status: 'FAIL', confirmed: false });
				expect(item).not.toHaveProperty('paid');
				expect(item.eventKey).toBe('payout-PO-1-FAIL');
			} else {
				// A redirect proves nothing: no paid, status or eventKey at all, whatever was sent.
				for (const name of ['paid', 'status', 'eventKey', 'confirmed', 'payment'])
					expect(item, name).not.toHaveProperty(name);
				expect(item).toMatchObject({ paymentProof: false, customerSentTo: 'plain page' });
				expect(item.OutSumNumber).toBe(18.5);
			}
		});
	}
});

describe('success and fail redirects', () => {
	it('sends the customer on with 303 to the page set, and starts the workflow', async () => {
		const h = await harness({
			event: 'success',
			redirectUrl: 'https://shop.example.com/thanks?from=pal',
		});
		const fields = redirect();
		const r = await post(h.url, form(fields));
		expect(r.status).toBe(303);
		expect(r.headers.get('location')).toBe('https://shop.example.com/thanks?from=pal');
		expect(h.executions).toHaveLength(1);
		const item = h.executions[0][0][0].json;
		const { custom, CurrencyIn, ...signed } = fields;
		expect(item).toMatchObject({
			...signed,
			unverified: { custom, CurrencyIn },
			event: 'success',
			verified: true,
			paymentProof: false,
			customerSentTo: 'https://shop.example.com/thanks?from=pal',
			OutSumNumber: 18.5,
		});
		// A redirect proves no payment: the item never claims one.
		expect(item).not.toHaveProperty('paid');
	});

	it('shows a plain page with every received value escaped when no page is set', async () => {
		const h = await harness({ event: 'success' });
		const r = await post(h.url, form(redirect({ InvId: '<script>alert(1)</script>' })));
		expect(r.status).toBe(200);
		expect(r.headers.get('content-type')).toMatch(/^text\/html/);
		expect(r.text).toContain('Payment successful');
		expect(r.text).not.toContain('<script>');
		expect(r.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
		expect(h.executions).toHaveLength(1);
	});

	it('fail redirect: page says the payment failed; a JavaScript URL is never used as the target', async () => {
		const h = await harness({ event: 'fail', redirectUrl: 'javascript:alert(1)' });
		const r = await post(h.url, form(redirect()));
		expect(r.status).toBe(200);
		expect(r.text).toContain('Payment failed');
		expect(r.headers.get('location')).toBeNull();
		expect(h.executions[0][0][0].json).toMatchObject({
			event: 'fail',
			paymentProof: false,
			customerSentTo: 'plain page',
		});
		expect(h.executions[0][0][0].json).not.toHaveProperty('paid');
	});

	it('refuses a forged, re-formatted or incomplete redirect with 401 and starts nothing', async () => {
		const h = await harness({ event: 'fail', redirectUrl: 'https://shop.example.com/retry' });
		expect((await post(h.url, form(redirect({}, 'forger')))).status).toBe(401);
		expect(
			(
				await post(
					h.url,
					form(redirect({ OutSum: '18.5', SignatureValue: md5(`18.50:order-1001:${TOKEN}`) })),
				)
			).status,
		).toBe(401);
		const noInv = redirect();
		delete noInv.InvId;
		expect((await post(h.url, form(noInv))).status).toBe(401);
		expect(h.executions).toHaveLength(0);
	});

	it('does not deduplicate redirects (a customer may come back twice) and accepts lower case', async () => {
		const h = await harness({ event: 'success' });
		const fields = redirect();
		await post(h.url, form(fields));
		await post(h.url, form({ ...fields, SignatureValue: fields.SignatureValue.toLowerCase() }));
		expect(h.calls.map((c) => [c.status, c.started])).toEqual([
			[200, true],
			[200, true],
		]);
	});
});

describe('lifecycle and memory', () => {
	const options = {
		nodeType: new PayPalychTrigger(),
		typeName: TYPE,
		credentialType: 'payPalychApi',
		credentials: { apiToken: TOKEN, baseUrl: 'https://pal24.pro' },
	};

	it.each([
		['payment', 'Result URL'],
		['payout', 'payout webhook URL under Webhooks'],
		['success', 'Success URL'],
		['fail', 'Fail URL'],
		['refund', 'Refund URL'],
		['chargeback', 'Chargeback URL'],
	])(
		'%s: registers nothing at the service, succeeds and says where to paste the production URL',
		async (event, where) => {
			const exists = await callWebhookMethod({ ...options, parameters: { event } }, 'checkExists');
			expect(exists.result).toBe(false);
			const created = await callWebhookMethod({ ...options, parameters: { event } }, 'create');
			expect(created.result).toBe(true);
			const message = created.logs.map((l) => l.message).join('\n');
			expect(message).toContain(created.productionUrl);
			expect(message).toContain(where);
			expect(message).toContain('cannot register');
			const deleted = await callWebhookMethod({ ...options, parameters: { event } }, 'delete');
			expect(deleted.result).toBe(true);
		},
	);

	it('the memory keeps the newest keys in order and drops the oldest', () => {
		const data: IDataObject = {};
		const seen = new SeenPostbacks(data, 'wf-unit:Trigger', 3);
		for (const k of ['a', 'b', 'c', 'd']) seen.remember(k);
		expect(seen.has('a')).toBe(false);
		expect(['b', 'c', 'd'].map((k) => seen.has(k))).toEqual([true, true, true]);
		seen.remember('b');
		seen.remember('e');
		expect(data[SEEN_HASHES_FIELD]).toBe(['c', 'd', 'e'].map(hashOf).join(''));
		expect(seen.has('b')).toBe(false);
	});

	it('a payment trigger with Also Accept says to paste its URL as the Refund and Chargeback URL too', async () => {
		const parameters = { event: 'payment', alsoAccept: ['refund', 'chargeback'] };
		const created = await callWebhookMethod({ ...options, parameters }, 'create');
		const message = created.logs.map((l) => l.message).join('\n');
		expect(message).toContain('Result URL');
		expect(message).toContain('and as the Refund URL and as the Chargeback URL');
	});

	it('the node is a trigger that is not usable as a tool and offers the six events', () => {
		const d = new PayPalychTrigger().description;
		expect(d.name).toBe('payPalychTrigger');
		expect(d.inputs).toEqual([]);
		expect(d.usableAsTool).not.toBe(true);
		expect(d.webhooks).toEqual([
			expect.objectContaining({ httpMethod: 'POST', responseMode: 'onReceived' }),
		]);
		const event = d.properties.find((p) => p.name === 'event');
		// Payment first, in the order a merchant needs them (test/trigger/panel.test.ts: the names).
		expect(event?.options?.map((o) => (o as { value: string }).value)).toEqual([
			'payment',
			'refund',
			'chargeback',
			'payout',
			'success',
			'fail',
		]);
	});
});
