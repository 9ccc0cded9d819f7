import { createHash } from 'node:crypto';
import type { IDataObject } from 'n8n-workflow';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { PayPalychTrigger } from '../../dist/nodes/PayPalychTrigger/PayPalychTrigger.node.js';
import { startTrigger } from '../helpers/trigger-harness.ts';
import { CONFIRMABLE_FIELDS as CONFIRMABLE, postbackKey } from '../../dist/nodes/shared/index.js';
import {
	KEY_HASH_WIDTH,
	MAX_BODY_BYTES,
	SEEN_HASHES_FIELD,
	SEEN_KEYS_FIELD,
	SEEN_KEYS_LIMIT,
	SeenPostbacks,
	resetProcessMemory,
} from '../../dist/nodes/PayPalychTrigger/receive.js';
import {
	callWebhookMethod,
	startWebhookHarness,
	type LogEntry,
	type WebhookHarness,
} from '../helpers/webhook-harness.ts';

// The signature rule written out by hand (an oracle independent of the module under test).
const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex').toUpperCase();
// How the memory stores a key, written out by hand: 12 characters of its SHA-256 in base64url.
const hashOf = (key: string) =>
	createHash('sha256').update(key, 'utf8').digest('base64url').slice(0, KEY_HASH_WIDTH);
const TOKEN = '72|oBCB7Z3SmUm1gvkpEdRcSR2q1ERHpG4vD3DNBmuT';
const TYPE = 'n8n-nodes-paypalych.payPalychTrigger';
const FORM = 'application/x-www-form-urlencoded';

const open: WebhookHarness[] = [];
const allLogs: LogEntry[] = [];
const allAnswers: string[] = [];

/**
 * These tests send hand-made postbacks to exercise reading, verifying, filtering and dedupe, so
 * confirmation with the API is off unless a test turns it on; test/trigger/confirm.test.ts covers
 * confirmation against the sandbox.
 */
async function harness(
	parameters: Record<string, unknown>,
	extra: Partial<Parameters<typeof startWebhookHarness>[0]> = {},
) {
	const h = await startTrigger(
		{ confirmWithApi: false, ...parameters },
		{ apiToken: TOKEN, baseUrl: 'https://pal24.pro' },
		extra,
	);
	open.push(h);
	return h;
}

afterEach(async () => {
	for (const h of open.splice(0)) {
		allLogs.push(...h.logs.splice(0));
		await h.close();
	}
});

afterAll(() => {
	// No answer and no log line ever carries the token.
	const text = JSON.stringify(allLogs) + allAnswers.join('\n');
	expect(text).not.toContain(TOKEN);
	expect(text).not.toContain('oBCB7Z3SmUm1gvkpEdRcSR2q1ERHpG4vD3DNBmuT');
});

async function post(
	url: string,
	body: string,
	contentType = FORM,
	extraHeaders: Record<string, string> = {},
) {
	const res = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': contentType, ...extraHeaders },
		body,
		redirect: 'manual',
	});
	const text = await res.text();
	allAnswers.push(text);
	return { status: res.status, text, headers: res.headers };
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

function payment(overrides: Record<string, string> = {}, token = TOKEN) {
	const base: Record<string, string> = {
		InvId: 'order-1001',
		OutSum: '18.50',
		Commission: '0.55',
		Currency: 'RUB',
		CurrencyIn: 'RUB',
		TrsId: 'PAY-7f3a',
		Status: 'SUCCESS',
		custom: 'x&y z',
		BalanceAmount: '17.95',
		PayerEmail: 'a@b.c',
		...overrides,
	};
	base.SignatureValue = overrides.SignatureValue ?? md5(`${base.OutSum}:${base.InvId}:${token}`);
	return base;
}

function payout(overrides: Record<string, string> = {}, token = TOKEN) {
	const base: Record<string, string> = {
		TrsId: 'PO-1',
		Amount: '1000.00',
		IsAuto: 'false',
		Status: 'SUCCESS',
		Currency: 'RUB',
		Commission: '15.00',
		AccountType: 'BANK_CARD',
		AccountNumber: '220000******0000',
		BalanceAmount: '1015.00',
		BalanceCommission: '15.00',
		BalanceCurrency: 'RUB',
		CommissionApplyType: 'sender',
		...overrides,
	};
	base.SignatureValue = overrides.SignatureValue ?? md5(`${base.Amount}:${base.TrsId}:${token}`);
	return base;
}

function redirect(overrides: Record<string, string> = {}, token = TOKEN) {
	const base: Record<string, string> = {
		InvId: 'order-1001',
		OutSum: '18.50',
		CurrencyIn: 'RUB',
		custom: 'c1',
		...overrides,
	};
	base.SignatureValue = overrides.SignatureValue ?? md5(`${base.OutSum}:${base.InvId}:${token}`);
	return base;
}

describe('payment postback', () => {
	it('accepts a valid form postback: answers 200 OK, starts one execution with every field as received plus helpers', async () => {
		const h = await harness({ event: 'payment' });
		const fields = payment();
		const r = await post(h.url, form(fields));
		expect(r.status).toBe(200);
		expect(r.text).toBe('OK');
		expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
		expect(h.calls.map((c) => c.started)).toEqual([true]);
		expect(h.executions).toHaveLength(1);
		const item = h.executions[0][0][0].json;
		// What the signature and the service can stand behind stays on top; every other field, as
		// received, is under `unverified` (a forger with a redirect's signature writes those).
		const unverified = item.unverified as Record<string, string>;
		for (const [name, value] of Object.entries(fields)) {
			if (CONFIRMABLE.payment.includes(name)) expect(item[name]).toBe(value);
			else {
				expect(item).not.toHaveProperty(name);
				expect(unverified[name]).toBe(value);
			}
		}
		expect(item).toMatchObject({
			event: 'payment',
			verified: true,
			paid: true,
			OutSumNumber: 18.5,
			unverified: { Commission: '0.55', BalanceAmount: '17.95', custom: 'x&y z' },
		});
		expect(item).not.toHaveProperty('CommissionNumber');
		expect(item).not.toHaveProperty('custom');
		expect(typeof item.receivedAt).toBe('string');
	});

	it('marks OVERPAID as paid and UNDERPAID and FAIL as not paid', async () => {
		const h = await harness({ event: 'payment' });
		for (const [status, trs] of [
			['OVERPAID', 'T-o'],
			['UNDERPAID', 'T-u'],
			['FAIL', 'T-f'],
		]) {
			expect((await post(h.url, form(payment({ Status: status, TrsId: trs })))).status).toBe(200);
		}
		expect(h.executions.map((e) => [e[0][0].json.Status, e[0][0].json.paid])).toEqual([
			['OVERPAID', true],
			['UNDERPAID', false],
			['FAIL', false],
		]);
	});

	it('refuses a forged signature (another token) with 401 and starts nothing', async () => {
		const h = await harness({ event: 'payment' });
		const forged = payment({}, 'some-other-token');
		const r = await post(h.url, form(forged));
		expect(r.status).toBe(401);
		expect(r.text).not.toContain(forged.SignatureValue);
		expect(r.text).not.toContain(md5(`18.50:order-1001:${TOKEN}`));
		expect(h.calls.map((c) => c.started)).toEqual([false]);
		expect(h.executions).toHaveLength(0);
		const warning = h.logs.find((l) => l.level === 'warn');
		expect(warning?.message).toContain('401');
		expect(JSON.stringify(h.logs)).not.toContain(forged.SignatureValue);
	});

	it('accepts a lower-case signature', async () => {
		const h = await harness({ event: 'payment' });
		const fields = payment();
		fields.SignatureValue = fields.SignatureValue.toLowerCase();
		expect((await post(h.url, form(fields))).status).toBe(200);
		expect(h.executions).toHaveLength(1);
		expect(h.executions[0][0][0].json.SignatureValue).toBe(fields.SignatureValue);
	});

	it('refuses a re-formatted amount: the signature covers the string as sent', async () => {
		const h = await harness({ event: 'payment' });
		const signedOver1850 = md5(`18.50:order-1001:${TOKEN}`);
		const r = await post(h.url, form(payment({ OutSum: '18.5', SignatureValue: signedOver1850 })));
		expect(r.status).toBe(401);
		expect(h.executions).toHaveLength(0);
	});

	it('reads a missing InvId as an empty order ID (order_id is optional on a bill): signed over OutSum::token it starts, otherwise 401', async () => {
		const h = await harness({ event: 'payment' });
		const { InvId: _dropped, ...withoutInvId } = payment({ TrsId: 'NO-INV' });
		const stillSignedWithIt = await post(h.url, form(withoutInvId));
		expect(stillSignedWithIt.status).toBe(401);
		const signedEmpty = { ...withoutInvId, SignatureValue: md5(`18.50::${TOKEN}`) };
		expect((await post(h.url, form(signedEmpty))).status).toBe(200);
		expect(h.executions).toHaveLength(1);
		expect(h.executions[0][0][0].json).toMatchObject({ InvId: '', TrsId: 'NO-INV' });
	});

	it.each(['OutSum', 'TrsId', 'Status', 'SignatureValue'])(
		'refuses a postback without %s with 401',
		async (field) => {
			const h = await harness({ event: 'payment' });
			const fields = payment();
			delete fields[field];
			const r = await post(h.url, form(fields));
			expect(r.status).toBe(401);
			expect(r.text).toContain(field);
			expect(h.executions).toHaveLength(0);
		},
	);

	it('refuses a malformed signature with 401', async () => {
		const h = await harness({ event: 'payment' });
		for (const bad of ['', 'abc', 'Z'.repeat(32), md5('x') + '00']) {
			expect((await post(h.url, form(payment({ SignatureValue: bad })))).status).toBe(401);
		}
		expect(h.executions).toHaveLength(0);
	});

	it('reads a JSON body, and keeps a JSON number exactly as sent for the signature and the output', async () => {
		const h = await harness({ event: 'payment' });
		const asStrings = payment({ TrsId: 'J-1' });
		expect((await post(h.url, JSON.stringify(asStrings), 'application/json')).status).toBe(200);
		const sig = md5(`18.50:order-1001:${TOKEN}`);
		const raw = `{"InvId":"order-1001","OutSum":18.50,"TrsId":"J-2","Status":"SUCCESS","SignatureValue":"${sig}"}`;
		expect((await post(h.url, raw, 'application/json; charset=utf-8')).status).toBe(200);
		expect(h.executions).toHaveLength(2);
		expect(h.executions[1][0][0].json).toMatchObject({
			OutSum: '18.50',
			OutSumNumber: 18.5,
			TrsId: 'J-2',
			verified: true,
		});
	});

	it('reads a body sent without a content type', async () => {
		const h = await harness({ event: 'payment' });
		const r = await fetch(h.url, {
			method: 'POST',
			body: new Blob([form(payment({ TrsId: 'NO-CT' }))]),
		});
		expect(r.status).toBe(200);
		expect(h.executions[0][0][0].json.TrsId).toBe('NO-CT');
	});

	it('falls back to the parsed body when n8n kept no raw body (as for multipart forms)', async () => {
		const h = await harness({ event: 'payment' }, { parsedBodyOnly: true });
		expect((await post(h.url, form(payment({ TrsId: 'PARSED' })))).status).toBe(200);
		expect(h.executions[0][0][0].json).toMatchObject({
			TrsId: 'PARSED',
			OutSum: '18.50',
			unverified: { custom: 'x&y z' },
			verified: true,
		});
		expect(await post(h.url, form(payment({ TrsId: 'PARSED-2' }, 'forger')))).toMatchObject({
			status: 401,
		});
		expect(
			await post(h.url, form(payment({ TrsId: 'BIG', PayerComment: 'x'.repeat(MAX_BODY_BYTES) }))),
		).toMatchObject({ status: 400 });
		expect(h.executions).toHaveLength(1);
	});

	it('refuses an oversized body with 400 before verifying, even when the signature is valid', async () => {
		const h = await harness({ event: 'payment' });
		const big = form(payment({ PayerComment: 'x'.repeat(MAX_BODY_BYTES) }));
		expect(big.length).toBeGreaterThan(MAX_BODY_BYTES);
		const r = await post(h.url, big);
		expect(r.status).toBe(400);
		expect(h.executions).toHaveLength(0);
		// Just under the limit is fine.
		const fits = form(payment({ TrsId: 'FITS', PayerComment: 'x'.repeat(MAX_BODY_BYTES - 400) }));
		expect(fits.length).toBeLessThanOrEqual(MAX_BODY_BYTES);
		expect((await post(h.url, fits)).status).toBe(200);
		expect(h.executions).toHaveLength(1);
	});

	it('refuses garbage with 400: empty body, repeated fields, a JSON array, broken JSON sent as text', async () => {
		const h = await harness({ event: 'payment' });
		const fields = payment();
		expect((await post(h.url, '')).status).toBe(400);
		expect((await post(h.url, form(fields) + '&OutSum=1.00')).status).toBe(400);
		expect((await post(h.url, JSON.stringify([fields]), 'application/json')).status).toBe(400);
		expect((await post(h.url, '{"OutSum": "18.50",', 'text/plain')).status).toBe(400);
		expect(
			(await post(h.url, JSON.stringify({ ...fields, OutSum: { v: 1 } }), 'application/json'))
				.status,
		).toBe(400);
		// A caller-chosen field name is echoed without control characters and never at length.
		const odd = await post(
			h.url,
			`x%0Aforged%20line${'y'.repeat(500)}=1&x%0Aforged%20line${'y'.repeat(500)}=2`,
		);
		expect(odd.status).toBe(400);
		expect(odd.text).not.toContain('\n');
		expect(odd.text.length).toBeLessThanOrEqual(200);
		expect(JSON.stringify(h.logs)).not.toContain('\\nforged');
		expect(h.executions).toHaveLength(0);
		expect(h.calls.every((c) => !c.started)).toBe(true);
	});

	it('answers a duplicate (same TrsId and Status) 200 OK and starts nothing; a new status of the same payment starts', async () => {
		const h = await harness({ event: 'payment' });
		const first = payment({ Status: 'UNDERPAID' });
		expect((await post(h.url, form(first))).status).toBe(200);
		const again = await post(h.url, form(first));
		expect(again).toMatchObject({ status: 200, text: 'OK' });
		// The same postback with the signature in lower case is still the same postback.
		expect(
			(await post(h.url, form({ ...first, SignatureValue: first.SignatureValue.toLowerCase() })))
				.status,
		).toBe(200);
		expect((await post(h.url, form(payment({ Status: 'SUCCESS' })))).status).toBe(200);
		expect(h.calls.map((c) => c.started)).toEqual([true, false, false, true]);
		expect(h.executions.map((e) => e[0][0].json.Status)).toEqual(['UNDERPAID', 'SUCCESS']);
	});

	it('does not let a forged postback poison the memory: the genuine one still starts', async () => {
		const h = await harness({ event: 'payment' });
		expect(await post(h.url, form(payment({}, 'forger')))).toMatchObject({ status: 401 });
		expect(await post(h.url, form(payment()))).toMatchObject({ status: 200 });
		expect(h.executions).toHaveLength(1);
	});

	it('remembers postbacks across a restart (new node instance, static data as stored)', async () => {
		const storage = { staticData: '{}' };
		const before = await harness({ event: 'payment' }, { storage, workflowId: 'wf-restart' });
		expect(await post(before.url, form(payment()))).toMatchObject({ status: 200 });
		expect(before.executions).toHaveLength(1);
		await before.close();
		open.splice(open.indexOf(before), 1);
		expect(JSON.parse(storage.staticData)).toBeTypeOf('object');

		resetProcessMemory(); // a new n8n process remembers only what the static data holds
		const after = await harness({ event: 'payment' }, { storage, workflowId: 'wf-restart' });
		expect(await post(after.url, form(payment()))).toMatchObject({ status: 200, text: 'OK' });
		expect(after.calls.map((c) => c.started)).toEqual([false]);
		expect(await post(after.url, form(payment({ TrsId: 'PAY-new' })))).toMatchObject({
			status: 200,
		});
		expect(after.calls.map((c) => c.started)).toEqual([false, true]);
	});

	it("keeps keys of calls that overlapped: n8n saves each call's whole static data, the process memory fills the gap", async () => {
		const storage = { staticData: '{}' };
		const h = await harness({ event: 'payment' }, { storage });
		const beforeA = storage.staticData;
		expect(await post(h.url, form(payment({ TrsId: 'A' })))).toMatchObject({ status: 200 });
		// B was loaded before A's save landed: n8n writes B's copy over A's.
		storage.staticData = beforeA;
		expect(await post(h.url, form(payment({ TrsId: 'B' })))).toMatchObject({ status: 200 });
		const stored = JSON.parse(storage.staticData)['node:PayPalych Trigger'][
			SEEN_HASHES_FIELD
		] as string;
		expect(stored).toBe(
			hashOf(postbackKey('payment', payment({ TrsId: 'A' })) as string) +
				hashOf(postbackKey('payment', payment({ TrsId: 'B' })) as string),
		);
		// A redelivered (the relay replays it, the service retries): nothing starts.
		expect(await post(h.url, form(payment({ TrsId: 'A' })))).toMatchObject({
			status: 200,
			text: 'OK',
		});
		expect(h.calls.map((c) => c.started)).toEqual([true, true, false]);
	});

	it('keeps a bounded memory: at the limit the oldest key is forgotten and recent ones are kept (a full list of an older version upgraded)', async () => {
		const key = (trsId: string) => postbackKey('payment', payment({ TrsId: trsId })) as string;
		const keys = Array.from({ length: SEEN_KEYS_LIMIT }, (_, i) => key(`OLD-${i}`));
		const storage = {
			staticData: JSON.stringify({ 'node:PayPalych Trigger': { [SEEN_KEYS_FIELD]: keys } }),
		};
		const h = await harness({ event: 'payment' }, { storage });
		expect((await post(h.url, form(payment({ TrsId: 'NEWEST' })))).status).toBe(200);
		const node = JSON.parse(storage.staticData)['node:PayPalych Trigger'] as IDataObject;
		expect(node[SEEN_KEYS_FIELD]).toBeUndefined();
		const stored = (node[SEEN_HASHES_FIELD] as string).match(/.{12}/g) as string[];
		expect(stored).toHaveLength(SEEN_KEYS_LIMIT);
		expect(stored.at(-1)).toBe(hashOf(key('NEWEST')));
		expect(stored[0]).toBe(hashOf(key('OLD-1')));
		expect(stored).not.toContain(hashOf(key('OLD-0')));
		// OLD-0 was evicted, so it starts again; OLD-1 is still remembered.
		expect((await post(h.url, form(payment({ TrsId: 'OLD-1' })))).status).toBe(200);
		expect((await post(h.url, form(payment({ TrsId: 'OLD-0' })))).status).toBe(200);
		expect(h.calls.map((c) => c.started)).toEqual([true, false, true]);
	});

	it('answers 200 OK and starts nothing for a status outside the selection, and does not remember it', async () => {
		const h = await harness({ event: 'payment', paymentStatuses: ['SUCCESS', 'OVERPAID'] });
		expect(await post(h.url, form(payment({ Status: 'FAIL' })))).toMatchObject({
			status: 200,
			text: 'OK',
		});
		expect(await post(h.url, form(payment({ Status: 'UNDERPAID', TrsId: 'U' })))).toMatchObject({
			status: 200,
			text: 'OK',
		});
		expect(await post(h.url, form(payment({ Status: 'CANCELLED', TrsId: 'C' })))).toMatchObject({
			status: 200,
			text: 'OK',
		});
		expect(await post(h.url, form(payment({ Status: 'OVERPAID', TrsId: 'O' })))).toMatchObject({
			status: 200,
		});
		expect(h.calls.map((c) => c.started)).toEqual([false, false, false, true]);
		expect(h.storage.staticData).not.toContain('FAIL');
	});

	it('lets an undocumented status through by default (Any Other Status) and as data', async () => {
		const h = await harness({
			event: 'payment',
			paymentStatuses: ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL', '__other'],
		});
		expect(await post(h.url, form(payment({ Status: 'CANCELLED' })))).toMatchObject({
			status: 200,
		});
		expect(h.executions[0][0][0].json).toMatchObject({ Status: 'CANCELLED', paid: false });
	});

	it('answers 500 and starts nothing when the credential has no token', async () => {
		const h = await harness(
			{ event: 'payment' },
			{ credentials: { apiToken: '', baseUrl: 'https://pal24.pro' } },
		);
		const r = await post(h.url, form(payment({}, '')));
		expect(r.status).toBe(500);
		expect(h.executions).toHaveLength(0);
	});

	it('does not accept a payment postback on a payout trigger (different signature rule)', async () => {
		const h = await harness({ event: 'payout' });
		const fields = payment({ Amount: '18.50' });
		expect((await post(h.url, form(fields))).status).toBe(401);
		expect(h.executions).toHaveLength(0);
	});
});

describe('answers a relay can read', () => {
	const receipt = (r: { headers: Headers }) => r.headers.get('x-paypalych-receipt');

	it('says what it did in X-PayPalych-Receipt on every answer', async () => {
		const h = await harness({ event: 'payment', paymentStatuses: ['SUCCESS'] });
		expect(receipt(await post(h.url, form(payment())))).toBe('accepted');
		expect(receipt(await post(h.url, form(payment())))).toBe('duplicate');
		expect(receipt(await post(h.url, form(payment({ Status: 'FAIL', TrsId: 'F' }))))).toBe(
			'ignored',
		);
		const forged = await post(h.url, form(payment({}, 'forger')));
		expect([forged.status, receipt(forged)]).toEqual([401, 'rejected']);
		const garbage = await post(h.url, 'a=1&a=2');
		expect([garbage.status, receipt(garbage)]).toEqual([400, 'rejected']);
		const r = await harness({ event: 'success', redirectUrl: 'https://shop.example/thanks' });
		const redirected = await post(r.url, form(redirect()));
		expect([redirected.status, receipt(redirected)]).toEqual([303, 'accepted']);
	});

	it('ignores a call a relay forwarded as another event (success and fail redirects look alike)', async () => {
		const h = await harness({ event: 'success' });
		const other = await post(h.url, form(redirect()), FORM, { 'X-PayPalych-Event': 'fail' });
		expect([other.status, other.text, receipt(other)]).toEqual([200, 'OK', 'ignored']);
		const own = await post(h.url, form(redirect()), FORM, { 'X-PayPalych-Event': 'success' });
		expect([own.status, receipt(own)]).toEqual([200, 'accepted']);
		const p = await harness({ event: 'payout' });
		const payment1 = await post(p.url, form(payment()), FORM, { 'X-PayPalych-Event': 'payment' });
		expect([payment1.status, receipt(payment1)]).toEqual([200, 'ignored']);
		expect(h.calls.map((c) => c.started)).toEqual([false, true]);
		expect(p.calls.map((c) => c.started)).toEqual([false]);
	});
});

describe('payout postback', () => {
	it('accepts a valid payout postback signed over Amount:TrsId', async () => {
		const h = await harness({ event: 'payout' });
		const fields = payout();
		expect(await post(h.url, form(fields))).toMatchObject({ status: 200, text: 'OK' });
		const item = h.executions[0][0][0].json;
		const unverified = item.unverified as Record<string, string>;
		for (const [name, value] of Object.entries(fields)) {
			if (CONFIRMABLE.payout.includes(name)) expect(item[name]).toBe(value);
			else expect(unverified[name]).toBe(value);
		}
		expect(item).toMatchObject({
			event: 'payout',
			verified: true,
			AmountNumber: 1000,
			unverified: { Commission: '15.00', IsAuto: 'false' },
		});
		expect(item).not.toHaveProperty('CommissionNumber');
	});

	it('refuses a payout signed over the fields in the wrong order, a forged one, a re-formatted one and one without Amount', async () => {
		const h = await harness({ event: 'payout' });
		expect(
			(await post(h.url, form(payout({ SignatureValue: md5(`PO-1:1000.00:${TOKEN}`) })))).status,
		).toBe(401);
		expect(await post(h.url, form(payout({}, 'nope')))).toMatchObject({ status: 401 });
		const noAmount = payout();
		delete noAmount.Amount;
		expect((await post(h.url, form(noAmount))).status).toBe(401);
		expect(
			(
				await post(
					h.url,
					form(payout({ Amount: '1000', SignatureValue: md5(`1000.00:PO-1:${TOKEN}`) })),
				)
			).status,
		).toBe(401);
		expect(h.executions).toHaveLength(0);
	});

	it('accepts a lower-case signature and a JSON body with a boolean', async () => {
		const h = await harness({ event: 'payout' });
		const fields = payout({ TrsId: 'PO-json' });
		const json = JSON.stringify({
			...fields,
			IsAuto: true,
			SignatureValue: fields.SignatureValue.toLowerCase(),
		});
		expect((await post(h.url, json, 'application/json')).status).toBe(200);
		expect(h.executions[0][0][0].json).toMatchObject({
			unverified: { IsAuto: 'true' },
			TrsId: 'PO-json',
		});
	});

	it('deduplicates and filters payout statuses', async () => {
		const h = await harness({ event: 'payout', payoutStatuses: ['DECLINED', 'FAIL'] });
		expect((await post(h.url, form(payout({ Status: 'SUCCESS' })))).status).toBe(200);
		expect((await post(h.url, form(payout({ Status: 'DECLINED' })))).status).toBe(200);
		expect((await post(h.url, form(payout({ Status: 'DECLINED' })))).status).toBe(200);
		expect(h.calls.map((c) => c.started)).toEqual([false, true, false]);
	});

	it('refuses an oversized payout body with 400', async () => {
		const h = await harness({ event: 'payout' });
		const r = await post(
			h.url,
			JSON.stringify({ ...payout(), Pad: 'p'.repeat(MAX_BODY_BYTES) }),
			'application/json',
		);
		expect(r.status).toBe(400);
		expect(h.executions).toHaveLength(0);
	});
});

describe("the item of every event: unsigned fields never sit under the trigger's names", () => {
	// What a sender adds to a body: the trigger's own names and the names a workflow reads as verdicts.
	const forged = {
		paid: 'true',
		confirmed: 'true',
		payment: 'forged',
		payout: 'forged',
		status: 'SUCCESS',
		orderConfirmed: 'true',
		eventKey: 'payment-forged-SUCCESS',
		event: 'payment',
		verified: 'yes',
		unverified: 'none',
		paymentProof: 'true',
		customerSentTo: 'https://evil.example',
		receivedAt: '2000-01-01',
		OutSumNumber: '999999',
	};
	for (const event of ['payment', 'payout', 'success', 'fail'] as const) {
		it(`${event}: forged verdict fields go under unverified, the trigger's values stay`, async () => {
			const h = await harness({ event, paymentStatuses: [], payoutStatuses: [] });
			const body =
				event === 'payment'
					? payment({ ...forged, Status: 'UNDERPAID' })
					: event === 'payout'
						? payout({ ...forged, Status: 'FAIL' })
						: redirect(forged);
			const r = await post(h.url, form(body));
			expect(r.status).toBeLessThan(400);
			expect(h.executions).toHaveLength(1);
			const item = h.executions[0][0][0].json as Record<string, unknown>;
			expect(item.unverified).toMatchObject(forged);
			expect(item.event).toBe(event);
			expect(item.verified).toBe(true);
			expect(typeof item.receivedAt).toBe('string');
			expect(item.receivedAt).not.toBe(forged.receivedAt);
			for (const name of ['confirmed', 'payment', 'payout', 'orderConfirmed'])
				expect(item[name], name).not.toBe((forged as Record<string, string>)[name]);
			if (event === 'payment') {
				expect(item).toMatchObject({ paid: false, status: 'UNDERPAID', confirmed: false });
				expect(item.eventKey).toBe('payment-PAY-7f3a-UNDERPAID');
			} else if (event === 'payout') {
				expect(item).toMatchObject({ status: 'FAIL', confirmed: false });
				expect(item).not.toHaveProperty('paid');
				expect(item.eventKey).toBe('payout-PO-1-FAIL');
			} else {
				// A redirect proves nothing: no paid, status or eventKey at all, whatever was sent.
				for (const name of ['paid', 'status', 'eventKey', 'confirmed', 'payment'])
					expect(item, name).not.toHaveProperty(name);
				expect(item).toMatchObject({ paymentProof: false, customerSentTo: 'plain page' });
				expect(item.OutSumNumber).toBe(18.5);
			}
		});
	}
});

describe('success and fail redirects', () => {
	it('sends the customer on with 303 to the page set, and starts the workflow', async () => {
		const h = await harness({
			event: 'success',
			redirectUrl: 'https://shop.example.com/thanks?from=pal',
		});
		const fields = redirect();
		const r = await post(h.url, form(fields));
		expect(r.status).toBe(303);
		expect(r.headers.get('location')).toBe('https://shop.example.com/thanks?from=pal');
		expect(h.executions).toHaveLength(1);
		const item = h.executions[0][0][0].json;
		const { custom, CurrencyIn, ...signed } = fields;
		expect(item).toMatchObject({
			...signed,
			unverified: { custom, CurrencyIn },
			event: 'success',
			verified: true,
			paymentProof: false,
			customerSentTo: 'https://shop.example.com/thanks?from=pal',
			OutSumNumber: 18.5,
		});
		// A redirect proves no payment: the item never claims one.
		expect(item).not.toHaveProperty('paid');
	});

	it('shows a plain page with every received value escaped when no page is set', async () => {
		const h = await harness({ event: 'success' });
		const r = await post(h.url, form(redirect({ InvId: '<script>alert(1)</script>' })));
		expect(r.status).toBe(200);
		expect(r.headers.get('content-type')).toMatch(/^text\/html/);
		expect(r.text).toContain('Payment successful');
		expect(r.text).not.toContain('<script>');
		expect(r.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
		expect(h.executions).toHaveLength(1);
	});

	it('fail redirect: page says the payment failed; a JavaScript URL is never used as the target', async () => {
		const h = await harness({ event: 'fail', redirectUrl: 'javascript:alert(1)' });
		const r = await post(h.url, form(redirect()));
		expect(r.status).toBe(200);
		expect(r.text).toContain('Payment failed');
		expect(r.headers.get('location')).toBeNull();
		expect(h.executions[0][0][0].json).toMatchObject({
			event: 'fail',
			paymentProof: false,
			customerSentTo: 'plain page',
		});
		expect(h.executions[0][0][0].json).not.toHaveProperty('paid');
	});

	it('refuses a forged, re-formatted or incomplete redirect with 401 and starts nothing', async () => {
		const h = await harness({ event: 'fail', redirectUrl: 'https://shop.example.com/retry' });
		expect((await post(h.url, form(redirect({}, 'forger')))).status).toBe(401);
		expect(
			(
				await post(
					h.url,
					form(redirect({ OutSum: '18.5', SignatureValue: md5(`18.50:order-1001:${TOKEN}`) })),
				)
			).status,
		).toBe(401);
		const noInv = redirect();
		delete noInv.InvId;
		expect((await post(h.url, form(noInv))).status).toBe(401);
		expect(h.executions).toHaveLength(0);
	});

	it('does not deduplicate redirects (a customer may come back twice) and accepts lower case', async () => {
		const h = await harness({ event: 'success' });
		const fields = redirect();
		await post(h.url, form(fields));
		await post(h.url, form({ ...fields, SignatureValue: fields.SignatureValue.toLowerCase() }));
		expect(h.calls.map((c) => [c.status, c.started])).toEqual([
			[200, true],
			[200, true],
		]);
	});
});

describe('lifecycle and memory', () => {
	const options = {
		nodeType: new PayPalychTrigger(),
		typeName: TYPE,
		credentialType: 'payPalychApi',
		credentials: { apiToken: TOKEN, baseUrl: 'https://pal24.pro' },
	};

	it.each([
		['payment', 'Result URL'],
		['payout', 'payout webhook URL under Webhooks'],
		['success', 'Success URL'],
		['fail', 'Fail URL'],
		['refund', 'Refund URL'],
		['chargeback', 'Chargeback URL'],
	])(
		'%s: registers nothing at the service, succeeds and says where to paste the production URL',
		async (event, where) => {
			const exists = await callWebhookMethod({ ...options, parameters: { event } }, 'checkExists');
			expect(exists.result).toBe(false);
			const created = await callWebhookMethod({ ...options, parameters: { event } }, 'create');
			expect(created.result).toBe(true);
			const message = created.logs.map((l) => l.message).join('\n');
			expect(message).toContain(created.productionUrl);
			expect(message).toContain(where);
			expect(message).toContain('cannot register');
			const deleted = await callWebhookMethod({ ...options, parameters: { event } }, 'delete');
			expect(deleted.result).toBe(true);
		},
	);

	it('a payment trigger with Also Accept says to paste its URL as the Refund and Chargeback URL too', async () => {
		const parameters = { event: 'payment', alsoAccept: ['refund', 'chargeback'] };
		const created = await callWebhookMethod({ ...options, parameters }, 'create');
		const message = created.logs.map((l) => l.message).join('\n');
		expect(message).toContain('Result URL');
		expect(message).toContain('and as the Refund URL and as the Chargeback URL');
	});

	it('the memory keeps the newest keys in order and drops the oldest', () => {
		const data: IDataObject = {};
		const seen = new SeenPostbacks(data, 'wf-unit:Trigger', 3);
		for (const k of ['a', 'b', 'c', 'd']) seen.remember(k);
		expect(seen.has('a')).toBe(false);
		expect(['b', 'c', 'd'].map((k) => seen.has(k))).toEqual([true, true, true]);
		seen.remember('b');
		seen.remember('e');
		expect(data[SEEN_HASHES_FIELD]).toBe(['c', 'd', 'e'].map(hashOf).join(''));
		expect(seen.has('b')).toBe(false);
	});

	it('the node is a trigger that is not usable as a tool and offers the six events', () => {
		const d = new PayPalychTrigger().description;
		expect(d.name).toBe('payPalychTrigger');
		expect(d.inputs).toEqual([]);
		expect(d.usableAsTool).not.toBe(true);
		expect(d.webhooks).toEqual([
			expect.objectContaining({ httpMethod: 'POST', responseMode: 'onReceived' }),
		]);
		const event = d.properties.find((p) => p.name === 'event');
		// In the order n8n's lint asks for (alphabetical by name).
		expect(event?.options?.map((o) => (o as { value: string }).value)).toEqual([
			'chargeback',
			'fail',
			'payment',
			'payout',
			'refund',
			'success',
		]);
	});
});
