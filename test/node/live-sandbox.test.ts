import { describe, expect, it } from 'vitest';
import type { INodeParameters } from 'n8n-workflow';

import { runNode } from '../helpers/n8n-context.ts';
import { failure } from '../helpers/node-params.ts';
import {
	PROFILES,
	control,
	newMerchant,
	payoutsOf,
	serviceDay,
	sandboxFor,
	type Sandbox,
	type TestMerchant,
} from '../helpers/sandbox.ts';

// The node against the sandbox's switches for the live service's answers (error keys in
// `error_code`, cursor-paged bill/payments, `shop_id` required on bill/search, payment records
// without `amount_received`), on both profiles. test/node/live-answers.test.ts holds the same
// pieces against a smaller stand-in, with the cases the sandbox cannot make (many pages).
describe.each(PROFILES)('the sandbox answering as the live service, profile %s', (profile) => {
	let sandbox: Sandbox;
	sandboxFor(profile, (started) => (sandbox = started));

	async function multiBillWithPayments(merchant: TestMerchant, count: number): Promise<string> {
		const response = await fetch(`${sandbox.url}/api/v1/bill/create`, {
			method: 'POST',
			headers: {
				authorization: `Bearer ${merchant.token}`,
				'content-type': 'application/x-www-form-urlencoded',
			},
			body: new URLSearchParams({
				amount: '10',
				shop_id: merchant.shopId,
				type: 'multi',
				order_id: `multi-${merchant.merchantId}`,
			}).toString(),
		});
		const { bill_id } = (await response.json()) as { bill_id: string };
		for (let i = 0; i < count; i++) await control(sandbox, 'POST', `/bills/${bill_id}/pay`, {});
		return bill_id;
	}

	it("Bill › Create's fields of the current reference reach the sandbox as the bill's own", async () => {
		const merchant = await newMerchant(sandbox);
		const [created] = await runNode({
			credential: { ...merchant.credential, shopId: merchant.shopId },
			parameters: {
				resource: 'bill',
				operation: 'create',
				amount: '1480',
				additionalFields: {
					ttl: 900,
					locale: 'en',
					payerEmail: 'payer@example.com',
					successUrl: 'https://shop.example/thanks',
					failUrl: 'https://shop.example/failed',
					returnUrl: 'https://shop.example/cart',
					requestFields: ['email', 'comment'],
					itemsJson: JSON.stringify([
						{ name: 'T-shirt', price: '990', quantity: 1, category: 'clothes' },
						{ name: 'Tea', price: 490, quantity: 0.5 },
					]),
				},
			},
		});
		const [bill] = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'bill', operation: 'get', billId: created.json.bill_id as string },
		});
		expect(bill.json).toMatchObject({
			ttl: 900,
			locale: 'en',
			payer_email: 'payer@example.com',
			success_url: 'https://shop.example/thanks',
			fail_url: 'https://shop.example/failed',
			return_url: 'https://shop.example/cart',
			request_fields: { email: true, comment: true },
			items: [
				{ name: 'T-shirt', price: 990, quantity: 1, category: 'clothes' },
				{ name: 'Tea', price: 490, quantity: 0.5 },
			],
		});
	});

	it('error keys in error_code: Payout › Create with an Order ID pays once, and the error names the key', async () => {
		const merchant = await newMerchant(sandbox, { errorForm: 'error_code' });
		const parameters: INodeParameters = {
			resource: 'payout',
			operation: 'createPersonal',
			payoutAccountId: merchant.payoutAccountId,
			amount: '100',
			orderId: 'error-code-form-1',
		};
		const [first] = await runNode({ credential: merchant.credential, parameters });
		expect(first.json.already_existed).toBe(false);
		const [again] = await runNode({ credential: merchant.credential, parameters });
		expect(again.json).toMatchObject({ id: first.json.id, already_existed: true });
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(1);

		const error = await failure(
			runNode({
				credential: merchant.credential,
				parameters: { resource: 'payment', operation: 'get', paymentId: 'no-such-payment' },
			}),
		);
		expect(error?.message).toBe('api:error.payment_not_found: No payment has this ID');
	});

	it('Bill › Get Payments: 25 payments of a MULTI link with Return All, Limit otherwise, with or without amount_received', async () => {
		for (const newPaymentFields of [false, true]) {
			const merchant = await newMerchant(sandbox, { paymentsPageSize: 10, newPaymentFields });
			const billId = await multiBillWithPayments(merchant, 25);
			const get = (extra: INodeParameters) =>
				runNode({
					credential: merchant.credential,
					parameters: { resource: 'bill', operation: 'getPayments', billId, ...extra },
				});
			const all = await get({ returnAll: true });
			expect(all).toHaveLength(25);
			expect(new Set(all.map((i) => i.json.id)).size).toBe(25);
			expect(all.every((i) => i.json.bill_id === billId)).toBe(true);
			expect(all.some((i) => 'amount_received' in i.json)).toBe(!newPaymentFields);
			expect(await get({ returnAll: false, limit: 12 })).toHaveLength(12);
		}
	});

	it("a deployment that requires shop_id on bill/search: the credential's Shop ID is sent", async () => {
		const merchant = await newMerchant(sandbox, { requireShopId: true });
		await multiBillWithPayments(merchant, 2);
		const parameters: INodeParameters = {
			resource: 'bill',
			operation: 'search',
			startDate: serviceDay(profile, -1),
			finishDate: serviceDay(profile, 1),
			returnAll: true,
		};
		const refused = await failure(runNode({ credential: merchant.credential, parameters }));
		expect(refused?.message).toMatch(/^invalid_request_data/);
		const bills = await runNode({
			credential: { ...merchant.credential, shopId: merchant.shopId },
			parameters,
		});
		expect(bills).toHaveLength(1);

		const payments = await runNode({
			credential: { ...merchant.credential, shopId: merchant.shopId },
			parameters: { ...parameters, resource: 'payment' },
		});
		expect(payments).toHaveLength(2);
		// The node's Shop ID wins over the credential's.
		const otherShop = await runNode({
			credential: { ...merchant.credential, shopId: merchant.shopId },
			parameters: { ...parameters, resource: 'payment', shopId: 'another-shop' },
		});
		expect(otherShop).toHaveLength(0);
	});
});
