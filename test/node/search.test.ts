import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runNode } from '../helpers/n8n-context.ts';
import { startRecordingServer, type RecordingServer } from '../helpers/recording-server.ts';
import {
	PROFILES,
	control,
	newMerchant,
	patchMerchant,
	serviceDay,
	sandboxFor,
	type Sandbox,
	type TestMerchant,
} from '../helpers/sandbox.ts';

// Bill › Search and Payout › Search through the node's real execute(), on both sandbox profiles:
// `live` (a cursor only when per_page is sent, an inclusive finish_date, UTC days) and `spec`
// (Laravel pages that ignore per_page, an exclusive finish_date, Moscow days). The resource
// locators' lists run on both profiles in locators.test.ts.
describe.each(PROFILES)('Search, sandbox profile %s', (profile) => {
	let sandbox: Sandbox;
	sandboxFor(profile, (started) => (sandbox = started));

	async function createBills(merchant: TestMerchant, count: number): Promise<string[]> {
		const created: string[] = [];
		for (let i = 0; i < count; i++) {
			const response = await fetch(`${sandbox.url}/api/v1/bill/create`, {
				method: 'POST',
				headers: {
					authorization: `Bearer ${merchant.token}`,
					'content-type': 'application/x-www-form-urlencoded',
				},
				body: new URLSearchParams({ amount: `${i + 1}.00`, shop_id: merchant.shopId }).toString(),
			});
			created.push(((await response.json()) as { bill_id: string }).bill_id);
		}
		return created;
	}

	const searchBills = (merchant: TestMerchant, extra: Record<string, unknown>) =>
		runNode({
			credential: merchant.credential,
			parameters: {
				resource: 'bill',
				operation: 'search',
				startDate: serviceDay(profile, -1),
				finishDate: serviceDay(profile, 1),
				...extra,
			},
		});

	it('searches bills by date range: Limit stops early, Return All follows the pages', async () => {
		const merchant = await newMerchant(sandbox);
		const created = await createBills(merchant, 230);
		const all = await searchBills(merchant, { returnAll: true });
		expect(all).toHaveLength(230);
		expect(new Set(all.map((i) => i.json.id))).toEqual(new Set(created));
		expect(all.every((i) => i.pairedItem && (i.pairedItem as { item: number }).item === 0)).toBe(
			true,
		);
		expect(all.every((i) => typeof i.json.amount === 'number')).toBe(true);

		const limited = await searchBills(merchant, { returnAll: false, limit: 150 });
		expect(limited).toHaveLength(150);
		expect(new Set(limited.map((i) => i.json.id)).size).toBe(150);

		const none = await searchBills(merchant, {
			returnAll: true,
			startDate: serviceDay(profile, -30),
			finishDate: serviceDay(profile, -20),
		});
		expect(none).toHaveLength(0);
	});

	it("lists every page of a service that pages by itself, today's bills included", async () => {
		const merchant = await newMerchant(sandbox, { searchPageSize: 2 });
		const created = await createBills(merchant, 5);
		const today = serviceDay(profile);
		const all = await searchBills(merchant, {
			returnAll: true,
			startDate: today,
			finishDate: today,
		});
		expect(all.map((i) => i.json.id)).toEqual(created);
	});

	it("keeps the bills of the range on the service's own days, whatever its time zone and end of range", async () => {
		const merchant = await newMerchant(sandbox);
		const at = async (iso: string) => {
			await control(sandbox, 'POST', '/clock', { now: iso });
			try {
				return (await createBills(merchant, 1))[0];
			} finally {
				await control(sandbox, 'POST', '/clock', { now: null });
			}
		};
		const before = await at('2025-03-09T12:00:00Z');
		// 22:30 UTC on 9 March is 01:30 on 10 March in Moscow.
		const late = await at('2025-03-09T22:30:00Z');
		const noon = await at('2025-03-10T12:00:00Z');
		const after = await at('2025-03-11T12:00:00Z');
		const found = async (startDate: string, finishDate: string) =>
			(await searchBills(merchant, { returnAll: true, startDate, finishDate })).map(
				(i) => i.json.id,
			);
		// The service's 10 March: UTC's on live; Moscow's on spec (so the late bill belongs to it).
		expect(await found('2025-03-10', '2025-03-10')).toEqual(
			profile === 'spec' ? [late, noon] : [noon],
		);
		expect(await found('2025-03-09', '2025-03-10')).toEqual([before, late, noon]);
		expect(await found('2025-03-11', '2025-03-11')).toEqual([after]);
		expect(await found('2025-03-01', '2025-03-08')).toEqual([]);
		// With a Limit, only the bills of the range count towards it.
		const limited = await searchBills(merchant, {
			returnAll: false,
			limit: 1,
			startDate: '2025-03-10',
			finishDate: '2025-03-11',
		});
		expect(limited.map((i) => i.json.id)).toEqual([profile === 'spec' ? late : noon]);
	});

	it('lists payouts by date range across pages, with Limit', async () => {
		const merchant = await newMerchant(sandbox);
		await patchMerchant(sandbox, merchant.merchantId, { payoutSplitSize: '1.00' });
		// One request split into 205 payouts of 1.00.
		const created = await runNode({
			credential: merchant.credential,
			parameters: {
				resource: 'payout',
				operation: 'createPersonal',
				payoutAccountId: merchant.payoutAccountId,
				amount: '205',
				orderId: 'bulk-205',
			},
		});
		expect(created).toHaveLength(205);
		const search = (extra: Record<string, unknown>) =>
			runNode({
				credential: merchant.credential,
				parameters: {
					resource: 'payout',
					operation: 'search',
					startDate: serviceDay(profile, -1),
					finishDate: serviceDay(profile, 1),
					...extra,
				},
			});
		const all = await search({ returnAll: true });
		expect(all).toHaveLength(205);
		expect(new Set(all.map((i) => i.json.id))).toEqual(new Set(created.map((i) => i.json.id)));
		const some = await search({ returnAll: false, limit: 101 });
		expect(some).toHaveLength(101);
		expect(
			await search({
				returnAll: true,
				startDate: serviceDay(profile, 2),
				finishDate: serviceDay(profile, 3),
			}),
		).toHaveLength(0);
		// Today alone (the same date twice) lists them on both profiles.
		const today = await search({
			returnAll: true,
			startDate: serviceDay(profile),
			finishDate: serviceDay(profile),
		});
		expect(today).toHaveLength(205);
	});
});

describe("Search sends the API token only to the credential's own API root", () => {
	let service: RecordingServer;
	let elsewhere: RecordingServer;
	beforeAll(async () => {
		service = await startRecordingServer();
		elsewhere = await startRecordingServer();
	});
	afterAll(async () => {
		await service.close();
		await elsewhere.close();
	});
	const TOKEN = '72|searchTokenMustStayHome0123456789abcdefg';
	const search = (operation: 'bill' | 'payout') =>
		runNode({
			credential: { apiToken: TOKEN, baseUrl: service.url },
			parameters: {
				resource: operation,
				operation: 'search',
				startDate: '2025-03-10',
				finishDate: '2025-03-10',
				returnAll: true,
			},
		}).then(
			(items) => ({ items, error: undefined }),
			(error: Error & { description?: string }) => ({ items: [], error }),
		);

	it('never follows links.next to another host: the search fails naming the address, nothing is sent there', async () => {
		for (const operation of ['bill', 'payout'] as const) {
			service.requests.length = 0;
			service.answers.push({
				status: 200,
				body: {
					success: true,
					data: [{ id: 'B1', created_at: '2025-03-10 12:00:00' }],
					links: { next: `${elsewhere.url}/api/v1/${operation}/search?page=2` },
				},
			});
			const { items, error } = await search(operation);
			// Nothing (above all, no Authorization header) went to the host the answer named.
			expect(elsewhere.requests.map((r) => r.headers.authorization)).toEqual([]);
			expect(items).toEqual([]);
			expect(error?.message).toBe(
				`${operation === 'bill' ? 'Bill' : 'Payout'} › Search could not read the whole list: the service named its next page at ${elsewhere.url}/api/v1/${operation}/search, outside the credential's Base URL (${service.url}/api/v1/), and the API token is never sent there`,
			);
			expect(service.requests).toHaveLength(1);
			expect(service.requests[0].headers.authorization).toBe(`Bearer ${TOKEN}`);
		}
		expect(elsewhere.requests).toEqual([]);
	});

	it('reads every page when links and meta come as one-element lists: 26 of 26 bills over three pages of 10', async () => {
		const rows = Array.from({ length: 26 }, (_, i) => ({
			id: `B${i + 1}`,
			created_at: '2025-03-10 12:00:00',
		}));
		// The cursor in links.next on the first page, only in meta.next_cursor on the second.
		const page = (n: number, links: unknown, meta: unknown) => ({
			status: 200,
			body: { success: true, data: rows.slice((n - 1) * 10, n * 10), links, meta },
		});
		service.requests.length = 0;
		service.answers.push(
			page(
				1,
				[{ next: `${service.url}/api/v1/bill/search?cursor=c2`, prev: null }],
				[{ per_page: 10, next_cursor: 'c2', prev_cursor: null }],
			),
			page(
				2,
				[{ next: null, prev: null }],
				[{ per_page: 10, next_cursor: 'c3', prev_cursor: 'c1' }],
			),
			page(
				3,
				[{ next: null, prev: null }],
				[{ per_page: 10, next_cursor: null, prev_cursor: 'c2' }],
			),
		);
		const { items, error } = await search('bill');
		expect(error).toBeUndefined();
		expect(items.map((i) => i.json.id)).toEqual(rows.map((row) => row.id));
		expect(service.requests.map((r) => r.query.cursor)).toEqual([undefined, 'c2', 'c3']);
	});

	it('reads the next page from its own address when the answer also numbers its pages', async () => {
		service.requests.length = 0;
		service.answers.push(
			{
				status: 200,
				body: {
					success: true,
					data: [{ id: 'B1', created_at: '2025-03-10 12:00:00' }],
					links: { next: `${elsewhere.url}/api/v1/bill/search?page=2` },
					meta: { current_page: 1, last_page: 2 },
				},
			},
			{
				status: 200,
				body: {
					success: true,
					data: [{ id: 'B2', created_at: '2025-03-10 13:00:00' }],
					links: { next: null },
					meta: { current_page: 2, last_page: 2 },
				},
			},
		);
		const { items, error } = await search('bill');
		expect(error).toBeUndefined();
		expect(items.map((i) => i.json.id)).toEqual(['B1', 'B2']);
		expect(service.requests.map((r) => r.query.page)).toEqual([undefined, '2']);
		expect(elsewhere.requests).toEqual([]);
	});
});
