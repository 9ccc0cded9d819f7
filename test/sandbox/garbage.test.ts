import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, read, today, type Harness } from './helpers.ts';

let h: Harness;
let m: { merchantId: string; token: string; shopId: string; payoutAccountId: string };
let billId: string;

beforeAll(async () => {
	h = await harness();
	m = await h.merchant();
	billId = (await h.api('POST', 'bill/create', { amount: '10', shop_id: m.shopId }, m.token)).body
		.bill_id;
});
afterAll(async () => {
	await h.close();
});

/** Everything the merchant can see: bills, payouts, balances, and the bill's payments. */
async function snapshot() {
	const range = { start_date: today(), finish_date: today() };
	return {
		bills: (await h.api('GET', 'bill/search', range, m.token)).body,
		payouts: (await h.api('GET', 'payout/search', range, m.token)).body,
		balance: (await h.api('GET', 'merchant/balance', {}, m.token)).body,
		bill: (await h.api('GET', 'bill/status', { id: billId }, m.token)).body,
		payments: (await h.api('GET', 'bill/payments', { id: billId }, m.token)).body,
	};
}

async function raw(path: string, body: string | Uint8Array, contentType: string, method = 'POST') {
	return read(
		await fetch(`${h.sb.url}${path}`, {
			method,
			headers: { authorization: `Bearer ${m.token}`, 'content-type': contentType },
			body,
		}),
	);
}

const POSTS = [
	'/api/v1/bill/create',
	'/api/v1/bill/toggle_activity',
	'/api/v1/payout/personal/create',
	'/api/v1/payout/regular/create',
];

describe('garbage in, 4xx out, nothing changes', () => {
	it('wrong JSON types answer 422', async () => {
		const before = await snapshot();
		const bodies: Array<[string, unknown]> = [
			['/api/v1/bill/create', { amount: { value: 10 }, shop_id: m.shopId }],
			['/api/v1/bill/create', { amount: [10], shop_id: m.shopId }],
			['/api/v1/bill/create', { amount: true, shop_id: m.shopId }],
			['/api/v1/bill/create', { amount: '10', shop_id: 12345 }],
			['/api/v1/bill/create', { amount: '10', shop_id: m.shopId, type: ['multi'] }],
			['/api/v1/bill/create', { amount: 1e21, shop_id: m.shopId }],
			['/api/v1/bill/toggle_activity', { id: billId, active: 'yes' }],
			['/api/v1/bill/toggle_activity', { id: { $ne: null }, active: 0 }],
			['/api/v1/payout/personal/create', { amount: 'NaN', payout_account_id: m.payoutAccountId }],
			['/api/v1/payout/personal/create', { amount: '10', payout_account_id: [m.payoutAccountId] }],
			[
				'/api/v1/payout/regular/create',
				{
					amount: '10',
					currency: 'RUB',
					account_type: 'sbp',
					account_identifier: '+79001234567',
					account_bank: 1.5,
				},
			],
			['/api/v1/bill/create', [1, 2, 3]],
			['/api/v1/bill/create', 'just a string'],
		];
		for (const [path, body] of bodies) {
			const answer = await raw(path, JSON.stringify(body), 'application/json');
			expect(answer.status, `${path} ${JSON.stringify(body)}`).toBe(422);
			expect(answer.body.errors).toBeTypeOf('object');
		}
		expect(await snapshot()).toEqual(before);
	});

	it('broken encodings: invalid JSON, prototype poisoning, bad percent escapes, invalid UTF-8, unknown media types', async () => {
		const before = await snapshot();
		for (const path of POSTS) {
			expect(
				(await raw(path, '{"amount": "10", "shop_id": ', 'application/json')).status,
				path,
			).toBe(400);
			expect(
				(await raw(path, '{"__proto__": {"admin": true}, "amount": "10"}', 'application/json'))
					.status,
				path,
			).toBe(400);
			expect((await raw(path, '', 'application/json')).status, path).toBe(400);
			// text/plain is read as no fields at all (as Laravel would): validation fails.
			expect((await raw(path, `amount=10&shop_id=${m.shopId}`, 'text/plain')).status, path).toBe(
				422,
			);
			expect((await raw(path, '<bill amount="10"/>', 'application/xml')).status, path).toBe(415);
		}
		const badPercent = await raw(
			'/api/v1/bill/create',
			`amount=%ZZ10&shop_id=${m.shopId}`,
			'application/x-www-form-urlencoded',
		);
		expect(badPercent.status).toBe(422);
		expect(Object.keys(badPercent.body.errors)).toEqual(['amount']);
		const badUtf8 = await raw(
			'/api/v1/bill/create',
			Buffer.concat([
				Buffer.from('amount='),
				Buffer.from([0xff, 0xfe, 0x31]),
				Buffer.from(`&shop_id=${m.shopId}`),
			]),
			'application/x-www-form-urlencoded',
		);
		expect(badUtf8.status).toBe(422);
		const badUtf8Json = await raw(
			'/api/v1/payout/personal/create',
			Buffer.concat([
				Buffer.from('{"amount":"1'),
				Buffer.from([0xc3, 0x28]),
				Buffer.from(`","payout_account_id":"${m.payoutAccountId}"}`),
			]),
			'application/json',
		);
		expect(badUtf8Json.status).toBe(422);
		const nested = await raw(
			'/api/v1/bill/create',
			`amount[]=10&shop_id=${m.shopId}`,
			'application/x-www-form-urlencoded',
		);
		expect(nested.status).toBe(422);
		const twice = await raw(
			'/api/v1/bill/create',
			`amount=10&amount=20&shop_id=${m.shopId}`,
			'application/x-www-form-urlencoded',
		);
		expect(twice.status).toBe(422);
		const nul = await raw(
			'/api/v1/bill/create',
			`amount=10%00&shop_id=${m.shopId}`,
			'application/x-www-form-urlencoded',
		);
		expect(nul.status).toBe(422);
		expect(await snapshot()).toEqual(before);
	});

	it('huge bodies answer 413', async () => {
		const before = await snapshot();
		const huge = `amount=10&shop_id=${m.shopId}&description=${'x'.repeat(70_000)}`;
		for (const path of POSTS) {
			expect((await raw(path, huge, 'application/x-www-form-urlencoded')).status, path).toBe(413);
			expect(
				(
					await raw(
						path,
						JSON.stringify({ amount: '10', shop_id: m.shopId, description: 'x'.repeat(70_000) }),
						'application/json',
					)
				).status,
				path,
			).toBe(413);
		}
		const long = await h.api(
			'POST',
			'bill/create',
			{ amount: '10', shop_id: m.shopId, order_id: 'o'.repeat(256) },
			m.token,
		);
		expect(long.status).toBe(422);
		expect(long.body.errors.order_id[0]).toBe(
			'The order id field must not be greater than 255 characters.',
		);
		expect(await snapshot()).toEqual(before);
	});

	it('garbage in the query string answers 422', async () => {
		const before = await snapshot();
		const get = async (query: string, path = 'bill/status') =>
			read(
				await fetch(`${h.sb.url}/api/v1/${path}?${query}`, {
					headers: { authorization: `Bearer ${m.token}` },
				}),
			);
		expect((await get(`id=${billId}&id=other`)).status).toBe(422);
		expect((await get('id%5B%5D=x')).status).toBe(422);
		expect((await get('start_date=yesterday&finish_date=2024-01-01', 'bill/search')).status).toBe(
			422,
		);
		expect((await get('start_date=2024-02-30&finish_date=2024-03-01', 'bill/search')).status).toBe(
			422,
		);
		expect(
			(await get(`start_date=${today()}&finish_date=${today()}&per_page=0`, 'payout/search'))
				.status,
		).toBe(422);
		expect(
			(await get(`start_date=${today()}&finish_date=${today()}&per_page=abc`, 'payout/search'))
				.status,
		).toBe(422);
		expect(
			(await get(`start_date=${today()}&finish_date=${today()}&cursor=%%%`, 'bill/search')).status,
		).toBe(422);
		expect(
			(await get(`start_date=${today()}&finish_date=${today()}&cursor=bm90IGpzb24`, 'bill/search'))
				.status,
		).toBe(422);
		expect(await snapshot()).toEqual(before);
	});

	it('ignores unknown fields', async () => {
		const answer = await h.api(
			'POST',
			'bill/create',
			{ amount: '10', shop_id: m.shopId, colour: 'blue', __proto__x: '1', 'a[b]': 'c' },
			m.token,
		);
		expect(answer.status).toBe(200);
		const status = await h.api(
			'GET',
			'bill/status',
			{ id: answer.body.bill_id, extra: 'x' },
			m.token,
		);
		expect(status.body.colour).toBeUndefined();
		expect(status.body.amount).toBe(10);
	});

	it('the payment page refuses unknown outcomes and methods without paying', async () => {
		const page = `${h.sb.url}/pay/${billId}`;
		for (const form of [
			'outcome=steal',
			'outcome=full&method=CASH',
			'outcome[]=full',
			'method=SBP',
			'',
		]) {
			const answer = await fetch(page, {
				method: 'POST',
				headers: { 'content-type': 'application/x-www-form-urlencoded' },
				body: form,
			});
			expect(answer.status, form).toBe(400);
		}
		expect((await fetch(`${h.sb.url}/pay/NoSuchBill`)).status).toBe(404);
		expect((await h.api('GET', 'bill/payments', { id: billId }, m.token)).body.data).toEqual([]);
	});

	it('the control API refuses invalid JSON and wrong types', async () => {
		const bad = await fetch(`${h.sb.url}/_sandbox/merchants/${m.merchantId}`, {
			method: 'PATCH',
			headers: { 'content-type': 'application/json' },
			body: '{"banned": tru',
		});
		expect(bad.status).toBe(400);
		const types = await h.control('PATCH', `merchants/${m.merchantId}`, { banned: 'yes' });
		expect(types.status).toBe(400);
		expect((await h.control('GET', `merchants/${m.merchantId}`)).body.banned).toBe(false);
		const pay = await h.control('POST', `bills/${billId}/pay`, { amount: '-5' });
		expect(pay.status).toBe(400);
	});

	it('unknown API paths answer 404, a wrong method 405 (as Laravel), creating nothing', async () => {
		const before = await snapshot();
		const answer = await h.api('GET', 'bill/unknown');
		expect(answer.status).toBe(404);
		expect(answer.body.success).toBe(false);
		const wrong = await h.api('GET', 'bill/create', { amount: '10', shop_id: m.shopId }, m.token);
		expect(wrong.status).toBe(405);
		expect(wrong.headers.get('allow')).toBe('POST');
		expect(wrong.body.message).toContain('The GET method is not supported');
		expect((await h.api('POST', 'bill/status', { id: billId }, m.token)).status).toBe(405);
		expect(await snapshot()).toEqual(before);
	});
});
