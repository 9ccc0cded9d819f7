// The sandbox's authentication, merchant state and bill errors, as the interface document writes
// them. Payout errors and validation: errors-payouts.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, today, type Harness } from './helpers.ts';

let h: Harness;
beforeAll(async () => {
	h = await harness();
});
afterAll(async () => {
	await h.close();
});

type M = { merchantId: string; token: string; shopId: string; payoutAccountId: string };
type Call = {
	name: string;
	method: 'GET' | 'POST';
	path: string;
	params: (m: M, ids: Ids) => Record<string, string>;
};
type Ids = { bill: string; payment: string; payout: string };

const CALLS: Call[] = [
	{
		name: 'bill/create',
		method: 'POST',
		path: 'bill/create',
		params: (m) => ({ amount: '10', shop_id: m.shopId }),
	},
	{
		name: 'bill/toggle_activity',
		method: 'POST',
		path: 'bill/toggle_activity',
		params: (_m, ids) => ({ id: ids.bill, active: '1' }),
	},
	{
		name: 'bill/payments',
		method: 'GET',
		path: 'bill/payments',
		params: (_m, ids) => ({ id: ids.bill }),
	},
	{
		name: 'bill/status',
		method: 'GET',
		path: 'bill/status',
		params: (_m, ids) => ({ id: ids.bill }),
	},
	{
		name: 'bill/search',
		method: 'GET',
		path: 'bill/search',
		params: () => ({ start_date: today(), finish_date: today() }),
	},
	{
		name: 'payment/status',
		method: 'GET',
		path: 'payment/status',
		params: (_m, ids) => ({ id: ids.payment }),
	},
	{ name: 'merchant/balance', method: 'GET', path: 'merchant/balance', params: () => ({}) },
	{
		name: 'payout/personal/create',
		method: 'POST',
		path: 'payout/personal/create',
		params: (m) => ({ amount: '10', payout_account_id: m.payoutAccountId }),
	},
	{
		name: 'payout/regular/create',
		method: 'POST',
		path: 'payout/regular/create',
		params: () => ({
			amount: '10',
			currency: 'RUB',
			account_type: 'credit_card',
			account_identifier: '2200700012345678',
			card_holder: 'A B',
		}),
	},
	{
		name: 'payout/status',
		method: 'GET',
		path: 'payout/status',
		params: (_m, ids) => ({ id: ids.payout }),
	},
	{
		name: 'payout/search',
		method: 'GET',
		path: 'payout/search',
		params: () => ({ start_date: today(), finish_date: today() }),
	},
	{
		name: 'payout/dictionaries/sbp_banks',
		method: 'GET',
		path: 'payout/dictionaries/sbp_banks',
		params: () => ({}),
	},
];

/** Expected answers written from the interface document (not read from the sandbox). */
const PAYOUT_CREATE = new Set(['payout/personal/create', 'payout/regular/create']);
const SUBSCRIPTION_CHECKED = new Set([
	'bill/create',
	'bill/toggle_activity',
	'merchant/balance',
	'payout/personal/create',
	'payout/regular/create',
	'payout/status',
	'payout/search',
]);

async function merchantWithData(): Promise<{ m: M; ids: Ids }> {
	const m = await h.merchant();
	const bill = await h.api(
		'POST',
		'bill/create',
		{ amount: '10', shop_id: m.shopId, type: 'multi' },
		m.token,
	);
	const pay = await h.control('POST', `bills/${bill.body.bill_id}/pay`, { outcome: 'full' });
	const payout = await h.api(
		'POST',
		'payout/personal/create',
		{ amount: '5', payout_account_id: m.payoutAccountId },
		m.token,
	);
	return {
		m,
		ids: { bill: bill.body.bill_id, payment: pay.body.payment.id, payout: payout.body.data[0].id },
	};
}

describe('authentication', () => {
	it('answers 401 Unauthenticated on every endpoint without a token, with a wrong one, and with a rotated one', async () => {
		const { m, ids } = await merchantWithData();
		const rotated = await h.control('POST', `merchants/${m.merchantId}/rotate-token`);
		expect(rotated.body.token).toMatch(/^\d+\|[A-Za-z0-9]{40}$/);
		for (const call of CALLS) {
			for (const token of [null, 'wrong|token', m.token]) {
				const answer = await h.api(call.method, call.path, call.params(m, ids), token);
				expect(answer.status, `${call.name} with ${token}`).toBe(401);
				expect(answer.body).toEqual({ message: 'Unauthenticated.' });
			}
			const ok = await h.api(call.method, call.path, call.params(m, ids), rotated.body.token);
			expect(ok.status, `${call.name} with the new token`).toBe(200);
		}
	});

	it('rejects a non-Bearer scheme', async () => {
		const response = await fetch(`${h.sb.url}/api/v1/merchant/balance`, {
			headers: { authorization: `Basic ${h.token}` },
		});
		expect(response.status).toBe(401);
	});
});

describe('merchant state errors on every endpoint', () => {
	it('merchant_banned: 400 on payout creation, 403 elsewhere', async () => {
		const { m, ids } = await merchantWithData();
		await h.control('PATCH', `merchants/${m.merchantId}`, { banned: true });
		for (const call of CALLS) {
			const answer = await h.api(call.method, call.path, call.params(m, ids), m.token);
			expect(answer.status, call.name).toBe(PAYOUT_CREATE.has(call.name) ? 400 : 403);
			expect(answer.body, call.name).toEqual({
				success: false,
				message: 'api:error.merchant_banned',
			});
		}
	});

	it('merchant_not_found: 400 on payout creation, 403 elsewhere', async () => {
		const { m, ids } = await merchantWithData();
		await h.control('PATCH', `merchants/${m.merchantId}`, { exists: false });
		for (const call of CALLS) {
			const answer = await h.api(call.method, call.path, call.params(m, ids), m.token);
			expect(answer.status, call.name).toBe(PAYOUT_CREATE.has(call.name) ? 400 : 403);
			expect(answer.body.message, call.name).toBe('api:error.merchant_not_found');
		}
	});

	for (const [subscription, key] of [
		['inactive', 'merchant_subscription_inactive'],
		['none', 'merchant_subscription_not_found'],
	] as const) {
		it(`${key} where the endpoint checks the subscription; other endpoints still answer`, async () => {
			const { m, ids } = await merchantWithData();
			await h.control('PATCH', `merchants/${m.merchantId}`, { subscription });
			for (const call of CALLS) {
				const answer = await h.api(call.method, call.path, call.params(m, ids), m.token);
				if (SUBSCRIPTION_CHECKED.has(call.name)) {
					expect(answer.status, call.name).toBe(PAYOUT_CREATE.has(call.name) ? 400 : 403);
					expect(answer.body.message, call.name).toBe(`api:error.${key}`);
				} else {
					expect(answer.status, call.name).toBe(200);
				}
			}
		});
	}

	it('merchant_not_verified (400) only on payout creation', async () => {
		const { m, ids } = await merchantWithData();
		await h.control('PATCH', `merchants/${m.merchantId}`, { verified: false });
		for (const call of CALLS) {
			const answer = await h.api(call.method, call.path, call.params(m, ids), m.token);
			if (PAYOUT_CREATE.has(call.name)) {
				expect(answer.status, call.name).toBe(400);
				expect(answer.body.message).toBe('api:error.merchant_not_verified');
			} else {
				expect(answer.status, call.name).toBe(200);
			}
		}
	});

	it('checks banned before the subscription, and the subscription before validation', async () => {
		const m = await h.merchant({ banned: true, subscription: 'none' });
		const banned = await h.api('POST', 'bill/create', {}, m.token);
		expect(banned.body.message).toBe('api:error.merchant_banned');
		await h.control('PATCH', `merchants/${m.merchantId}`, { banned: false });
		const sub = await h.api('POST', 'bill/create', {}, m.token);
		expect(sub.body.message).toBe('api:error.merchant_subscription_not_found');
	});
});

describe('bill errors', () => {
	it('invalid_amount (403) for zero, negative, over-precise and too large amounts', async () => {
		for (const amount of ['0', '-5', '1.005', '100000000', '0.00']) {
			const answer = await h.api('POST', 'bill/create', { amount, shop_id: h.sb.shopId });
			expect(answer.status, amount).toBe(403);
			expect(answer.body, amount).toEqual({ success: false, message: 'api:error.invalid_amount' });
		}
		const ok = await h.api('POST', 'bill/create', { amount: '99999999.99', shop_id: h.sb.shopId });
		expect(ok.status).toBe(200);
	});

	it('shop_not_found, access_denied, shop_not_enabled and rate-not-found (all 403)', async () => {
		const other = await h.merchant();
		const cases: Array<[Record<string, string>, string]> = [
			[{ shop_id: 'NoSuchShop' }, 'shop_not_found'],
			[{ shop_id: other.shopId }, 'access_denied'],
			[{ shop_id: h.sb.shopId, currency_in: 'GBP' }, 'rate-not-found'],
		];
		for (const [params, key] of cases) {
			const answer = await h.api('POST', 'bill/create', { amount: '10', ...params });
			expect(answer.status, key).toBe(403);
			expect(answer.body.message, key).toBe(`api:error.${key}`);
		}
		const denied = await h.control('POST', 'shops', { accessDenied: true });
		expect(
			(await h.api('POST', 'bill/create', { amount: '10', shop_id: denied.body.shopId })).body
				.message,
		).toBe('api:error.access_denied');
		const disabled = await h.control('POST', 'shops', { enabled: false });
		const off = await h.api('POST', 'bill/create', { amount: '10', shop_id: disabled.body.shopId });
		expect(off.status).toBe(403);
		expect(off.body.message).toBe('api:error.shop_not_enabled');
		const gbp = await h.control('POST', 'shops', { defaultCurrency: 'GBP' });
		expect(
			(await h.api('POST', 'bill/create', { amount: '10', shop_id: gbp.body.shopId })).body.message,
		).toBe('api:error.rate-not-found');
	});

	it('bill_not_found: 422 on status and toggle, 403 on payments; other merchants bills are not found', async () => {
		const other = await h.merchant();
		const foreign = await h.api(
			'POST',
			'bill/create',
			{ amount: '10', shop_id: other.shopId },
			other.token,
		);
		for (const id of ['NoSuchBill', foreign.body.bill_id]) {
			const status = await h.api('GET', 'bill/status', { id });
			expect(status.status).toBe(422);
			expect(status.body).toEqual({ success: false, message: 'api:error.bill_not_found' });
			const toggle = await h.api('POST', 'bill/toggle_activity', { id, active: '0' });
			expect(toggle.status).toBe(422);
			expect(toggle.body.message).toBe('api:error.bill_not_found');
			const payments = await h.api('GET', 'bill/payments', { id });
			expect(payments.status).toBe(403);
			expect(payments.body.message).toBe('api:error.bill_not_found');
		}
	});

	it('bill_is_finished (403) when toggling a paid NORMAL bill, not a paid MULTI bill', async () => {
		for (const outcome of ['full', 'over']) {
			const normal = await h.api('POST', 'bill/create', { amount: '10', shop_id: h.sb.shopId });
			await h.control('POST', `bills/${normal.body.bill_id}/pay`, { outcome });
			for (const active of ['0', '1']) {
				const answer = await h.api('POST', 'bill/toggle_activity', {
					id: normal.body.bill_id,
					active,
				});
				expect(answer.status).toBe(403);
				expect(answer.body.message).toBe('api:error.bill_is_finished');
			}
			const again = await h.control('POST', `bills/${normal.body.bill_id}/pay`, {
				outcome: 'full',
			});
			expect(again.status).toBe(409);
			expect(again.body.error).toBe('bill_is_finished');
		}
		const multi = await h.api('POST', 'bill/create', {
			amount: '10',
			shop_id: h.sb.shopId,
			type: 'multi',
		});
		await h.control('POST', `bills/${multi.body.bill_id}/pay`, { outcome: 'full' });
		expect(
			(await h.api('POST', 'bill/toggle_activity', { id: multi.body.bill_id, active: '0' })).status,
		).toBe(200);
	});

	it('too_many_payments (400) above the merchant threshold', async () => {
		const m = await h.merchant({ tooManyPaymentsThreshold: 2 });
		const bill = await h.api(
			'POST',
			'bill/create',
			{ amount: '10', shop_id: m.shopId, type: 'multi' },
			m.token,
		);
		for (let i = 0; i < 2; i += 1)
			await h.control('POST', `bills/${bill.body.bill_id}/pay`, { outcome: 'full' });
		expect((await h.api('GET', 'bill/payments', { id: bill.body.bill_id }, m.token)).status).toBe(
			200,
		);
		await h.control('POST', `bills/${bill.body.bill_id}/pay`, { outcome: 'full' });
		const answer = await h.api('GET', 'bill/payments', { id: bill.body.bill_id }, m.token);
		expect(answer.status).toBe(400);
		expect(answer.body).toEqual({ success: false, message: 'api:error.too_many_payments' });
	});

	it('payment_not_found (422)', async () => {
		const answer = await h.api('GET', 'payment/status', { id: 'NoSuchPayment' });
		expect(answer.status).toBe(422);
		expect(answer.body).toEqual({ success: false, message: 'api:error.payment_not_found' });
	});
});
