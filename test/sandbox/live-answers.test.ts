// The answers the live service is seen to give beyond the interface document
// (docs/developer/service.md), each behind a per-merchant switch that works in both profiles. The
// switches set for a whole sandbox (options, bin flags): live-options.test.ts.
import { describe, expect, it } from 'vitest';
import {
	harnessAndListener,
	md5,
	today,
	type Harness,
	shopMerchants,
	type Listener,
} from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

const PROFILES = ['live', 'spec'] as const;

let h: Harness;
let shop: Listener;
harnessAndListener((started, listening) => {
	h = started;
	shop = listening;
});

const { merchantIn, bill } = shopMerchants(() => ({ h, shop }));

const pay = async (billId: string, body: Record<string, unknown> = {}) => {
	const paid = await h.control('POST', `bills/${billId}/pay`, body);
	expect(paid.status, paid.text).toBe(200);
	return paid.body;
};

const received = (shopId: string) =>
	shop.received.filter((entry) => entry.path === `/result/${shopId}`);

describe.each(PROFILES)('TrsId switch (%s profile)', (profile) => {
	it('trsId "bill": TrsId is the bill id, and two payments of a MULTI link post identical postbacks', async () => {
		const m = await merchantIn(profile, { trsId: 'bill' });
		const billId = await bill(m.token, m.shopId, { type: 'multi', order_id: `link-${profile}` });
		const first = await pay(billId);
		const second = await pay(billId);
		expect(first.payment.id).not.toBe(second.payment.id);
		expect(first.postback.TrsId).toBe(billId);
		expect(second.postback).toEqual(first.postback);
		expect(first.postback.SignatureValue).toBe(
			md5(`${first.postback.OutSum}:link-${profile}:${m.token}`),
		);
		const got = await waitFor(
			'the two postbacks',
			() => received(m.shopId).length >= 2 && received(m.shopId),
		);
		expect(got[0]!.raw).toBe(got[1]!.raw);
		// payment/status does not know the bill id; bill/status and bill/payments do.
		const asPayment = await h.api('GET', 'payment/status', { id: billId }, m.token);
		expect(asPayment.body.message).toBe('api:error.payment_not_found');
		const payments = await h.api('GET', 'bill/payments', { id: billId }, m.token);
		expect(payments.body.data.map((p: { id: string }) => p.id).sort()).toEqual(
			[first.payment.id, second.payment.id].sort(),
		);
		// The delivery log files them under the TrsId they carried.
		const log = await h.control('GET', `deliveries?trsId=${billId}`);
		expect(log.body.data.length).toBeGreaterThanOrEqual(2);
	});

	it('trsId "payment" (the default): TrsId is the payment id', async () => {
		const m = await merchantIn(profile);
		expect((await h.control('GET', `merchants/${m.merchantId}`)).body.trsId).toBe('payment');
		const billId = await bill(m.token, m.shopId, { type: 'multi' });
		const first = await pay(billId);
		const second = await pay(billId);
		expect(first.postback.TrsId).toBe(first.payment.id);
		expect(second.postback.TrsId).toBe(second.payment.id);
		expect(second.postback).not.toEqual(first.postback);
	});
});

describe.each(PROFILES)('bill/payments is cursor-paged (%s profile)', (profile) => {
	it('a MULTI link with 25 payments reads page by page: 10 + 10 + 5 through links.next and meta.next_cursor', async () => {
		// `links` and `meta`: one-element lists in `live` (as the service's typed client models
		// them), objects in `spec`.
		const one = (value: any) => {
			expect(Array.isArray(value)).toBe(profile === 'live');
			if (profile === 'live') expect(value).toHaveLength(1);
			return profile === 'live' ? value[0] : value;
		};
		const m = await h.merchant({ profile });
		const billId = await bill(m.token, m.shopId, { type: 'multi' });
		const ids: string[] = [];
		for (let i = 0; i < 25; i += 1) ids.push((await pay(billId)).payment.id);
		const first = await h.api('GET', 'bill/payments', { id: billId, per_page: '10' }, m.token);
		expect(first.status).toBe(200);
		expect(first.body.data).toHaveLength(10);
		expect(one(first.body.meta)).toMatchObject({ per_page: 10, prev_cursor: null });
		expect(one(first.body.links).prev).toBeNull();
		// The next page by the cursor...
		const second = await h.api(
			'GET',
			'bill/payments',
			{ id: billId, per_page: '10', cursor: one(first.body.meta).next_cursor },
			m.token,
		);
		expect(second.body.data).toHaveLength(10);
		expect(one(second.body.meta).prev_cursor).not.toBeNull();
		// ...and the third by the full URL in links.next.
		const nextUrl = new URL(one(second.body.links).next as string);
		expect(nextUrl.searchParams.get('id')).toBe(billId);
		const third = await h.api(
			'GET',
			'bill/payments',
			Object.fromEntries(nextUrl.searchParams),
			m.token,
		);
		expect(third.body.data).toHaveLength(5);
		expect(one(third.body.meta).next_cursor).toBeNull();
		expect(one(third.body.links).next).toBeNull();
		const seen = [...first.body.data, ...second.body.data, ...third.body.data].map(
			(p: { id: string }) => p.id,
		);
		expect(seen).toEqual(ids);
		// Without per_page: the merchant's page size (15 by default), then the rest.
		const plain = await h.api('GET', 'bill/payments', { id: billId }, m.token);
		expect(plain.body.data).toHaveLength(15);
		expect(one(plain.body.meta).per_page).toBe(15);
		await h.control('PATCH', `merchants/${m.merchantId}`, { paymentsPageSize: 30 });
		const whole = await h.api('GET', 'bill/payments', { id: billId }, m.token);
		expect(whole.body.data).toHaveLength(25);
		expect(one(whole.body.meta).next_cursor).toBeNull();
		// A bad page size or cursor is Laravel's 422.
		const bad = await h.api('GET', 'bill/payments', { id: billId, per_page: '0' }, m.token);
		expect(bad.status).toBe(422);
		expect(bad.body.errors).toHaveProperty('per_page');
		const forged = await h.api('GET', 'bill/payments', { id: billId, cursor: 'nope' }, m.token);
		expect(forged.status).toBe(422);
		expect(forged.body.errors).toHaveProperty('cursor');
	});
});

describe.each(PROFILES)('error bodies and the added error keys (%s profile)', (profile) => {
	it('errorForm "error_code": the key in error_code, a sentence in error_message, no message; 401 and 422 keep their shape', async () => {
		const m = await h.merchant({ profile, errorForm: 'error_code' });
		const missing = await h.api('GET', 'payment/status', { id: 'nope' }, m.token);
		expect(missing.status).toBe(422);
		expect(missing.body).toEqual({
			success: false,
			error_code: 'api:error.payment_not_found',
			error_message: 'Payment not found.',
		});
		const noPayout = await h.api('GET', 'payout/status', { id: 'nope' }, m.token);
		expect(noPayout.body.error_code).toBe('api:error.payout_not_found');
		expect(noPayout.body).not.toHaveProperty('message');
		// Faults answer in the same form.
		await h.control('POST', 'faults', { kind: '500', path: '/api/v1/bill/search' });
		const failed = await h.api(
			'GET',
			'bill/search',
			{ start_date: '2025-01-01', finish_date: '2025-01-02' },
			m.token,
		);
		expect(failed.status).toBe(500);
		expect(failed.body).toMatchObject({ error_code: 'api:error.general_error' });
		await h.control('POST', 'faults', {
			kind: 'error',
			key: 'payout_not_found',
			path: '/api/v1/payout/status',
		});
		const faulted = await h.api('GET', 'payout/status', { id: 'x' }, m.token);
		expect(faulted.status).toBe(422);
		expect(faulted.body.error_code).toBe('api:error.payout_not_found');
		// Answers that carry no api:error key keep Laravel's shape.
		const invalid = await h.api('GET', 'payment/status', {}, m.token);
		expect(invalid.status).toBe(422);
		expect(invalid.body.errors).toHaveProperty('id');
		const anonymous = await h.api('GET', 'payment/status', { id: 'x' }, null);
		expect(anonymous.body).toEqual({ message: 'Unauthenticated.' });
		// Switched back: the document's message form.
		await h.control('PATCH', `merchants/${m.merchantId}`, { errorForm: 'message' });
		const back = await h.api('GET', 'payment/status', { id: 'nope' }, m.token);
		expect(back.body).toEqual({ success: false, message: 'api:error.payment_not_found' });
	});

	it('ipAllowList: a request from another address answers 403 ip_access_denied, in either error form', async () => {
		const m = await h.merchant({ profile, ipAllowList: ['203.0.113.7'] });
		const denied = await h.api('GET', 'merchant/balance', {}, m.token);
		expect(denied.status).toBe(403);
		expect(denied.body).toEqual({ success: false, message: 'api:error.ip_access_denied' });
		const create = await h.api('POST', 'bill/create', { amount: '1', shop_id: m.shopId }, m.token);
		expect(create.status).toBe(403);
		expect(create.body.message).toBe('api:error.ip_access_denied');
		await h.control('PATCH', `merchants/${m.merchantId}`, { errorForm: 'error_code' });
		const coded = await h.api('GET', 'merchant/balance', {}, m.token);
		expect(coded.body.error_code).toBe('api:error.ip_access_denied');
		// The test's own address on the list (or no list): answered.
		await h.control('PATCH', `merchants/${m.merchantId}`, {
			ipAllowList: ['203.0.113.7', '127.0.0.1'],
		});
		expect((await h.api('GET', 'merchant/balance', {}, m.token)).status).toBe(200);
		await h.control('PATCH', `merchants/${m.merchantId}`, { ipAllowList: null });
		expect((await h.api('GET', 'merchant/balance', {}, m.token)).status).toBe(200);
		// A bad token is still 401 first.
		expect((await h.api('GET', 'merchant/balance', {}, 'wrong')).status).toBe(401);
	});

	it('rejectBills: the next N bill/create answer 400 transaction_rejected, and make no bill', async () => {
		const m = await h.merchant({ profile, rejectBills: 2 });
		for (let i = 0; i < 2; i += 1) {
			const rejected = await h.api(
				'POST',
				'bill/create',
				{ amount: '10.00', shop_id: m.shopId },
				m.token,
			);
			expect(rejected.status).toBe(400);
			expect(rejected.body).toEqual({ success: false, message: 'api:error.transaction_rejected' });
		}
		expect((await h.control('GET', `merchants/${m.merchantId}`)).body.rejectBills).toBe(0);
		const ok = await h.api('POST', 'bill/create', { amount: '10.00', shop_id: m.shopId }, m.token);
		expect(ok.status).toBe(200);
		const found = await h.api(
			'GET',
			'bill/search',
			{ start_date: today(), finish_date: '2999-01-01' },
			m.token,
		);
		expect(found.body.data).toHaveLength(1);
		// A fault can give the key too.
		const fault = await h.control('POST', 'faults', {
			kind: 'error',
			key: 'transaction_rejected',
			path: '/api/v1/bill/create',
		});
		expect(fault.status).toBe(200);
		const faulted = await h.api(
			'POST',
			'bill/create',
			{ amount: '10.00', shop_id: m.shopId },
			m.token,
		);
		expect(faulted.status).toBe(400);
		expect(faulted.body.message).toBe('api:error.transaction_rejected');
	});
});

describe.each(PROFILES)('shop and order filters, payment/search (%s profile)', (profile) => {
	const range = { start_date: today(), finish_date: '2999-01-01' };

	it('bill/search and payment/search filter by shop_id and order_id; payment/search lists payments by date as bill/search does', async () => {
		const m = await h.merchant({ profile });
		const other = await h.control('POST', 'shops', { merchantId: m.merchantId });
		const inFirst = await bill(m.token, m.shopId, { order_id: 'first-1', type: 'multi' });
		const inSecond = await bill(m.token, other.body.shopId, { order_id: 'second-1' });
		const p1 = await pay(inFirst);
		const p2 = await pay(inFirst);
		const p3 = await pay(inSecond);
		const ids = (answer: { body: { data: Array<{ id: string }> } }) =>
			answer.body.data.map((row) => row.id).sort();

		const allBills = await h.api('GET', 'bill/search', range, m.token);
		expect(ids(allBills)).toEqual([inFirst, inSecond].sort());
		const firstBills = await h.api('GET', 'bill/search', { ...range, shop_id: m.shopId }, m.token);
		expect(ids(firstBills)).toEqual([inFirst]);
		const byOrder = await h.api('GET', 'bill/search', { ...range, order_id: 'second-1' }, m.token);
		expect(ids(byOrder)).toEqual([inSecond]);

		const allPayments = await h.api('GET', 'payment/search', range, m.token);
		expect(allPayments.status).toBe(200);
		expect(ids(allPayments)).toEqual([p1.payment.id, p2.payment.id, p3.payment.id].sort());
		expect(allPayments.body.data[0]).toMatchObject({
			bill_id: expect.any(String),
			status: 'SUCCESS',
		});
		const shopPayments = await h.api(
			'GET',
			'payment/search',
			{ ...range, shop_id: other.body.shopId },
			m.token,
		);
		expect(ids(shopPayments)).toEqual([p3.payment.id]);
		const orderPayments = await h.api(
			'GET',
			'payment/search',
			{ ...range, order_id: 'first-1' },
			m.token,
		);
		expect(ids(orderPayments)).toEqual([p1.payment.id, p2.payment.id].sort());
		// Another merchant's payments are not listed; the dates are required as on bill/search.
		expect((await h.api('GET', 'payment/search', range)).body.data).toEqual([]);
		const noDates = await h.api('GET', 'payment/search', {}, m.token);
		expect(noDates.status).toBe(422);
		expect(Object.keys(noDates.body.errors)).toEqual(['start_date', 'finish_date']);
		// Paged as the profile pages bill/search.
		const paged = await h.api('GET', 'payment/search', { ...range, per_page: '2' }, m.token);
		expect(paged.body).toHaveProperty('meta');
		if (profile === 'live') expect(paged.body.data).toHaveLength(2);
		else expect(paged.body.meta.total).toBe(3);
	});

	it("requireShopId: bill/search without shop_id answers 422 naming shop_id; with it, the shop's bills", async () => {
		const m = await h.merchant({ profile, requireShopId: true });
		const id = await bill(m.token, m.shopId);
		const refused = await h.api('GET', 'bill/search', range, m.token);
		expect(refused.status).toBe(422);
		expect(refused.body).toEqual({
			message: 'The shop id field is required.',
			errors: { shop_id: ['The shop id field is required.'] },
		});
		// Every rule is evaluated together, as Laravel does.
		const both = await h.api('GET', 'bill/search', {}, m.token);
		expect(Object.keys(both.body.errors)).toEqual(['start_date', 'finish_date', 'shop_id']);
		const answered = await h.api('GET', 'bill/search', { ...range, shop_id: m.shopId }, m.token);
		expect(answered.status).toBe(200);
		expect(answered.body.data.map((row: { id: string }) => row.id)).toEqual([id]);
		// payment/search does not require it.
		expect((await h.api('GET', 'payment/search', range, m.token)).status).toBe(200);
		await h.control('PATCH', `merchants/${m.merchantId}`, { requireShopId: false });
		expect((await h.api('GET', 'bill/search', range, m.token)).status).toBe(200);
	});
});

describe.each(PROFILES)(
	"bill/create takes the current reference's fields (%s profile)",
	(profile) => {
		it('ttl, locale, payer_email, the URLs, request_fields[...] and items[...] as form fields: kept and shown by bill/status and bill/search', async () => {
			const m = await merchantIn(profile);
			const id = await bill(m.token, m.shopId, {
				ttl: '3600',
				locale: 'en',
				payer_email: 'payer@example.com',
				success_url: `${shop.url}/own-success`,
				fail_url: `${shop.url}/own-fail`,
				return_url: 'https://shop.example/back',
				'request_fields[email]': '1',
				'request_fields[phone]': '0',
				'items[0][name]': 'Tea',
				'items[0][price]': '60.00',
				'items[0][quantity]': '1',
				'items[0][vat]': 'none',
				'items[1][name]': 'Cup',
				'items[1][price]': '20',
				'items[1][quantity]': '2',
			});
			const status = await h.api('GET', 'bill/status', { id }, m.token);
			expect(status.body).toMatchObject({
				ttl: 3600,
				locale: 'en',
				payer_email: 'payer@example.com',
				success_url: `${shop.url}/own-success`,
				fail_url: `${shop.url}/own-fail`,
				return_url: 'https://shop.example/back',
				request_fields: { email: true, phone: false },
				items: [
					{ name: 'Tea', price: 60, quantity: 1, vat: 'none' },
					{ name: 'Cup', price: 20, quantity: 2 },
				],
			});
			const found = await h.api(
				'GET',
				'bill/search',
				{ start_date: today(), finish_date: '2999-01-01' },
				m.token,
			);
			expect(found.body.data[0]).toMatchObject({ ttl: 3600, locale: 'en' });
			// The bill's own Success URL wins over the shop's for the customer's redirect.
			const paid = await pay(id);
			expect(paid.redirect.url).toBe(`${shop.url}/own-success`);
			// A bill created without them shows none of them (the document's fields only).
			const plain = await bill(m.token, m.shopId);
			const plainStatus = await h.api('GET', 'bill/status', { id: plain }, m.token);
			for (const field of ['ttl', 'locale', 'payer_email', 'items', 'request_fields', 'return_url'])
				expect(plainStatus.body).not.toHaveProperty(field);
		});

		it('the same fields as JSON; a ttl that has passed takes no payment', async () => {
			const m = await h.merchant({ profile });
			const created = await fetch(`${h.sb.url}/api/v1/bill/create`, {
				method: 'POST',
				headers: { authorization: `Bearer ${m.token}`, 'content-type': 'application/json' },
				body: JSON.stringify({
					amount: '80.00',
					shop_id: m.shopId,
					ttl: 60,
					request_fields: { email: true },
					items: [{ name: 'Tea', price: 80, quantity: 1 }],
				}),
			});
			const body = (await created.json()) as { bill_id: string };
			expect(created.status).toBe(200);
			const status = await h.api('GET', 'bill/status', { id: body.bill_id }, m.token);
			expect(status.body).toMatchObject({
				ttl: 60,
				request_fields: { email: true },
				items: [{ name: 'Tea', price: 80, quantity: 1 }],
			});
			await h.control('POST', 'clock', { offsetMs: 61_000 });
			try {
				const late = await h.control('POST', `bills/${body.bill_id}/pay`, {});
				expect(late.status).toBe(409);
				expect(late.body.error).toBe('bill_expired');
			} finally {
				await h.control('POST', 'clock', { now: null });
			}
		});

		it('refuses bad values with one Laravel 422 naming every field, and makes no bill', async () => {
			const m = await h.merchant({ profile });
			await h.control('PATCH', `shops/${m.shopId}`, { domain: 'shop.example' });
			const refused = await h.api(
				'POST',
				'bill/create',
				{
					amount: '10.00',
					shop_id: m.shopId,
					ttl: '-5',
					locale: 'de',
					payer_email: 'not-an-email',
					success_url: 'javascript:alert(1)',
					return_url: 'https://elsewhere.example/back',
					'request_fields[email]': 'maybe',
					'items[0][price]': '0',
					'items[0][quantity]': 'lots',
				},
				m.token,
			);
			expect(refused.status).toBe(422);
			expect(refused.body.errors).toEqual({
				ttl: ['The ttl field must be an integer.'],
				locale: ['The selected locale is invalid.'],
				payer_email: ['The payer email field must be a valid email address.'],
				success_url: ['The success url field must be a valid URL.'],
				return_url: ["The return url field must be on the shop's domain shop.example."],
				request_fields: ['The request fields field must be a list of field names, each 1 or 0.'],
				'items.0.name': ['The items.0.name field is required.'],
				'items.0.price': ['The items.0.price field must be a number greater than 0.'],
				'items.0.quantity': ['The items.0.quantity field must be a number greater than 0.'],
			});
			expect(refused.body.message).toBe('The ttl field must be an integer. (and 8 more errors)');
			// On the shop's domain (or a subdomain) return_url is accepted.
			const ok = await h.api(
				'POST',
				'bill/create',
				{
					amount: '10.00',
					shop_id: m.shopId,
					return_url: 'https://www.shop.example/back',
					ttl: '0',
				},
				m.token,
			);
			expect(ok.status).toBe(422);
			expect(ok.body.errors).toEqual({ ttl: ['The ttl field must be at least 1.'] });
			const found = await h.api(
				'GET',
				'bill/search',
				{ start_date: today(), finish_date: '2999-01-01' },
				m.token,
			);
			expect(found.body.data).toEqual([]);
		});
	},
);

describe.each(PROFILES)('newPaymentFields (%s profile)', (profile) => {
	it('payment answers drop amount_received and carry commission, account_amount, account_currency_code, refunded_amount', async () => {
		const m = await h.merchant({ profile });
		const id = await bill(m.token, m.shopId);
		const { payment } = await pay(id);
		const before = await h.api('GET', 'payment/status', { id: payment.id }, m.token);
		expect(before.body).toHaveProperty('amount_received', 97);
		expect(before.body).not.toHaveProperty('account_amount');
		await h.control('PATCH', `merchants/${m.merchantId}`, { newPaymentFields: true });
		const after = await h.api('GET', 'payment/status', { id: payment.id }, m.token);
		expect(after.body).not.toHaveProperty('amount_received');
		expect(after.body).toMatchObject({
			success: true,
			id: payment.id,
			amount: 100,
			commission: 3,
			account_amount: 97,
			account_currency_code: 'RUB',
			refunded_amount: 0,
		});
		const listed = await h.api('GET', 'bill/payments', { id }, m.token);
		expect(listed.body.data[0]).not.toHaveProperty('amount_received');
		expect(listed.body.data[0]).toMatchObject({ account_amount: 97 });
	});
});
