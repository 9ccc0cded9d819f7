import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
	confirmPayment,
	confirmPayout,
	describeApiError,
	ERROR_CATALOGUE,
	enrichPostback,
	NO_ORDER_ID_REFUSAL,
	normalizeAmount,
	normalizeBaseUrl,
	normalizeResponseAmount,
	orderIdOf,
	parsePostbackBody,
	PAYOUT_POSTBACK_CONFIRMED_BY,
	postbackKey,
	signPayment,
	signPayout,
	toYmd,
	verifyPostback,
} from '../../dist/nodes/shared/index.js';
import { ENDPOINT_ERRORS } from '../helpers/endpoint-errors.ts';

// Independent oracle: the rule written out by hand, not through the module under test.
const md5 = (s: string) => createHash('md5').update(s).digest('hex').toUpperCase();
const TOKEN = '72|oBCB7Z3SmUm1gvkpEdRcSR2q1ERHpG4vD3DNBmuT';

describe('signature rules', () => {
	it('signs payments as MD5(OutSum:InvId:token) upper-case and payouts as MD5(Amount:TrsId:token)', () => {
		expect(signPayment('18.54', 'order-7', TOKEN)).toBe(md5(`18.54:order-7:${TOKEN}`));
		expect(signPayout('1000.00', 'P-1', TOKEN)).toBe(md5(`1000.00:P-1:${TOKEN}`));
	});

	const fields = (sig: string, outSum = '18.50') => ({
		OutSum: outSum,
		InvId: 'o1',
		TrsId: 'T1',
		Status: 'SUCCESS',
		SignatureValue: sig,
	});

	it('accepts the signature in either case', () => {
		const sig = md5(`18.50:o1:${TOKEN}`);
		expect(verifyPostback('payment', fields(sig), TOKEN)).toEqual({ ok: true, tokenIndex: 0 });
		expect(verifyPostback('payment', fields(sig.toLowerCase()), TOKEN).ok).toBe(true);
	});

	it('hashes the amount string exactly as received: a re-formatted amount fails', () => {
		const sig = md5(`18.50:o1:${TOKEN}`);
		expect(verifyPostback('payment', fields(sig, '18.5'), TOKEN)).toEqual({
			ok: false,
			reason: 'bad_signature',
		});
	});

	it('rejects a wrong token, a malformed signature and a missing field', () => {
		expect(verifyPostback('payment', fields(md5(`18.50:o1:other`)), TOKEN)).toEqual({
			ok: false,
			reason: 'bad_signature',
		});
		expect(verifyPostback('payment', fields('not-a-signature'), TOKEN)).toEqual({
			ok: false,
			reason: 'malformed_signature',
		});
		const { TrsId: _omit, ...noTrs } = fields(md5(`18.50:o1:${TOKEN}`));
		expect(verifyPostback('payment', noTrs, TOKEN)).toEqual({
			ok: false,
			reason: 'missing_field',
			field: 'TrsId',
		});
		expect(verifyPostback('payment', fields(md5(`18.50:o1:${TOKEN}`)), [])).toEqual({
			ok: false,
			reason: 'no_token',
		});
	});

	it('accepts any of several tokens (rotation) and says which matched', () => {
		const sig = md5(`18.50:o1:new-token`);
		expect(verifyPostback('payment', fields(sig), ['old-token', 'new-token'])).toEqual({
			ok: true,
			tokenIndex: 1,
		});
	});

	it('verifies payout postbacks over Amount and TrsId', () => {
		const f = {
			Amount: '500.00',
			TrsId: 'P-9',
			Status: 'DECLINED',
			SignatureValue: md5(`500.00:P-9:${TOKEN}`),
		};
		expect(verifyPostback('payout', f, TOKEN).ok).toBe(true);
		expect(verifyPostback('payment', f, TOKEN).ok).toBe(false);
	});
});

describe('postback bodies', () => {
	it('reads form bodies keeping values as received', () => {
		const r = parsePostbackBody(
			'OutSum=18.50&InvId=a+b&custom=x%26y',
			'application/x-www-form-urlencoded',
		);
		expect(r).toEqual({ ok: true, fields: { OutSum: '18.50', InvId: 'a b', custom: 'x&y' } });
	});
	it('reads JSON bodies; numbers and booleans become text', () => {
		expect(
			parsePostbackBody('{"Amount":"10.00","IsAuto":false,"N":5}', 'application/json'),
		).toEqual({
			ok: true,
			fields: { Amount: '10.00', IsAuto: 'false', N: '5' },
		});
	});
	it('keeps the text of JSON numbers, so 18.50 is verified as sent', () => {
		const sig = md5(`18.50:o1:${TOKEN}`);
		const r = parsePostbackBody(
			`{"OutSum":18.50,"InvId":"o1","TrsId":"T","Status":"SUCCESS","SignatureValue":"${sig}"}`,
			'application/json',
		);
		expect(r).toMatchObject({ ok: true, fields: { OutSum: '18.50' } });
		if (r.ok) expect(verifyPostback('payment', r.fields, TOKEN).ok).toBe(true);
	});
	it('refuses garbage', () => {
		expect(parsePostbackBody('', '').ok).toBe(false);
		expect(parsePostbackBody('{broken', 'application/json')).toMatchObject({
			ok: false,
			reason: 'bad_json',
		});
		expect(parsePostbackBody('a=1&a=2', 'application/x-www-form-urlencoded')).toMatchObject({
			ok: false,
			reason: 'repeated_field',
		});
		expect(parsePostbackBody({ a: { b: 1 } })).toMatchObject({ ok: false, reason: 'nested_value' });
		expect(parsePostbackBody('[1,2]', 'application/json')).toMatchObject({
			ok: false,
			reason: 'not_an_object',
		});
	});
	it('keys postbacks by TrsId, canonical Status and the signed pair, never redirects', () => {
		const base = { TrsId: 'T', Status: 'SUCCESS', OutSum: '10.00', InvId: 'o-1' };
		expect(postbackKey('payment', base)).toBe(
			JSON.stringify(['payment', 'T', 'SUCCESS', '1000c', 'o-1']),
		);
		// One amount in every spelling: the key holds whole cents.
		for (const OutSum of ['10', '10.0', '10.000', ' 10.00']) {
			expect(postbackKey('payment', { ...base, OutSum })).toBe(postbackKey('payment', base));
		}
		const half = { ...base, OutSum: '100.5' };
		expect(postbackKey('payment', { ...half, OutSum: '100.50' })).toBe(
			postbackKey('payment', half),
		);
		expect(postbackKey('payment', { ...half, OutSum: '100.05' })).not.toBe(
			postbackKey('payment', half),
		);
		// An amount that is no plain decimal stays as sent, marked apart, so it never equals a
		// decimal's key: "5c" as sent is not the cents of 0.05.
		expect(postbackKey('payment', { ...base, OutSum: '1e1' })).toBe(
			JSON.stringify(['payment', 'T', 'SUCCESS', 'as-sent:1e1', 'o-1']),
		);
		expect(postbackKey('payment', { ...base, OutSum: '5c' })).not.toBe(
			postbackKey('payment', { ...base, OutSum: '0.05' }),
		);
		expect(postbackKey('payout', { TrsId: 'P', Status: 'SUCCESS', Amount: '5c' })).not.toBe(
			postbackKey('payout', { TrsId: 'P', Status: 'SUCCESS', Amount: '0.05' }),
		);
		// Another signed amount is another event: a forged call with a cheaper bill's pair cannot
		// shadow the genuine postback.
		expect(postbackKey('payment', { ...base, OutSum: '1.00' })).not.toBe(
			postbackKey('payment', base),
		);
		// One postback in every spelling of its Status, and with white space around its TrsId.
		for (const Status of ['success', 'Success', 'SUCCESS ', ' SUCCESS', '\tsuccess\n']) {
			expect(postbackKey('payment', { ...base, Status })).toBe(postbackKey('payment', base));
		}
		expect(postbackKey('payment', { ...base, TrsId: ' T ' })).toBe(postbackKey('payment', base));
		// A call with another signed pair is another event, so it cannot take the genuine one's place.
		expect(postbackKey('payment', { ...base, InvId: 'o-2' })).not.toBe(
			postbackKey('payment', base),
		);
		expect(postbackKey('payment', { ...base, Status: 'FAIL' })).not.toBe(
			postbackKey('payment', base),
		);
		expect(postbackKey('payout', { TrsId: 'P', Status: 'declined', Amount: '5.00' })).toBe(
			JSON.stringify(['payout', 'P', 'DECLINED', '500c', 'P']),
		);
		expect(postbackKey('success', { InvId: 'x' })).toBeUndefined();
	});

	it('treats every spelling of a status alike for paid and gives every delivery one event key', () => {
		for (const Status of ['success', ' Success', 'OVERPAID ', 'overpaid']) {
			expect(enrichPostback('payment', { OutSum: '1', TrsId: 'T', Status }).paid).toBe(true);
		}
		const a = enrichPostback('payment', { OutSum: '1', TrsId: 'T-1', Status: 'success' });
		const b = enrichPostback('payment', { OutSum: '1', TrsId: ' T-1', Status: 'SUCCESS ' });
		expect(a.eventKey).toBe('payment-T-1-SUCCESS');
		expect(b.eventKey).toBe(a.eventKey);
		expect(a.status).toBe('SUCCESS');
		const odd = enrichPostback('payment', { OutSum: '1', TrsId: 'a/b?c', Status: 'SUCCESS' });
		expect(odd.eventKey).toMatch(/^payment-[0-9a-f]{24}-SUCCESS$/);
	});

	it('never puts paid on a redirect, and reads a missing InvId as empty', () => {
		expect(enrichPostback('success', { OutSum: '1.00', SignatureValue: 'x' })).not.toHaveProperty(
			'paid',
		);
		expect(enrichPostback('fail', { OutSum: '1.00', InvId: 'o' })).not.toHaveProperty('paid');
		expect(enrichPostback('success', { OutSum: '1.00' }).InvId).toBe('');
	});
	it('enriches with event, verified, paid and numeric amounts', () => {
		const out = enrichPostback('payment', {
			OutSum: '18.50',
			Status: 'OVERPAID',
			InvId: '1',
			TrsId: 'T',
			custom: 'c',
		});
		expect(out).toMatchObject({
			OutSum: '18.50',
			OutSumNumber: 18.5,
			paid: true,
			verified: true,
			event: 'payment',
			custom: 'c',
		});
		expect(enrichPostback('payment', { OutSum: '1', Status: 'UNDERPAID' }).paid).toBe(false);
		expect(enrichPostback('payment', { OutSum: '1', Status: 'CANCELLED' }).paid).toBe(false);
	});
});

describe('money', () => {
	it.each([
		[100, '100.00'],
		['100', '100.00'],
		['99.9', '99.90'],
		['0,5', '0.50'],
		[0.1 + 0.2, '0.30'],
		['99999999.99', '99999999.99'],
		['10.5000', '10.50'],
		['0.500', '0.50'],
		['100,50', '100.50'],
		['1500', '1500.00'],
		[1500, '1500.00'],
		['100.00000000', '100.00'],
	])('%s becomes %s', (input, expected) => {
		expect(normalizeAmount(input)).toMatchObject({ ok: true, value: expected });
	});
	it.each([
		[0],
		[-5],
		['abc'],
		['1.234'],
		[1.234],
		['100000000'],
		[Number.NaN],
		[''],
		[null],
		['1e5'],
	])('%s is refused', (input) => {
		expect(normalizeAmount(input).ok).toBe(false);
	});
	it.each([
		['1,500'],
		['1 500,00'],
		['1\u00a0500'],
		['1.500'],
		['10.500'],
		['1.000.000'],
		['1,500.00'],
		['1,5,0'],
	])('%s may hold a thousands separator: refused with what was read, never guessed', (input) => {
		const result = normalizeAmount(input);
		expect(result.ok).toBe(false);
		expect(result.ok === false && result.message).toMatch(/ambiguous|spaces/);
	});
	it('reads service amounts without loss', () => {
		expect(normalizeResponseAmount('0.12000000')).toBe(0.12);
		expect(normalizeResponseAmount(35400)).toBe(35400);
		expect(normalizeResponseAmount('n/a')).toBe('n/a');
	});
});

describe('dates and URLs', () => {
	it('reads dates as Y-m-d', () => {
		expect(toYmd('2024-02-29')).toEqual({ ok: true, value: '2024-02-29' });
		expect(toYmd('2024-03-01T00:00:00')).toEqual({ ok: true, value: '2024-03-01' });
		expect(toYmd({ toISODate: () => '2024-01-31' })).toEqual({ ok: true, value: '2024-01-31' });
		expect(toYmd('2023-02-29').ok).toBe(false);
		expect(toYmd('01.02.2024').ok).toBe(false);
	});
	it('normalises the base URL', () => {
		expect(normalizeBaseUrl('https://pal24.pro/')).toBe('https://pal24.pro');
		expect(normalizeBaseUrl('http://127.0.0.1:8787/api/v1/')).toBe('http://127.0.0.1:8787');
		expect(normalizeBaseUrl('')).toBe('https://pal24.pro');
	});
});

describe('error catalogue', () => {
	it('explains service keys in merchant words', () => {
		const e = describeApiError(400, { success: false, message: 'api:error.balance_not_enough' });
		expect(e.key).toBe('api:error.balance_not_enough');
		expect(e.message).toBe(
			'api:error.balance_not_enough: The available balance is below the payout amount',
		);
	});
	it('recognises the 401 and unauthorized answers', () => {
		expect(describeApiError(401, { message: 'Unauthenticated.' }).message).toContain(
			'The API token was rejected',
		);
		expect(
			describeApiError(403, { message: 'This action is unauthorized.' }).description,
		).toContain('Ask support to enable direct payouts');
	});
	it("explains every key every endpoint lists, with that endpoint's HTTP code", () => {
		const rows = Object.entries(ENDPOINT_ERRORS).flatMap(([path, list]) =>
			list.map(([code, key]) => ({ path, code, key })),
		);
		expect(Object.keys(ENDPOINT_ERRORS)).toHaveLength(12);
		expect(rows.length).toBeGreaterThan(80);
		for (const { code, key } of rows) {
			const body =
				key === 'invalid_request_data'
					? { message: 'The id field is required.', errors: { id: ['The id field is required.'] } }
					: {
							success: false,
							message:
								key === 'Unauthenticated' || key === 'This action is unauthorized'
									? `${key}.`
									: key,
						};
			const e = describeApiError(code, body);
			expect(e.key).toBe(key);
			expect(e.httpCode).toBe(code);
			expect(e.message).toBe(`${key}: ${ERROR_CATALOGUE[key].message}`);
		}
		// The same key carries different codes on different endpoints.
		expect(ENDPOINT_ERRORS['/api/v1/bill/payments']).toContainEqual([
			403,
			'api:error.bill_not_found',
		]);
		expect(ENDPOINT_ERRORS['/api/v1/bill/status']).toContainEqual([
			422,
			'api:error.bill_not_found',
		]);
		expect(ENDPOINT_ERRORS['/api/v1/payout/personal/create']).toContainEqual([
			400,
			'api:error.merchant_banned',
		]);
	});
	it('keeps Laravel field errors', () => {
		const e = describeApiError(422, {
			message: 'The amount field is required.',
			errors: { amount: ['The amount field is required.'] },
		});
		expect(e.key).toBe('invalid_request_data');
		expect(e.fieldErrors).toEqual({ amount: ['The amount field is required.'] });
		expect(e.description).toContain('amount: The amount field is required.');
	});
});

describe("confirming a postback with the service's record", () => {
	const postback = {
		TrsId: 'P1',
		Status: 'SUCCESS',
		OutSum: '103.00',
		InvId: 'o-1',
		CurrencyIn: 'RUB',
	};
	const payment = {
		id: 'P1',
		bill_id: 'B1',
		status: 'SUCCESS',
		amount: 103,
		amount_received: 100,
		commission: 3,
		currency_in: 'RUB',
	};

	it('confirms when id, status (any spelling), amount and order agree', () => {
		expect(confirmPayment(postback, payment, 'o-1')).toEqual({
			ok: true,
			orderConfirmed: true,
			amount: '103.00',
		});
		expect(confirmPayment({ ...postback, Status: ' success' }, payment, 'o-1')).toEqual({
			ok: true,
			orderConfirmed: true,
			amount: '103.00',
		});
	});

	it("without the bill's order ID: refused, or with Bill ID Only confirmed with orderConfirmed false (never on another mismatch)", () => {
		expect(confirmPayment(postback, payment, undefined)).toMatchObject({ ok: false, retry: false });
		expect(confirmPayment(postback, payment, undefined, false)).toEqual({
			ok: true,
			orderConfirmed: false,
			amount: '103.00',
		});
		expect(
			confirmPayment({ ...postback, OutSum: '1.00' }, payment, undefined, false),
		).toMatchObject({ ok: false });
		expect(
			confirmPayment(postback, { ...payment, status: 'FAIL' }, undefined, false),
		).toMatchObject({ ok: false });
		// A bill that shows its order ID is still compared in that mode.
		expect(confirmPayment(postback, payment, 'o-2', false)).toMatchObject({ ok: false });
	});

	it("takes OutSum as the payer's amount, the received amount, or received + commission (payer pays the fee)", () => {
		expect(confirmPayment({ ...postback, OutSum: '100.00' }, payment, 'o-1').ok).toBe(true);
		// The interface document's example: amount 0 with a non-zero amount_received.
		expect(confirmPayment(postback, { ...payment, amount: 0 }, 'o-1').ok).toBe(true);
		expect(confirmPayment({ ...postback, OutSum: '103.01' }, payment, 'o-1')).toMatchObject({
			ok: false,
			retry: false,
		});
		expect(confirmPayment({ ...postback, OutSum: '1e3' }, payment, 'o-1')).toMatchObject({
			ok: false,
			retry: false,
		});
	});

	it("counts a commission only when the service's record names the same one: the postback's own Commission is the sender's word", () => {
		// A service whose amount leaves out the payer's commission and that shows the commission.
		const shown = { ...payment, amount: 100, amount_received: 97, commission: 3 };
		expect(confirmPayment({ ...postback, Commission: '3.00' }, shown, 'o-1')).toEqual({
			ok: true,
			orderConfirmed: true,
			amount: '103.00',
		});
		expect(confirmPayment({ ...postback, Commission: '3' }, shown, 'o-1').ok).toBe(true);
		// Another Commission than the service's, or none: amount + commission does not count.
		for (const Commission of [undefined, '2.99', '-3.00', 'three']) {
			const fields = Commission === undefined ? postback : { ...postback, Commission };
			expect(confirmPayment(fields, shown, 'o-1'), String(Commission)).toMatchObject({
				ok: false,
				retry: false,
			});
		}
		// A service that shows no commission at all: the postback's Commission never makes OutSum.
		const plain = { ...payment, amount: 100, amount_received: 100, commission: undefined };
		for (const Commission of [undefined, '3.00', '3']) {
			const fields = Commission === undefined ? postback : { ...postback, Commission };
			expect(confirmPayment(fields, plain, 'o-1'), String(Commission)).toMatchObject({
				ok: false,
				retry: false,
				reason: expect.stringContaining('OutSum 103.00 is not the payment'),
			});
		}
		// The forgery: another order's redirect (OutSum 1000.00) on a 100.00 payment, Commission 900.
		const hundred = { ...payment, amount: 100, amount_received: 97, commission: 3 };
		const forged = { ...postback, OutSum: '1000.00', InvId: 'order-X', Commission: '900.00' };
		expect(confirmPayment(forged, hundred, undefined, false)).toMatchObject({ ok: false });
		expect(confirmPayment(forged, plain, undefined, false)).toMatchObject({ ok: false });
	});

	it('refuses another status, another payment, another order, an unknown order and another currency', () => {
		expect(confirmPayment(postback, { ...payment, status: 'FAIL' }, 'o-1')).toMatchObject({
			ok: false,
			retry: false,
		});
		expect(confirmPayment(postback, { ...payment, id: 'P2' }, 'o-1')).toMatchObject({
			ok: false,
			retry: false,
		});
		expect(confirmPayment(postback, payment, 'o-2')).toMatchObject({
			ok: false,
			retry: false,
			reason: expect.stringContaining('o-2'),
		});
		expect(confirmPayment(postback, payment, undefined)).toEqual({
			ok: false,
			retry: false,
			reason: `${NO_ORDER_ID_REFUSAL} (bill B1)`,
		});
		expect(NO_ORDER_ID_REFUSAL).toBe(
			'this service shows no order ID for bills: set Order Check to Bill ID Only and find the order by bill_id',
		);
		expect(confirmPayment({ ...postback, InvId: '' }, payment, null)).toEqual({
			ok: true,
			orderConfirmed: true,
			amount: '103.00',
		});
		expect(confirmPayment(postback, payment, null)).toMatchObject({ ok: false });
		expect(confirmPayment({ ...postback, CurrencyIn: 'USD' }, payment, 'o-1')).toMatchObject({
			ok: false,
			retry: false,
		});
	});

	it('asks for a retry while the record is not final', () => {
		for (const status of ['NEW', 'PROCESS']) {
			expect(confirmPayment(postback, { ...payment, status }, 'o-1')).toMatchObject({
				ok: false,
				retry: true,
			});
		}
		expect(
			confirmPayout(
				{ TrsId: 'X', Status: 'SUCCESS', Amount: '10.00' },
				{ id: 'X', status: 'MODERATING', amount: 10 },
			),
		).toMatchObject({
			ok: false,
			retry: true,
		});
	});

	it('confirms a payout postback whose Amount includes the commission', () => {
		const payout = { id: 'X', status: 'SUCCESS', amount: 1000, commission: 15 };
		expect(confirmPayout({ TrsId: 'X', Status: 'success', Amount: '1015.00' }, payout)).toEqual({
			ok: true,
		});
		expect(confirmPayout({ TrsId: 'X', Status: 'SUCCESS', Amount: '1000.00' }, payout)).toEqual({
			ok: true,
		});
		expect(
			confirmPayout({ TrsId: 'X', Status: 'DECLINED', Amount: '1015.00' }, payout),
		).toMatchObject({ ok: false, retry: false });
		expect(
			confirmPayout({ TrsId: 'X', Status: 'SUCCESS', Amount: '999.00' }, payout),
		).toMatchObject({ ok: false, retry: false });
	});

	it('confirms a FAIL payout postback by a FAIL or an ERROR record; DECLINED and SUCCESS only by themselves', () => {
		const record = (status: string) => ({ id: 'X', status, amount: 1000, commission: 15 });
		const sent = (Status: string) => ({ TrsId: 'X', Status, Amount: '1015.00' });
		const table: Array<[string, string, boolean]> = [
			['FAIL', 'FAIL', true],
			['FAIL', 'ERROR', true],
			['fail ', 'error', true],
			['FAIL', 'DECLINED', false],
			['FAIL', 'SUCCESS', false],
			['DECLINED', 'DECLINED', true],
			['DECLINED', 'FAIL', false],
			['DECLINED', 'ERROR', false],
			['SUCCESS', 'SUCCESS', true],
			['SUCCESS', 'ERROR', false],
			['SUCCESS', 'FAIL', false],
			['ERROR', 'ERROR', true],
			['ERROR', 'FAIL', false],
			['CANCELLED', 'CANCELLED', true],
		];
		for (const [postbackStatus, recordStatus, ok] of table) {
			expect(
				confirmPayout(sent(postbackStatus), record(recordStatus)).ok,
				`${postbackStatus} postback, ${recordStatus} record`,
			).toBe(ok);
		}
		expect(PAYOUT_POSTBACK_CONFIRMED_BY).toEqual({
			SUCCESS: ['SUCCESS'],
			FAIL: ['FAIL', 'ERROR'],
			DECLINED: ['DECLINED'],
		});
		// A payment's FAIL is never confirmed by anything but FAIL.
		expect(
			confirmPayment(
				{ TrsId: 'P1', Status: 'FAIL', OutSum: '103.00', InvId: 'o-1' },
				{ ...payment, status: 'ERROR' },
				'o-1',
			).ok,
		).toBe(false);
	});
});

describe('orderIdOf (the trigger and the relay catch-up read a bill the same way)', () => {
	it('answers null for a record with no order ID and undefined for one that does not tell it', () => {
		expect(orderIdOf({ id: 'b-1', order_id: 'o-1' })).toBe('o-1');
		expect(orderIdOf({ id: 'b-1', order_id: 42 })).toBe('42');
		expect(orderIdOf({ id: 'b-1', order_id: null })).toBeNull();
		expect(orderIdOf({ id: 'b-1', order_id: '' })).toBeNull();
		expect(orderIdOf({ id: 'b-1', order_id: undefined })).toBeNull();
		expect(orderIdOf({ id: 'b-1' })).toBeUndefined();
		expect(orderIdOf({ id: 'b-1', order_id: { nested: true } })).toBeUndefined();
	});
});
