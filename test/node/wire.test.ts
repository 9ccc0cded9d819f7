import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { runNode } from '../helpers/n8n-context.ts';
import { startRecordingServer, type RecordingServer } from '../helpers/recording-server.ts';

// What goes on the wire, recorded by a local HTTP server: form fields for POST, query string for
// GET, the Bearer token, amounts as canonical decimal strings, normalised phone and card numbers.
let server: RecordingServer;
beforeAll(async () => {
	server = await startRecordingServer();
});
afterAll(async () => {
	await server.close();
});
beforeEach(() => {
	server.requests.length = 0;
	server.answers.length = 0;
	server.fallback = { status: 200, body: { success: true } };
});

const TOKEN = '72|oBCB7Z3SmUm1gvkpEdRcSR2q1ERHpG4vD3DNBmuT';

/** Payout › Create to Saved Account against the recording server. */
const createPersonal = (amount: string, orderId: string) =>
	runNode({
		credential: { apiToken: TOKEN, baseUrl: server.url },
		parameters: {
			resource: 'payout',
			operation: 'createPersonal',
			payoutAccountId: 'acc',
			amount,
			orderId,
		},
		items: [{ run: 1 }],
	});

describe('requests on the wire', () => {
	it('POSTs bill/create as form fields with the Bearer token; the amount is a canonical string, never a float artefact', async () => {
		server.fallback = {
			status: 200,
			body: { success: 'true', bill_id: 'B1', link_url: 'u', link_page_url: 'p' },
		};
		const out = await runNode({
			credential: { apiToken: TOKEN, baseUrl: `${server.url}/api/v1/` },
			parameters: {
				resource: 'bill',
				operation: 'create',
				shopId: 'shop-1',
				amount: '={{ 0.1 + 0.2 }}',
				additionalFields: {
					orderId: 'order & 1',
					description: 'Тест',
					type: 'multi',
					currencyIn: 'USD',
					custom: 'a=b',
					payerPaysCommission: '0',
					name: 'Coffee',
					paymentMethod: 'SBP',
				},
			},
		});
		expect(out).toEqual([
			{
				json: { success: true, bill_id: 'B1', link_url: 'u', link_page_url: 'p' },
				pairedItem: { item: 0 },
			},
		]);
		const [request] = server.requests;
		expect(request.method).toBe('POST');
		expect(request.path).toBe('/api/v1/bill/create');
		expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
		expect(request.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
		expect(request.headers.accept).toMatch(/application\/json/);
		expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
			amount: '0.30',
			shop_id: 'shop-1',
			order_id: 'order & 1',
			description: 'Тест',
			type: 'multi',
			currency_in: 'USD',
			custom: 'a=b',
			payer_pays_commission: '0',
			name: 'Coffee',
			payment_method: 'SBP',
		});
	});

	it('leaves optional bill fields out when not set ("Shop Default" sends nothing)', async () => {
		await runNode({
			credential: { apiToken: TOKEN, baseUrl: server.url },
			parameters: {
				resource: 'bill',
				operation: 'create',
				shopId: 's',
				amount: '1,5',
				additionalFields: { currencyIn: '', payerPaysCommission: '' },
			},
		});
		expect(Object.fromEntries(new URLSearchParams(server.requests[0].body))).toEqual({
			amount: '1.50',
			shop_id: 's',
		});
	});

	it('sends GET parameters in the query string with no body', async () => {
		server.fallback = { status: 200, body: { success: true, id: 'P1' } };
		await runNode({
			credential: { apiToken: TOKEN, baseUrl: server.url },
			parameters: { resource: 'payment', operation: 'get', paymentId: 'P 1/x' },
		});
		expect(server.requests[0]).toMatchObject({
			method: 'GET',
			path: '/api/v1/payment/status',
			query: { id: 'P 1/x' },
			body: '',
		});
		await runNode({
			credential: { apiToken: TOKEN, baseUrl: server.url },
			parameters: {
				resource: 'bill',
				operation: 'search',
				startDate: '2024-03-01T00:00:00',
				finishDate: '2024-03-31T00:00:00',
				returnAll: true,
			},
		});
		// A day more on each side (the service's finish_date may be exclusive, its days Moscow's);
		// the bills created outside the range are left out of the output (search tests).
		expect(server.requests[1]).toMatchObject({
			path: '/api/v1/bill/search',
			query: { start_date: '2024-02-29', finish_date: '2024-04-01', per_page: '100' },
		});
	});

	it('sends a card payout with the digits of the card number and a SBP payout with the phone as 7XXXXXXXXXX', async () => {
		server.answers.push(
			{ status: 422, body: { success: false, message: 'api:error.payout_not_found' } },
			{
				status: 200,
				body: { success: true, data: [{ id: 'PO1', amount: '100.00', status: 'MODERATING' }] },
			},
		);
		await runNode({
			credential: { apiToken: TOKEN, baseUrl: server.url },
			parameters: {
				resource: 'payout',
				operation: 'createRegular',
				accountType: 'credit_card',
				amount: '={{ 99.9 }}',
				cardNumber: '4111-1111 1111-1111',
				cardHolder: '  IVAN   PETROV ',
				orderId: ' card-99 ',
			},
		});
		const cardForm = Object.fromEntries(new URLSearchParams(server.requests[1].body));
		expect(cardForm).toMatchObject({
			amount: '99.90',
			currency: 'RUB',
			account_type: 'credit_card',
			account_identifier: '4111111111111111',
			card_holder: 'IVAN PETROV',
			order_id: 'card-99',
		});
		expect(cardForm.account_bank).toBeUndefined();

		for (const phone of [
			'+7 (900) 123-45-67',
			'8 900 123 45 67',
			'9001234567',
			'7-900-123-45-67',
		]) {
			server.requests.length = 0;
			server.answers.push(
				{ status: 422, body: { success: false, message: 'api:error.payout_not_found' } },
				{ status: 200, body: { success: true, data: [{ id: 'PO2' }] } },
			);
			await runNode({
				credential: { apiToken: TOKEN, baseUrl: server.url },
				parameters: {
					resource: 'payout',
					operation: 'createRegular',
					accountType: 'sbp',
					amount: '10',
					phone,
					bank: { __rl: true, mode: 'id', value: '100000000111' },
					orderId: 'sbp-10',
				},
			});
			const form = Object.fromEntries(new URLSearchParams(server.requests[1].body));
			expect(form).toMatchObject({
				account_type: 'sbp',
				account_identifier: '79001234567',
				account_bank: '100000000111',
			});
			expect(form.card_holder).toBeUndefined();
		}
	});

	it('reads the activity flag whether the service names it active or activity', async () => {
		server.answers.push({
			status: 200,
			body: { success: 'true', id: 'B1', activity: 0, amount: '10.00' },
		});
		server.answers.push({ status: 200, body: { success: true, id: 'B1', active: true } });
		const [first] = await runNode({
			credential: { apiToken: TOKEN, baseUrl: server.url },
			parameters: { resource: 'bill', operation: 'setActive', billId: 'B1', active: false },
		});
		expect(first.json).toEqual({ success: true, id: 'B1', activity: 0, active: false, amount: 10 });
		expect(Object.fromEntries(new URLSearchParams(server.requests[0].body))).toEqual({
			id: 'B1',
			active: '0',
		});
		const [second] = await runNode({
			credential: { apiToken: TOKEN, baseUrl: server.url },
			parameters: { resource: 'bill', operation: 'setActive', billId: 'B1', active: true },
		});
		expect(second.json.active).toBe(true);
		expect(Object.fromEntries(new URLSearchParams(server.requests[1].body))).toEqual({
			id: 'B1',
			active: '1',
		});
	});

	it('keeps unknown fields and amounts it cannot hold exactly as numbers', async () => {
		server.fallback = {
			status: 200,
			body: '{"success":"true","id":"P1","amount":0,"amount_received":"35400.00000000","commission":"90071992547409931.00000001","refunded_amount":"1e5","error_code":null,"extra":{"nested":[1,2]}}',
		};
		const [item] = await runNode({
			credential: { apiToken: TOKEN, baseUrl: server.url },
			parameters: { resource: 'payment', operation: 'get', paymentId: 'P1' },
		});
		expect(item.json).toEqual({
			success: true,
			id: 'P1',
			amount: 0,
			amount_received: 35400,
			commission: '90071992547409931.00000001',
			refunded_amount: '1e5',
			error_code: null,
			extra: { nested: [1, 2] },
		});
	});

	it('follows links.next when the answer has no meta cursor, and stops on a repeated cursor', async () => {
		server.answers.push(
			{
				status: 200,
				body: {
					success: true,
					data: [{ id: 1 }],
					links: { next: `${server.url}/api/v1/payout/search?cursor=c2&per_page=100` },
				},
			},
			{
				status: 200,
				body: {
					success: true,
					data: [{ id: 2 }],
					links: { next: `${server.url}/api/v1/payout/search?cursor=c2` },
				},
			},
		);
		const out = await runNode({
			credential: { apiToken: TOKEN, baseUrl: server.url },
			parameters: {
				resource: 'payout',
				operation: 'search',
				startDate: '2024-01-01',
				finishDate: '2024-01-02',
				returnAll: true,
			},
		});
		expect(out.map((i) => i.json.id)).toEqual([1, 2]);
		expect(server.requests.map((r) => r.query.cursor)).toEqual([undefined, 'c2']);
	});

	it('takes a service without pagination as one page and cuts it to the limit', async () => {
		server.fallback = {
			status: 200,
			body: { success: true, data: [{ id: 1 }, { id: 2 }, { id: 3 }] },
		};
		const out = await runNode({
			credential: { apiToken: TOKEN, baseUrl: server.url },
			parameters: {
				resource: 'bill',
				operation: 'search',
				startDate: '2024-01-01',
				finishDate: '2024-01-02',
				returnAll: false,
				limit: 2,
			},
		});
		expect(out.map((i) => i.json.id)).toEqual([1, 2]);
		expect(server.requests).toHaveLength(1);
		expect(server.requests[0].query.per_page).toBe('2');
	});

	it('turns success:"false" on HTTP 200 into an API error, and a non-JSON 502 into http_502', async () => {
		server.answers.push({
			status: 200,
			body: { success: 'false', message: 'api:error.general_error' },
		});
		server.answers.push({ status: 502, body: '<html>Bad gateway</html>' });
		const run = () =>
			runNode({
				credential: { apiToken: TOKEN, baseUrl: server.url },
				parameters: { resource: 'balance', operation: 'get' },
			}).then(
				() => undefined,
				(e: Error & { httpCode?: string; context: Record<string, unknown> }) => e,
			);
		const first = await run();
		expect(first?.message).toBe('api:error.general_error: The service had an internal error');
		const second = await run();
		expect(second?.message).toBe('http_502: The service answered HTTP 502');
		expect(second?.httpCode).toBe('502');
	});

	it('looks a payout order ID up before creating, and creates nothing when it exists', async () => {
		server.answers.push({
			status: 200,
			body: {
				success: true,
				id: 'PO5',
				amount: '70.00',
				order_id: 'given-1',
				created_at: '2024-03-01 10:00:00',
			},
		});
		const out = await createPersonal('70', 'given-1');
		expect(out).toEqual([
			{
				json: {
					id: 'PO5',
					amount: 70,
					order_id: 'given-1',
					created_at: '2024-03-01 10:00:00',
					already_existed: true,
				},
				pairedItem: { item: 0 },
			},
		]);
		// The amount is the one asked for: a single payout, no search for parts; never a create.
		expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
			'GET /api/v1/payout/status',
		]);
		expect(server.requests[0].query).toEqual({ order_id: 'given-1' });
	});

	it('searches the day before to the day after for the other parts of a split payout, without relying on order_id', async () => {
		const part = (
			id: string,
			amount: string,
			created_at: string,
			account_identifier = '220070******1234',
		) => ({
			id,
			amount,
			status: 'MODERATING',
			currency: 'RUB',
			account_identifier,
			created_at,
		});
		server.answers.push(
			{ status: 200, body: { success: true, ...part('S1', '100.00', '2024-03-01 23:59:59') } },
			{
				status: 200,
				body: {
					success: true,
					data: [
						part('S1', '100.00', '2024-03-01 23:59:59'),
						// The next part was stamped after midnight.
						part('S2', '50.00', '2024-03-02 00:00:01'),
						// Same account, another request an hour later; another account at the same second.
						part('X1', '50.00', '2024-03-02 01:00:00'),
						part('X2', '50.00', '2024-03-01 23:59:59', '427601******9999'),
					],
				},
			},
		);
		const out = await createPersonal('150', 'split-1');
		expect(out.map((i) => [i.json.id, i.json.already_existed])).toEqual([
			['S1', true],
			['S2', true],
		]);
		expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
			'GET /api/v1/payout/status',
			'GET /api/v1/payout/search',
		]);
		// The day before to the day after the first part, asked a day wider on each side: the
		// service's finish_date may be exclusive and its days may not be UTC's.
		expect(server.requests[1].query).toMatchObject({
			start_date: '2024-02-28',
			finish_date: '2024-03-03',
		});
	});

	it('refuses to guess when the parts of a split payout cannot be told apart from another payout made at the same time', async () => {
		const part = (id: string, amount: string) => ({
			id,
			amount,
			status: 'MODERATING',
			currency: 'RUB',
			account_identifier: '220070******1234',
			created_at: '2024-03-01 12:00:00',
		});
		server.answers.push(
			{ status: 200, body: { success: true, ...part('A1', '100.00') } },
			// Two requests of 150.00 split the same way, in the same second, to the same account.
			{
				status: 200,
				body: {
					success: true,
					data: [
						part('A1', '100.00'),
						part('A2', '50.00'),
						part('B1', '100.00'),
						part('B2', '50.00'),
					],
				},
			},
		);
		const error = await createPersonal('150', 'twin-a').then(
			() => undefined,
			(e: Error & { description?: string }) => e,
		);
		expect(error?.message).toBe(
			'Order ID twin-a already has a payout (A1, 100.00), but its other parts cannot be told apart from other payouts made at the same time to 220070******1234',
		);
		expect(error?.description).toContain('Nothing was paid');
		expect(server.requests.map((r) => r.method)).toEqual(['GET', 'GET']);
	});

	it('returns the existing payout when the create call finds the order ID taken meanwhile', async () => {
		server.answers.push(
			{ status: 422, body: { success: false, message: 'api:error.payout_not_found' } },
			{
				status: 422,
				body: {
					message: 'The order id has already been taken.',
					errors: { order_id: ['The order id has already been taken.'] },
				},
			},
			{ status: 200, body: { success: 'true', id: 'PO6', amount: 70 } },
		);
		const out = await createPersonal('70', 'raced-1');
		expect(out).toHaveLength(1);
		expect(out[0].json).toMatchObject({ id: 'PO6', already_existed: true, order_id: 'raced-1' });
		expect(server.requests.map((r) => r.method)).toEqual(['GET', 'POST', 'GET']);
		expect(new URLSearchParams(server.requests[1].body).get('order_id')).toBe('raced-1');
		expect(server.requests[2].query.order_id).toBe('raced-1');
	});

	it('does not take a 422 on another field for a taken order ID', async () => {
		server.answers.push(
			{ status: 422, body: { success: false, message: 'api:error.payout_not_found' } },
			{
				status: 422,
				body: {
					message: 'The amount field is invalid.',
					errors: { amount: ['The amount field is invalid.'] },
				},
			},
		);
		const error = await createPersonal('70', 'bad-amount').then(
			() => undefined,
			(e: Error & { httpCode?: string; description?: string }) => e,
		);
		expect(error?.message).toBe('invalid_request_data: The service rejected the request data');
		expect(error?.description).toContain('amount: The amount field is invalid.');
		expect(error?.httpCode).toBe('422');
		expect(server.requests).toHaveLength(2);
	});
});
