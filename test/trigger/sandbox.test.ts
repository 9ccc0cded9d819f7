/**
 * The trigger fed by the sandbox: the postbacks and redirects are signed and sent by the sandbox
 * (an independent implementation of the service), not by this test.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../sandbox/src/index.ts';
import { PROFILES } from '../helpers/sandbox.ts';
import { CONFIRMABLE_FIELDS, TOP_LEVEL_FIELDS } from '../../dist/nodes/shared/index.js';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';
import { postForm, startTrigger } from '../helpers/trigger-harness.ts';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex').toUpperCase();

const TOKEN = '91|sandboxTriggerToken0123456789abcdefGHIJ';
let sb: Sandbox;
const triggers: Record<'payment' | 'payout' | 'success' | 'fail', WebhookHarness> = {} as never;

async function json(response: Response): Promise<any> {
	const text = await response.text();
	try {
		return JSON.parse(text);
	} catch {
		throw new Error(`not JSON (HTTP ${response.status}): ${text.slice(0, 200)}`);
	}
}

async function control(method: string, path: string, body?: unknown) {
	const init: RequestInit = { method };
	if (body !== undefined) {
		init.headers = { 'content-type': 'application/json' };
		init.body = JSON.stringify(body);
	}
	const response = await fetch(`${sb.url}/_sandbox/${path}`, init);
	const data = await json(response);
	if (!response.ok)
		throw new Error(`control ${method} ${path}: HTTP ${response.status} ${JSON.stringify(data)}`);
	return data;
}

async function api(path: string, params: Record<string, string>) {
	const response = await fetch(`${sb.url}/api/v1/${path}`, {
		method: 'POST',
		headers: { authorization: `Bearer ${sb.token}`, accept: 'application/json' },
		body: new URLSearchParams(params),
	});
	const data = await json(response);
	if (!response.ok) throw new Error(`api ${path}: HTTP ${response.status} ${JSON.stringify(data)}`);
	return data;
}

/** Waits until the sandbox logged a finished delivery for trsId (it delivers in the background). */
async function deliveries(kind: 'payment' | 'payout', trsId: string, count = 1) {
	for (let i = 0; i < 500; i++) {
		const { data } = await control(
			'GET',
			`deliveries?kind=${kind}&trsId=${encodeURIComponent(trsId)}`,
		);
		if (data.length >= count)
			return data as Array<{
				status: number | null;
				response: string | null;
				body: Record<string, string>;
				attempt: number;
				contentType: string;
			}>;
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
	throw new Error(`no ${kind} delivery for ${trsId}`);
}

describe.each(PROFILES)('sandbox profile %s', (profile) => {
	beforeAll(async () => {
		// live: live extras show the bill's order_id, so the trigger confirms InvId (Order Check's
		// default). spec: the service shows none (Order Check: Bill ID Only) and posts JSON.
		sb = await startSandbox({
			port: 0,
			token: TOKEN,
			timeFactor: 0.001,
			liveExtras: true,
			profile,
		});
		const credentials = { apiToken: sb.token, baseUrl: sb.url };
		for (const event of ['payment', 'payout', 'success', 'fail'] as const) {
			triggers[event] = await startTrigger(
				event === 'success'
					? { event, redirectUrl: 'https://shop.example.com/thanks' }
					: event === 'payment' && profile === 'spec'
						? { event, orderCheck: 'billId' }
						: { event },
				credentials,
			);
		}
		await control('PATCH', `shops/${sb.shopId}`, {
			resultUrl: triggers.payment.url,
			successUrl: triggers.success.url,
			failUrl: triggers.fail.url,
		});
		await control('PATCH', `merchants/${sb.merchantId}`, { payoutWebhookUrl: triggers.payout.url });
	});

	afterAll(async () => {
		await Promise.all(Object.values(triggers).map((t) => t?.close()));
		await sb?.close();
	});

	describe('postbacks produced by the sandbox', () => {
		it('a paid bill: the sandbox postback is accepted at the first attempt and starts one execution with its fields', async () => {
			const bill = await api('bill/create', {
				amount: '18.50',
				shop_id: sb.shopId,
				order_id: 'sbx-order-1',
				custom: 'crm=42&x=y',
			});
			const paid = await control('POST', `bills/${bill.bill_id}/pay`, { outcome: 'full' });
			const attempts = await deliveries('payment', paid.postback.TrsId);
			expect(attempts[0]).toMatchObject({
				status: 200,
				response: 'OK',
				attempt: 1,
				contentType: profile === 'spec' ? 'application/json' : 'application/x-www-form-urlencoded',
			});
			expect(triggers.payment.executions).toHaveLength(1);
			const item = triggers.payment.executions[0][0][0].json;
			// spec (Bill ID Only): InvId and OutSum are not bound to the order, so they are the sender's
			// word (under unverified) and the service's bill id, order ID and amount are at the top.
			const unbound = profile === 'spec' ? ['InvId', 'OutSum'] : [];
			for (const [name, value] of Object.entries(paid.postback as Record<string, string>))
				expect(
					CONFIRMABLE_FIELDS.payment.includes(name) && !unbound.includes(name)
						? item[name]
						: (item.unverified as Record<string, string>)[name],
				).toBe(value);
			expect(item).toMatchObject({
				event: 'payment',
				verified: true,
				paid: true,
				...(profile === 'live' ? { InvId: 'sbx-order-1' } : {}),
				unverified: { custom: 'crm=42&x=y' },
				Status: 'SUCCESS',
				orderConfirmed: profile === 'live',
				billId: bill.bill_id,
				amount: paid.postback.OutSum,
			});
			if (profile === 'live') expect(item.OutSumNumber).toBe(Number(paid.postback.OutSum));
			else expect(item).not.toHaveProperty('InvId');

			// The customer's browser then posts the sandbox's redirect fields to the Success URL.
			expect(paid.redirect.url).toBe(triggers.success.url);
			const browser = await postForm(paid.redirect.url, paid.redirect.fields);
			expect(browser).toMatchObject({ status: 303, location: 'https://shop.example.com/thanks' });
			expect(triggers.success.executions).toHaveLength(1);
			const redirected = triggers.success.executions[0][0][0].json;
			// The redirect's signed fields at the top, the rest (custom, CurrencyIn) under unverified.
			for (const [name, value] of Object.entries(paid.redirect.fields as Record<string, string>))
				expect(
					TOP_LEVEL_FIELDS.success.includes(name)
						? redirected[name]
						: (redirected.unverified as Record<string, string>)[name],
				).toBe(value);
			expect(redirected).toMatchObject({
				event: 'success',
				verified: true,
				unverified: { custom: 'crm=42&x=y' },
			});
			expect(redirected).not.toHaveProperty('custom');
		});

		it('a replayed sandbox postback (a retry) answers OK and starts nothing', async () => {
			const bill = await api('bill/create', {
				amount: '250.00',
				shop_id: sb.shopId,
				order_id: 'sbx-order-2',
			});
			const paid = await control('POST', `bills/${bill.bill_id}/pay`, { outcome: 'over' });
			const [first] = await deliveries('payment', paid.postback.TrsId);
			expect(first.status).toBe(200);
			const before = triggers.payment.executions.length;
			expect(triggers.payment.executions.at(-1)?.[0][0].json).toMatchObject({
				Status: 'OVERPAID',
				paid: true,
			});
			const replay = await postForm(triggers.payment.url, first.body);
			expect(replay).toMatchObject({ status: 200, text: 'OK' });
			expect(triggers.payment.executions).toHaveLength(before);
		});

		it('a failed payment: FAIL postback accepted with paid false, the fail redirect shows the failure page', async () => {
			const bill = await api('bill/create', {
				amount: '99.99',
				shop_id: sb.shopId,
				order_id: 'sbx-order-3',
			});
			const failed = await control('POST', `bills/${bill.bill_id}/pay`, { outcome: 'fail' });
			const [attempt] = await deliveries('payment', failed.postback.TrsId);
			expect(attempt.status).toBe(200);
			expect(triggers.payment.executions.at(-1)?.[0][0].json).toMatchObject({
				TrsId: failed.postback.TrsId,
				Status: 'FAIL',
				paid: false,
			});
			expect(failed.redirect.url).toBe(triggers.fail.url);
			const browser = await postForm(failed.redirect.url, failed.redirect.fields);
			expect(browser.status).toBe(200);
			expect(browser.text).toContain('Payment failed');
			expect(triggers.fail.executions.at(-1)?.[0][0].json).toMatchObject({
				event: 'fail',
				paymentProof: false,
				InvId: 'sbx-order-3',
			});
		});

		it('a payout moved to SUCCESS: the sandbox payout postback is accepted and starts one execution', async () => {
			const created = await api('payout/personal/create', {
				amount: '120.00',
				payout_account_id: sb.payoutAccountId,
				order_id: 'sbx-payout-1',
			});
			const id = created.data[0].id as string;
			await control('POST', `payouts/${id}/advance`, { status: 'SUCCESS' });
			const [attempt] = await deliveries('payout', id);
			expect(attempt).toMatchObject({ status: 200, response: 'OK' });
			const item = triggers.payout.executions.find((e) => e[0][0].json.TrsId === id)?.[0][0].json;
			expect(item).toBeDefined();
			for (const [name, value] of Object.entries(attempt.body))
				expect(
					CONFIRMABLE_FIELDS.payout.includes(name)
						? item![name]
						: (item!.unverified as Record<string, string>)[name],
				).toBe(value);
			expect(item).toMatchObject({ event: 'payout', verified: true, Status: 'SUCCESS' });
			expect(item!.AmountNumber).toBe(Number(attempt.body.Amount));
		});

		it('a payout moved to ERROR: live posts FAIL, confirmed by the ERROR record (status ERROR, Status FAIL); spec posts none', async () => {
			const created = await api('payout/personal/create', {
				amount: '130.00',
				payout_account_id: sb.payoutAccountId,
				order_id: 'sbx-payout-error',
			});
			const id = created.data[0].id as string;
			await control('POST', `payouts/${id}/advance`, { status: 'PROCESS' });
			await control('POST', `payouts/${id}/advance`, { status: 'ERROR', errorCode: 7 });
			if (profile === 'spec') {
				// A marker payout's postback arrives; none for the ERROR one.
				const marker = await api('payout/personal/create', {
					amount: '1.00',
					payout_account_id: sb.payoutAccountId,
				});
				await control('POST', `payouts/${marker.data[0].id}/advance`, { status: 'SUCCESS' });
				await deliveries('payout', marker.data[0].id as string);
				expect((await control('GET', `deliveries?kind=payout&trsId=${id}`)).data).toEqual([]);
				return;
			}
			const [attempt] = await deliveries('payout', id);
			expect(attempt).toMatchObject({ status: 200, response: 'OK' });
			expect(attempt.body.Status).toBe('FAIL');
			const item = triggers.payout.executions.find((e) => e[0][0].json.TrsId === id)?.[0][0].json;
			expect(item).toMatchObject({
				event: 'payout',
				confirmed: true,
				Status: 'FAIL',
				status: 'ERROR',
				eventKey: `payout-${id}-ERROR`,
				payout: { id, status: 'ERROR', error_code: 7, order_id: 'sbx-payout-error' },
			});
		});

		it('a payout sent back to MODERATING: a postback ahead of the record asks for a retry (503) and starts nothing', async () => {
			const created = await api('payout/personal/create', {
				amount: '140.00',
				payout_account_id: sb.payoutAccountId,
			});
			const id = created.data[0].id as string;
			await control('POST', `payouts/${id}/advance`, { status: 'PROCESS' });
			await control('POST', `payouts/${id}/advance`, { status: 'MODERATING' });
			const amount = '152.80';
			const before = triggers.payout.executions.length;
			const answer = await postForm(triggers.payout.url, {
				TrsId: id,
				Amount: amount,
				Status: 'SUCCESS',
				SignatureValue: md5(`${amount}:${id}:${TOKEN}`),
			});
			expect(answer).toMatchObject({ status: 503, receipt: 'retry' });
			expect(triggers.payout.executions).toHaveLength(before);
		});

		it('a crypto payout in USDT, the recipient paying the fee (live): its postback (Currency USDT, AccountType CRYPTO) is confirmed', async () => {
			const params = {
				amount: '100.00',
				currency: 'USDT',
				account_type: 'crypto',
				account_identifier: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
				account_network: 'TRX',
				recipient_pays_commission: '1',
				order_id: 'sbx-crypto-1',
			};
			if (profile === 'spec') {
				// The document's service takes no crypto payout.
				await expect(api('payout/regular/create', params)).rejects.toThrow(/HTTP 422/);
				return;
			}
			const created = await api('payout/regular/create', params);
			const id = created.data[0].id as string;
			await control('POST', `payouts/${id}/advance`, { status: 'SUCCESS' });
			const [attempt] = await deliveries('payout', id);
			expect(attempt).toMatchObject({ status: 200, response: 'OK' });
			expect(attempt.body).toMatchObject({
				Amount: '100.00',
				Currency: 'USDT',
				AccountType: 'CRYPTO',
				CommissionApplyType: 'recipient',
			});
			const item = triggers.payout.executions.find((e) => e[0][0].json.TrsId === id)?.[0][0].json;
			expect(item).toMatchObject({
				event: 'payout',
				confirmed: true,
				Status: 'SUCCESS',
				Amount: '100.00',
				payout: { id, currency: 'USDT', account_currency: 'RUB', amount: 100 },
				unverified: { Currency: 'USDT', AccountType: 'CRYPTO' },
			});
		});

		it('postbacks signed with another token are refused with 401 at every attempt and start nothing', async () => {
			const other = await control('POST', 'merchants', {});
			await control('PATCH', `shops/${other.shopId}`, { resultUrl: triggers.payment.url });
			const before = triggers.payment.executions.length;
			const response = await fetch(`${sb.url}/api/v1/bill/create`, {
				method: 'POST',
				headers: { authorization: `Bearer ${other.token}`, accept: 'application/json' },
				body: new URLSearchParams({ amount: '10.00', shop_id: other.shopId, order_id: 'forged-1' }),
			});
			const bill = await json(response);
			const paid = await control('POST', `bills/${bill.bill_id}/pay`, { outcome: 'full' });
			// The first two attempts (the second after the first scaled retry delay) are both refused.
			const attempts = await deliveries('payment', paid.postback.TrsId, 2);
			expect(attempts.slice(0, 2).map((a) => a.status)).toEqual([401, 401]);
			expect(triggers.payment.executions).toHaveLength(before);
		});
	});
});
