// The sandbox can lose postbacks (per merchant, per bill, per payment): the service gives up
// without sending anything, and its records still show the payment or payout.
import { describe, expect, it } from 'vitest';
import { harnessAndListener, type Harness, type Listener } from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

let h: Harness;
let shop: Listener;
harnessAndListener((started, listening) => {
	h = started;
	shop = listening;
});

describe('losing postbacks', () => {
	it('per payment, per bill and per merchant: nothing is sent, the log says lost, the records are unchanged', async () => {
		const m = await h.merchant({
			verified: true,
			subscription: 'active',
			balances: { RUB: '1000.00' },
			payoutWebhookUrl: `${shop.url}/payout`,
			shop: { resultUrl: `${shop.url}/result` },
		});
		const bill = async (amount: string) =>
			(await h.api('POST', 'bill/create', { amount, shop_id: m.shopId }, m.token)).body
				.bill_id as string;
		const deliveries = async (trsId: string) =>
			(await h.control('GET', `deliveries?trsId=${trsId}`)).body.data as Array<
				Record<string, unknown>
			>;

		// One payment's postback lost, through the pay call.
		const b1 = await bill('10.00');
		const lost = (await h.control('POST', `bills/${b1}/pay`, { losePostback: true })).body;
		expect(lost.postback.TrsId).toBe(lost.payment.id);
		// A bill switched to lose its postbacks.
		const b2 = await bill('20.00');
		expect((await h.control('PATCH', `bills/${b2}`, { losePostback: true })).body).toMatchObject({
			losePostback: true,
		});
		const lost2 = (await h.control('POST', `bills/${b2}/pay`, {})).body;
		// A normal bill still posts.
		const b3 = await bill('30.00');
		const sent = (await h.control('POST', `bills/${b3}/pay`, {})).body;
		await waitFor('the postback that was not lost', () =>
			shop.received.find((r) => r.fields.TrsId === sent.payment.id),
		);

		for (const p of [lost, lost2]) {
			expect(await deliveries(p.payment.id)).toEqual([
				expect.objectContaining({
					lost: true,
					delivered: false,
					status: null,
					nextAttemptInMs: null,
				}),
			]);
			expect(shop.received.some((r) => r.fields.TrsId === p.payment.id)).toBe(false);
		}
		// The service's records show both payments paid.
		for (const id of [b1, b2]) {
			const payments = (await h.api('GET', 'bill/payments', { id }, m.token)).body.data;
			expect(payments.map((p: { status: string }) => p.status)).toEqual(['SUCCESS']);
		}

		// The whole merchant: its payout postback is lost too.
		expect(
			(await h.control('PATCH', `merchants/${m.merchantId}`, { losePostbacks: true })).body
				.losePostbacks,
		).toBe(true);
		const b4 = await bill('40.00');
		const lost4 = (await h.control('POST', `bills/${b4}/pay`, {})).body;
		const payout = (
			await h.api(
				'POST',
				'payout/personal/create',
				{ amount: '50.00', payout_account_id: m.payoutAccountId, order_id: 'lose-1' },
				m.token,
			)
		).body.data[0];
		await h.control('POST', `payouts/${payout.id}/advance`, { status: 'SUCCESS' });
		for (const id of [lost4.payment.id, payout.id])
			expect((await deliveries(id)).map((d) => d.lost)).toEqual([true]);
		expect(shop.received.map((r) => r.fields.TrsId)).toEqual([sent.payment.id]);
	});
});
