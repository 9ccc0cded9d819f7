/**
 * The statement's core: each record of the service read as a movement in both shapes the service
 * answers (the interface document's and the public record's), the day in a time zone, and the
 * per-currency totals. Expected figures are written out by hand.
 */
import { describe, expect, it } from 'vitest';
import {
	chargebackMovements,
	paymentMovement,
	payoutMovement,
	refundMovement,
	statementDay,
	summarizeStatement,
	type StatementMovement,
} from '../../dist/nodes/shared/index.js';

const DAY = '2024-03-01';

const livePayment = (over: Record<string, unknown> = {}) => ({
	id: 'P1',
	bill_id: 'B1',
	status: 'SUCCESS',
	amount: 1000,
	currency_in: 'RUB',
	created_at: '2024-03-01 10:00:00',
	commission: 35,
	account_amount: 965,
	account_currency_code: 'RUB',
	refunded_amount: 0,
	...over,
});

const specPayment = (over: Record<string, unknown> = {}) => ({
	id: 'P2',
	bill_id: 'B2',
	status: 'SUCCESS',
	amount: 100.1,
	amount_received: 96.6,
	currency_in: 'USD',
	created_at: '2024-03-01 11:00:00',
	...over,
});

describe('movements of each record', () => {
	it('reads a payment in the public record shape: amount paid, commission, account_amount credited', () => {
		expect(paymentMovement(livePayment())).toEqual({
			kind: 'payment',
			id: 'P1',
			createdAt: '2024-03-01 10:00:00',
			status: 'SUCCESS',
			currency: 'RUB',
			amount: 1000,
			commission: 35,
			balanceEffect: 965,
			counted: true,
			orderId: null,
			billId: 'B1',
			paymentId: 'P1',
		});
	});

	it('reads a payment in the interface document shape: amount_received is what was credited', () => {
		const m = paymentMovement(specPayment());
		expect(m).toMatchObject({ currency: 'USD', amount: 100.1, commission: null });
		expect(m.balanceEffect).toBe(96.6);
	});

	it('counts UNDERPAID and OVERPAID with what was paid; NEW and PROCESS are pending; FAIL counts nowhere', () => {
		expect(paymentMovement(livePayment({ status: 'underpaid' })).counted).toBe(true);
		expect(paymentMovement(livePayment({ status: 'OVERPAID' })).counted).toBe(true);
		for (const status of ['NEW', 'PROCESS']) {
			const m = paymentMovement(livePayment({ status }));
			expect(m).toMatchObject({ counted: false, pending: true, balanceEffect: null });
		}
		const failed = paymentMovement(livePayment({ status: 'FAIL', account_amount: 0 }));
		expect(failed).toMatchObject({ status: 'FAIL', counted: false, balanceEffect: null });
		expect(failed.pending).toBeUndefined();
	});

	it('leaves a payment credited to another currency balance unknown, saying why', () => {
		const m = paymentMovement(livePayment({ currency_in: 'USD', account_currency_code: 'RUB' }));
		expect(m.balanceEffect).toBeNull();
		expect(m.unknownEffect).toMatch(/RUB balance/);
	});

	it('reads a refund by its entity (public record) and by payment_id (the other shape)', () => {
		const live = refundMovement({
			id: 'R1',
			status: 'SUCCESS',
			amount: 250.5,
			currency: 'RUB',
			entity_type: 'payment',
			entity_id: 'P1',
			created_at: '2024-03-01 12:00:00',
			order_id: null,
		});
		expect(live).toMatchObject({
			kind: 'refund',
			paymentId: 'P1',
			amount: 250.5,
			commission: null,
			balanceEffect: -250.5,
			counted: true,
		});
		const spec = refundMovement(
			{
				id: 'R2',
				payment_id: 'P2',
				bill_id: 'B2',
				order_id: 'r-2',
				status: 'PROCESS',
				amount: 5,
				currency: 'USD',
			},
			specPayment(),
		);
		expect(spec).toMatchObject({
			paymentId: 'P2',
			billId: 'B2',
			orderId: 'r-2',
			counted: false,
			pending: true,
		});
		const noCurrency = refundMovement(
			{ id: 'R3', status: 'SUCCESS', amount: 1, payment_id: 'P2' },
			specPayment(),
		);
		expect(noCurrency.currency).toBe('USD');
	});

	it('reads chargebacks under chargeback and chargebacks; one without an amount has an unknown effect', () => {
		const live = chargebackMovements(
			livePayment({
				chargeback: [
					{ id: 'C1', payment_id: 'P1', status: 'SUCCESS', created_at: '2024-03-01 13:00:00' },
				],
			}),
		);
		expect(live).toHaveLength(1);
		expect(live[0]).toMatchObject({
			kind: 'chargeback',
			currency: 'RUB',
			amount: null,
			balanceEffect: null,
			counted: true,
		});
		expect(live[0].unknownEffect).toMatch(/no amount/);
		const spec = chargebackMovements(
			specPayment({
				chargebacks: [
					{ id: 'C2', payment_id: 'P2', status: 'SUCCESS', amount: 10, currency: 'USD' },
				],
			}),
		);
		expect(spec[0]).toMatchObject({ amount: 10, balanceEffect: -10, billId: 'B2' });
		expect(chargebackMovements(livePayment())).toEqual([]);
	});

	it('reads a payout: account_amount is debited, whoever pays the fee; without it the effect is unknown', () => {
		const senderPays = payoutMovement({
			id: 'O1',
			status: 'SUCCESS',
			amount: 1000,
			commission: 30,
			account_amount: 1030,
			account_commission: 30,
			currency: 'RUB',
			account_currency: 'RUB',
			order_id: 'po-1',
		});
		expect(senderPays).toMatchObject({
			amount: 1000,
			commission: 30,
			balanceEffect: -1030,
			orderId: 'po-1',
		});
		const recipientPays = payoutMovement({
			id: 'O2',
			status: 'SUCCESS',
			amount: 1000,
			commission: 30,
			account_amount: 1000,
			currency: 'RUB',
		});
		expect(recipientPays.balanceEffect).toBe(-1000);
		const document = payoutMovement({
			id: 'O3',
			status: 'SUCCESS',
			amount: 1000,
			commission: 30,
			currency: 'RUB',
		});
		expect(document.balanceEffect).toBeNull();
		expect(document.unknownEffect).toMatch(/account_amount/);
		for (const status of ['FAIL', 'ERROR', 'DECLINED']) {
			expect(payoutMovement({ id: 'O4', status, amount: 5, currency: 'RUB' })).toMatchObject({
				counted: false,
				status,
			});
		}
		for (const status of ['NEW', 'MODERATING', 'PROCESS']) {
			expect(payoutMovement({ id: 'O5', status, amount: 5, currency: 'RUB' })).toMatchObject({
				counted: false,
				pending: true,
			});
		}
	});
});

describe('the day in a time zone', () => {
	it('gives the UTC window of a Moscow day and of a day in New York across a clock change', () => {
		const moscow = statementDay(DAY, 'Europe/Moscow');
		expect([moscow.start, moscow.end]).toEqual([
			'2024-02-29T21:00:00.000Z',
			'2024-03-01T21:00:00.000Z',
		]);
		const ny = statementDay('2024-03-10', 'America/New_York');
		expect([ny.start, ny.end]).toEqual(['2024-03-10T05:00:00.000Z', '2024-03-11T04:00:00.000Z']);
	});

	it('keeps the service clock times by their date and places times with an offset in the zone', () => {
		const moscow = statementDay(DAY, 'Europe/Moscow');
		expect(moscow.isOnDay('2024-02-29 23:59:59')).toBe(false);
		expect(moscow.isOnDay('2024-03-01 00:00:00')).toBe(true);
		expect(moscow.isOnDay('2024-03-01 23:59:59')).toBe(true);
		expect(moscow.isOnDay('2024-03-02 00:00:00')).toBe(false);
		expect(moscow.isOnDay('2024-02-29T20:59:59Z')).toBe(false);
		expect(moscow.isOnDay('2024-02-29T21:00:00Z')).toBe(true);
		expect(moscow.isOnDay('2024-03-01T20:59:59Z')).toBe(true);
		expect(moscow.isOnDay('2024-03-01T21:00:00Z')).toBe(false);
		const tokyo = statementDay(DAY, 'Asia/Tokyo');
		expect(tokyo.isOnDay('2024-02-29T15:00:00Z')).toBe(true);
		expect(tokyo.isOnDay('2024-02-29T14:59:59Z')).toBe(false);
		expect(tokyo.isOnDay('2024-03-01T15:00:00+00:00')).toBe(false);
		expect(moscow.isOnDay(undefined)).toBe(false);
	});

	it('refuses a date or a zone it cannot read', () => {
		expect(() => statementDay('2024-02-30', 'Europe/Moscow')).toThrow(RangeError);
		expect(() => statementDay(DAY, 'Mars/Olympus')).toThrow(RangeError);
	});
});

describe('the summary', () => {
	const movements: StatementMovement[] = [
		paymentMovement(livePayment({ id: 'P1', amount: 0.1, commission: 0.01, account_amount: 0.09 })),
		paymentMovement(
			livePayment({
				id: 'P2',
				amount: 0.2,
				commission: 0.01,
				account_amount: 0.19,
				status: 'UNDERPAID',
			}),
		),
		paymentMovement(livePayment({ id: 'P3', amount: 500, status: 'FAIL' })),
		paymentMovement(
			livePayment({
				id: 'P4',
				amount: 100,
				currency_in: 'USD',
				account_currency_code: 'USD',
				commission: 3.5,
				account_amount: 96.5,
			}),
		),
		refundMovement({ id: 'R1', status: 'SUCCESS', amount: 0.05, currency: 'RUB', entity_id: 'P1' }),
		refundMovement({ id: 'R2', status: 'FAIL', amount: 1, currency: 'RUB', entity_id: 'P1' }),
		...chargebackMovements(
			livePayment({
				id: 'P1',
				chargeback: [
					{ id: 'C1', status: 'SUCCESS' },
					{ id: 'C2', status: 'FAIL' },
				],
			}),
		),
		payoutMovement({
			id: 'O1',
			status: 'SUCCESS',
			amount: 0.1,
			commission: 0.01,
			account_amount: 0.11,
			currency: 'RUB',
		}),
		payoutMovement({
			id: 'O2',
			status: 'DECLINED',
			amount: 7,
			commission: 1,
			account_amount: 8,
			currency: 'RUB',
		}),
		payoutMovement({
			id: 'O3',
			status: 'PROCESS',
			amount: 20,
			commission: 1,
			account_amount: 21,
			currency: 'RUB',
		}),
		payoutMovement({
			id: 'O4',
			status: 'SUCCESS',
			amount: 10,
			commission: 1,
			account_amount: 10,
			currency: 'USD',
		}),
	];
	const [rub, usd] = summarizeStatement({ day: DAY, timeZone: 'Europe/Moscow', movements });

	it('sums in whole cents, never float drift, one item per currency', () => {
		expect(rub).toMatchObject({
			day: DAY,
			timeZone: 'Europe/Moscow',
			currency: 'RUB',
			payments: { count: 2, amount: 0.3, commission: 0.02, credited: 0.28 },
			refunds: { count: 1, amount: 0.05 },
			payouts: { count: 1, amount: 0.1, commission: 0.01, debited: 0.11 },
			pendingPayouts: { count: 1, amount: 20 },
			net: 0.12,
			notCounted: 4,
		});
		expect(usd).toMatchObject({
			currency: 'USD',
			payments: { count: 1, amount: 100, commission: 3.5, credited: 96.5 },
			payouts: { count: 1, debited: 10 },
			net: 86.5,
			unknownEffects: 0,
		});
	});

	it('sums ten payments of 0.07 to exactly 0.7 and 1.13 three times to exactly 3.39', () => {
		const many = [
			...Array.from({ length: 10 }, (_, i) =>
				paymentMovement(
					livePayment({ id: `S${i}`, amount: 0.07, commission: 0, account_amount: 0.07 }),
				),
			),
		];
		const [item] = summarizeStatement({ day: DAY, timeZone: 'UTC', movements: many });
		expect(item.payments.amount).toBe(0.7);
		const thrice = Array.from({ length: 3 }, (_, i) =>
			refundMovement({ id: `R${i}`, status: 'SUCCESS', amount: '1.13', currency: 'RUB' }),
		);
		const [refunds] = summarizeStatement({ day: DAY, timeZone: 'UTC', movements: thrice });
		expect(refunds.refunds.amount).toBe(3.39);
		expect(refunds.net).toBe(-3.39);
	});

	it('counts a chargeback without an amount but shows no amount and flags its effect', () => {
		expect(rub.chargebacks).toEqual({ count: 1 });
		expect(rub.unknownEffects).toBe(1);
		expect(rub.balanceEffect).toBe(0.12);
	});

	it('never guesses: an unknown figure makes its sum null', () => {
		const [item] = summarizeStatement({
			day: DAY,
			timeZone: 'UTC',
			movements: [
				paymentMovement(specPayment()),
				payoutMovement({ id: 'O1', status: 'SUCCESS', amount: 10, commission: 1, currency: 'USD' }),
			],
			balance: {
				balances: [
					{
						currency: 'USD',
						balance_available: '12.50000000',
						balance_locked: '0',
						balance_hold: '1.00000000',
					},
				],
			},
		});
		expect(item.payments).toEqual({ count: 1, amount: 100.1, commission: null, credited: 96.6 });
		expect(item.payouts).toEqual({ count: 1, amount: 10, commission: 1, debited: null });
		expect(item.net).toBeNull();
		expect(item.unknownEffects).toBe(1);
		expect(item.balance).toEqual({ available: 12.5, locked: 0, hold: 1 });
	});

	it('gives no item for a currency without movements and a null balance when none is shown', () => {
		const items = summarizeStatement({
			day: DAY,
			timeZone: 'UTC',
			movements: [],
			balance: { balances: [] },
		});
		expect(items).toEqual([]);
		const [only] = summarizeStatement({
			day: DAY,
			timeZone: 'UTC',
			movements: [movements[3]],
			balance: [],
		});
		expect(only.balance).toBeNull();
	});
});
