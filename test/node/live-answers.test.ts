import { afterEach, describe, expect, it } from 'vitest';
import type { INodeParameters } from 'n8n-workflow';

import { runListSearch, runNode, type Credential } from '../helpers/n8n-context.ts';
import { requestsTo, startFakeService, type FakeService } from '../helpers/fake-service.ts';
import { failure } from '../helpers/node-params.ts';

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
		expect(both.json.chargeback).toEqual([]);
		const [refundsOnly] = await get({ includeRefunds: true });
		expect(refundsOnly.json.chargeback).toBeUndefined();
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

describe('Bill › Create: the fields of the current reference', () => {
	const create = (additionalFields: INodeParameters): INodeParameters => ({
		resource: 'bill',
		operation: 'create',
		shopId: 'SHOP1',
		amount: '1980',
		additionalFields,
	});
	const sent = (target: FakeService) =>
		requestsTo(target, 'bill/create').map((r) => Object.fromEntries(new URLSearchParams(r.body)));

	it('sends ttl, locale, payer_email, the three URLs, request_fields[...] and items[...] as form fields', async () => {
		service = await startFakeService();
		const credential = credentialOf(service);
		await runNode({
			credential,
			parameters: create({
				ttl: 600,
				locale: 'EN',
				payerEmail: ' payer@example.com ',
				successUrl: 'https://shop.example/thanks?order=1',
				failUrl: 'http://shop.example/failed',
				returnUrl: 'https://shop.example/cart',
				requestFields: ['email', 'phone'],
				itemsJson: JSON.stringify([
					{ name: 'T-shirt', price: '990', quantity: 2, category: 'clothes', extra: { size: 'L' } },
				]),
			}),
		});
		await runNode({
			credential,
			parameters: create({
				items: {
					item: [
						{ name: 'Mug', price: '500.5', quantity: 1 },
						{ name: 'Tea', price: 479.5, quantity: 0.5, category: 'food' },
					],
				},
			}),
		});
		const [withJson, withCollection] = sent(service);
		expect(withJson).toEqual({
			amount: '1980.00',
			shop_id: 'SHOP1',
			ttl: '600',
			locale: 'en',
			payer_email: 'payer@example.com',
			success_url: 'https://shop.example/thanks?order=1',
			fail_url: 'http://shop.example/failed',
			return_url: 'https://shop.example/cart',
			'request_fields[email]': '1',
			'request_fields[phone]': '1',
			'items[0][name]': 'T-shirt',
			'items[0][price]': '990.00',
			'items[0][quantity]': '2',
			'items[0][category]': 'clothes',
			'items[0][extra][size]': 'L',
		});
		expect(requestsTo(service, 'bill/create')[0].body).toContain('items%5B0%5D%5Bname%5D=T-shirt');
		expect(withCollection).toEqual({
			amount: '1980.00',
			shop_id: 'SHOP1',
			'items[0][name]': 'Mug',
			'items[0][price]': '500.50',
			'items[0][quantity]': '1',
			'items[1][name]': 'Tea',
			'items[1][price]': '479.50',
			'items[1][quantity]': '0.5',
			'items[1][category]': 'food',
		});
	});

	const refusals: Array<[string, INodeParameters, RegExp]> = [
		['TTL of 0', { ttl: 0 }, /^TTL must be a positive whole number of seconds/],
		['a fractional TTL', { ttl: 1.5 }, /^TTL must be a positive whole number of seconds/],
		['a TTL in words', { ttl: 'an hour' }, /^TTL must be a positive whole number of seconds/],
		['a negative TTL', { ttl: '-5' }, /^TTL must be a positive whole number of seconds/],
		[
			'a payer email without @',
			{ payerEmail: 'payer.example.com' },
			/^Payer Email must be an email address/,
		],
		[
			'a payer email with a space',
			{ payerEmail: 'pa yer@example.com' },
			/^Payer Email must be an email address/,
		],
		[
			'a success URL without scheme',
			{ successUrl: 'shop.example/thanks' },
			/^Success URL must be a full http/,
		],
		['a javascript: fail URL', { failUrl: 'javascript:alert(1)' }, /^Fail URL must be a full http/],
		['an ftp return URL', { returnUrl: 'ftp://shop.example/' }, /^Return URL must be a full http/],
		['an unknown locale', { locale: 'de' }, /^Locale must be one of en, ru/],
		[
			'an unknown request field',
			{ requestFields: ['email', 'address'] },
			/^Request Fields must name only email, phone, name, comment/,
		],
		['items JSON that is not JSON', { itemsJson: '[{name:' }, /^Items \(JSON\) is not valid JSON/],
		[
			'items JSON that is not a list',
			{ itemsJson: '{"name":"A"}' },
			/^Items \(JSON\) must be a list/,
		],
		[
			'an item without a price',
			{ itemsJson: '[{"name":"A","quantity":1}]' },
			/^Items: item 1's price/,
		],
		[
			'an item with a float price of 3 decimals',
			{ itemsJson: '[{"name":"A","price":1.005,"quantity":1}]' },
			/^Items: item 1's price/,
		],
		[
			'an item without a name',
			{ itemsJson: '[{"price":"1","quantity":1}]' },
			/^Items item 1 needs a name/,
		],
		[
			'an item with quantity 0',
			{ itemsJson: '[{"name":"A","price":"1","quantity":0}]' },
			/^Items item 1's quantity must be a positive number/,
		],
		[
			'an item with an unknown field',
			{ itemsJson: '[{"name":"A","price":"1","quantity":1,"vat":"20"}]' },
			/^Items item 1 has unknown fields vat/,
		],
		[
			'items given twice',
			{
				itemsJson: '[{"name":"A","price":"1","quantity":1}]',
				items: { item: [{ name: 'B', price: '1', quantity: 1 }] },
			},
			/^Items are given twice/,
		],
	];
	it.each(refusals)('refuses %s before any request', async (_name, fields, message) => {
		service = await startFakeService();
		const error = await failure(
			runNode({ credential: credentialOf(service), parameters: create(fields) }),
		);
		expect(error?.message).toMatch(message);
		expect(service.requests).toHaveLength(0);
	});
});

describe.each([
	['none', false],
	['cursor', false],
	['cursor', true],
] as const)(
	'Bill › Get Payments, paging %s, newer payment fields %s',
	(paging, newPaymentFields) => {
		const getPayments = (extra: INodeParameters) =>
			runNode({
				credential: credentialOf(service!),
				parameters: { resource: 'bill', operation: 'getPayments', billId: 'MULTI1', ...extra },
			});

		it('reads every page with Return All, stops at Limit otherwise', async () => {
			service = await startFakeService({ paging, newPaymentFields, maxPerPage: 10 });
			const made = service.addPayments('MULTI1', 25);
			service.addPayments('OTHER', 3);
			const all = await getPayments({ returnAll: true });
			expect(all.map((i) => i.json.id)).toEqual(made.map((p) => p.id));
			expect(requestsTo(service, 'bill/payments')).toHaveLength(paging === 'cursor' ? 3 : 1);
			expect(all.every((i) => (i.pairedItem as { item: number }).item === 0)).toBe(true);
			const first = all[0].json;
			expect(first.amount).toBe(10);
			if (newPaymentFields) {
				expect(first).not.toHaveProperty('amount_received');
				expect(first).toMatchObject({ commission: 0.3, account_amount: 9.7, refunded_amount: 0 });
			} else {
				expect(first.amount_received).toBe(9.7);
			}

			const limited = await getPayments({ returnAll: false, limit: 12 });
			expect(limited.map((i) => i.json.id)).toEqual(made.slice(0, 12).map((p) => p.id));
			const defaults = await getPayments({});
			expect(defaults).toHaveLength(25);
		});
	},
);

it('Bill › Get Payments stops at its page cap with a message that says so, never a part of the list', async () => {
	service = await startFakeService({ paging: 'cursor', maxPerPage: 1 });
	service.addPayments('MULTI1', 1001);
	const error = await failure(
		runNode({
			credential: credentialOf(service),
			parameters: { resource: 'bill', operation: 'getPayments', billId: 'MULTI1', returnAll: true },
		}),
	);
	expect(error?.message).toBe(
		'Bill › Get Payments could not read the whole list: it has more than 1000 pages',
	);
	expect(error?.description).toContain('Turn off Return All and set a Limit');
	expect(requestsTo(service, 'bill/payments')).toHaveLength(1000);
}, 60_000);
