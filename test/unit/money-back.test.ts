/**
 * The contract's refund and chargeback postbacks (docs/developer/service.md): signatures, telling
 * them from payment bodies, the dedupe key, the item and the comparison with the service's records.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
	POSTBACK_RULES,
	confirmMoneyBack,
	expectedSignature,
	findById,
	identifyMoneyBack,
	moneyBackItem,
	moneyBackKey,
	moneyBackKeyOf,
	postbackKindOf,
	signChargeback,
	signRefund,
	verifyPostback,
	withPaymentId,
} from '../../dist/nodes/shared/index.js';
import { chargebackPostback, refundPostback } from '../../sandbox/src/refunds.ts';
import { State } from '../../sandbox/src/state.ts';

// Independent oracle: the formulas written out by hand.
const md5 = (s: string) => createHash('md5').update(s).digest('hex').toUpperCase();
const TOKEN = '72|oBCB7Z3SmUm1gvkpEdRcSR2q1ERHpG4vD3DNBmuT';

const base = {
	Id: 'R123',
	Amount: '10.50',
	Currency: 'RUB',
	Status: 'SUCCESS',
	InvId: 'order-7',
	BillId: 'B777',
	PaymentId: 'T555',
};
const refund = {
	...base,
	SignatureValue: md5(`10.50:RUB:B777:T555:R123:${TOKEN}`),
};
const chargeback = {
	...base,
	Id: 'C9',
	SignatureValue: md5(`B777:T555:C9:${TOKEN}`),
};

describe('refund and chargeback signatures', () => {
	it('refund: MD5(Amount:Currency:BillId:PaymentId:Id:token); chargeback: MD5(BillId:PaymentId:Id:token)', () => {
		expect(signRefund(base, TOKEN)).toBe(refund.SignatureValue);
		expect(signChargeback({ ...base, Id: 'C9' }, TOKEN)).toBe(chargeback.SignatureValue);
		expect(expectedSignature('refund', refund, TOKEN)).toBe(refund.SignatureValue);
		expect(expectedSignature('chargeback', chargeback, TOKEN)).toBe(chargeback.SignatureValue);
		expect(POSTBACK_RULES.refund.signedFields).toEqual([
			'Amount',
			'Currency',
			'BillId',
			'PaymentId',
			'Id',
		]);
		expect(POSTBACK_RULES.chargeback.signedFields).toEqual(['BillId', 'PaymentId', 'Id']);
	});

	it('verifies on the values as received: another spelling of Amount, a lower-case hex signature', () => {
		expect(verifyPostback('refund', refund, TOKEN)).toEqual({ ok: true, tokenIndex: 0 });
		expect(
			verifyPostback(
				'refund',
				{ ...refund, SignatureValue: refund.SignatureValue.toLowerCase() },
				TOKEN,
			),
		).toMatchObject({ ok: true });
		// "10.5" is the same amount, but the service signed "10.50": the values are never re-formatted.
		expect(verifyPostback('refund', { ...refund, Amount: '10.5' }, TOKEN)).toEqual({
			ok: false,
			reason: 'bad_signature',
		});
		// Every signed field counts.
		for (const field of ['Amount', 'Currency', 'BillId', 'PaymentId', 'Id'] as const) {
			expect(verifyPostback('refund', { ...refund, [field]: 'x' }, TOKEN), field).toMatchObject({
				ok: false,
			});
		}
		// Status and InvId are not signed.
		expect(
			verifyPostback('refund', { ...refund, Status: 'FAIL', InvId: 'z' }, TOKEN),
		).toMatchObject({
			ok: true,
		});
		expect(verifyPostback('chargeback', { ...chargeback, Amount: '999' }, TOKEN)).toMatchObject({
			ok: true,
		});
		expect(verifyPostback('chargeback', chargeback, ['old-token', TOKEN])).toEqual({
			ok: true,
			tokenIndex: 1,
		});
		const { Id: _id, ...noId } = refund;
		expect(verifyPostback('refund', noId, TOKEN)).toEqual({
			ok: false,
			reason: 'missing_field',
			field: 'Id',
		});
	});

	it.each(['live', 'spec'] as const)(
		"the sandbox's own refund and chargeback postbacks verify (%s profile)",
		(profile) => {
			const state = new State({ deliver: () => undefined, autoAdvanceMs: 0, liveExtras: false });
			const merchant = state.createMerchant({ id: 'M1', token: TOKEN });
			merchant.profile = profile;
			const bill = { orderId: 'o-1' } as never;
			const record = {
				id: 'R1',
				merchantId: 'M1',
				paymentId: 'T1',
				billId: 'B1',
				orderId: null,
				kind: 'partial' as const,
				amount: 1050,
				currency: 'RUB' as const,
				status: 'SUCCESS' as const,
				createdAt: 0,
			};
			const r = refundPostback(record, bill, merchant);
			const c = chargebackPostback({ ...record, id: 'C1' } as never, bill, merchant);
			expect(verifyPostback('refund', r, TOKEN)).toMatchObject({ ok: true });
			expect(verifyPostback('chargeback', c, TOKEN)).toMatchObject({ ok: true });
			expect(identifyMoneyBack(r, TOKEN)).toMatchObject({ ok: true, event: 'refund' });
			expect(identifyMoneyBack(c, TOKEN)).toMatchObject({ ok: true, event: 'chargeback' });
			expect(postbackKindOf(r)).toBe('moneyBack');
			expect(postbackKindOf(c)).toBe('moneyBack');
			// `live`: the chargeback postback carries no Amount and no Currency.
			expect(Object.keys(c).sort()).toEqual(
				[
					'BillId',
					'Id',
					'InvId',
					'PaymentId',
					'SignatureValue',
					'Status',
					...(profile === 'spec' ? ['Amount', 'Currency'] : []),
				].sort(),
			);
		},
	);
});

describe('telling the bodies apart', () => {
	it('postbackKindOf: a refund or chargeback by PaymentId and Id, a payment by OutSum, a payout by Amount and TrsId', () => {
		expect(postbackKindOf(refund)).toBe('moneyBack');
		expect(postbackKindOf(chargeback)).toBe('moneyBack');
		expect(
			postbackKindOf({
				OutSum: '1.00',
				InvId: 'o',
				TrsId: 'T',
				Status: 'SUCCESS',
				SignatureValue: 'x',
			}),
		).toBe('payment');
		expect(postbackKindOf({ Amount: '1.00', TrsId: 'P', Status: 'SUCCESS' })).toBe('payout');
		// A body with OutSum is a payment body whatever else it carries.
		expect(postbackKindOf({ ...refund, OutSum: '10.50' })).toBe('payment');
		expect(postbackKindOf({ ...refund, PaymentId: ' ' })).toBeUndefined();
		expect(postbackKindOf({ foo: 'bar' })).toBeUndefined();
	});

	it('identifyMoneyBack: by the signature, and a clear reason when neither matches', () => {
		expect(identifyMoneyBack(refund, TOKEN)).toEqual({ ok: true, event: 'refund', tokenIndex: 0 });
		expect(identifyMoneyBack(chargeback, TOKEN)).toEqual({
			ok: true,
			event: 'chargeback',
			tokenIndex: 0,
		});
		expect(identifyMoneyBack(refund, 'another-token')).toEqual({
			ok: false,
			reason: 'bad_signature',
		});
		expect(identifyMoneyBack({ ...refund, SignatureValue: 'nope' }, TOKEN)).toEqual({
			ok: false,
			reason: 'malformed_signature',
		});
		expect(identifyMoneyBack({ SignatureValue: refund.SignatureValue }, TOKEN)).toMatchObject({
			ok: false,
			reason: 'missing_field',
		});
	});
});

describe('dedupe key and item', () => {
	it('one key per refund id and status, whatever the spelling; another status or kind is another key', () => {
		const key = moneyBackKeyOf('refund', refund);
		expect(moneyBackKeyOf('refund', { ...refund, Id: ' R123 ', Status: ' success' })).toBe(key);
		expect(moneyBackKeyOf('refund', { ...refund, Amount: '10.5' })).toBe(key);
		expect(moneyBackKeyOf('refund', { ...refund, Status: 'FAIL' })).not.toBe(key);
		expect(moneyBackKeyOf('chargeback', refund)).not.toBe(key);
	});

	it('a chargeback is identified like a refund: its Id and its status (a reversal is news)', () => {
		const key = moneyBackKeyOf('chargeback', chargeback);
		expect(moneyBackKeyOf('chargeback', { ...chargeback, Status: 'success ' })).toBe(key);
		expect(moneyBackKeyOf('chargeback', { ...chargeback, Status: 'FAIL' })).not.toBe(key);
	});

	it("the catch-up's record and the postback meet on one key", () => {
		const record = { id: ' R123', status: 'success', entity_type: 'payment', entity_id: 'T555' };
		expect(moneyBackKey('refund', record.id, record.status)).toBe(moneyBackKeyOf('refund', refund));
	});

	it('the item never reads as a payment: no paid, status, Status or OutSum at the top', () => {
		const item = moneyBackItem('refund', { ...refund, paid: 'true', status: 'SUCCESS', x: 'y' });
		expect(item).toMatchObject({
			event: 'refund',
			verified: true,
			refundStatus: 'SUCCESS',
			Amount: '10.50',
			AmountNumber: 10.5,
			BillId: 'B777',
			PaymentId: 'T555',
			Id: 'R123',
			InvId: 'order-7',
			unverified: { paid: 'true', status: 'SUCCESS', Status: 'SUCCESS', x: 'y' },
		});
		for (const name of ['paid', 'status', 'Status', 'OutSum'])
			expect(item).not.toHaveProperty(name);
		const cb = moneyBackItem('chargeback', chargeback);
		expect(cb).toMatchObject({ event: 'chargeback', chargebackStatus: 'SUCCESS' });
		expect(cb).not.toHaveProperty('status');
	});
});

describe('confirmMoneyBack', () => {
	const record = {
		id: 'R123',
		payment_id: 'T555',
		bill_id: 'B777',
		status: 'SUCCESS',
		amount: 10.5,
		currency: 'RUB',
		order_id: 'refund-key-1',
	};
	const payment = { id: 'T555', bill_id: 'B777', status: 'SUCCESS', amount: 100 };

	it('confirms the records that match, with or without the order check', () => {
		expect(confirmMoneyBack('refund', refund, record, payment, 'order-7', true)).toEqual({
			ok: true,
			orderConfirmed: true,
		});
		expect(confirmMoneyBack('refund', refund, record, payment, undefined, false)).toEqual({
			ok: true,
			orderConfirmed: false,
		});
		// A record without the unconfirmed fields is compared on what it shows.
		expect(
			confirmMoneyBack(
				'refund',
				refund,
				{ id: 'R123', status: 'SUCCESS' },
				payment,
				'order-7',
				true,
			),
		).toMatchObject({ ok: true });
	});

	it('refuses another bill, another payment, another amount, currency, order or status', () => {
		const refusals: Array<[string, ReturnType<typeof confirmMoneyBack>]> = [
			[
				'bill',
				confirmMoneyBack('refund', refund, record, { ...payment, bill_id: 'B1' }, 'order-7', true),
			],
			[
				'record bill',
				confirmMoneyBack('refund', refund, { ...record, bill_id: 'B1' }, payment, 'order-7', true),
			],
			[
				'payment',
				confirmMoneyBack(
					'refund',
					refund,
					{ ...record, payment_id: 'T1' },
					payment,
					'order-7',
					true,
				),
			],
			['id', confirmMoneyBack('refund', refund, { ...record, id: 'R1' }, payment, 'order-7', true)],
			[
				'amount',
				confirmMoneyBack('refund', refund, { ...record, amount: 10.49 }, payment, 'order-7', true),
			],
			[
				'currency',
				confirmMoneyBack(
					'refund',
					refund,
					{ ...record, currency: 'USD' },
					payment,
					'order-7',
					true,
				),
			],
			['order', confirmMoneyBack('refund', refund, record, payment, 'order-8', true)],
			['no order shown', confirmMoneyBack('refund', refund, record, payment, undefined, true)],
			[
				'status',
				confirmMoneyBack('refund', refund, { ...record, status: 'FAIL' }, payment, 'order-7', true),
			],
			['no bill', confirmMoneyBack('refund', refund, record, { id: 'T555' }, 'order-7', true)],
		];
		for (const [what, verdict] of refusals) {
			expect(verdict, what).toMatchObject({ ok: false, retry: false });
		}
		expect(
			confirmMoneyBack(
				'refund',
				refund,
				{ ...record, status: 'PROCESS' },
				payment,
				'order-7',
				true,
			),
		).toMatchObject({ ok: false, retry: true });
	});

	it('takes every currency a refund postback may carry, USDT too', () => {
		for (const currency of ['RUB', 'USD', 'EUR', 'USDT']) {
			const fields = {
				...base,
				Currency: currency,
				SignatureValue: md5(`10.50:${currency}:B777:T555:R123:${TOKEN}`),
			};
			expect(verifyPostback('refund', fields, TOKEN), currency).toMatchObject({ ok: true });
			expect(
				confirmMoneyBack('refund', fields, { ...record, currency }, payment, 'order-7', true),
				currency,
			).toEqual({ ok: true, orderConfirmed: true });
		}
	});

	it('findById finds a refund or chargeback in the lists payment/status gives', () => {
		expect(findById([{ id: 'R1' }, { id: 'R123' }], ' R123')).toEqual({ id: 'R123' });
		expect(findById([{ id: 'R1' }], 'R123')).toBeUndefined();
		expect(findById(undefined, 'R1')).toBeUndefined();
	});
});

describe("reading the service's records of refunds and chargebacks", () => {
	it('withPaymentId: payment_id from entity_id where the record names its payment as the entity', () => {
		const live = {
			id: 'R1',
			status: 'SUCCESS',
			amount: 10,
			entity_type: 'payment',
			entity_id: 'T1',
		};
		expect(withPaymentId(live)).toEqual({ ...live, payment_id: 'T1' });
		expect(withPaymentId({ id: 'R1', entity_id: 'T1' })).toMatchObject({ payment_id: 'T1' });
		// Kept as given: a record with payment_id, one whose entity is not a payment, one naming none.
		expect(withPaymentId({ id: 'R1', payment_id: 'T0', entity_id: 'T1' })).toEqual({
			id: 'R1',
			payment_id: 'T0',
			entity_id: 'T1',
		});
		expect(withPaymentId({ id: 'R1', entity_type: 'bill', entity_id: 'B1' })).not.toHaveProperty(
			'payment_id',
		);
		expect(withPaymentId({ id: 'R1' })).toEqual({ id: 'R1' });
	});
});
