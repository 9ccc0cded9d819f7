/**
 * What a signature alone cannot tell, at a trigger that takes postbacks on their signature
 * (Confirm With PayPalych API off): a refund replayed without its Status, a refund re-cut as a
 * chargeback by moving its Amount and Currency into BillId, a customer's redirect signature
 * passed off as a chargeback's where an order ID holds the separator, and a P2P deal (signed like
 * a payout) taken for a payout or a payment. Each case is numbered; each fails with its rule
 * switched off (nodes/shared: POSTBACK_RULES' required Status, the separator and amount-shape
 * checks in postback.ts, postbackKindOf's P2P deal in money-back.ts).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetProcessMemory } from '../../dist/nodes/PayPalychTrigger/memory.js';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';
import { postForm, startTrigger } from '../helpers/trigger-harness.ts';

type Fields = Record<string, string>;

const TOKEN = '72|oBCB7Z3SmUm1gvkpEdRcSR2q1ERHpG4vD3DNBmuT';
const md5 = (s: string) => createHash('md5').update(s).digest('hex').toUpperCase();
const credentials = { apiToken: TOKEN, baseUrl: 'http://127.0.0.1:9' };
const off = { confirmWithApi: false };

/** The service's rules, written out by hand: upper-case MD5 of the signed values and the token. */
const sign = (...values: string[]) => md5([...values, TOKEN].join(':'));

const refund: Fields = {
	Id: 'R7001',
	Amount: '1500.00',
	Currency: 'RUB',
	Status: 'SUCCESS',
	InvId: 'order-7001',
	BillId: 'LyK8o5Qw3G',
	PaymentId: 'NW1rXo6J8z',
};
refund.SignatureValue = sign(
	refund.Amount,
	refund.Currency,
	refund.BillId,
	refund.PaymentId,
	refund.Id,
);

describe('money going back, taken on its signature alone', () => {
	const t: Record<'refund' | 'chargeback' | 'all' | 'payout' | 'payment', WebhookHarness> =
		{} as never;
	const itemsOf = (h: WebhookHarness) => h.executions.map((run) => run[0][0].json);

	beforeAll(async () => {
		resetProcessMemory();
		t.refund = await startTrigger({ event: 'refund', ...off }, credentials);
		t.chargeback = await startTrigger({ event: 'chargeback', ...off }, credentials);
		t.all = await startTrigger(
			{ event: 'payment', alsoAccept: ['refund', 'chargeback'], ...off },
			credentials,
		);
		t.payout = await startTrigger({ event: 'payout', ...off }, credentials);
		t.payment = await startTrigger({ event: 'payment', ...off }, credentials);
	});

	afterAll(async () => {
		await Promise.all(Object.values(t).map((h) => h.close()));
	});

	it('M-1: a genuine refund replayed without its Status (or with an empty one) is refused and starts nothing', async () => {
		expect(await postForm(t.refund.url, refund)).toMatchObject({
			status: 200,
			receipt: 'accepted',
		});
		const { Status: _status, ...noStatus } = refund;
		for (const replay of [noStatus, { ...refund, Status: '' }, { ...refund, Status: '  ' }]) {
			const answer = await postForm(t.refund.url, replay);
			expect(answer, JSON.stringify(replay)).toMatchObject({ status: 401, receipt: 'rejected' });
			expect(answer.text).toMatch(/Status is (missing|empty)/);
		}
		expect(itemsOf(t.refund)).toHaveLength(1);
		// Another spelling of the same Status is the same refund.
		expect(await postForm(t.refund.url, { ...refund, Status: ' success' })).toMatchObject({
			receipt: 'duplicate',
		});
		expect(itemsOf(t.refund)).toHaveLength(1);
	});

	it('M-2: a genuine refund re-cut as a chargeback (Amount:Currency:BillId sent as its BillId) is refused before any signature check', async () => {
		const recut: Fields = {
			Id: refund.Id,
			Status: 'SUCCESS',
			InvId: refund.InvId,
			BillId: `${refund.Amount}:${refund.Currency}:${refund.BillId}`,
			PaymentId: refund.PaymentId,
			SignatureValue: refund.SignatureValue,
		};
		for (const h of [t.chargeback, t.all]) {
			const answer = await postForm(h.url, recut);
			expect(answer).toMatchObject({ status: 401, receipt: 'rejected' });
			expect(answer.text).toContain('BillId holds ":"');
			expect(itemsOf(h).filter((item) => item.event === 'chargeback')).toHaveLength(0);
		}
	});

	it("M-3: a customer's redirect signature, where the order ID holds the separator, is not a chargeback's", async () => {
		// The shop's order ID is "NW1rXo6J8z:CB77": the redirect of a 100.00 payment signs
		// 100.00:NW1rXo6J8z:CB77, which is a chargeback's BillId:PaymentId:Id.
		const redirectSignature = sign('100.00', 'NW1rXo6J8z:CB77');
		const posing: Fields = {
			Id: 'CB77',
			Status: 'SUCCESS',
			InvId: 'x',
			BillId: '100.00',
			PaymentId: 'NW1rXo6J8z',
			SignatureValue: redirectSignature,
		};
		for (const h of [t.chargeback, t.all]) {
			const answer = await postForm(h.url, posing);
			expect(answer).toMatchObject({ status: 401, receipt: 'rejected' });
			expect(answer.text).toContain('BillId has the shape of an amount');
		}
		expect(itemsOf(t.chargeback)).toHaveLength(0);
		// A genuine chargeback of the same payment verifies and starts once.
		const genuine: Fields = { ...posing, BillId: 'LyK8o5Qw3G' };
		genuine.SignatureValue = sign(genuine.BillId, genuine.PaymentId, genuine.Id);
		expect(await postForm(t.chargeback.url, genuine)).toMatchObject({ receipt: 'accepted' });
		expect(itemsOf(t.chargeback)).toMatchObject([{ event: 'chargeback', chargedBack: true }]);
	});

	it('M-4: a chargeback reversed later (another final status) is news; the same status in another spelling is not', async () => {
		const cb: Fields = {
			Id: 'CB88',
			Status: 'SUCCESS',
			InvId: 'order-88',
			BillId: 'B88xYz',
			PaymentId: 'P88xYz',
		};
		cb.SignatureValue = sign(cb.BillId, cb.PaymentId, cb.Id);
		const before = itemsOf(t.chargeback).length;
		expect(await postForm(t.chargeback.url, cb)).toMatchObject({ receipt: 'accepted' });
		expect(await postForm(t.chargeback.url, { ...cb, Status: 'Success ' })).toMatchObject({
			receipt: 'duplicate',
		});
		expect(await postForm(t.chargeback.url, { ...cb, Status: 'FAIL' })).toMatchObject({
			receipt: 'accepted',
		});
		expect(itemsOf(t.chargeback).slice(before)).toMatchObject([
			{ chargebackStatus: 'SUCCESS', chargedBack: true },
			{ chargebackStatus: 'FAIL', chargedBack: false },
		]);
	});
});

describe('P2P deals, signed like a payout, posted to the Result URL', () => {
	const deal: Fields = {
		TrsId: 'DEAL-5001',
		InvId: 'deal-order-5001',
		Status: 'SUCCESS',
		Amount: '5000.00',
		Currency: 'RUB',
		BalanceAmount: '4900.00',
		BalanceCurrency: 'RUB',
		'Payment[0][id]': 'NW1rXo6J8z',
		'Payment[0][amount]': '5000.00',
		'Payout[0][id]': 'PO-1',
		'Payout[0][amount]': '4900.00',
	};
	deal.SignatureValue = sign(deal.Amount, deal.TrsId);
	const hs: WebhookHarness[] = [];

	afterAll(async () => {
		await Promise.all(hs.map((h) => h.close()));
	});

	it('D-1: at a Payout trigger with confirmation off and at a Payment trigger, a deal starts nothing and is answered 200 so that it is not retried; the log says what it was', async () => {
		resetProcessMemory();
		for (const parameters of [
			{ event: 'payout', ...off },
			{ event: 'payout' },
			{ event: 'payment', ...off },
			{ event: 'payment', alsoAccept: ['refund', 'chargeback'] },
		]) {
			const h = await startTrigger(parameters, credentials);
			hs.push(h);
			const answer = await postForm(h.url, deal);
			expect(answer, JSON.stringify(parameters)).toMatchObject({ status: 200, receipt: 'ignored' });
			// Without its lists too: InvId and none of a payout's own fields.
			const bare: Fields = Object.fromEntries(
				Object.entries(deal).filter(([name]) => !/^Pay(ment|out)\[/.test(name)),
			);
			expect(await postForm(h.url, bare)).toMatchObject({ status: 200, receipt: 'ignored' });
			expect(h.executions).toHaveLength(0);
			expect(
				h.logs.some((entry) => entry.level === 'info' && entry.message.includes('P2P deal')),
			).toBe(true);
		}
	});

	it('D-2: a forged deal gets 401; a genuine payout postback still starts its workflow', async () => {
		const h = await startTrigger({ event: 'payout', ...off }, credentials);
		hs.push(h);
		expect(await postForm(h.url, { ...deal, SignatureValue: md5('forged') })).toMatchObject({
			status: 401,
			receipt: 'rejected',
		});
		const payout: Fields = {
			TrsId: 'PO-77',
			Amount: '300.00',
			IsAuto: 'false',
			Status: 'SUCCESS',
			Currency: 'RUB',
			Commission: '3.00',
			AccountType: 'BANK_CARD',
			AccountNumber: '220000******0000',
			BalanceAmount: '303.00',
			BalanceCommission: '3.00',
			BalanceCurrency: 'RUB',
			CommissionApplyType: 'sender',
		};
		payout.SignatureValue = sign(payout.Amount, payout.TrsId);
		expect(await postForm(h.url, payout)).toMatchObject({ status: 200, receipt: 'accepted' });
		expect(h.executions).toHaveLength(1);
	});
});
