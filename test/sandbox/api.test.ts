import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSandbox } from '../../sandbox/src/index.ts';
import { harness, today, type Harness } from './helpers.ts';

const DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const EIGHT = /^\d+\.\d{8}$/;

let h: Harness;
beforeAll(async () => {
	h = await harness();
});
afterAll(async () => {
	await h.close();
});

async function newBill(params: Record<string, string> = {}) {
	const answer = await h.api('POST', 'bill/create', {
		amount: '100.05',
		shop_id: h.sb.shopId,
		...params,
	});
	expect(answer.status).toBe(200);
	return answer.body.bill_id as string;
}

describe('bills', () => {
	it('creates a bill with the live shape: success "true", link urls on the sandbox, an opaque id', async () => {
		const answer = await h.api('POST', 'bill/create', {
			amount: '100.05',
			shop_id: h.sb.shopId,
			order_id: 'ord-1',
			type: 'multi',
		});
		expect(answer.status).toBe(200);
		expect(answer.body.success).toBe('true');
		expect(answer.body.bill_id).toMatch(/^[A-Za-z0-9]{6,}$/);
		expect(answer.body.link_page_url).toBe(`${h.sb.url}/pay/${answer.body.bill_id}`);
		expect(answer.body.link_url).toBe(`${h.sb.url}/link/${answer.body.bill_id}`);
		const page = await fetch(answer.body.link_page_url);
		expect(page.status).toBe(200);
		expect(page.headers.get('content-type')).toContain('text/html');
		expect(await page.text()).toContain('100.05 RUB');
		const qr = await fetch(answer.body.link_url);
		expect(qr.status).toBe(200);
		expect(await qr.text()).toContain('<svg');
	});

	it('accepts JSON bodies too', async () => {
		const response = await fetch(`${h.sb.url}/api/v1/bill/create`, {
			method: 'POST',
			headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
			body: JSON.stringify({ amount: 35400, shop_id: h.sb.shopId, currency_in: 'USD' }),
		});
		const body = (await response.json()) as { bill_id: string };
		expect(response.status).toBe(200);
		const status = await h.api('GET', 'bill/status', { id: body.bill_id });
		expect(status.body).toMatchObject({
			amount: 35400,
			currency_in: 'USD',
			type: 'NORMAL',
			status: 'NEW',
		});
	});

	it('answers bill/status with numbers for amounts, upper-case type and Y-m-d H:i:s', async () => {
		const id = await newBill({ order_id: 'ord-status', type: 'multi' });
		const answer = await h.api('GET', 'bill/status', { id });
		expect(answer.status).toBe(200);
		// The interface document's fields and, as the service's current reference shows, order_id.
		const documented = {
			success: true,
			id,
			status: 'NEW',
			amount: 100.05,
			type: 'MULTI',
			currency_in: 'RUB',
			created_at: expect.stringMatching(DATETIME),
		};
		expect(answer.body).toEqual({ ...documented, order_id: 'ord-status' });
		// billOrderId false: exactly the document's fields.
		await h.control('PATCH', `merchants/${h.sb.merchantId}`, { billOrderId: false });
		try {
			expect((await h.api('GET', 'bill/status', { id })).body).toEqual(documented);
		} finally {
			await h.control('PATCH', `merchants/${h.sb.merchantId}`, { billOrderId: true });
		}
		// The live service is seen to add active: emulated when the merchant asks for it.
		await h.control('PATCH', `merchants/${h.sb.merchantId}`, { liveExtras: true });
		try {
			const live = await h.api('GET', 'bill/status', { id });
			expect(live.body).toEqual({ ...documented, order_id: 'ord-status', active: true });
		} finally {
			await h.control('PATCH', `merchants/${h.sb.merchantId}`, { liveExtras: false });
		}
	});

	it('uses the shop default currency when currency_in is omitted', async () => {
		const shop = await h.control('POST', 'shops', { defaultCurrency: 'EUR' });
		const answer = await h.api('POST', 'bill/create', { amount: '10', shop_id: shop.body.shopId });
		const status = await h.api('GET', 'bill/status', { id: answer.body.bill_id });
		expect(status.body.currency_in).toBe('EUR');
	});

	it('toggles activity and returns the bill with active and activity', async () => {
		const id = await newBill();
		const off = await h.api('POST', 'bill/toggle_activity', { id, active: '0' });
		expect(off.status).toBe(200);
		expect(off.body).toMatchObject({
			success: true,
			id,
			active: false,
			activity: false,
			status: 'NEW',
			amount: 100.05,
			type: 'NORMAL',
			currency_in: 'RUB',
		});
		expect(off.body.created_at).toMatch(DATETIME);
		const pay = await h.control('POST', `bills/${id}/pay`, { outcome: 'full' });
		expect(pay.status).toBe(409);
		expect(pay.body.error).toBe('bill_inactive');
		const on = await h.api('POST', 'bill/toggle_activity', { id, active: '1' });
		expect(on.body).toMatchObject({ active: true, activity: true });
		expect((await h.control('POST', `bills/${id}/pay`, { outcome: 'full' })).status).toBe(200);
	});

	it('lists the payments of a bill', async () => {
		const id = await newBill({ type: 'multi' });
		await h.control('POST', `bills/${id}/pay`, { outcome: 'full' });
		await h.control('POST', `bills/${id}/pay`, { outcome: 'under', method: 'SBP' });
		const answer = await h.api('GET', 'bill/payments', { id });
		expect(answer.status).toBe(200);
		expect(answer.body.success).toBe(true);
		expect(answer.body.data.map((p: { status: string }) => p.status)).toEqual([
			'SUCCESS',
			'UNDERPAID',
		]);
		for (const payment of answer.body.data) {
			expect(payment.bill_id).toBe(id);
			expect(typeof payment.amount).toBe('number');
			expect(typeof payment.amount_received).toBe('number');
			expect(payment.created_at).toMatch(DATETIME);
			expect(payment.currency_in).toBe('RUB');
		}
		expect(answer.body.data[0].from_card).toMatch(/^\d{6}\*+\d{4}$/);
	});

	it('answers payment/status with the payment fields and success', async () => {
		const id = await newBill();
		const pay = await h.control('POST', `bills/${id}/pay`, { outcome: 'full' });
		const answer = await h.api('GET', 'payment/status', { id: pay.body.payment.id });
		expect(answer.status).toBe(200);
		expect(answer.body).toMatchObject({
			success: true,
			id: pay.body.payment.id,
			bill_id: id,
			status: 'SUCCESS',
			amount: 100.05,
			currency_in: 'RUB',
		});
		expect(Object.keys(answer.body)).toEqual(
			expect.arrayContaining([
				'id',
				'bill_id',
				'status',
				'amount',
				'amount_received',
				'from_card',
				'currency_in',
				'created_at',
				'success',
			]),
		);
	});

	it('searches bills by created_at date range, plain and paginated with an opaque cursor', async () => {
		const m = await h.merchant();
		const ids: string[] = [];
		for (let i = 0; i < 5; i += 1) {
			const answer = await h.api(
				'POST',
				'bill/create',
				{ amount: `${i + 1}`, shop_id: m.shopId },
				m.token,
			);
			ids.push(answer.body.bill_id);
		}
		const all = await h.api(
			'GET',
			'bill/search',
			{ start_date: today(), finish_date: today() },
			m.token,
		);
		expect(all.status).toBe(200);
		expect(all.body.success).toBe(true);
		expect(all.body.data.map((b: { id: string }) => b.id)).toEqual(ids);
		expect(all.body.links).toBeUndefined();
		expect(Object.keys(all.body.data[0]).sort()).toEqual(
			expect.arrayContaining(['id', 'status', 'type', 'amount', 'currency_in', 'created_at']),
		);

		const seen: string[] = [];
		let cursor: string | null = null;
		let pages = 0;
		do {
			const params: Record<string, string> = {
				start_date: today(),
				finish_date: today(),
				per_page: '2',
			};
			if (cursor) params['cursor'] = cursor;
			const page = await h.api('GET', 'bill/search', params, m.token);
			expect(page.status).toBe(200);
			expect(page.body.data.length).toBeLessThanOrEqual(2);
			seen.push(...page.body.data.map((b: { id: string }) => b.id));
			// `links` and `meta` as one-element lists, as the service's typed client models them.
			expect(page.body.links).toHaveLength(1);
			expect(page.body.meta).toHaveLength(1);
			cursor = page.body.meta[0].next_cursor;
			if (cursor) expect(page.body.links[0].next).toContain(`cursor=${cursor}`);
			else expect(page.body.links[0].next).toBeNull();
			pages += 1;
		} while (cursor && pages < 10);
		expect(pages).toBe(3);
		expect(seen).toEqual(ids);

		const earlier = await h.api(
			'GET',
			'bill/search',
			{ start_date: '2020-01-01', finish_date: '2020-01-31' },
			m.token,
		);
		expect(earlier.body.data).toEqual([]);
	});

	it('finds bills on the day of the sandbox clock', async () => {
		const m = await h.merchant();
		await h.control('POST', 'clock', { now: '2025-03-10T12:00:00Z' });
		const old = await h.api('POST', 'bill/create', { amount: '5', shop_id: m.shopId }, m.token);
		await h.control('POST', 'clock', { now: null });
		await h.api('POST', 'bill/create', { amount: '6', shop_id: m.shopId }, m.token);
		const march = await h.api(
			'GET',
			'bill/search',
			{ start_date: '2025-03-10', finish_date: '2025-03-10' },
			m.token,
		);
		expect(march.body.data.map((b: { id: string }) => b.id)).toEqual([old.body.bill_id]);
		expect(march.body.data[0].created_at).toBe('2025-03-10 12:00:00');
	});
});

describe('balance, payouts, banks', () => {
	it('answers merchant/balance with "true" and 8-decimal strings for RUB, USD, EUR (and USDT in live)', async () => {
		const answer = await h.api('GET', 'merchant/balance');
		expect(answer.status).toBe(200);
		expect(answer.body.success).toBe('true');
		expect(answer.body.balances.map((b: { currency: string }) => b.currency)).toEqual([
			'RUB',
			'USD',
			'EUR',
			'USDT',
		]);
		const spec = await h.merchant({ profile: 'spec' });
		const document = await h.api('GET', 'merchant/balance', {}, spec.token);
		expect(document.body.balances.map((b: { currency: string }) => b.currency)).toEqual([
			'RUB',
			'USD',
			'EUR',
		]);
		for (const balance of answer.body.balances) {
			expect(balance.balance_available).toMatch(EIGHT);
			expect(balance.balance_locked).toMatch(EIGHT);
			expect(balance.balance_hold).toMatch(EIGHT);
		}
	});

	it('creates a personal payout as MODERATING and reads it by id and by order_id', async () => {
		const created = await h.api('POST', 'payout/personal/create', {
			amount: '150.00',
			payout_account_id: h.sb.payoutAccountId,
			order_id: 'po-personal-1',
		});
		expect(created.status).toBe(200);
		expect(created.body.success).toBe(true);
		expect(created.body.data).toHaveLength(1);
		const payout = created.body.data[0];
		// The live profile: every field of the public record's payout (spec: profiles.test.ts).
		expect(Object.keys(payout).sort()).toEqual([
			'account_amount',
			'account_commission',
			'account_currency',
			'account_identifier',
			'amount',
			'commission',
			'created_at',
			'currency',
			'error_code',
			'error_message',
			'id',
			'order_id',
			'status',
		]);
		expect(payout).toMatchObject({
			status: 'MODERATING',
			amount: 150,
			currency: 'RUB',
			account_currency: 'RUB',
			// The sender pays: the balance gives the amount and the fee (2 % + 10.00).
			commission: 13,
			account_amount: 163,
			account_commission: 13,
			order_id: 'po-personal-1',
			error_code: null,
			error_message: null,
		});
		expect(payout.account_identifier).toMatch(/^\d{6}\*+\d{4}$/);
		expect(payout.created_at).toMatch(DATETIME);
		expect(typeof payout.commission).toBe('number');
		const byId = await h.api('GET', 'payout/status', { id: payout.id });
		expect(byId.body).toEqual({ success: true, ...payout });
		const byOrder = await h.api('GET', 'payout/status', { order_id: 'po-personal-1' });
		expect(byOrder.body.id).toBe(payout.id);
	});

	it('creates regular payouts to a card (masked) and to SBP (phone)', async () => {
		const card = await h.api('POST', 'payout/regular/create', {
			amount: '200',
			currency: 'RUB',
			account_type: 'credit_card',
			account_identifier: '2200 7001 2345 9876',
			card_holder: 'IVAN IVANOV',
		});
		expect(card.status).toBe(200);
		expect(card.body.data[0]).toMatchObject({
			status: 'MODERATING',
			amount: 200,
			account_identifier: '220070******9876',
		});
		const sbp = await h.api('POST', 'payout/regular/create', {
			amount: '300.50',
			currency: 'RUB',
			account_type: 'sbp',
			account_identifier: '+79001234567',
			account_bank: '100000000111',
		});
		expect(sbp.status).toBe(200);
		expect(sbp.body.data[0]).toMatchObject({ amount: 300.5, account_identifier: '+79001234567' });
	});

	it('searches payouts by date range', async () => {
		const m = await h.merchant();
		const one = await h.api(
			'POST',
			'payout/personal/create',
			{ amount: '10', payout_account_id: m.payoutAccountId },
			m.token,
		);
		const two = await h.api(
			'POST',
			'payout/personal/create',
			{ amount: '20', payout_account_id: m.payoutAccountId },
			m.token,
		);
		const answer = await h.api(
			'GET',
			'payout/search',
			{ start_date: today(), finish_date: today() },
			m.token,
		);
		expect(answer.status).toBe(200);
		expect(answer.body.data.map((p: { id: string }) => p.id)).toEqual([
			one.body.data[0].id,
			two.body.data[0].id,
		]);
		expect(answer.body.data[0].success).toBeUndefined();
		const paged = await h.api(
			'GET',
			'payout/search',
			{ start_date: today(), finish_date: today(), per_page: '1' },
			m.token,
		);
		expect(paged.body.data).toHaveLength(1);
		const next = await h.api(
			'GET',
			'payout/search',
			{ start_date: today(), finish_date: today(), cursor: paged.body.meta[0].next_cursor },
			m.token,
		);
		expect(next.body.data.map((p: { id: string }) => p.id)).toEqual([two.body.data[0].id]);
	});

	it('lists SBP banks with member_id, name, name_en and bic', async () => {
		const answer = await h.api('GET', 'payout/dictionaries/sbp_banks');
		expect(answer.status).toBe(200);
		expect(answer.body.success).toBe(true);
		expect(answer.body.data.length).toBeGreaterThan(5);
		for (const bank of answer.body.data) {
			expect(Number.isInteger(bank.member_id)).toBe(true);
			expect(typeof bank.name).toBe('string');
			expect(typeof bank.name_en).toBe('string');
			expect(Number.isInteger(bank.bic)).toBe(true);
		}
		expect(answer.body.data).toContainEqual(
			expect.objectContaining({ member_id: 100000000111, name_en: 'Sberbank' }),
		);
	});
});

describe('buildSandbox', () => {
	it('builds the app without listening; links follow the Host header, or publicUrl when given', async () => {
		const app = buildSandbox({ token: '3|injectinjectinjectinjectinjectinjectinje' });
		const shopId = (await app.inject({ method: 'GET', url: '/_sandbox/demo' })).json().shopId;
		const created = await app.inject({
			method: 'POST',
			url: '/api/v1/bill/create',
			headers: {
				authorization: 'Bearer 3|injectinjectinjectinjectinjectinjectinje',
				host: 'pay.example.test',
			},
			payload: { amount: '10', shop_id: shopId },
		});
		expect(created.statusCode).toBe(200);
		expect(created.json().link_page_url).toBe(
			`http://pay.example.test/pay/${created.json().bill_id}`,
		);
		await app.close();

		const pinned = buildSandbox({
			token: '4|pinnedpinnedpinnedpinnedpinnedpinnedpinn',
			publicUrl: 'https://sandbox.example.test/',
		});
		const pinnedShop = (await pinned.inject({ method: 'GET', url: '/_sandbox/demo' })).json()
			.shopId;
		const bill = await pinned.inject({
			method: 'POST',
			url: '/api/v1/bill/create',
			headers: { authorization: 'Bearer 4|pinnedpinnedpinnedpinnedpinnedpinnedpinn' },
			payload: { amount: '10', shop_id: pinnedShop },
		});
		expect(bill.json().link_url).toBe(`https://sandbox.example.test/link/${bill.json().bill_id}`);
		await pinned.close();
	});
});
