// The trigger's item by node version, from real calls of the sandbox: version 1 (workflows saved
// before) keeps its item exactly; version 2 puts what a workflow uses first at the top in one
// naming style, and the raw postback under `postback`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itemOfVersion } from '../../dist/nodes/PayPalychTrigger/item.js';
import { PROFILES } from '../helpers/sandbox.ts';
import { EVENTS, startItemWorld, type ItemWorld } from './item-world.ts';

/** A name in one style: camelCase (a leading lower-case letter, no `_` or `-`). */
const camel = (name: string) => /^[a-z][A-Za-z0-9]*$/.test(name);

describe.each(PROFILES)('sandbox profile %s', (profile) => {
	let world: ItemWorld;
	beforeAll(async () => {
		world = await startItemWorld(profile);
	}, 60_000);
	afterAll(async () => await world?.close());

	it('version 1 keeps the item it had: the postback fields at the top, amounts as text with twins', () => {
		const { payment, payout, refund, success } = world.v1;
		expect(payment).toMatchObject({ event: 'payment', TrsId: expect.any(String), paid: true });
		expect(payment.amount).toBe('1500.00');
		expect(payment.amountNumber).toBe(1500);
		expect(payment).not.toHaveProperty('postback');
		expect(payout).toMatchObject({ Status: 'SUCCESS', Amount: expect.any(String) });
		expect(payout.AmountNumber).toBe(Number(payout.Amount));
		expect(refund).toMatchObject({ Id: expect.any(String), refunded: true });
		expect(success).toMatchObject({ InvId: `order-${profile}-1`, paymentProof: false });
		for (const event of EVENTS) {
			expect(itemOfVersion(world.v1[event], 1)).toBe(world.v1[event]);
		}
	});

	it('version 2: camelCase at the top, what to use first, the raw postback under postback', () => {
		for (const event of EVENTS) {
			const item = world.v2[event];
			expect(
				Object.keys(item).filter((name) => !camel(name)),
				event,
			).toEqual([]);
			expect(Object.keys(item)[0]).toBe('event');
			expect(item.event).toBe(event);
			// The same call, the same verdicts: what version 1 had at its top is under postback.
			const v1 = world.v1[event];
			const raw = Object.keys(v1).filter((n) => /^[A-Z]/.test(n) && !n.endsWith('Number'));
			expect(Object.keys(item.postback as object).sort(), event).toEqual(raw.sort());
			expect(item.unverified).toEqual(v1.unverified);
			expect(typeof item.amount === 'number' || item.amount === null, event).toBe(true);
		}
		const { payment } = world.v2;
		expect(Object.keys(payment).slice(0, 7)).toEqual([
			'event',
			'paid',
			'orderId',
			'billId',
			'amount',
			'currency',
			'status',
		]);
		expect(payment).toMatchObject({
			paid: true,
			billId: world.v1.payment.billId,
			amount: 1500,
			currency: 'RUB',
			status: 'SUCCESS',
			confirmed: true,
			payment: world.v1.payment.payment,
		});
		// The order is bound only where the service shows the bill's order ID (live).
		expect(payment.orderId).toBe(profile === 'live' ? `order-${profile}-1` : null);
		expect(payment.orderConfirmed).toBe(profile === 'live');
	});

	it('version 2: refunds, chargebacks, payouts and redirects in the same style', () => {
		const { refund, chargeback, payout, success, fail } = world.v2;
		expect(refund).toMatchObject({
			refunded: true,
			refundStatus: 'SUCCESS',
			refundId: world.v1.refund.Id,
			billId: world.v1.payment.billId,
			amount: 500,
			confirmed: true,
			refund: world.v1.refund.refund,
		});
		expect(chargeback).toMatchObject({
			chargedBack: true,
			chargebackId: world.v1.chargeback.Id,
			confirmed: true,
		});
		for (const moneyBack of [refund, chargeback]) {
			// Never read as a payment.
			expect(moneyBack).not.toHaveProperty('paid');
			expect(moneyBack).not.toHaveProperty('status');
		}
		expect(payout).toMatchObject({
			status: 'SUCCESS',
			payoutId: world.v1.payout.TrsId,
			amount: Number(world.v1.payout.Amount),
			confirmed: true,
			payout: world.v1.payout.payout,
		});
		expect(success).toMatchObject({ paymentProof: false, amount: 1500 });
		expect(success).not.toHaveProperty('paid');
		expect(success.orderId).toBe(`order-${profile}-1`);
		expect(fail).toMatchObject({ paymentProof: false, orderId: `order-${profile}-2` });
	});

	it('version 2 without confirmation: the signed order and amount, confirmed false, no payment record', () => {
		const { v1, v2 } = world.unconfirmed;
		expect(v2).toMatchObject({
			paid: true,
			orderId: v1.InvId,
			amount: 1500,
			billId: null,
			confirmed: false,
			orderConfirmed: false,
			payment: null,
		});
		expect(v2.postback).toMatchObject({ InvId: v1.InvId, OutSum: v1.OutSum, TrsId: v1.TrsId });
	});
});
