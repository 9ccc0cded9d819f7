// What the public record adds to payouts, on both profiles: crypto wallets (with their network)
// and Steam logins on payout/regular/create, the balance a payout is taken from
// (account_currency) and who pays the fee (recipient_pays_commission); the payout record's and
// postback's fields that follow from them; MODERATING and ERROR reached by the control API.
// `live` takes them all; `spec` answers what the interface document promises (card and SBP in RUB,
// unknown fields ignored).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, listener, md5, type Harness, type Listener } from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

let h: Harness;
let hook: Listener;
beforeAll(async () => {
	h = await harness();
	hook = await listener();
});
afterAll(async () => {
	await h.close();
	await hook.close();
});

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const ETH = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const cents = (text: string) => Math.round(Number(text) * 100);

/** A merchant of `profile` whose payout postbacks go to the hook, under its own path. */
async function merchant(profile: 'live' | 'spec', fields: Record<string, unknown> = {}) {
	const m = await h.merchant({ profile, ...fields });
	await h.control('PATCH', `merchants/${m.merchantId}`, {
		payoutWebhookUrl: `${hook.url}/${m.merchantId}`,
	});
	return m;
}

/** The balance in `currency` as cents (available, locked), from merchant/balance. */
async function balance(token: string, currency: string) {
	const answer = await h.api('GET', 'merchant/balance', {}, token);
	const entry = answer.body.balances.find((b: { currency: string }) => b.currency === currency);
	return { available: cents(entry.balance_available), locked: cents(entry.balance_locked) };
}

/** The payout postbacks the merchant's webhook got, as sent (form fields in live). */
const postbacksOf = (merchantId: string) =>
	hook.received.filter((r) => r.path === `/${merchantId}`).map((r) => r.fields);

const crypto = (over: Record<string, string> = {}) => ({
	amount: '100.00',
	currency: 'USDT',
	account_type: 'crypto',
	account_identifier: TRON,
	account_network: 'TRX',
	order_id: 'crypto-1',
	...over,
});

describe('live: crypto, Steam, the balance and who pays the fee', () => {
	it('a USDT payout to a TRX wallet: its record has every field of the public record, its postback says CRYPTO and USDT', async () => {
		const m = await merchant('live');
		const created = await h.api('POST', 'payout/regular/create', crypto(), m.token);
		expect(created.status, created.text).toBe(200);
		const [payout] = created.body.data;
		// 2 % + 10.00 RUB in USDT (at the sandbox's 90 RUB per USDT) = 2.11; the sender pays it, the
		// RUB balance gives (100.00 + 2.11) × 90.
		expect(payout).toEqual({
			id: payout.id,
			status: 'MODERATING',
			order_id: 'crypto-1',
			account_identifier: TRON,
			amount: 100,
			account_amount: 9189.9,
			commission: 2.11,
			account_commission: 189.9,
			currency: 'USDT',
			account_currency: 'RUB',
			created_at: payout.created_at,
			error_code: null,
			error_message: null,
		});
		const stored = await h.control('GET', `payouts/${payout.id}`);
		expect(stored.body).toMatchObject({
			accountType: 'CRYPTO',
			network: 'TRX',
			recipientPaysCommission: false,
		});
		expect(await balance(m.token, 'RUB')).toEqual({
			available: 10_000_000 - 918_990,
			locked: 918_990,
		});
		await h.control('POST', `payouts/${payout.id}/advance`, { status: 'SUCCESS' });
		const postback = await waitFor('postback', () => postbacksOf(m.merchantId)[0]);
		expect(postback).toEqual({
			TrsId: payout.id,
			Amount: '102.11',
			IsAuto: 'false',
			Status: 'SUCCESS',
			Currency: 'USDT',
			Commission: '2.11',
			AccountType: 'CRYPTO',
			AccountNumber: TRON,
			BalanceAmount: '9189.90',
			BalanceCommission: '189.90',
			BalanceCurrency: 'RUB',
			CommissionApplyType: 'sender',
			SignatureValue: md5(`102.11:${payout.id}:${m.token}`),
		});
		expect(await balance(m.token, 'RUB')).toEqual({ available: 10_000_000 - 918_990, locked: 0 });
		// An Ethereum wallet, from the USDT balance.
		await h.control('PATCH', `merchants/${m.merchantId}`, { balances: { USDT: '500' } });
		const eth = await h.api(
			'POST',
			'payout/regular/create',
			crypto({
				account_identifier: ETH,
				account_network: 'ETH',
				account_currency: 'USDT',
				order_id: 'eth-1',
			}),
			m.token,
		);
		expect(eth.body.data[0]).toMatchObject({
			account_identifier: ETH,
			account_amount: 102.11,
			account_currency: 'USDT',
		});
		expect(await balance(m.token, 'USDT')).toEqual({ available: 50_000 - 10_211, locked: 10_211 });
	});

	it('recipient_pays_commission=1: the balance gives the amount only; the postback Amount is the amount, CommissionApplyType recipient', async () => {
		const m = await merchant('live', { balances: { USD: '20.00' } });
		const created = await h.api(
			'POST',
			'payout/personal/create',
			{
				amount: '900.00',
				payout_account_id: m.payoutAccountId,
				account_currency: 'USD',
				recipient_pays_commission: '1',
				order_id: 'rpc-1',
			},
			m.token,
		);
		expect(created.status, created.text).toBe(200);
		const [payout] = created.body.data;
		// 900.00 RUB to the card; the fee 28.00 RUB comes out of it. The USD balance gives 900 / 90.
		expect(payout).toMatchObject({
			amount: 900,
			commission: 28,
			currency: 'RUB',
			account_amount: 10,
			account_commission: 0.31,
			account_currency: 'USD',
		});
		expect(await balance(m.token, 'USD')).toEqual({ available: 1000, locked: 1000 });
		expect(await balance(m.token, 'RUB')).toMatchObject({ locked: 0 });
		await h.control('POST', `payouts/${payout.id}/advance`, { status: 'DECLINED' });
		const postback = await waitFor('postback', () => postbacksOf(m.merchantId)[0]);
		expect(postback).toMatchObject({
			Amount: '900.00',
			Status: 'DECLINED',
			Currency: 'RUB',
			Commission: '28.00',
			AccountType: 'BANK_CARD',
			BalanceAmount: '10.00',
			BalanceCommission: '0.31',
			BalanceCurrency: 'USD',
			CommissionApplyType: 'recipient',
			SignatureValue: md5(`900.00:${payout.id}:${m.token}`),
		});
		// DECLINED gives the money back to the balance it came from.
		expect(await balance(m.token, 'USD')).toEqual({ available: 2000, locked: 0 });
		// recipient_pays_commission=0 is the sender paying.
		const sender = await h.api(
			'POST',
			'payout/personal/create',
			{ amount: '900.00', payout_account_id: m.payoutAccountId, recipient_pays_commission: '0' },
			m.token,
		);
		expect(sender.body.data[0]).toMatchObject({ account_amount: 928, account_currency: 'RUB' });
	});

	it('a Steam payout by login, in RUB', async () => {
		const m = await merchant('live');
		const created = await h.api(
			'POST',
			'payout/regular/create',
			{ amount: '500', currency: 'RUB', account_type: 'steam', account_identifier: 'ivan_petrov' },
			m.token,
		);
		expect(created.status, created.text).toBe(200);
		expect(created.body.data[0]).toMatchObject({
			account_identifier: 'ivan_petrov',
			amount: 500,
			commission: 20,
			account_amount: 520,
		});
		await h.control('POST', `payouts/${created.body.data[0].id}/advance`, { status: 'FAIL' });
		const postback = await waitFor('postback', () => postbacksOf(m.merchantId)[0]);
		expect(postback).toMatchObject({
			AccountType: 'STEAM',
			AccountNumber: 'ivan_petrov',
			Status: 'FAIL',
		});
	});

	it('refuses what does not fit: a wallet of another shape, no network, a bad login, USDT to a card, a fee above the amount', async () => {
		const m = await merchant('live');
		const refusals: Array<[Record<string, string>, number, string]> = [
			[crypto({ account_network: '' }), 422, 'account_network'],
			[crypto({ account_network: 'BTC' }), 422, 'account_network'],
			[crypto({ account_identifier: ETH }), 422, 'account_identifier'],
			[crypto({ account_network: 'ETH' }), 422, 'account_identifier'],
			[crypto({ account_identifier: 'T123' }), 422, 'account_identifier'],
			[
				crypto({ account_type: 'steam', account_identifier: 'no spaces', currency: 'RUB' }),
				422,
				'account_identifier',
			],
			[
				crypto({ account_type: 'steam', account_identifier: 'ab', currency: 'RUB' }),
				422,
				'account_identifier',
			],
			[
				{
					amount: '10',
					currency: 'USDT',
					account_type: 'credit_card',
					account_identifier: '4111111111111111',
					card_holder: 'A B',
				},
				422,
				'currency',
			],
			[crypto({ account_currency: 'GBP' }), 422, 'account_currency'],
			[crypto({ recipient_pays_commission: 'maybe' }), 422, 'recipient_pays_commission'],
		];
		for (const [params, status, field] of refusals) {
			const answer = await h.api('POST', 'payout/regular/create', params, m.token);
			expect(answer.status, JSON.stringify(params)).toBe(status);
			expect(Object.keys(answer.body.errors), JSON.stringify(params)).toContain(field);
		}
		// The fee (0.20 + 10.00) is not below the amount the recipient would pay it from.
		const tiny = await h.api(
			'POST',
			'payout/personal/create',
			{ amount: '10.00', payout_account_id: m.payoutAccountId, recipient_pays_commission: 'true' },
			m.token,
		);
		expect(tiny.status).toBe(400);
		expect(tiny.body.message).toBe('api:error.invalid_amount');
		// The USD balance is empty: the payout is refused where it would be taken from.
		const noUsd = await h.api(
			'POST',
			'payout/regular/create',
			crypto({ account_currency: 'USD' }),
			m.token,
		);
		expect(noUsd.status).toBe(400);
		expect(noUsd.body.message).toBe('api:error.balance_not_enough');
		expect((await h.control('GET', `payouts?merchantId=${m.merchantId}`)).body.data).toEqual([]);
	});

	it('counts a payout in another currency against the limits at its RUB value', async () => {
		const m = await merchant('live', { dailyPayoutLimit: '10000.00' });
		const usdt = await h.api('POST', 'payout/regular/create', crypto(), m.token);
		expect(usdt.status).toBe(200);
		// 100 USDT = 9000.00 RUB of the 10000.00: 1000.01 RUB more is over.
		const over = await h.api(
			'POST',
			'payout/personal/create',
			{ amount: '1000.01', payout_account_id: m.payoutAccountId },
			m.token,
		);
		expect(over.body.message).toBe('api:error.daily_payout_limit_exceeded');
	});
});

describe('spec: what the interface document promises, nothing more', () => {
	it('refuses crypto, Steam and USDT (the document lists card and SBP in RUB)', async () => {
		const m = await merchant('spec');
		for (const [params, field] of [
			[crypto(), 'account_type'],
			[
				crypto({ account_type: 'steam', account_identifier: 'ivan_petrov', currency: 'RUB' }),
				'account_type',
			],
			[
				{
					amount: '10',
					currency: 'USDT',
					account_type: 'sbp',
					account_identifier: '79001234567',
					account_bank: '100000000004',
				},
				'currency',
			],
		] as const) {
			const answer = await h.api('POST', 'payout/regular/create', { ...params }, m.token);
			expect(answer.status).toBe(422);
			expect(Object.keys(answer.body.errors)).toContain(field);
		}
		expect((await h.control('GET', `payouts?merchantId=${m.merchantId}`)).body.data).toEqual([]);
	});

	it('ignores account_currency and recipient_pays_commission: RUB, the sender pays, the document fields', async () => {
		const m = await merchant('spec', { balances: { USD: '20.00' } });
		const created = await h.api(
			'POST',
			'payout/personal/create',
			{
				amount: '900.00',
				payout_account_id: m.payoutAccountId,
				account_currency: 'USD',
				recipient_pays_commission: '1',
			},
			m.token,
		);
		expect(created.status).toBe(200);
		expect(Object.keys(created.body.data[0]).sort()).toEqual([
			'account_identifier',
			'amount',
			'commission',
			'created_at',
			'currency',
			'id',
			'status',
		]);
		expect(await balance(m.token, 'USD')).toEqual({ available: 2000, locked: 0 });
		expect(await balance(m.token, 'RUB')).toMatchObject({ locked: 92_800 });
		await h.control('POST', `payouts/${created.body.data[0].id}/advance`, { status: 'SUCCESS' });
		const sent = await waitFor('postback', () =>
			hook.received.find((r) => r.path === `/${m.merchantId}`),
		);
		expect(JSON.parse(sent.raw)).toMatchObject({
			Amount: 928,
			CommissionApplyType: 'sender',
			BalanceCurrency: 'RUB',
		});
	});
});

describe.each(['live', 'spec'] as const)(
	'the control API moves payouts to MODERATING and ERROR, %s',
	(profile) => {
		it('PROCESS → MODERATING (back to moderation), then ERROR with its code and message', async () => {
			const m = await merchant(profile);
			const created = await h.api(
				'POST',
				'payout/personal/create',
				{ amount: '100', payout_account_id: m.payoutAccountId, order_id: 'back-1' },
				m.token,
			);
			const id = created.body.data[0].id as string;
			const again = await h.control('POST', `payouts/${id}/advance`, { status: 'MODERATING' });
			expect(again.status).toBe(409);
			expect(again.body.error).toBe('bad_transition');
			await h.control('POST', `payouts/${id}/advance`, { status: 'PROCESS' });
			const back = await h.control('POST', `payouts/${id}/advance`, { status: 'MODERATING' });
			expect(back.body.status).toBe('MODERATING');
			expect((await h.api('GET', 'payout/status', { id }, m.token)).body.status).toBe('MODERATING');
			const error = await h.control('POST', `payouts/${id}/advance`, {
				status: 'ERROR',
				errorCode: 1042,
				errorMessage: 'The recipient bank is unavailable',
			});
			expect(error.body.status).toBe('ERROR');
			const record = (await h.api('GET', 'payout/status', { order_id: 'back-1' }, m.token)).body;
			expect(record.status).toBe('ERROR');
			if (profile === 'live') {
				expect(record).toMatchObject({
					error_code: 1042,
					error_message: 'The recipient bank is unavailable',
				});
			} else {
				expect(record).not.toHaveProperty('error_code');
			}
			// ERROR gave the money back. live: a FAIL postback (the public record's postbacks carry FAIL
			// for both failures); spec: none (the marker payout's postback comes first).
			expect(await balance(m.token, 'RUB')).toMatchObject({ locked: 0 });
			const marker = await h.api(
				'POST',
				'payout/personal/create',
				{ amount: '1', payout_account_id: m.payoutAccountId },
				m.token,
			);
			await h.control('POST', `payouts/${marker.body.data[0].id}/advance`, { status: 'SUCCESS' });
			const sent = await waitFor('postbacks', () => {
				const mine = hook.received.filter((r) => r.path === `/${m.merchantId}`);
				return mine.some((r) => r.raw.includes(marker.body.data[0].id)) && mine;
			});
			const bodies = sent.map((r) => (profile === 'spec' ? JSON.parse(r.raw) : r.fields));
			expect(bodies.map((b) => [b.TrsId, b.Status])).toEqual(
				profile === 'live'
					? [
							[id, 'FAIL'],
							[marker.body.data[0].id, 'SUCCESS'],
						]
					: [[marker.body.data[0].id, 'SUCCESS']],
			);
		});
	},
);
