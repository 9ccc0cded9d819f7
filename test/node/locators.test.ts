import { describe, expect, it } from 'vitest';
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { failure } from '../helpers/node-params.ts';
import { runListSearch, runNode } from '../helpers/n8n-context.ts';
import {
	PROFILES,
	newMerchant,
	sandboxFor,
	type Sandbox,
	type TestMerchant,
} from '../helpers/sandbox.ts';

// Bill ID and Payout ID as resource locators (From List, By ID, By URL for bills), through the
// node's real execute() and list-search methods against the sandbox over HTTP, on both sandbox
// profiles (the lists read bill/search and payout/search). Workflows saved when both were plain
// text fields keep working (bills.test.ts and payouts.test.ts use strings).
let sandbox: Sandbox;

const rl = (mode: string, value: string) => ({ __rl: true, mode, value });

async function createBill(
	merchant: TestMerchant,
	amount: string,
	orderId = '',
): Promise<IDataObject> {
	const [item] = await runNode({
		credential: merchant.credential,
		parameters: { resource: 'bill', operation: 'create', shopId: merchant.shopId, amount, orderId },
	});
	return item.json;
}

async function getBill(merchant: TestMerchant, billId: unknown, operation = 'get') {
	return await runNode({
		credential: merchant.credential,
		parameters: { resource: 'bill', operation, billId } as INodeParameters,
	});
}

describe.each(PROFILES)('sandbox profile %s', (profile) => {
	sandboxFor(profile, (started) => (sandbox = started));

	describe('Bill ID locator', () => {
		it('finds the same bill from the list, by ID, by payment page URL and as an old plain string', async () => {
			const merchant = await newMerchant(sandbox);
			const created = await createBill(merchant, '321.50');
			const id = created.bill_id as string;
			const page = created.link_page_url as string;
			expect(page).toContain(id);

			for (const billId of [
				rl('list', id),
				rl('id', id),
				rl('url', page),
				rl('url', `${page}?utm_source=mail#pay`),
				rl('id', '={{ $json.never }}'.replace('$json.never', `"${id}"`)),
				id, // a workflow saved before Bill ID was a locator
			]) {
				const [bill] = await getBill(merchant, billId);
				expect(bill.json, JSON.stringify(billId)).toMatchObject({ id, amount: 321.5 });
			}
			// Get Payments and Set Active read the same locator.
			const byUrl = await getBill(merchant, rl('url', page), 'getPayments');
			expect(byUrl).toEqual(await getBill(merchant, id, 'getPayments'));
			const wrong = await failure(getBill(merchant, rl('id', 'no-such-bill'), 'getPayments'));
			expect(wrong).toBeInstanceOf(Error);
		});

		it('refuses a URL that is not a payment page address, and an empty ID, before any request', async () => {
			const merchant = await newMerchant(sandbox);
			const notUrl = await failure(getBill(merchant, rl('url', 'just-some-text')));
			expect(notUrl?.message).toMatch(/not supported|does not match|url/i);
			const empty = await failure(getBill(merchant, rl('id', '')));
			expect(empty?.message).toMatch(/Bill ID/);
		});

		it('lists the recent bills newest first with amount and status, and searches them', async () => {
			const merchant = await newMerchant(sandbox);
			const first = await createBill(merchant, '10.00', 'ORDER-7731');
			const second = await createBill(merchant, '20.00');
			const parameters = { resource: 'bill', operation: 'get' };
			const all = await runListSearch({
				credential: merchant.credential,
				parameters,
				method: 'searchBills',
			});
			const values = all.results.map((r) => r.value);
			expect(values).toEqual(expect.arrayContaining([first.bill_id, second.bill_id]));
			expect(values).toHaveLength(2);
			const label = all.results.find((r) => r.value === second.bill_id)?.name;
			expect(label).toMatch(new RegExp(`^${second.bill_id as string} · 20(\\.00)? RUB · NEW · `));
			const found = await runListSearch({
				credential: merchant.credential,
				parameters,
				method: 'searchBills',
				filter: String(first.bill_id).toLowerCase(),
			});
			expect(found.results.map((r) => r.value)).toEqual([first.bill_id]);
			// The order ID shows beside the bill ID, and finds the bill, where bill/search gives it
			// (the live profile; the spec profile's bills carry none: the label is the rest).
			const firstLabel = all.results.find((r) => r.value === first.bill_id)?.name;
			const order = profile === 'live' ? ' · order ORDER-7731' : '';
			expect(firstLabel).toMatch(
				new RegExp(`^${first.bill_id as string}${order} · 10(\\.00)? RUB · NEW · `),
			);
			const byOrder = await runListSearch({
				credential: merchant.credential,
				parameters,
				method: 'searchBills',
				filter: 'order-7731',
			});
			expect(byOrder.results.map((r) => r.value)).toEqual(
				profile === 'live' ? [first.bill_id] : [],
			);
			// Another merchant's bills never show.
			const stranger = await newMerchant(sandbox);
			const none = await runListSearch({
				credential: stranger.credential,
				parameters,
				method: 'searchBills',
			});
			expect(none.results).toEqual([]);
		});
	});

	describe('the lists read every page of the recent entries', () => {
		it("lists today's bills and payouts past the service's first page", async () => {
			const merchant = await newMerchant(sandbox, { searchPageSize: 2, payoutSplitSize: '1.00' });
			const bills: unknown[] = [];
			for (let i = 0; i < 5; i++) bills.push((await createBill(merchant, `${i + 1}.00`)).bill_id);
			const listed = await runListSearch({
				credential: merchant.credential,
				parameters: { resource: 'bill', operation: 'get' },
				method: 'searchBills',
			});
			expect(listed.results.map((r) => r.value).sort()).toEqual([...bills].sort());
			const parts = await runNode({
				credential: merchant.credential,
				parameters: {
					resource: 'payout',
					operation: 'createPersonal',
					payoutAccountId: merchant.payoutAccountId,
					amount: '3',
					orderId: 'LOC-SPLIT',
				},
			});
			expect(parts).toHaveLength(3);
			const payouts = await runListSearch({
				credential: merchant.credential,
				parameters: { resource: 'payout', operation: 'get', findBy: 'id' },
				method: 'searchPayouts',
			});
			expect(payouts.results.map((r) => r.value).sort()).toEqual(
				parts.map((p) => p.json.id).sort(),
			);
		});
	});

	describe('Payout ID locator', () => {
		async function payout(merchant: TestMerchant, amount: string, orderId: string) {
			const [item] = await runNode({
				credential: merchant.credential,
				parameters: {
					resource: 'payout',
					operation: 'createPersonal',
					payoutAccountId: merchant.payoutAccountId,
					amount,
					orderId,
				},
			});
			return item.json;
		}

		it('lists the recent payouts and reads one from the list, by ID and as an old plain string', async () => {
			const merchant = await newMerchant(sandbox);
			const a = await payout(merchant, '100', 'LOC-1');
			const b = await payout(merchant, '200', 'LOC-2');
			const list = await runListSearch({
				credential: merchant.credential,
				parameters: { resource: 'payout', operation: 'get', findBy: 'id' },
				method: 'searchPayouts',
			});
			expect(list.results.map((r) => r.value).sort()).toEqual([a.id, b.id].sort());
			expect(list.results.find((r) => r.value === b.id)?.name).toMatch(/ · 200(\.00)? RUB · /);

			for (const payoutId of [
				rl('list', b.id as string),
				rl('id', b.id as string),
				b.id as string,
			]) {
				const [got] = await runNode({
					credential: merchant.credential,
					parameters: { resource: 'payout', operation: 'get', findBy: 'id', payoutId },
				});
				expect(got.json, JSON.stringify(payoutId)).toMatchObject({ id: b.id, amount: 200 });
			}
		});
	});
});
