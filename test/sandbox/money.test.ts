import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, listener, md5, type Harness } from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

let h: Harness;
beforeAll(async () => {
	h = await harness();
});
afterAll(async () => {
	await h.close();
});

/** RUB balance as cents, from the API's 8-decimal strings. */
async function rub(token: string): Promise<{ available: number; locked: number }> {
	const answer = await h.api('GET', 'merchant/balance', {}, token);
	const entry = answer.body.balances.find((b: { currency: string }) => b.currency === 'RUB');
	const cents = (text: string) => Math.round(Number(text) * 100);
	return { available: cents(entry.balance_available), locked: cents(entry.balance_locked) };
}

describe('payments move money', () => {
	it('merchant pays the 3 % commission by default: OutSum = amount, credit = amount - commission', async () => {
		const m = await h.merchant({ balances: { RUB: '0' } });
		const bill = await h.api(
			'POST',
			'bill/create',
			{ amount: '1000.00', shop_id: m.shopId },
			m.token,
		);
		const pay = await h.control('POST', `bills/${bill.body.bill_id}/pay`, { outcome: 'full' });
		expect(pay.body.payment).toMatchObject({
			status: 'SUCCESS',
			amount: 1000,
			amount_received: 970,
			commission: 30,
		});
		expect(await rub(m.token)).toEqual({ available: 97000, locked: 0 });
	});

	it('payer_pays_commission=1 puts the commission on top: OutSum = amount + commission, credit = amount', async () => {
		const m = await h.merchant({ balances: { RUB: '0' }, liveExtras: true });
		const shop = await h.control('PATCH', `shops/${m.shopId}`, {
			resultUrl: 'http://127.0.0.1:9/unused',
		});
		expect(shop.status).toBe(200);
		const bill = await h.api(
			'POST',
			'bill/create',
			{ amount: '18.00', shop_id: m.shopId, payer_pays_commission: '1', order_id: 'o-18' },
			m.token,
		);
		const pay = await h.control('POST', `bills/${bill.body.bill_id}/pay`, { outcome: 'full' });
		expect(pay.body.payment).toMatchObject({
			status: 'SUCCESS',
			amount: 18.54,
			amount_received: 18,
		});
		expect(pay.body.postback).toMatchObject({
			OutSum: '18.54',
			Commission: '0.54',
			BalanceAmount: '18.00',
			InvId: 'o-18',
		});
		expect(pay.body.postback.SignatureValue).toBe(md5(`18.54:o-18:${m.token}`));
		expect(await rub(m.token)).toEqual({ available: 1800, locked: 0 });
	});

	it('under, over and fail outcomes: UNDERPAID and OVERPAID credit what was paid, FAIL credits nothing', async () => {
		const m = await h.merchant({ balances: { RUB: '0' } });
		const bill = await h.api(
			'POST',
			'bill/create',
			{ amount: '100', shop_id: m.shopId, type: 'multi' },
			m.token,
		);
		const id = bill.body.bill_id;
		const under = await h.control('POST', `bills/${id}/pay`, { outcome: 'under' });
		expect(under.body.payment).toMatchObject({
			status: 'UNDERPAID',
			amount: 50,
			amount_received: 48.5,
		});
		expect((await h.api('GET', 'bill/status', { id }, m.token)).body.status).toBe('UNDERPAID');
		const over = await h.control('POST', `bills/${id}/pay`, { outcome: 'over' });
		expect(over.body.payment).toMatchObject({
			status: 'OVERPAID',
			amount: 150,
			amount_received: 145.5,
		});
		const fail = await h.control('POST', `bills/${id}/pay`, { outcome: 'fail' });
		expect(fail.body.payment).toMatchObject({ status: 'FAIL', amount_received: 0 });
		expect((await h.api('GET', 'bill/status', { id }, m.token)).body.status).toBe('FAIL');
		const exact = await h.control('POST', `bills/${id}/pay`, { amount: '100.00' });
		expect(exact.body.payment.status).toBe('SUCCESS');
		const partial = await h.control('POST', `bills/${id}/pay`, { amount: '99.99' });
		expect(partial.body.payment.status).toBe('UNDERPAID');
		expect(await rub(m.token)).toEqual({ available: 4850 + 14550 + 9700 + 9699, locked: 0 });
		expect((await h.api('GET', 'bill/payments', { id }, m.token)).body.data).toHaveLength(5);
	});

	it('outcome process leaves a payment in PROCESS: bill PROCESS, no credit, no postback', async () => {
		const m = await h.merchant({ balances: { RUB: '0' } });
		await h.control('PATCH', `shops/${m.shopId}`, {
			resultUrl: 'http://127.0.0.1:9/unused',
			successUrl: 'http://127.0.0.1:9/ok',
		});
		const bill = await h.api('POST', 'bill/create', { amount: '10', shop_id: m.shopId }, m.token);
		const pay = await h.control('POST', `bills/${bill.body.bill_id}/pay`, { outcome: 'process' });
		expect(pay.body.payment).toMatchObject({ status: 'PROCESS', amount_received: 0 });
		expect(pay.body.postback).toBeNull();
		expect(pay.body.redirect.url).toBeNull();
		expect(
			(await h.api('GET', 'bill/status', { id: bill.body.bill_id }, m.token)).body.status,
		).toBe('PROCESS');
		expect(await rub(m.token)).toEqual({ available: 0, locked: 0 });
		expect((await h.control('GET', `deliveries?trsId=${pay.body.payment.id}`)).body.data).toEqual(
			[],
		);
		expect(
			(await h.control('POST', `bills/${bill.body.bill_id}/pay`, { outcome: 'full' })).status,
		).toBe(200);
	});

	it('credits the balance of the bill currency', async () => {
		const m = await h.merchant();
		const bill = await h.api(
			'POST',
			'bill/create',
			{ amount: '10', shop_id: m.shopId, currency_in: 'USD' },
			m.token,
		);
		await h.control('POST', `bills/${bill.body.bill_id}/pay`, { outcome: 'full' });
		const balance = await h.api('GET', 'merchant/balance', {}, m.token);
		expect(
			balance.body.balances.find((b: { currency: string }) => b.currency === 'USD')
				.balance_available,
		).toBe('9.70000000');
	});

	it('a NORMAL bill takes another payment after FAIL or UNDERPAID, but none after SUCCESS', async () => {
		const m = await h.merchant();
		const bill = await h.api('POST', 'bill/create', { amount: '10', shop_id: m.shopId }, m.token);
		const id = bill.body.bill_id;
		expect((await h.control('POST', `bills/${id}/pay`, { outcome: 'fail' })).status).toBe(200);
		expect((await h.control('POST', `bills/${id}/pay`, { outcome: 'under' })).status).toBe(200);
		expect((await h.control('POST', `bills/${id}/pay`, { outcome: 'full' })).status).toBe(200);
		expect((await h.control('POST', `bills/${id}/pay`, { outcome: 'full' })).status).toBe(409);
		expect(
			(await h.api('GET', 'bill/payments', { id }, m.token)).body.data.map(
				(p: { status: string }) => p.status,
			),
		).toEqual(['FAIL', 'UNDERPAID', 'SUCCESS']);
	});
});

describe('payouts', () => {
	it('locks amount + commission (2 % + 10.00) on creation', async () => {
		const m = await h.merchant({ balances: { RUB: '1000.00' } });
		const created = await h.api(
			'POST',
			'payout/personal/create',
			{ amount: '500', payout_account_id: m.payoutAccountId },
			m.token,
		);
		expect(created.body.data[0]).toMatchObject({
			amount: 500,
			commission: 20,
			status: 'MODERATING',
		});
		expect(await rub(m.token)).toEqual({ available: 48000, locked: 52000 });
	});

	it('splits above the split size into parts with the same order_id, all returned', async () => {
		const m = await h.merchant({ balances: { RUB: '10000' }, payoutSplitSize: '1000.00' });
		const created = await h.api(
			'POST',
			'payout/personal/create',
			{ amount: '2500.50', payout_account_id: m.payoutAccountId, order_id: 'split-1' },
			m.token,
		);
		expect(created.status).toBe(200);
		expect(created.body.data.map((p: { amount: number }) => p.amount)).toEqual([1000, 1000, 500.5]);
		expect(new Set(created.body.data.map((p: { id: string }) => p.id)).size).toBe(3);
		// Each part carries the request's order_id (the live profile shows it).
		for (const payout of created.body.data) expect(payout.order_id).toBe('split-1');
		const parts = (await h.control('GET', `payouts?merchantId=${m.merchantId}`)).body.data;
		expect(parts.map((p: { order_id: string }) => p.order_id)).toEqual([
			'split-1',
			'split-1',
			'split-1',
		]);
		const commissions = created.body.data.reduce(
			(sum: number, p: { commission: number }) => sum + Math.round(p.commission * 100),
			0,
		);
		expect(commissions).toBe(3000 + 3000 + 2001);
		expect(await rub(m.token)).toEqual({
			available: 1000000 - 250050 - commissions,
			locked: 250050 + commissions,
		});
		const status = await h.api('GET', 'payout/status', { order_id: 'split-1' }, m.token);
		expect(status.body.id).toBe(created.body.data[0].id);
		const regular = await h.api(
			'POST',
			'payout/regular/create',
			{
				amount: '1000.01',
				currency: 'RUB',
				account_type: 'sbp',
				account_identifier: '79001234567',
				account_bank: '100000000004',
			},
			m.token,
		);
		expect(regular.body.data).toHaveLength(2);
	});

	it('SUCCESS debits the locked money; FAIL, ERROR and DECLINED return it; a final payout does not move', async () => {
		const m = await h.merchant({ balances: { RUB: '1000' } });
		const make = async () =>
			(
				await h.api(
					'POST',
					'payout/personal/create',
					{ amount: '100', payout_account_id: m.payoutAccountId },
					m.token,
				)
			).body.data[0].id as string;
		const ok = await make();
		expect(
			(await h.control('POST', `payouts/${ok}/advance`, { status: 'PROCESS' })).body.status,
		).toBe('PROCESS');
		expect((await h.api('GET', 'payout/status', { id: ok }, m.token)).body.status).toBe('PROCESS');
		expect(
			(await h.control('POST', `payouts/${ok}/advance`, { status: 'SUCCESS' })).body.status,
		).toBe('SUCCESS');
		expect(await rub(m.token)).toEqual({ available: 100000 - 11200, locked: 0 });
		for (const status of ['FAIL', 'ERROR', 'DECLINED']) {
			const id = await make();
			expect(await rub(m.token)).toEqual({ available: 100000 - 11200 - 11200, locked: 11200 });
			await h.control('POST', `payouts/${id}/advance`, { status });
			expect(await rub(m.token)).toEqual({ available: 100000 - 11200, locked: 0 });
			expect((await h.api('GET', 'payout/status', { id }, m.token)).body.status).toBe(status);
		}
		const again = await h.control('POST', `payouts/${ok}/advance`, { status: 'FAIL' });
		expect(again.status).toBe(409);
		expect(await rub(m.token)).toEqual({ available: 100000 - 11200, locked: 0 });
	});

	it('limits count live payouts only: a declined payout frees its share of the daily limit', async () => {
		const m = await h.merchant({ dailyPayoutLimit: '100' });
		const first = await h.api(
			'POST',
			'payout/personal/create',
			{ amount: '100', payout_account_id: m.payoutAccountId },
			m.token,
		);
		expect(first.status).toBe(200);
		expect(
			(
				await h.api(
					'POST',
					'payout/personal/create',
					{ amount: '1', payout_account_id: m.payoutAccountId },
					m.token,
				)
			).body.message,
		).toBe('api:error.daily_payout_limit_exceeded');
		await h.control('POST', `payouts/${first.body.data[0].id}/advance`, { status: 'DECLINED' });
		expect(
			(
				await h.api(
					'POST',
					'payout/personal/create',
					{ amount: '100', payout_account_id: m.payoutAccountId },
					m.token,
				)
			).status,
		).toBe(200);
	});

	it('daily limit resets on the next day, the monthly limit on the next month', async () => {
		const m = await h.merchant({ dailyPayoutLimit: '100', monthlyPayoutLimit: '250' });
		const pay = (amount: string) =>
			h.api(
				'POST',
				'payout/personal/create',
				{ amount, payout_account_id: m.payoutAccountId },
				m.token,
			);
		try {
			await h.control('POST', 'clock', { now: '2031-05-01T10:00:00Z' });
			expect((await pay('100')).status).toBe(200);
			expect((await pay('1')).body.message).toBe('api:error.daily_payout_limit_exceeded');
			await h.control('POST', 'clock', { now: '2031-05-02T10:00:00Z' });
			expect((await pay('100')).status).toBe(200);
			await h.control('POST', 'clock', { now: '2031-05-03T10:00:00Z' });
			expect((await pay('50.01')).body.message).toBe('api:error.monthly_payout_limit_exceeded');
			expect((await pay('50')).status).toBe(200);
			await h.control('POST', 'clock', { now: '2031-06-01T10:00:00Z' });
			expect((await pay('100')).status).toBe(200);
		} finally {
			await h.control('POST', 'clock', { now: null });
		}
	});

	it('moves payouts by themselves with autoAdvanceMs, sending the SUCCESS payout postback', async () => {
		const hook = await listener();
		const auto = await harness({ autoAdvanceMs: 20, timeFactor: 1 });
		try {
			await auto.control('PATCH', `merchants/${auto.sb.merchantId}`, {
				payoutWebhookUrl: `${hook.url}/payout`,
			});
			const created = await auto.api('POST', 'payout/personal/create', {
				amount: '100',
				payout_account_id: auto.sb.payoutAccountId,
			});
			const id = created.body.data[0].id;
			await waitFor(
				'auto SUCCESS',
				async () => (await auto.api('GET', 'payout/status', { id })).body.status === 'SUCCESS',
			);
			const postback = await waitFor('payout postback', () => hook.received[0]);
			expect(postback.fields).toMatchObject({ TrsId: id, Status: 'SUCCESS', Amount: '112.00' });
			expect(hook.received).toHaveLength(1);
		} finally {
			await auto.close();
			await hook.close();
		}
	});
});
