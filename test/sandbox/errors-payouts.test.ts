// The sandbox's payout errors and its validation answers (Laravel style), as the interface
// document writes them. Authentication, merchant state and bill errors: errors.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './helpers.ts';

let h: Harness;
beforeAll(async () => {
	h = await harness();
});
afterAll(async () => {
	await h.close();
});

type M = Awaited<ReturnType<Harness['merchant']>>;

describe('payout errors (all 400)', () => {
	async function expectKey(m: M, path: string, params: Record<string, string>, key: string) {
		const answer = await h.api('POST', path, params, m.token);
		expect(answer.status, key).toBe(400);
		expect(answer.body, key).toEqual({ success: false, message: `api:error.${key}` });
	}
	const card = {
		currency: 'RUB',
		account_type: 'credit_card',
		account_identifier: '2200700012345678',
		card_holder: 'A B',
	};

	it('invalid_amount, payout_account_not_found, payout_account_banned, direction_not_available', async () => {
		const m = await h.merchant();
		const personal = 'payout/personal/create';
		await expectKey(
			m,
			personal,
			{ amount: '0', payout_account_id: m.payoutAccountId },
			'invalid_amount',
		);
		await expectKey(m, 'payout/regular/create', { amount: '-1', ...card }, 'invalid_amount');
		await expectKey(
			m,
			personal,
			{ amount: '10', payout_account_id: 'NoSuchAccount' },
			'payout_account_not_found',
		);
		const other = await h.merchant();
		await expectKey(
			m,
			personal,
			{ amount: '10', payout_account_id: other.payoutAccountId },
			'payout_account_not_found',
		);
		const banned = await h.control('POST', 'payout-accounts', {
			merchantId: m.merchantId,
			banned: true,
		});
		await expectKey(
			m,
			personal,
			{ amount: '10', payout_account_id: banned.body.payoutAccountId },
			'payout_account_banned',
		);
		const closed = await h.control('POST', 'payout-accounts', {
			merchantId: m.merchantId,
			directionAvailable: false,
		});
		await expectKey(
			m,
			personal,
			{ amount: '10', payout_account_id: closed.body.payoutAccountId },
			'direction_not_available',
		);
		await h.control('PATCH', `merchants/${m.merchantId}`, { regularDirections: ['sbp'] });
		await expectKey(
			m,
			'payout/regular/create',
			{ amount: '10', ...card },
			'direction_not_available',
		);
	});

	it('daily_payout_limit_exceeded, monthly_payout_limit_exceeded, balance_not_enough, too_many_payouts', async () => {
		const m = await h.merchant({ dailyPayoutLimit: '100.00', monthlyPayoutLimit: '150.00' });
		const personal = 'payout/personal/create';
		expect(
			(
				await h.api(
					'POST',
					personal,
					{ amount: '60', payout_account_id: m.payoutAccountId },
					m.token,
				)
			).status,
		).toBe(200);
		await expectKey(
			m,
			personal,
			{ amount: '40.01', payout_account_id: m.payoutAccountId },
			'daily_payout_limit_exceeded',
		);
		await expectKey(
			m,
			'payout/regular/create',
			{ amount: '40.01', ...card },
			'daily_payout_limit_exceeded',
		);
		await h.control('PATCH', `merchants/${m.merchantId}`, { dailyPayoutLimit: null });
		expect(
			(
				await h.api(
					'POST',
					personal,
					{ amount: '90', payout_account_id: m.payoutAccountId },
					m.token,
				)
			).status,
		).toBe(200);
		await expectKey(
			m,
			personal,
			{ amount: '0.01', payout_account_id: m.payoutAccountId },
			'monthly_payout_limit_exceeded',
		);
		await h.control('PATCH', `merchants/${m.merchantId}`, {
			monthlyPayoutLimit: null,
			balances: { RUB: '50.00' },
		});
		await expectKey(
			m,
			personal,
			{ amount: '50', payout_account_id: m.payoutAccountId },
			'balance_not_enough',
		);
		await expectKey(m, 'payout/regular/create', { amount: '50', ...card }, 'balance_not_enough');
		await h.control('PATCH', `merchants/${m.merchantId}`, {
			payoutSplitSize: '0.01',
			balances: { RUB: '100000' },
		});
		await expectKey(
			m,
			personal,
			{ amount: '10.01', payout_account_id: m.payoutAccountId },
			'too_many_payouts',
		);
	});

	it("answers 403 'This action is unauthorized.' for regular payouts without access", async () => {
		const m = await h.merchant({ regularPayoutsEnabled: false });
		const answer = await h.api('POST', 'payout/regular/create', { amount: '10', ...card }, m.token);
		expect(answer.status).toBe(403);
		expect(answer.body).toEqual({ message: 'This action is unauthorized.' });
		expect(
			(
				await h.api(
					'POST',
					'payout/personal/create',
					{ amount: '10', payout_account_id: m.payoutAccountId },
					m.token,
				)
			).status,
		).toBe(200);
	});

	it('payout_not_found (422) and 422 without id or order_id', async () => {
		const missing = await h.api('GET', 'payout/status', { id: 'NoSuchPayout' });
		expect(missing.status).toBe(422);
		expect(missing.body).toEqual({ success: false, message: 'api:error.payout_not_found' });
		const byOrder = await h.api('GET', 'payout/status', { order_id: 'never-used' });
		expect(byOrder.body.message).toBe('api:error.payout_not_found');
		const neither = await h.api('GET', 'payout/status', {});
		expect(neither.status).toBe(422);
		expect(Object.keys(neither.body.errors).sort()).toEqual(['id', 'order_id']);
	});
});

describe('validation (422, Laravel style)', () => {
	const cases: Array<[string, 'GET' | 'POST', Record<string, string>, string[]]> = [
		['bill/create', 'POST', {}, ['amount', 'shop_id']],
		[
			'bill/create',
			'POST',
			{
				amount: 'ten',
				shop_id: 'x',
				type: 'weekly',
				payment_method: 'CASH',
				payer_pays_commission: '2',
			},
			['amount', 'type', 'payer_pays_commission', 'payment_method'],
		],
		['bill/toggle_activity', 'POST', { id: 'x', active: 'maybe' }, ['active']],
		['bill/payments', 'GET', {}, ['id']],
		['bill/status', 'GET', {}, ['id']],
		['bill/search', 'GET', { start_date: '2024-13-01' }, ['start_date', 'finish_date']],
		[
			'payout/search',
			'GET',
			{ start_date: '2024-02-10', finish_date: '2024-02-01' },
			['finish_date'],
		],
		['payment/status', 'GET', {}, ['id']],
		['payout/personal/create', 'POST', { amount: '1,5' }, ['amount', 'payout_account_id']],
		[
			'payout/regular/create',
			'POST',
			{ amount: '10', currency: 'GBP', account_type: 'iban', account_identifier: 'x' },
			['currency', 'account_type'],
		],
		[
			'payout/regular/create',
			'POST',
			{ amount: '10', currency: 'RUB', account_type: 'credit_card', account_identifier: '12' },
			['account_identifier', 'card_holder'],
		],
		[
			'payout/regular/create',
			'POST',
			{ amount: '10', currency: 'RUB', account_type: 'sbp', account_identifier: '+79001234567' },
			['account_bank'],
		],
		[
			'payout/regular/create',
			'POST',
			{ amount: '10', currency: 'RUB', account_type: 'credit_card' },
			['account_identifier', 'card_holder'],
		],
		[
			'payout/regular/create',
			'POST',
			{ amount: '10', currency: 'RUB', account_type: 'sbp', account_identifier: 'phone' },
			['account_identifier', 'account_bank'],
		],
		[
			'payout/regular/create',
			'POST',
			{
				amount: '10',
				currency: 'RUB',
				account_type: 'sbp',
				account_identifier: '+79001234567',
				account_bank: '123',
			},
			['account_bank'],
		],
	];
	for (const [path, method, params, fields] of cases) {
		it(`${method} ${path} ${JSON.stringify(params)} → errors on ${fields.join(', ')}`, async () => {
			const answer = await h.api(method, path, params);
			expect(answer.status).toBe(422);
			expect(Object.keys(answer.body.errors)).toEqual(fields);
			expect(answer.body.message).toBe(
				answer.body.errors[fields[0] as string][0] +
					(fields.length > 1
						? ` (and ${fields.length - 1} more error${fields.length > 2 ? 's' : ''})`
						: ''),
			);
			for (const field of fields) expect(answer.body.errors[field][0]).toMatch(/^The /);
		});
	}

	it('uses Laravel wording', async () => {
		const answer = await h.api('POST', 'bill/create', { amount: 'x' });
		expect(answer.body.errors).toEqual({
			amount: ['The amount field must be a number.'],
			shop_id: ['The shop id field is required.'],
		});
	});

	it('rejects a second payout with the same order_id', async () => {
		const m = await h.merchant();
		const params = { amount: '10', payout_account_id: m.payoutAccountId, order_id: 'dup-1' };
		const first = await h.api('POST', 'payout/personal/create', params, m.token);
		expect(first.status).toBe(200);
		const second = await h.api('POST', 'payout/personal/create', params, m.token);
		expect(second.status).toBe(422);
		expect(second.body).toEqual({
			message: 'The order id has already been taken.',
			errors: { order_id: ['The order id has already been taken.'] },
		});
		const other = await h.merchant();
		const elsewhere = await h.api(
			'POST',
			'payout/personal/create',
			{ ...params, payout_account_id: other.payoutAccountId },
			other.token,
		);
		expect(elsewhere.status).toBe(200);
	});
});
