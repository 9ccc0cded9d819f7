// The statement's pure parts: a record's time as an instant in the statement's zone, the ledger's
// arithmetic on the shared contract's movements, and the CSV's quoting.
import { describe, expect, it } from 'vitest';
import { paymentMovement, payoutMovement } from '../../nodes/shared/statement.ts';
import { csvField } from '../../relay/src/statement/csv.ts';
import { checkDeliveries } from '../../relay/src/statement/deliveries.ts';
import { ledgerOf } from '../../relay/src/statement/ledger.ts';
import type { LedgerInput } from '../../relay/src/statement/ledger.ts';
import { instantOf } from '../../relay/src/statement/window.ts';

const lines = (rub: string) => [{ currency: 'RUB', available: rub, locked: '0', hold: '0' }];
const at = (iso: string) => Date.parse(iso);
const input = (over: Partial<LedgerInput> = {}): LedgerInput => ({
	day: '2026-03-10',
	timeZone: 'UTC',
	opening: {
		point: { kind: 'boundary', takenAt: '' },
		at: at('2026-03-10T00:00:05Z'),
		lines: lines('100.00000000'),
	},
	closing: {
		point: { kind: 'boundary', takenAt: '' },
		at: at('2026-03-11T00:00:05Z'),
		lines: lines('190.00000000'),
	},
	dayMovements: [
		paymentMovement({
			id: 'P1',
			status: 'SUCCESS',
			amount: 103,
			commission: 3,
			account_amount: 100,
			currency_in: 'RUB',
			created_at: '2026-03-10 10:00:00',
		}),
		payoutMovement({
			id: 'O1',
			status: 'SUCCESS',
			amount: 10,
			commission: 0,
			account_amount: 10,
			account_currency: 'RUB',
			currency: 'RUB',
			created_at: '2026-03-10 11:00:00',
		}),
	],
	around: [],
	unread: [],
	...over,
});

describe('the statement', () => {
	it('reads a zoneless time in the statement zone, and a time with an offset as written', () => {
		expect(instantOf('2026-03-10 10:00:00', 'UTC')).toBe(at('2026-03-10T10:00:00Z'));
		expect(instantOf('2026-03-10 10:00:00', 'Europe/Moscow')).toBe(at('2026-03-10T07:00:00Z'));
		expect(instantOf('2026-03-10T10:00:00+05:00', 'UTC')).toBe(at('2026-03-10T05:00:00Z'));
		expect(instantOf('not a date', 'UTC')).toBeUndefined();
	});

	it('ties out: closing − opening − the effects between the snapshots, per currency', () => {
		const [rub] = ledgerOf(input());
		expect(rub).toMatchObject({ currency: 'RUB', effects: 90, unexplained: 0 });
		expect(rub.totals?.payments.count).toBe(1);
	});

	it('leaves out a day movement before the opening snapshot, counts one of the next day before the closing', () => {
		const early = input({
			opening: {
				point: { kind: 'first-start', takenAt: '' },
				at: at('2026-03-10T10:30:00Z'),
				lines: lines('200.00'),
			},
			closing: {
				point: { kind: 'boundary', takenAt: '' },
				at: at('2026-03-11T00:10:00Z'),
				lines: lines('195.00'),
			},
			around: [
				payoutMovement({
					id: 'O2',
					status: 'SUCCESS',
					amount: 5,
					account_amount: 5,
					currency: 'RUB',
					created_at: '2026-03-11 00:05:00',
				}),
			],
		});
		expect(ledgerOf(early)[0]).toMatchObject({ effects: -15, unexplained: 10 });
	});

	it('says why unexplained is unknown: a missing balance, an unread list, an unknown effect', () => {
		expect(ledgerOf(input({ closing: null, missing: 'no balance at the end' }))[0]).toMatchObject({
			unexplained: null,
			unexplainedReason: 'no balance at the end',
		});
		expect(
			ledgerOf(
				input({
					unread: [{ list: 'refund/search', reason: 'refused', detail: 'refunds_not_enabled' }],
				}),
			)[0].unexplainedReason,
		).toMatch(/refund\/search \(refused: refunds_not_enabled\)/);
		const unknown = input({
			dayMovements: [
				payoutMovement({
					id: 'O3',
					status: 'SUCCESS',
					amount: 10,
					currency: 'RUB',
					created_at: '2026-03-10 11:00:00',
				}),
			],
		});
		expect(ledgerOf(unknown)[0]).toMatchObject({ unexplained: null, effects: null });
		expect(ledgerOf(unknown)[0].unexplainedReason).toMatch(/payout O3/);
	});

	it('quotes CSV fields and defuses formulas, but not negative numbers', () => {
		expect(csvField('a,b')).toBe('"a,b"');
		expect(csvField('say "hi"')).toBe('"say ""hi"""');
		expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
		expect(csvField('+7 900')).toBe("'+7 900");
		expect(csvField(-12.5)).toBe('-12.5');
		expect(csvField(null)).toBe('');
	});

	it('a payment in the second the relay started in is checked, not taken for one before the relay', async () => {
		const record = {
			id: 'P-SAME-SECOND',
			bill_id: 'B1',
			status: 'SUCCESS',
			amount: 80,
			account_amount: 80,
			currency_in: 'RUB',
			created_at: '2026-03-10 10:00:04',
		};
		const payment = paymentMovement(record);
		const earlier = paymentMovement({
			...record,
			id: 'P-BEFORE',
			created_at: '2026-03-10 10:00:03',
		});
		const store = { movementTraces: async () => [] };
		const since = at('2026-03-10T10:00:04.400Z');
		const check = await checkDeliveries(store, [payment, earlier], () => true, since, 'UTC');
		expect(check.items.map((m) => m.id)).toEqual(['P-SAME-SECOND']);
		expect(check.beforeRelay).toBe(1);
	});
});
