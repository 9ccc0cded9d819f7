import { describe, expect, it } from 'vitest';

import { confirmPayment, receivedCents } from '../../dist/nodes/shared/index.js';

// Payment records in both forms: the interface document's (`amount_received`) and the newer one
// of the service's current reference (no `amount_received`; `commission`, `account_amount`,
// `account_currency_code`, `refunded_amount`).
const documented = {
	id: 'P1',
	bill_id: 'B1',
	status: 'SUCCESS',
	amount: 100,
	amount_received: 100,
	commission: 3,
	currency_in: 'RUB',
};
const { amount_received: _dropped, ...withoutReceived } = documented;
const newer = {
	...withoutReceived,
	account_amount: 100,
	account_currency_code: 'RUB',
	refunded_amount: 0,
};

describe('the payment record without amount_received', () => {
	it('reads what the payment credited from amount_received, else from account_amount in its currency', () => {
		expect(receivedCents(documented)).toBe(10000);
		expect(receivedCents(newer)).toBe(10000);
		expect(receivedCents({ ...newer, account_amount: '99.50000000' })).toBe(9950);
		expect(receivedCents({ ...newer, account_currency_code: undefined })).toBe(10000);
		// Credited in another currency: not comparable with the payment's amounts.
		expect(receivedCents({ ...newer, account_currency_code: 'USD' })).toBeUndefined();
		expect(receivedCents(withoutReceived)).toBeUndefined();
	});

	it('confirms a postback whose OutSum includes the commission, in either form', () => {
		// The payer paid the commission: OutSum is 103.00, and this postback carries no Commission.
		const postback = { TrsId: 'P1', Status: 'SUCCESS', OutSum: '103.00', InvId: 'o-1' };
		expect(confirmPayment(postback, documented, 'o-1')).toMatchObject({
			ok: true,
			orderConfirmed: true,
			amount: '103.00',
		});
		expect(confirmPayment(postback, newer, 'o-1')).toMatchObject({
			ok: true,
			orderConfirmed: true,
			amount: '103.00',
		});
		// Still refused when no amount of the record is OutSum.
		expect(confirmPayment({ ...postback, OutSum: '104.00' }, newer, 'o-1')).toMatchObject({
			ok: false,
			retry: false,
		});
		expect(
			confirmPayment(postback, { ...newer, account_currency_code: 'USD' }, 'o-1'),
		).toMatchObject({ ok: false });
	});
});
