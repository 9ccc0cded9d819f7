// The trigger and payment postbacks: reading, verifying, filtering, the duplicate memory.
// Payouts, redirects, receipts, the item's fields and the lifecycle: trigger-events.test.ts.
import type { IDataObject } from 'n8n-workflow';
import { describe, expect, it } from 'vitest';
import { CONFIRMABLE_FIELDS as CONFIRMABLE, postbackKey } from '../../dist/nodes/shared/index.js';
import {
	SEEN_HASHES_FIELD,
	SEEN_KEYS_FIELD,
	SEEN_KEYS_LIMIT,
	resetProcessMemory,
} from '../../dist/nodes/PayPalychTrigger/memory.js';
import { MAX_BODY_BYTES } from '../../dist/nodes/PayPalychTrigger/request.js';
import {
	TOKEN,
	form,
	harness,
	hashOf,
	md5,
	open,
	payment,
	post,
	useTriggerHarness,
} from './postbacks.ts';

useTriggerHarness();

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
