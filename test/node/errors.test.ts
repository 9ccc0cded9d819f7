import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { INodeParameters } from 'n8n-workflow';

import { runNode } from '../helpers/n8n-context.ts';
import {
	control,
	newMerchant,
	patchMerchant,
	payoutsOf,
	start,
	type Sandbox,
	type TestMerchant,
} from '../helpers/sandbox.ts';

// Every error class the sandbox can produce, through the node's real execute(): each becomes a
// NodeApiError whose message is "<key>: <sentence>", with the HTTP code and a hint.
let sandbox: Sandbox;
beforeAll(async () => {
	sandbox = await start();
});
afterAll(async () => {
	await control(sandbox, 'DELETE', '/faults');
	await sandbox.close();
});

type Failure = Error & {
	httpCode?: string;
	description?: string;
	context: Record<string, unknown>;
};

async function failure(
	merchant: TestMerchant,
	parameters: INodeParameters,
	credential = merchant.credential,
): Promise<Failure> {
	const error = await runNode({ credential, parameters }).then(
		() => undefined,
		(e: Failure) => e,
	);
	if (!error) throw new Error('the node succeeded where it should have failed');
	return error;
}

const billCreate = (m: TestMerchant, extra: INodeParameters = {}): INodeParameters => ({
	resource: 'bill',
	operation: 'create',
	shopId: m.shopId,
	amount: '100',
	...extra,
});
// A new order ID each time: the look-up finds nothing, so the error comes from the create endpoint itself.
let orderSeq = 0;
const personal = (m: TestMerchant, amount = '100', accountId?: string): INodeParameters => ({
	resource: 'payout',
	operation: 'createPersonal',
	payoutAccountId: accountId ?? m.payoutAccountId,
	amount,
	orderId: `errors-${++orderSeq}`,
});
const balance: INodeParameters = { resource: 'balance', operation: 'get' };

interface Case {
	name: string;
	setup?: (m: TestMerchant) => Promise<INodeParameters | void>;
	parameters: (m: TestMerchant) => INodeParameters;
	message: string;
	httpCode: string;
	hint?: string;
}

const cases: Case[] = [
	{
		name: 'banned merchant (403 on reads)',
		setup: (m) => patchMerchant(sandbox, m.merchantId, { banned: true }),
		parameters: () => balance,
		message: 'api:error.merchant_banned: Your merchant account is banned',
		httpCode: '403',
		hint: 'Contact PayPalych support',
	},
	{
		// The node looks the order ID up (payout/status, 403) before it would create (400).
		name: 'banned merchant (payout creation stops at the order-ID look-up)',
		setup: (m) => patchMerchant(sandbox, m.merchantId, { banned: true }),
		parameters: (m) => personal(m),
		message: 'api:error.merchant_banned: Your merchant account is banned',
		httpCode: '403',
	},
	{
		name: 'merchant not found',
		setup: (m) => patchMerchant(sandbox, m.merchantId, { exists: false }),
		parameters: (m) => billCreate(m),
		message: 'api:error.merchant_not_found: No merchant account belongs to this API token',
		httpCode: '403',
	},
	{
		name: 'subscription inactive',
		setup: (m) => patchMerchant(sandbox, m.merchantId, { subscription: 'inactive' }),
		parameters: () => balance,
		message: 'api:error.merchant_subscription_inactive: Your merchant subscription is inactive',
		httpCode: '403',
		hint: 'Renew the subscription',
	},
	{
		name: 'no subscription',
		setup: (m) => patchMerchant(sandbox, m.merchantId, { subscription: 'none' }),
		parameters: (m) => billCreate(m),
		message: 'api:error.merchant_subscription_not_found: Your merchant account has no subscription',
		httpCode: '403',
	},
	{
		name: 'merchant not verified',
		setup: (m) => patchMerchant(sandbox, m.merchantId, { verified: false }),
		parameters: (m) => personal(m),
		message: 'api:error.merchant_not_verified: Your merchant account does not have Verified status',
		httpCode: '400',
	},
	{
		name: 'balance not enough',
		setup: (m) => patchMerchant(sandbox, m.merchantId, { balances: { RUB: '50.00' } }),
		parameters: (m) => personal(m, '100'),
		message: 'api:error.balance_not_enough: The available balance is below the payout amount',
		httpCode: '400',
		hint: 'Read Balance > Get',
	},
	{
		name: 'daily payout limit',
		setup: (m) => patchMerchant(sandbox, m.merchantId, { dailyPayoutLimit: '10.00' }),
		parameters: (m) => personal(m, '11'),
		message: 'api:error.daily_payout_limit_exceeded: The daily payout limit is exceeded',
		httpCode: '400',
	},
	{
		name: 'monthly payout limit',
		setup: (m) => patchMerchant(sandbox, m.merchantId, { monthlyPayoutLimit: '10.00' }),
		parameters: (m) => personal(m, '11'),
		message: 'api:error.monthly_payout_limit_exceeded: The monthly payout limit is exceeded',
		httpCode: '400',
	},
	{
		name: 'too many payouts',
		setup: (m) => patchMerchant(sandbox, m.merchantId, { payoutSplitSize: '0.01' }),
		parameters: (m) => personal(m, '100'),
		message: 'api:error.too_many_payouts: The request would create too many payouts',
		httpCode: '400',
	},
	{
		name: 'payout account not found',
		parameters: (m) => personal(m, '10', 'no-such-account'),
		message: 'api:error.payout_account_not_found: No saved payout account has this ID',
		httpCode: '400',
	},
	{
		name: 'payout account banned',
		setup: async (m) => {
			const { payoutAccountId } = await control(sandbox, 'POST', '/payout-accounts', {
				merchantId: m.merchantId,
				banned: true,
			});
			return personal(m, '10', payoutAccountId);
		},
		parameters: () => ({}),
		message: 'api:error.payout_account_banned: The payout account is banned',
		httpCode: '400',
	},
	{
		name: 'direction not available',
		setup: async (m) => {
			const { payoutAccountId } = await control(sandbox, 'POST', '/payout-accounts', {
				merchantId: m.merchantId,
				directionAvailable: false,
			});
			return personal(m, '10', payoutAccountId);
		},
		parameters: () => ({}),
		message: 'api:error.direction_not_available: Payouts to this account are not available',
		httpCode: '400',
	},
	{
		name: 'shop not found',
		parameters: (m) => billCreate(m, { shopId: 'no-such-shop' }),
		message: 'api:error.shop_not_found: No shop has this shop ID',
		httpCode: '403',
	},
	{
		name: 'shop not enabled',
		setup: (m) =>
			control(sandbox, 'PATCH', `/shops/${m.shopId}`, { enabled: false }).then(() => undefined),
		parameters: (m) => billCreate(m),
		message: 'api:error.shop_not_enabled: The shop is not enabled (the merchant is deactivated)',
		httpCode: '403',
	},
	{
		name: 'shop access denied',
		setup: (m) =>
			control(sandbox, 'PATCH', `/shops/${m.shopId}`, { accessDenied: true }).then(() => undefined),
		parameters: (m) => billCreate(m),
		message: 'api:error.access_denied: Your merchant account has no access to this shop',
		httpCode: '403',
	},
	{
		name: 'currency without a rate',
		setup: (m) =>
			control(sandbox, 'PATCH', `/shops/${m.shopId}`, { defaultCurrency: 'GBP' }).then(
				() => undefined,
			),
		parameters: (m) => billCreate(m),
		message: 'api:error.rate-not-found: The currency or country is not supported',
		httpCode: '403',
	},
	{
		name: 'amount refused by the service',
		setup: () =>
			control(sandbox, 'POST', '/faults', {
				kind: 'error',
				key: 'invalid_amount',
				path: '/api/v1/bill/create',
			}).then(() => undefined),
		parameters: (m) => billCreate(m),
		message: 'api:error.invalid_amount: The amount is not accepted',
		httpCode: '403',
	},
	{
		name: 'bill not found (422 on status)',
		parameters: () => ({ resource: 'bill', operation: 'get', billId: 'no-such-bill' }),
		message: 'api:error.bill_not_found: No bill has this ID',
		httpCode: '422',
	},
	{
		name: 'bill not found (403 on payments)',
		parameters: () => ({ resource: 'bill', operation: 'getPayments', billId: 'no-such-bill' }),
		message: 'api:error.bill_not_found: No bill has this ID',
		httpCode: '403',
	},
	{
		name: 'bill not found (422 on toggle)',
		parameters: () => ({
			resource: 'bill',
			operation: 'setActive',
			billId: 'no-such-bill',
			active: false,
		}),
		message: 'api:error.bill_not_found: No bill has this ID',
		httpCode: '422',
	},
	{
		name: 'too many payments',
		setup: async (m) => {
			await patchMerchant(sandbox, m.merchantId, { tooManyPaymentsThreshold: 1 });
			const response = await fetch(`${sandbox.url}/api/v1/bill/create`, {
				method: 'POST',
				headers: {
					authorization: `Bearer ${m.token}`,
					'content-type': 'application/x-www-form-urlencoded',
				},
				body: `amount=10&shop_id=${m.shopId}&type=multi`,
			});
			const { bill_id } = (await response.json()) as { bill_id: string };
			await control(sandbox, 'POST', `/bills/${bill_id}/pay`, {});
			await control(sandbox, 'POST', `/bills/${bill_id}/pay`, {});
			return { resource: 'bill', operation: 'getPayments', billId: bill_id };
		},
		parameters: () => ({}),
		message: 'api:error.too_many_payments: The bill has too many payments to list in one request',
		httpCode: '400',
	},
	{
		name: 'payment not found',
		parameters: () => ({ resource: 'payment', operation: 'get', paymentId: 'no-such-payment' }),
		message: 'api:error.payment_not_found: No payment has this ID',
		httpCode: '422',
	},
	{
		name: 'invalid request data (unknown SBP bank)',
		parameters: () => ({
			resource: 'payout',
			operation: 'createRegular',
			accountType: 'sbp',
			amount: '10',
			phone: '+79001234567',
			bank: { __rl: true, mode: 'id', value: '123' },
			orderId: 'sbp-unknown-bank',
		}),
		message: 'invalid_request_data: The service rejected the request data',
		httpCode: '422',
		hint: 'account_bank: ',
	},
	{
		name: 'internal error (500)',
		setup: () =>
			control(sandbox, 'POST', '/faults', { kind: '500', path: '/api/v1/merchant/balance' }).then(
				() => undefined,
			),
		parameters: () => balance,
		message: 'api:error.general_error: The service had an internal error',
		httpCode: '500',
		hint: 'Try again later',
	},
	{
		name: 'rate limited (429)',
		setup: () =>
			control(sandbox, 'POST', '/faults', { kind: '429', path: '/api/v1/merchant/balance' }).then(
				() => undefined,
			),
		parameters: () => balance,
		message: 'http_429: Too Many Attempts.',
		httpCode: '429',
		hint: 'Retry On Fail',
	},
];

describe('API errors become NodeApiError with key, HTTP code and a merchant sentence', () => {
	it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
		const merchant = await newMerchant(sandbox);
		const prepared = c.setup ? await c.setup(merchant) : undefined;
		const error = await failure(merchant, prepared ?? c.parameters(merchant));
		expect(error.constructor.name).toBe('NodeApiError');
		expect(error.message).toBe(c.message);
		expect(error.httpCode).toBe(c.httpCode);
		expect(error.context.itemIndex).toBe(0);
		if (c.hint) expect(error.description).toContain(c.hint);
	});

	it('a rejected token: "The API token was rejected" with the refresh hint (401)', async () => {
		const merchant = await newMerchant(sandbox);
		const error = await failure(merchant, balance, {
			apiToken: 'wrong|token',
			baseUrl: sandbox.url,
		});
		expect(error.message).toBe('Unauthenticated: The API token was rejected');
		expect(error.description).toContain('Refresh it on the API integration page');
		expect(error.httpCode).toBe('401');

		// A rotated token fails at once.
		await control(sandbox, 'POST', `/merchants/${merchant.merchantId}/rotate-token`, {});
		expect((await failure(merchant, balance)).message).toBe(
			'Unauthenticated: The API token was rejected',
		);
	});

	it('a dropped connection is a network error naming the credential Base URL', async () => {
		const merchant = await newMerchant(sandbox);
		await control(sandbox, 'POST', '/faults', { kind: 'drop', path: '/api/v1/merchant/balance' });
		const error = await failure(merchant, balance);
		expect(error.constructor.name).toBe('NodeApiError');
		expect(error.message).toBe('network_error: The service could not be reached');
		expect(error.description).toContain('Base URL');
	});

	it('a failed payout creation pays nothing', async () => {
		const merchant = await newMerchant(sandbox);
		await patchMerchant(sandbox, merchant.merchantId, { balances: { RUB: '1.00' } });
		await failure(merchant, {
			resource: 'payout',
			operation: 'createPersonal',
			payoutAccountId: merchant.payoutAccountId,
			amount: '5',
			orderId: 'fails-5',
		});
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(0);
	});
});

describe('continueOnFail', () => {
	it('outputs an error item for the failing item, paired to it, and goes on with the next', async () => {
		const merchant = await newMerchant(sandbox);
		const response = await fetch(`${sandbox.url}/api/v1/bill/create`, {
			method: 'POST',
			headers: {
				authorization: `Bearer ${merchant.token}`,
				'content-type': 'application/x-www-form-urlencoded',
			},
			body: `amount=10&shop_id=${merchant.shopId}`,
		});
		const { bill_id } = (await response.json()) as { bill_id: string };
		const out = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'bill', operation: 'get', billId: '={{ $json.id }}' },
			items: [{ id: bill_id }, { id: 'no-such-bill' }, { id: bill_id }],
			continueOnFail: true,
		});
		expect(out.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		expect(out[0].json).toMatchObject({ id: bill_id, status: 'NEW' });
		expect(out[1].json).toMatchObject({
			error: 'api:error.bill_not_found: No bill has this ID',
			errorKey: 'api:error.bill_not_found',
			httpCode: '422',
		});
		expect(String(out[1].json.description)).toContain('Bill > Create');
		expect(out[2].json).toMatchObject({ id: bill_id });
	});

	it('without it, the first failure stops the node and names the item', async () => {
		const merchant = await newMerchant(sandbox);
		const error = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'payment', operation: 'get', paymentId: '={{ $json.id }}' },
			items: [{ id: 'x' }],
		}).then(
			() => undefined,
			(e: Failure) => e,
		);
		expect(error?.message).toBe('api:error.payment_not_found: No payment has this ID');
		expect(error?.context.itemIndex).toBe(0);
	});
});
