import { afterEach, describe, expect, it } from 'vitest';
import type { INodeParameters } from 'n8n-workflow';

import { runListSearch, runNode, type Credential } from '../helpers/n8n-context.ts';
import { requestsTo, startFakeService, type FakeService } from '../helpers/fake-service.ts';

// The action node against a stand-in service that answers both ways where the interface document
// is silent (test/helpers/fake-service.ts): error keys in `message` or in `error_code`, lists in
// one answer or cursor-paged, searches that require `shop_id`, payment records with or without
// `amount_received`.
let service: FakeService | undefined;
afterEach(async () => {
	await service?.close();
	service = undefined;
});

const credentialOf = (target: FakeService, extra: Partial<Credential> = {}): Credential => ({
	apiToken: '1|fake-token',
	baseUrl: target.url,
	...extra,
});

const failure = (promise: Promise<unknown>) =>
	promise.then(
		() => undefined,
		(e: Error & { httpCode?: string; description?: string; context?: Record<string, unknown> }) =>
			e,
	);

describe.each(['message', 'error_code'] as const)('error keys in %s', (errorForm) => {
	const personal = (orderId: string, amount = '100'): INodeParameters => ({
		resource: 'payout',
		operation: 'createPersonal',
		payoutAccountId: 'ACC-1',
		amount,
		orderId,
	});

	it('Payout › Create with an Order ID recognises payout_not_found, pays once, and a re-run pays nothing', async () => {
		service = await startFakeService({ errorForm });
		const credential = credentialOf(service);
		const [first] = await runNode({ credential, parameters: personal('order-1') });
		expect(first.json).toMatchObject({ order_id: 'order-1', already_existed: false });
		const [again] = await runNode({ credential, parameters: personal('order-1') });
		expect(again.json).toMatchObject({ id: first.json.id, already_existed: true });
		expect(requestsTo(service, 'payout/personal/create')).toHaveLength(1);
		expect(service.payouts).toHaveLength(1);
	});

	it("names the service's key in the node's error", async () => {
		service = await startFakeService({ errorForm });
		const error = await failure(
			runNode({
				credential: credentialOf(service),
				parameters: { resource: 'payment', operation: 'get', paymentId: 'NOPE' },
			}),
		);
		expect(error?.message).toBe('api:error.payment_not_found: No payment has this ID');
		expect(error?.httpCode).toBe('422');
		expect(error?.context?.errorKey).toBe('api:error.payment_not_found');
		if (errorForm === 'error_code') expect(error?.description).toContain('Payment not found');
	});
});

describe('Shop ID: the credential default, the node field first', () => {
	const billCreate = (extra: INodeParameters = {}): INodeParameters => ({
		resource: 'bill',
		operation: 'create',
		amount: '100',
		...extra,
	});
	const sentShop = (target: FakeService) =>
		requestsTo(target, 'bill/create').map((r) => new URLSearchParams(r.body).get('shop_id'));

	it("Bill › Create takes the credential's Shop ID unless the node names one, and needs one of them", async () => {
		service = await startFakeService();
		await runNode({
			credential: credentialOf(service, { shopId: ' CRED-SHOP ' }),
			parameters: billCreate(),
		});
		await runNode({
			credential: credentialOf(service, { shopId: 'CRED-SHOP' }),
			parameters: billCreate({ shopId: 'NODE-SHOP' }),
		});
		await runNode({
			credential: credentialOf(service),
			parameters: billCreate({ shopId: 'ONLY' }),
		});
		expect(sentShop(service)).toEqual(['CRED-SHOP', 'NODE-SHOP', 'ONLY']);

		const error = await failure(
			runNode({ credential: credentialOf(service), parameters: billCreate() }),
		);
		expect(error?.message).toBe(
			'Shop ID is required: set it on the node or in the PayPalych credential',
		);
		expect(requestsTo(service, 'bill/create')).toHaveLength(3);
	});

	describe.each(['none', 'cursor'] as const)('searches, paging %s', (paging) => {
		const search = (operation: 'bill' | 'payment', extra: INodeParameters = {}) => ({
			resource: operation,
			operation: 'search',
			startDate: '2026-11-19',
			finishDate: '2026-11-21',
			returnAll: true,
			...extra,
		});

		it("a service that requires shop_id: refused without one, answered with the credential's or the node's", async () => {
			service = await startFakeService({ paging, requireShopId: true, defaultPerPage: 3 });
			service.addPayments('B1', 4, '2026-11-20', 'CRED-SHOP');
			service.addPayments('B2', 2, '2026-11-20', 'OTHER');
			service.bills.push(
				{
					id: 'B1',
					shop_id: 'CRED-SHOP',
					amount: 10,
					status: 'PAID',
					created_at: '2026-11-20 10:00:00',
				},
				{
					id: 'B2',
					shop_id: 'OTHER',
					amount: 10,
					status: 'PAID',
					created_at: '2026-11-20 11:00:00',
				},
			);
			const refused = await failure(
				runNode({ credential: credentialOf(service), parameters: search('bill') }),
			);
			expect(refused?.message).toMatch(/^invalid_request_data/);
			expect(refused?.description).toContain('shop_id');

			const credential = credentialOf(service, { shopId: 'CRED-SHOP' });
			const bills = await runNode({ credential, parameters: search('bill') });
			expect(bills.map((i) => i.json.id)).toEqual(['B1']);
			const other = await runNode({ credential, parameters: search('bill', { shopId: 'OTHER' }) });
			expect(other.map((i) => i.json.id)).toEqual(['B2']);
			const payments = await runNode({ credential, parameters: search('payment') });
			expect(payments).toHaveLength(4);
			expect(
				requestsTo(service, 'payment/search').every((r) => r.query.shop_id === 'CRED-SHOP'),
			).toBe(true);
		});

		it('sends no shop_id when neither the node nor the credential has one', async () => {
			service = await startFakeService({ paging });
			service.addPayments('B1', 2, '2026-11-20', 'S1');
			service.addPayments('B2', 2, '2026-11-20', 'S2');
			const payments = await runNode({
				credential: credentialOf(service),
				parameters: search('payment'),
			});
			expect(payments).toHaveLength(4);
			expect(requestsTo(service, 'payment/search').every((r) => !('shop_id' in r.query))).toBe(
				true,
			);
		});
	});
});

describe.each(['none', 'cursor'] as const)('Payment, paging %s', (paging) => {
	it('Payment › Search: the payments of the range, every page with Return All, Limit otherwise', async () => {
		service = await startFakeService({ paging, defaultPerPage: 4 });
		const inRange = service.addPayments('B1', 7, '2026-11-20');
		service.addPayments('B2', 3, '2026-11-10');
		const parameters = {
			resource: 'payment',
			operation: 'search',
			startDate: '2026-11-20',
			finishDate: '2026-11-20',
		};
		const all = await runNode({
			credential: credentialOf(service),
			parameters: { ...parameters, returnAll: true },
		});
		expect(all.map((i) => i.json.id)).toEqual(inRange.map((p) => p.id));
		// A day more on each side is asked for; only the range is output.
		expect(requestsTo(service, 'payment/search')[0].query).toMatchObject({
			start_date: '2026-11-19',
			finish_date: '2026-11-21',
		});
		const limited = await runNode({
			credential: credentialOf(service),
			parameters: { ...parameters, returnAll: false, limit: 5 },
		});
		expect(limited.map((i) => i.json.id)).toEqual(inRange.slice(0, 5).map((p) => p.id));
	});

	it('Payment › Get asks for refunds and chargebacks only when the options say so', async () => {
		service = await startFakeService({ paging });
		const [payment] = service.addPayments('B1', 1);
		const get = (options: INodeParameters) =>
			runNode({
				credential: credentialOf(service!),
				parameters: { resource: 'payment', operation: 'get', paymentId: payment.id, options },
			});
		const [plain] = await get({});
		expect(plain.json.refunds).toBeUndefined();
		const [both] = await get({ includeRefunds: true, includeChargebacks: true });
		expect(both.json.refunds).toEqual([{ id: `R-${payment.id}`, amount: 1 }]);
		expect(both.json.chargebacks).toEqual([]);
		const [refundsOnly] = await get({ includeRefunds: true });
		expect(refundsOnly.json.chargebacks).toBeUndefined();
		expect(requestsTo(service, 'payment/status').map((r) => r.query)).toEqual([
			{ id: payment.id },
			{ id: payment.id, refunds: '1', chargeback: '1' },
			{ id: payment.id, refunds: '1' },
		]);
	});
});

describe('the Bill ID list on a service that requires shop_id', () => {
	it("sends the credential's Shop ID", async () => {
		service = await startFakeService({ requireShopId: true });
		const today = new Date().toISOString().slice(0, 10);
		service.bills.push({
			id: 'B-LIST',
			shop_id: 'CRED-SHOP',
			amount: 5,
			status: 'NEW',
			created_at: `${today} 00:00:01`,
		});
		const list = await runListSearch({
			credential: credentialOf(service, { shopId: 'CRED-SHOP' }),
			parameters: { resource: 'bill', operation: 'get' },
			method: 'searchBills',
		});
		expect(list.results.map((r) => r.value)).toEqual(['B-LIST']);
		expect(requestsTo(service, 'bill/search')[0].query.shop_id).toBe('CRED-SHOP');
	});
});
