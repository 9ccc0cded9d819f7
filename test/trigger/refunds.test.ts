/**
 * Refund and chargeback postbacks at the trigger, fed by the sandbox (an independent
 * implementation of the service): the Refund and Chargeback events, Also Accept on a payment
 * trigger, confirmation with the service (refund/status, or payment/status?refunds=1 where the
 * refund API is off; payment/status?chargeback=1) and dedupe.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../sandbox/src/index.ts';
import { PROFILES } from '../helpers/sandbox.ts';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';
import { postForm, startTrigger } from '../helpers/trigger-harness.ts';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
type Fields = Record<string, string>;

const TOKEN = '93|sandboxRefundToken0123456789abcdefGHIJ';
const md5 = (s: string) => createHash('md5').update(s).digest('hex').toUpperCase();
/** The service's rules written by hand (docs/developer/service.md), for calls the test forges. */
const signRefund = (f: Fields) =>
	md5(`${f.Amount}:${f.Currency}:${f.BillId}:${f.PaymentId}:${f.Id}:${TOKEN}`);

describe.each(PROFILES)('sandbox profile %s', (profile) => {
	let sb: Sandbox;
	const t: Record<'refund' | 'chargeback' | 'all' | 'payment', WebhookHarness> = {} as never;
	let allShop = '';
	/** A shop without notification URLs: its refunds post nothing, the test sends them. */
	let quietShop = '';
	let order = 0;

	async function control(method: string, path: string, body?: unknown): Promise<any> {
		const response = await fetch(`${sb.url}/_sandbox/${path}`, {
			method,
			headers: body === undefined ? {} : { 'content-type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.text();
		if (!response.ok) throw new Error(`control ${method} ${path}: ${response.status} ${text}`);
		return JSON.parse(text);
	}

	/** A paid bill of the shop: its bill, payment and order ids. */
	async function paidBill(shopId: string, amount = '100.00') {
		const orderId = `rf-${profile}-${++order}`;
		const response = await fetch(`${sb.url}/api/v1/bill/create`, {
			method: 'POST',
			headers: { authorization: `Bearer ${sb.token}`, accept: 'application/json' },
			body: new URLSearchParams({ amount, shop_id: shopId, order_id: orderId }),
		});
		const bill = (await response.json()) as { bill_id: string };
		const paid = await control('POST', `bills/${bill.bill_id}/pay`, { outcome: 'full' });
		return { billId: bill.bill_id, paymentId: paid.payment.id as string, orderId };
	}

	/** Waits for the sandbox's finished delivery of a refund or chargeback (it sends in the background). */
	async function delivered(kind: 'refund' | 'chargeback' | 'payment', id: string) {
		for (let i = 0; i < 500; i++) {
			const { data } = await control(
				'GET',
				`deliveries?kind=${kind}&trsId=${encodeURIComponent(id)}`,
			);
			const done = (data as Array<{ status: number | null }>).filter((d) => d.status !== null);
			if (done.length > 0) return done as Array<{ status: number; body: Fields; response: string }>;
			await new Promise((resolve) => setTimeout(resolve, 20));
		}
		throw new Error(`no ${kind} delivery for ${id}`);
	}

	const itemsOf = (h: WebhookHarness) => h.executions.map((run) => run[0][0].json);

	beforeAll(async () => {
		sb = await startSandbox({
			port: 0,
			token: TOKEN,
			timeFactor: 0.001,
			liveExtras: true,
			profile,
		});
		const credentials = { apiToken: sb.token, baseUrl: sb.url };
		// spec: the service shows no order id for bills (Order Check: Bill ID Only).
		const check = profile === 'spec' ? { orderCheck: 'billId' } : {};
		t.refund = await startTrigger({ event: 'refund', ...check }, credentials);
		t.chargeback = await startTrigger({ event: 'chargeback', ...check }, credentials);
		t.all = await startTrigger(
			{ event: 'payment', alsoAccept: ['refund', 'chargeback'], ...check },
			credentials,
		);
		t.payment = await startTrigger({ event: 'payment', ...check }, credentials);
		// The demo shop: each URL its own trigger.
		await control('PATCH', `shops/${sb.shopId}`, {
			resultUrl: t.payment.url,
			refundUrl: t.refund.url,
			chargebackUrl: t.chargeback.url,
		});
		// A second shop with one URL pasted into all three fields.
		const shop = await control('POST', 'shops', { name: 'one url' });
		allShop = shop.shopId;
		await control('PATCH', `shops/${allShop}`, {
			resultUrl: t.all.url,
			refundUrl: t.all.url,
			chargebackUrl: t.all.url,
		});
	});

	beforeAll(async () => {
		quietShop = (await control('POST', 'shops', { name: 'quiet' })).shopId;
	});

	afterAll(async () => {
		await Promise.all(Object.values(t).map((h) => h?.close()));
		await sb?.close();
	});

	it('a refund (refund API off: confirmed through payment/status?refunds=1) starts one execution; replays in other spellings start nothing', async () => {
		const { billId, paymentId, orderId } = await paidBill(sb.shopId);
		const made = await control('POST', `payments/${paymentId}/refund`, { amount: '30.50' });
		const [first] = await delivered('refund', made.refund.id);
		expect(first).toMatchObject({ status: 200, response: 'OK' });
		expect(itemsOf(t.refund)).toHaveLength(1);
		const item = itemsOf(t.refund)[0];
		expect(item).toMatchObject({
			event: 'refund',
			verified: true,
			confirmed: true,
			refunded: true,
			refundStatus: 'SUCCESS',
			Id: made.refund.id,
			PaymentId: paymentId,
			BillId: billId,
			InvId: orderId,
			Amount: '30.50',
			AmountNumber: 30.5,
			eventKey: `refund-${made.refund.id}-SUCCESS`,
			orderConfirmed: profile === 'live',
			// The service's record as it answered it: its payment as the entity in `live` (the typed
			// client's refund record), as `payment_id` in `spec`.
			refund:
				profile === 'live'
					? { id: made.refund.id, entity_type: 'payment', entity_id: paymentId }
					: { id: made.refund.id, payment_id: paymentId },
			payment: { id: paymentId, bill_id: billId },
		});
		// Nothing in it reads as a payment.
		for (const name of ['paid', 'status', 'Status', 'OutSum'])
			expect(item).not.toHaveProperty(name);

		// The same postback again, and in other spellings of its Status and Id.
		const body = first.body;
		for (const replay of [
			body,
			{ ...body, Status: ' success' },
			// Another spelling of the signed Id too, signed as the service would sign it.
			{ ...body, Status: 'Success', Id: ` ${body.Id} ` },
		]) {
			if (replay.Id !== body.Id) replay.SignatureValue = signRefund(replay);
			const answer = await postForm(t.refund.url, replay);
			expect(answer.status, JSON.stringify(replay)).toBe(200);
		}
		expect(itemsOf(t.refund)).toHaveLength(1);
	});

	it('with the refund API on, a refund is confirmed by refund/status', async () => {
		await control('PATCH', `merchants/${sb.merchantId}`, { refunds: true });
		try {
			const { paymentId } = await paidBill(sb.shopId);
			const before = itemsOf(t.refund).length;
			const made = await control('POST', `payments/${paymentId}/refund`, {});
			const [first] = await delivered('refund', made.refund.id);
			expect(first.status).toBe(200);
			expect(itemsOf(t.refund)).toHaveLength(before + 1);
			expect(itemsOf(t.refund).at(-1)).toMatchObject({
				refund: { id: made.refund.id, amount: 100 },
				refunded: true,
			});
		} finally {
			await control('PATCH', `merchants/${sb.merchantId}`, { refunds: false });
		}
	});

	it('a valid signature on an id the service does not know, or on another bill or order, starts nothing; the genuine postback after them does', async () => {
		const a = await paidBill(quietShop);
		const b = await paidBill(quietShop);
		const made = await control('POST', `payments/${a.paymentId}/refund`, { amount: '1.00' });
		expect(made.postback).toBeNull();
		const before = itemsOf(t.refund).length;
		const genuine: Fields = {
			Id: made.refund.id,
			Amount: '1.00',
			Currency: 'RUB',
			Status: 'SUCCESS',
			InvId: a.orderId,
			BillId: a.billId,
			PaymentId: a.paymentId,
		};
		const signed = (f: Fields) => ({ ...f, SignatureValue: signRefund(f) });

		// An id the service does not know (yet): asked to come back, nothing started.
		const answerUnknown = await postForm(t.refund.url, signed({ ...genuine, Id: 'R-not-known-1' }));
		expect(answerUnknown).toMatchObject({ status: 503, receipt: 'retry' });

		// The genuine refund's Id and payment, but the other bill (and its order).
		const answerOther = await postForm(
			t.refund.url,
			signed({ ...genuine, BillId: b.billId, InvId: b.orderId }),
		);
		expect(answerOther).toMatchObject({ status: 422, receipt: 'rejected' });
		expect(answerOther.text).toContain(`belongs to bill ${a.billId}`);

		// The genuine signed values with the other bill's order in InvId (not signed).
		if (profile === 'live') {
			const answerOrder = await postForm(t.refund.url, { ...signed(genuine), InvId: b.orderId });
			expect(answerOrder).toMatchObject({ status: 422, receipt: 'rejected' });
		}
		expect(itemsOf(t.refund)).toHaveLength(before);

		// None of them took the genuine postback's place.
		const answer = await postForm(t.refund.url, signed(genuine));
		expect(answer).toMatchObject({ status: 200, receipt: 'accepted' });
		expect(itemsOf(t.refund)).toHaveLength(before + 1);
	});

	it('with the refund API on, refund/status decides: "not found" there is a retry, not a look at the payment', async () => {
		await control('PATCH', `merchants/${sb.merchantId}`, { refunds: true });
		try {
			const { paymentId, billId, orderId } = await paidBill(quietShop);
			const made = await control('POST', `payments/${paymentId}/refund`, { amount: '5.00' });
			const genuine: Fields = {
				Id: made.refund.id,
				Amount: '5.00',
				Currency: 'RUB',
				Status: 'SUCCESS',
				InvId: orderId,
				BillId: billId,
				PaymentId: paymentId,
			};
			genuine.SignatureValue = signRefund(genuine);
			const before = itemsOf(t.refund).length;
			await control('POST', 'faults', {
				kind: 'error',
				key: 'refund_not_found',
				count: 1,
				path: '/api/v1/refund/status',
			});
			expect(await postForm(t.refund.url, genuine)).toMatchObject({
				status: 503,
				receipt: 'retry',
			});
			expect(itemsOf(t.refund)).toHaveLength(before);
			expect(await postForm(t.refund.url, genuine)).toMatchObject({
				status: 200,
				receipt: 'accepted',
			});
			expect(itemsOf(t.refund)).toHaveLength(before + 1);
		} finally {
			await control('DELETE', 'faults');
			await control('PATCH', `merchants/${sb.merchantId}`, { refunds: false });
		}
	});

	it('one URL in all three fields with Also Accept: a payment, its refund and its chargeback each start it once, with event', async () => {
		const { paymentId } = await paidBill(allShop);
		await delivered('payment', paymentId).catch(() => undefined);
		const refund = await control('POST', `payments/${paymentId}/refund`, { amount: '10.00' });
		await delivered('refund', refund.refund.id);
		const chargeback = await control('POST', `payments/${paymentId}/chargeback`, {});
		const [cb] = await delivered('chargeback', chargeback.chargeback.id);
		expect(cb.status).toBe(200);
		const items = itemsOf(t.all);
		expect(items.map((item) => item.event)).toEqual(['payment', 'refund', 'chargeback']);
		expect(items[0]).toMatchObject({ paid: true, payment: { id: paymentId } });
		expect(items[1]).toMatchObject({ refunded: true, refund: { id: refund.refund.id } });
		expect(items[1]).not.toHaveProperty('paid');
		expect(items[2]).toMatchObject({
			chargedBack: true,
			chargebackStatus: 'SUCCESS',
			chargeback: { id: chargeback.chargeback.id },
			payment: { id: paymentId },
		});
		expect(items[2]).not.toHaveProperty('paid');
	});

	it('without Also Accept, a payment trigger refuses a refund with a 503 the service retries, and the log names the fix', async () => {
		const { paymentId } = await paidBill(sb.shopId);
		const made = await control('POST', `payments/${paymentId}/refund`, { amount: '2.00' });
		const [first] = await delivered('refund', made.refund.id);
		const before = itemsOf(t.payment).length;
		const answer = await postForm(t.payment.url, first.body);
		expect(answer).toMatchObject({ status: 503, receipt: 'retry', retryAfter: '60' });
		// Forwarded by the relay with the event header: decided by the body, never ignored with an OK.
		const forwarded = await fetch(t.payment.url, {
			method: 'POST',
			headers: {
				'content-type': 'application/x-www-form-urlencoded',
				'x-paypalych-event': 'refund',
			},
			body: new URLSearchParams(first.body).toString(),
		});
		expect(forwarded.status).toBe(503);
		expect(itemsOf(t.payment)).toHaveLength(before);
		expect(
			t.payment.logs.some(
				(entry) =>
					entry.level === 'warn' &&
					entry.message.includes('Also Accept') &&
					entry.message.includes('Refund URL'),
			),
		).toBe(true);
		// So does a Payout trigger (a refund is never taken as a payout, nor answered OK).
		const payout = await startTrigger({ event: 'payout' }, { apiToken: sb.token, baseUrl: sb.url });
		try {
			expect(await postForm(payout.url, first.body)).toMatchObject({
				status: 503,
				receipt: 'retry',
			});
			expect(payout.executions).toHaveLength(0);
		} finally {
			await payout.close();
		}
		// A Refund trigger refuses a chargeback the same way.
		const chargeback = await control('POST', `payments/${paymentId}/chargeback`, {});
		const [cb] = await delivered('chargeback', chargeback.chargeback.id);
		const atRefund = await postForm(t.refund.url, cb.body);
		expect(atRefund).toMatchObject({ status: 503, receipt: 'retry' });
	});

	it('a chargeback starts one execution of the Chargeback trigger; a replay starts nothing', async () => {
		const { paymentId, billId } = await paidBill(sb.shopId);
		const before = itemsOf(t.chargeback).length;
		const made = await control('POST', `payments/${paymentId}/chargeback`, { amount: '40.00' });
		const [first] = await delivered('chargeback', made.chargeback.id);
		expect(first.status).toBe(200);
		expect(itemsOf(t.chargeback)).toHaveLength(before + 1);
		const item = itemsOf(t.chargeback).at(-1);
		expect(item).toMatchObject({
			event: 'chargeback',
			confirmed: true,
			chargedBack: true,
			chargebackStatus: 'SUCCESS',
			BillId: billId,
			chargeback: { id: made.chargeback.id, payment_id: paymentId },
			payment: { id: paymentId },
		});
		expect(item).not.toHaveProperty('status');
		expect((await postForm(t.chargeback.url, { ...first.body, Status: 'success ' })).status).toBe(
			200,
		);
		expect(itemsOf(t.chargeback)).toHaveLength(before + 1);
	});
});
