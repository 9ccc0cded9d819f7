// Refunds and chargebacks as the service's current reference lists them
// (docs/developer/service.md): the four refund endpoints switched on per merchant, the refundable
// amount, the signed refund and chargeback postbacks to the shop's Refund / Chargeback URL (its
// Result URL by default), and payment/status with refunds=1 / chargeback=1. On both profiles.
import { describe, expect, it } from 'vitest';
import {
	harnessAndListener,
	md5,
	today,
	type Harness,
	type Listener,
	type Received,
} from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

let h: Harness;
let shop: Listener;
harnessAndListener((started, listening) => {
	h = started;
	shop = listening;
});

/** A postback's fields, form or JSON (the `spec` profile), as the strings that were signed. */
function fieldsOf(entry: Received): Record<string, string> {
	if (!String(entry.headers['content-type'] ?? '').includes('json')) return entry.fields;
	const out: Record<string, string> = {};
	for (const [name, value] of Object.entries(JSON.parse(entry.raw) as Record<string, unknown>)) {
		// Decimals are JSON numbers written as signed (`100.00`): read them from the raw text.
		const literal = new RegExp(`"${name}":(-?\\d+(?:\\.\\d+)?)[,}]`).exec(entry.raw)?.[1];
		out[name] = typeof value === 'number' && literal !== undefined ? literal : String(value);
	}
	return out;
}

const at = (path: string) => shop.received.filter((entry) => entry.path === path);

describe.each(['live', 'spec'] as const)('refunds and chargebacks (%s profile)', (profile) => {
	async function setup(
		fields: Record<string, unknown> = {},
		shopFields: Record<string, unknown> = {},
	) {
		const m = await h.merchant({ profile, refunds: true, ...fields });
		await h.control('PATCH', `shops/${m.shopId}`, {
			resultUrl: `${shop.url}/result/${m.shopId}`,
			...shopFields,
		});
		const created = await h.api(
			'POST',
			'bill/create',
			{ amount: '100.00', shop_id: m.shopId, order_id: `ord-${m.shopId}` },
			m.token,
		);
		const billId = created.body.bill_id as string;
		const paid = await h.control('POST', `bills/${billId}/pay`, {});
		const paymentId = paid.body.payment.id as string;
		return { m, billId, paymentId };
	}

	it('switched off (the default), every refund endpoint answers 403 refunds_not_enabled and moves nothing', async () => {
		const m = await h.merchant({ profile });
		expect((await h.control('GET', `merchants/${m.merchantId}`)).body.refunds).toBe(false);
		const calls: Array<['GET' | 'POST', string, Record<string, string>]> = [
			['POST', 'refund/full/create', { payment_id: 'x' }],
			['POST', 'refund/partial/create', { payment_id: 'x', amount: '1' }],
			['GET', 'refund/status', { id: 'x' }],
			['GET', 'refund/search', { payment_id: 'x' }],
		];
		for (const [method, path, params] of calls) {
			const answer = await h.api(method, path, params, m.token);
			expect(answer.status, path).toBe(403);
			expect(answer.body, path).toEqual({
				success: false,
				message: 'api:error.refunds_not_enabled',
			});
		}
		await h.control('PATCH', `merchants/${m.merchantId}`, { errorForm: 'error_code' });
		const coded = await h.api('GET', 'refund/status', { id: 'x' }, m.token);
		expect(coded.body.error_code).toBe('api:error.refunds_not_enabled');
	});

	it('a full refund: the whole amount back once, signed postback to the Result URL, refund/status and payment/status?refunds=1 show it', async () => {
		const { m, billId, paymentId } = await setup();
		const before = await h.control('GET', `merchants/${m.merchantId}`);
		const made = await h.api(
			'POST',
			'refund/full/create',
			{ payment_id: paymentId, order_id: 'rf-1' },
			m.token,
		);
		expect(made.status, made.text).toBe(200);
		expect(made.body).toMatchObject({
			success: true,
			status: 'SUCCESS',
			amount: 100,
			currency: 'RUB',
		});
		// `live`: the payment as the entity (the typed client's refund record), no payment_id or
		// bill_id; `spec`: the sandbox's earlier guess, payment_id and bill_id.
		if (profile === 'live') {
			expect(made.body).toMatchObject({ entity_type: 'payment', entity_id: paymentId });
			expect(made.body).not.toHaveProperty('payment_id');
			expect(made.body).not.toHaveProperty('bill_id');
		} else {
			expect(made.body).toMatchObject({ payment_id: paymentId, bill_id: billId });
			expect(made.body).not.toHaveProperty('entity_id');
		}
		// `order_id` is shown in `spec`; `live` accepts it and shows none.
		expect(made.body.order_id ?? null).toBe(profile === 'spec' ? 'rf-1' : null);
		const refundId = made.body.id as string;
		// The money left the balance.
		const after = await h.control('GET', `merchants/${m.merchantId}`);
		expect(Number(after.body.balances.RUB.available)).toBeCloseTo(
			Number(before.body.balances.RUB.available) - 100,
			2,
		);
		// The postback, to the Result URL (no Refund URL set), signed as the reference says.
		const posted = await waitFor('the refund postback', () =>
			at(`/result/${m.shopId}`).find((entry) => fieldsOf(entry)['Id'] === refundId),
		);
		const fields = fieldsOf(posted);
		expect(fields).toEqual({
			Id: refundId,
			Amount: '100.00',
			Currency: 'RUB',
			Status: 'SUCCESS',
			InvId: `ord-${m.shopId}`,
			BillId: billId,
			PaymentId: paymentId,
			SignatureValue: md5(`100.00:RUB:${billId}:${paymentId}:${refundId}:${m.token}`),
		});
		expect(String(posted.headers['content-type'])).toContain(profile === 'spec' ? 'json' : 'form');
		const status = await h.api('GET', 'refund/status', { id: refundId }, m.token);
		expect(status.body).toMatchObject({ success: true, id: refundId, amount: 100 });
		expect((await h.api('GET', 'refund/status', { id: 'R-unknown' }, m.token)).body.message).toBe(
			'api:error.refund_not_found',
		);
		const payment = await h.api('GET', 'payment/status', { id: paymentId, refunds: '1' }, m.token);
		expect(payment.body).toMatchObject({ refunded_amount: 100, refunds: [{ id: refundId }] });
		const plain = await h.api('GET', 'payment/status', { id: paymentId }, m.token);
		expect(plain.body).not.toHaveProperty('refunds');
		// Nothing is left to refund: a second one is refused and moves nothing.
		const again = await h.api('POST', 'refund/full/create', { payment_id: paymentId }, m.token);
		expect(again.status).toBe(400);
		expect(again.body.message).toBe('api:error.refund_amount_exceeded');
		const twice = await h.api(
			'POST',
			'refund/partial/create',
			{ payment_id: paymentId, amount: '0.01' },
			m.token,
		);
		expect(twice.body.message).toBe('api:error.refund_amount_exceeded');
		expect((await h.control('GET', `payments/${paymentId}`)).body.refunds).toHaveLength(1);
	});

	it('partial refunds: never above what is refundable (amount minus refunded), the Refund URL when set, order_id unique, bad amounts refused', async () => {
		const { m, paymentId, billId } = await setup(
			{},
			{ refundUrl: `${shop.url}/refund-url/${profile}` },
		);
		const over = await h.api(
			'POST',
			'refund/partial/create',
			{ payment_id: paymentId, amount: '100.01' },
			m.token,
		);
		expect(over.status).toBe(400);
		expect(over.body.message).toBe('api:error.refund_amount_exceeded');
		const first = await h.api(
			'POST',
			'refund/partial/create',
			{ payment_id: paymentId, amount: '60.00', order_id: 'p-1' },
			m.token,
		);
		expect(first.status, first.text).toBe(200);
		expect(first.body.amount).toBe(60);
		const left = await h.api(
			'POST',
			'refund/partial/create',
			{ payment_id: paymentId, amount: '40.01' },
			m.token,
		);
		expect(left.body.message).toBe('api:error.refund_amount_exceeded');
		if (profile === 'spec') {
			// `spec` keeps order_id unique per merchant (`live` does not: the next test).
			const dup = await h.api(
				'POST',
				'refund/partial/create',
				{ payment_id: paymentId, amount: '1.00', order_id: 'p-1' },
				m.token,
			);
			expect(dup.status).toBe(422);
			expect(dup.body.errors).toEqual({ order_id: ['The order id has already been taken.'] });
		}
		for (const amount of ['0', '-1', '1.001', 'abc']) {
			const bad = await h.api(
				'POST',
				'refund/partial/create',
				{ payment_id: paymentId, amount },
				m.token,
			);
			expect(bad.status, amount).not.toBe(200);
		}
		expect(
			(
				await h.api(
					'POST',
					'refund/partial/create',
					{ payment_id: paymentId, amount: '0' },
					m.token,
				)
			).body.message,
		).toBe('api:error.invalid_amount');
		const unknown = await h.api('POST', 'refund/full/create', { payment_id: 'nope' }, m.token);
		expect(unknown.status).toBe(422);
		expect(unknown.body.message).toBe('api:error.payment_not_found');
		const rest = await h.api('POST', 'refund/full/create', { payment_id: paymentId }, m.token);
		expect(rest.body.amount).toBe(40);
		const posted = await waitFor(
			'the two refund postbacks',
			() => at(`/refund-url/${profile}`).length >= 2 && at(`/refund-url/${profile}`),
		);
		expect(posted.map((entry) => fieldsOf(entry)['Amount']).sort()).toEqual(['40.00', '60.00']);
		expect(
			at(`/result/${m.shopId}`).every((entry) => fieldsOf(entry)['BillId'] === undefined),
		).toBe(true);
		for (const entry of posted) {
			const f = fieldsOf(entry);
			expect(f['SignatureValue']).toBe(
				md5(`${f['Amount']}:RUB:${billId}:${paymentId}:${f['Id']}:${m.token}`),
			);
		}
		const payment = await h.control('GET', `payments/${paymentId}`);
		expect(payment.body).toMatchObject({ refunded_amount: '100.00', refundable_amount: '0.00' });
		// The newer payment form shows what went back.
		await h.control('PATCH', `merchants/${m.merchantId}`, { newPaymentFields: true });
		const newer = await h.api('GET', 'payment/status', { id: paymentId }, m.token);
		expect(newer.body.refunded_amount).toBe(100);
	});

	it('order_id: `spec` shows it everywhere and refuses it twice; `live` accepts it, shows it nowhere and refuses nothing for it', async () => {
		const { m, paymentId } = await setup();
		const made: Array<Record<string, any>> = [];
		for (const path of ['refund/partial/create', 'refund/partial/create']) {
			const answer = await h.api(
				'POST',
				path,
				{ payment_id: paymentId, amount: '10.00', order_id: 'same-order' },
				m.token,
			);
			made.push(answer.body as Record<string, any>);
		}
		const shown = [
			made[0],
			(await h.api('GET', 'refund/status', { id: made[0].id }, m.token)).body,
			...((await h.api('GET', 'refund/search', { payment_id: paymentId }, m.token)).body.data ??
				[]),
			...((await h.api('GET', 'payment/status', { id: paymentId, refunds: '1' }, m.token)).body
				.refunds ?? []),
		] as Array<Record<string, any>>;
		if (profile === 'spec') {
			expect(made[1].errors).toEqual({ order_id: ['The order id has already been taken.'] });
			expect(shown.map((record) => record.order_id)).toEqual(shown.map(() => 'same-order'));
		} else {
			expect(made[1]).toMatchObject({ success: true, amount: 10 });
			expect(shown.length).toBeGreaterThanOrEqual(5);
			expect(shown.every((record) => (record.order_id ?? null) === null)).toBe(true);
		}
		const refunds = (await h.control('GET', `payments/${paymentId}`)).body.refunds as unknown[];
		expect(refunds).toHaveLength(profile === 'spec' ? 1 : 2);
	});

	it('a payment that took no money is not refundable', async () => {
		const m = await h.merchant({ profile, refunds: true });
		const created = await h.api(
			'POST',
			'bill/create',
			{ amount: '10.00', shop_id: m.shopId },
			m.token,
		);
		const failed = await h.control('POST', `bills/${created.body.bill_id}/pay`, {
			outcome: 'fail',
		});
		const refused = await h.api(
			'POST',
			'refund/full/create',
			{ payment_id: failed.body.payment.id },
			m.token,
		);
		expect(refused.status).toBe(400);
		expect(refused.body.message).toBe('api:error.refund_not_allowed');
	});

	it('refund/search by payment or by dates, cursor-paged; dates required without a payment', async () => {
		const { m, paymentId } = await setup();
		for (let i = 0; i < 3; i += 1)
			await h.api(
				'POST',
				'refund/partial/create',
				{ payment_id: paymentId, amount: '10.00' },
				m.token,
			);
		const byPayment = await h.api(
			'GET',
			'refund/search',
			{ payment_id: paymentId, per_page: '2' },
			m.token,
		);
		expect(byPayment.status).toBe(200);
		expect(byPayment.body.data).toHaveLength(2);
		const next = await h.api(
			'GET',
			'refund/search',
			{ payment_id: paymentId, per_page: '2', cursor: byPayment.body.meta.next_cursor },
			m.token,
		);
		expect(next.body.data).toHaveLength(1);
		expect(next.body.meta.next_cursor).toBeNull();
		const byDates = await h.api(
			'GET',
			'refund/search',
			{ start_date: today(), finish_date: '2999-01-01' },
			m.token,
		);
		expect(byDates.body.data).toHaveLength(3);
		const past = await h.api(
			'GET',
			'refund/search',
			{ start_date: '2020-01-01', finish_date: '2020-01-02' },
			m.token,
		);
		expect(past.body.data).toEqual([]);
		const neither = await h.api('GET', 'refund/search', {}, m.token);
		expect(neither.status).toBe(422);
		expect(Object.keys(neither.body.errors)).toEqual(['start_date', 'finish_date']);
		expect(
			(await h.api('GET', 'refund/search', { payment_id: 'nope' }, m.token)).body.message,
		).toBe('api:error.payment_not_found');
	});

	it('a chargeback (control call): signed postback to the Chargeback URL (else the Result URL), payment/status?chargeback=1 lists it, nothing left to refund', async () => {
		const { m, paymentId, billId } = await setup();
		const charged = await h.control('POST', `payments/${paymentId}/chargeback`, {});
		expect(charged.status, charged.text).toBe(200);
		const chargebackId = charged.body.chargeback.id as string;
		const posted = await waitFor('the chargeback postback', () =>
			at(`/result/${m.shopId}`).find((entry) => fieldsOf(entry)['Id'] === chargebackId),
		);
		const fields = fieldsOf(posted);
		const signature = md5(`${billId}:${paymentId}:${chargebackId}:${m.token}`);
		const postback = {
			Id: chargebackId,
			Status: 'SUCCESS',
			InvId: `ord-${m.shopId}`,
			BillId: billId,
			PaymentId: paymentId,
			SignatureValue: signature,
		};
		// `live`: the typed client's chargeback postback, no Amount and no Currency; `spec`: the
		// sandbox's earlier guess with them.
		expect(fields).toEqual(
			profile === 'live' ? postback : { ...postback, Amount: '100.00', Currency: 'RUB' },
		);
		const payment = await h.api(
			'GET',
			'payment/status',
			{ id: paymentId, chargeback: '1' },
			m.token,
		);
		// `live`: listed under the singular `chargeback`, records without amount or currency.
		const record = { id: chargebackId, payment_id: paymentId, status: 'SUCCESS' };
		if (profile === 'live') {
			expect(payment.body).not.toHaveProperty('chargebacks');
			expect(payment.body.chargeback).toEqual([{ ...record, created_at: expect.any(String) }]);
		} else {
			expect(payment.body).not.toHaveProperty('chargeback');
			expect(payment.body.chargebacks).toEqual([
				expect.objectContaining({ ...record, bill_id: billId, amount: 100, currency: 'RUB' }),
			]);
		}
		const refund = await h.api('POST', 'refund/full/create', { payment_id: paymentId }, m.token);
		expect(refund.body.message).toBe('api:error.refund_amount_exceeded');
		expect((await h.control('POST', `payments/${paymentId}/chargeback`, {})).status).toBe(409);
		// With a Chargeback URL set, it goes there.
		const other = await setup({}, { chargebackUrl: `${shop.url}/chargeback-url` });
		const second = await h.control('POST', `payments/${other.paymentId}/chargeback`, {
			amount: '30.00',
		});
		const there = await waitFor('the second chargeback postback', () =>
			at('/chargeback-url').find((entry) => fieldsOf(entry)['Id'] === second.body.chargeback.id),
		);
		expect(fieldsOf(there)['Amount']).toBe(profile === 'live' ? undefined : '30.00');
		// The delivery log names the kinds.
		const log = await h.control('GET', 'deliveries?kind=chargeback');
		expect(log.body.data.map((entry: { trsId: string }) => entry.trsId)).toEqual(
			expect.arrayContaining([chargebackId, second.body.chargeback.id]),
		);
	});

	it('a refund made from the account (control call) works with the refund API off, and posts the same way', async () => {
		const { m, paymentId } = await setup({ refunds: false });
		const made = await h.control('POST', `payments/${paymentId}/refund`, { amount: '25.00' });
		expect(made.status, made.text).toBe(200);
		expect(made.body.payment).toMatchObject({
			refunded_amount: '25.00',
			refundable_amount: '75.00',
		});
		await waitFor('the refund postback', () =>
			at(`/result/${m.shopId}`).find((entry) => fieldsOf(entry)['Id'] === made.body.refund.id),
		);
		const over = await h.control('POST', `payments/${paymentId}/refund`, { amount: '75.01' });
		expect(over.status).toBe(409);
		expect(over.body.error).toBe('refund_amount_exceeded');
	});
});
