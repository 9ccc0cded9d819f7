/**
 * The sandbox's balances move with every payment (what it credited, after commission), refund,
 * chargeback and payout, on both profiles, so a daily statement ties out to zero there; and the
 * control call balance-adjustment moves a balance by an amount nothing explains. The records carry
 * what a statement reads: each profile's fields are checked here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './helpers.ts';

let h: Harness;
beforeAll(async () => {
	h = await harness();
});
afterAll(async () => {
	await h.close();
});

const cents = (value: unknown) => Math.round(Number(value) * 100);

/** available + locked + hold per currency, in cents, from merchant/balance. */
async function totals(token: string): Promise<Record<string, number>> {
	const answer = await h.api('GET', 'merchant/balance', {}, token);
	const out: Record<string, number> = {};
	for (const b of answer.body.balances as Array<Record<string, string>>) {
		out[b.currency] = cents(b.balance_available) + cents(b.balance_locked) + cents(b.balance_hold);
	}
	return out;
}

describe.each(['live', 'spec'] as const)('balances tie out, profile %s', (profile) => {
	async function merchant() {
		const m = await h.merchant({
			profile,
			balances: { RUB: '0', USD: '0', EUR: '0' },
			refunds: true,
			liveExtras: true,
			newPaymentFields: profile === 'live',
		});
		const paid = async (amount: string, currency: string, outcome = 'full') => {
			const bill = await h.api(
				'POST',
				'bill/create',
				{ amount, shop_id: m.shopId, currency_in: currency },
				m.token,
			);
			const made = (await h.control('POST', `bills/${bill.body.bill_id}/pay`, { outcome })).body;
			// The payment as the service's API answers it (the merchant's profile and fields).
			return (await h.api('GET', 'payment/status', { id: made.payment.id }, m.token))
				.body as Record<string, unknown>;
		};
		return { m, paid };
	}

	it('moves each balance by what each payment credited, each refund and chargeback took and each payout debited', async () => {
		const { m, paid } = await merchant();
		const before = await totals(m.token);
		const rub = await paid('1000.00', 'RUB');
		const under = await paid('200.00', 'RUB', 'under');
		const usd = await paid('100.00', 'USD');
		await paid('50.00', 'RUB', 'fail');
		if (profile === 'live') {
			expect(rub).toMatchObject({
				commission: 30,
				account_amount: 970,
				account_currency_code: 'RUB',
			});
			expect(rub).not.toHaveProperty('amount_received');
		} else {
			expect(rub).toMatchObject({ commission: 30, amount_received: 970 });
		}
		const credited = (p: Record<string, unknown>) => cents(p.account_amount ?? p.amount_received);
		let rubEffect = credited(rub) + credited(under);
		let usdEffect = credited(usd);
		expect(await totals(m.token)).toMatchObject({
			RUB: before.RUB + rubEffect,
			USD: before.USD + usdEffect,
		});

		const refund = (await h.control('POST', `payments/${rub.id}/refund`, { amount: '100.00' }))
			.body;
		rubEffect -= cents(refund.refund.amount);
		expect(refund.payment.refunded_amount).toBe('100.00');
		const back = (await h.control('POST', `payments/${usd.id}/chargeback`, { amount: '40.00' }))
			.body;
		usdEffect -= cents(back.payment.charged_back_amount);
		expect(back.chargeback).toHaveProperty(profile === 'live' ? 'status' : 'amount');
		expect(await totals(m.token)).toMatchObject({
			RUB: before.RUB + rubEffect,
			USD: before.USD + usdEffect,
		});

		const payout = async (status: string | null) => {
			const made = await h.api(
				'POST',
				'payout/personal/create',
				{ amount: '100.00', payout_account_id: m.payoutAccountId },
				m.token,
			);
			const id = made.body.data[0].id as string;
			if (status !== null) await h.control('POST', `payouts/${id}/advance`, { status });
			return (await h.control('GET', `payouts/${id}`)).body as Record<string, unknown>;
		};
		const ok = await payout('SUCCESS');
		await payout('FAIL');
		await payout('DECLINED');
		const pending = await payout(null);
		expect(pending.status).toBe('MODERATING');
		// The record's own debit: account_amount in live; amount and commission (the sender pays by
		// default) where the interface document's record shows no account_amount.
		rubEffect -= cents(ok.account_amount ?? cents(ok.amount) / 100 + cents(ok.commission) / 100);
		if (profile === 'live') expect(ok).toMatchObject({ account_amount: 112, commission: 12 });
		expect(await totals(m.token)).toMatchObject({
			RUB: before.RUB + rubEffect,
			USD: before.USD + usdEffect,
		});
	});

	it('moves a balance by an unexplained adjustment, and refuses a bad one without moving anything', async () => {
		const { m } = await merchant();
		const before = await totals(m.token);
		const moved = await h.control('POST', `merchants/${m.merchantId}/balance-adjustment`, {
			currency: 'RUB',
			amount: '-12.34',
		});
		expect(moved.status).toBe(200);
		expect(moved.body.balances.RUB.available).toBe('-12.34');
		const held = await h.control('POST', `merchants/${m.merchantId}/balance-adjustment`, {
			currency: 'USD',
			amount: 5,
			balance: 'hold',
		});
		expect(held.body.balances.USD.hold).toBe('5.00');
		expect(await totals(m.token)).toMatchObject({ RUB: before.RUB - 1234, USD: before.USD + 500 });
		for (const bad of [
			{ currency: 'RUB', amount: '0' },
			{ currency: 'RUB', amount: '1.234' },
			{ currency: 'GBP', amount: '1' },
			{ currency: 'RUB', amount: 'ten' },
			{ currency: 'RUB', amount: '1', balance: 'frozen' },
		]) {
			const refused = await h.control('POST', `merchants/${m.merchantId}/balance-adjustment`, bad);
			expect(refused.status).toBe(400);
		}
		expect(await totals(m.token)).toMatchObject({ RUB: before.RUB - 1234, USD: before.USD + 500 });
		const unknown = await h.control('POST', 'merchants/nobody/balance-adjustment', {
			currency: 'RUB',
			amount: '1',
		});
		expect(unknown.status).toBe(404);
	});
});
