import { describe, expect, it } from 'vitest';
import type { INodeParameters } from 'n8n-workflow';

import { runListSearch, runNode } from '../helpers/n8n-context.ts';
import {
	control,
	newMerchant,
	sandboxFor,
	type Sandbox,
	type TestMerchant,
} from '../helpers/sandbox.ts';

// Bills, payments, balances and the SBP bank dictionary, through the node's real execute()
// against the sandbox over HTTP.
let sandbox: Sandbox;
sandboxFor('live', (started) => (sandbox = started));

async function createBill(merchant: TestMerchant, amount: string, extra: INodeParameters = {}) {
	const [item] = await runNode({
		credential: merchant.credential,
		parameters: {
			resource: 'bill',
			operation: 'create',
			shopId: merchant.shopId,
			amount,
			additionalFields: extra,
		},
	});
	return item.json;
}

describe('Bill', () => {
	it('creates a bill with every parameter, reads it back and lists its payments', async () => {
		const merchant = await newMerchant(sandbox);
		const created = await createBill(merchant, '={{ 0.1 + 0.2 }}', {
			orderId: 'order-42',
			description: 'Two coffees',
			name: 'Coffee',
			type: 'multi',
			currencyIn: 'RUB',
			custom: 'customer=7',
			payerPaysCommission: '1',
			paymentMethod: 'BANK_CARD',
		});
		expect(created.success).toBe(true);
		expect(typeof created.bill_id).toBe('string');
		expect(String(created.link_page_url)).toMatch(/^http/);

		const [bill] = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'bill', operation: 'get', billId: created.bill_id as string },
		});
		expect(bill.json).toMatchObject({
			success: true,
			id: created.bill_id,
			status: 'NEW',
			amount: 0.3,
			type: 'MULTI',
			currency_in: 'RUB',
		});
		expect(bill.pairedItem).toEqual({ item: 0 });
		// bill/status does not return the order ID (the document's Bill has none): the sandbox's own record shows it was sent.
		expect(await control(sandbox, 'GET', `/bills/${created.bill_id}`)).toMatchObject({
			orderId: 'order-42',
			custom: 'customer=7',
			payerPaysCommission: true,
		});

		const paid1 = await control(sandbox, 'POST', `/bills/${created.bill_id}/pay`, {
			outcome: 'full',
			method: 'BANK_CARD',
		});
		const paid2 = await control(sandbox, 'POST', `/bills/${created.bill_id}/pay`, {
			outcome: 'full',
			method: 'BANK_CARD',
		});
		const payments = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'bill', operation: 'getPayments', billId: created.bill_id as string },
		});
		expect(payments.map((p) => p.json.id).sort()).toEqual(
			[paid1.payment.id, paid2.payment.id].sort(),
		);
		for (const payment of payments) {
			expect(payment.pairedItem).toEqual({ item: 0 });
			expect(payment.json).toMatchObject({ bill_id: created.bill_id, status: 'SUCCESS' });
			expect(typeof payment.json.amount).toBe('number');
		}
	});

	it('switches a bill off and on; a paid normal bill cannot be switched (bill_is_finished)', async () => {
		const merchant = await newMerchant(sandbox);
		const created = await createBill(merchant, '150');
		const setActive = (active: boolean) =>
			runNode({
				credential: merchant.credential,
				parameters: {
					resource: 'bill',
					operation: 'setActive',
					billId: created.bill_id as string,
					active,
				},
			});
		const [off] = await setActive(false);
		expect(off.json).toMatchObject({
			id: created.bill_id,
			active: false,
			success: true,
			amount: 150,
		});
		const [on] = await setActive(true);
		expect(on.json.active).toBe(true);

		await control(sandbox, 'POST', `/bills/${created.bill_id}/pay`, { outcome: 'full' });
		const error = await setActive(false).then(
			() => undefined,
			(e: Error & { httpCode?: string }) => e,
		);
		expect(error?.message).toBe(
			'api:error.bill_is_finished: The bill is already paid, so it can no longer be switched on or off',
		);
		expect(error?.httpCode).toBe('403');
	});
});

describe('Payment', () => {
	it('gets a payment by ID with numeric amounts', async () => {
		const merchant = await newMerchant(sandbox);
		const bill = await createBill(merchant, '100.05');
		const paid = await control(sandbox, 'POST', `/bills/${bill.bill_id}/pay`, {
			outcome: 'under',
			amount: '50.00',
		});
		const [payment] = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'payment', operation: 'get', paymentId: paid.payment.id },
		});
		// The sandbox's own view of the payment is the oracle (the commission comes off the received amount).
		expect(payment.json).toMatchObject({
			success: true,
			id: paid.payment.id,
			bill_id: bill.bill_id,
			status: 'UNDERPAID',
		});
		expect(payment.json.amount_received).toBe(Number(paid.payment.amount_received));
		expect(typeof payment.json.amount_received).toBe('number');
		expect(payment.json.amount_received).toBeGreaterThan(0);
	});
});

describe('Balance', () => {
	it('gets the balances as one item, or one item per currency, amounts as numbers', async () => {
		const merchant = await newMerchant(sandbox);
		await control(sandbox, 'PATCH', `/merchants/${merchant.merchantId}`, {
			balances: { RUB: '1234.56', USD: '0.12' },
		});
		const [one] = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'balance', operation: 'get' },
		});
		expect(one.json.success).toBe(true);
		const balances = one.json.balances as Array<Record<string, unknown>>;
		expect(balances.find((b) => b.currency === 'RUB')).toMatchObject({
			balance_available: 1234.56,
			balance_locked: 0,
			balance_hold: 0,
		});

		const split = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'balance', operation: 'get', splitIntoItems: true },
			items: [{ a: 1 }, { a: 2 }],
		});
		// The live profile lists the crypto balance (USDT) after the document's three.
		expect(split.map((i) => [i.json.currency, i.pairedItem])).toEqual([
			['RUB', { item: 0 }],
			['USD', { item: 0 }],
			['EUR', { item: 0 }],
			['USDT', { item: 0 }],
			['RUB', { item: 1 }],
			['USD', { item: 1 }],
			['EUR', { item: 1 }],
			['USDT', { item: 1 }],
		]);
		expect(split[1].json.balance_available).toBe(0.12);
	});
});

describe('SBP Bank', () => {
	it('lists the SBP banks, with Limit', async () => {
		const merchant = await newMerchant(sandbox);
		const all = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'sbpBank', operation: 'getMany', returnAll: true },
		});
		expect(all.length).toBeGreaterThan(5);
		expect(all.find((b) => b.json.name_en === 'Sberbank')?.json).toMatchObject({
			member_id: 100000000111,
			name: 'Сбербанк',
		});
		const two = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'sbpBank', operation: 'getMany', returnAll: false, limit: 2 },
		});
		expect(two).toHaveLength(2);
	});

	it('offers the banks as a searchable list: "name_en (name)" labels, member_id values', async () => {
		const merchant = await newMerchant(sandbox);
		const parameters = { resource: 'payout', operation: 'createRegular', accountType: 'sbp' };
		const everything = await runListSearch({
			credential: merchant.credential,
			parameters,
			method: 'searchSbpBanks',
		});
		expect(everything.results.length).toBeGreaterThan(5);
		expect(everything.results).toContainEqual({
			name: 'Sberbank (Сбербанк)',
			value: '100000000111',
		});
		const found = await runListSearch({
			credential: merchant.credential,
			parameters,
			method: 'searchSbpBanks',
			filter: 'втб',
		});
		expect(found.results).toEqual([{ name: 'VTB Bank (Банк ВТБ)', value: '100000000005' }]);
	});
});
