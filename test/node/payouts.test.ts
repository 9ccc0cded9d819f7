import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { INodeParameters } from 'n8n-workflow';

import { failure, personal } from '../helpers/node-params.ts';
import { runNode } from '../helpers/n8n-context.ts';
import { startRecordingServer } from '../helpers/recording-server.ts';
import {
	control,
	newMerchant,
	patchMerchant,
	payoutsOf,
	PROFILES,
	sandboxFor,
	start,
	type Sandbox,
	utcDay,
} from '../helpers/sandbox.ts';

// Payouts through the node's real execute() against the sandbox: both create operations, split
// payouts, the duplicate-payout guard, Get by ID / order ID, Search with pagination.
let sandbox: Sandbox;
sandboxFor('live', (started) => (sandbox = started));
const liveSandbox = () => sandbox;

const card = (
	amount: string,
	orderId: string,
	cardNumber = '4111 1111 1111 1111',
): INodeParameters => ({
	resource: 'payout',
	operation: 'createRegular',
	accountType: 'credit_card',
	amount,
	cardNumber,
	cardHolder: 'IVAN PETROV',
	orderId,
});

describe('Payout > Create to Saved Account', () => {
	it('creates a payout under the given order ID and reads it by ID and by order ID', async () => {
		const merchant = await newMerchant(sandbox);
		const out = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '1000', '={{ $json.invoice }}'),
			items: [{ invoice: 'INV-1' }],
		});
		expect(out).toHaveLength(1);
		const payout = out[0].json;
		expect(out[0].pairedItem).toEqual({ item: 0 });
		expect(payout).toMatchObject({
			status: 'MODERATING',
			amount: 1000,
			already_existed: false,
			currency: 'RUB',
			order_id: 'INV-1',
		});
		const stored = await payoutsOf(sandbox, merchant.merchantId);
		expect(stored.map((p) => [p.id, p.order_id])).toEqual([[payout.id, 'INV-1']]);

		const [byId] = await runNode({
			credential: merchant.credential,
			parameters: {
				resource: 'payout',
				operation: 'get',
				findBy: 'id',
				payoutId: payout.id as string,
			},
		});
		expect(byId.json).toMatchObject({ success: true, id: payout.id, amount: 1000 });
		const [byOrder] = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'payout', operation: 'get', findBy: 'orderId', orderId: 'INV-1' },
		});
		expect(byOrder.json.id).toBe(payout.id);
	});

	it('requires an Order ID: empty, blank, too long or with control characters is refused before any request', async () => {
		const merchant = await newMerchant(sandbox);
		for (const [orderId, message] of [
			['', 'Order ID is required'],
			['   ', 'Order ID is required'],
			['x'.repeat(101), 'Order ID must be at most 100 characters (got 101)'],
			['a\nb', 'Order ID must not contain control characters'],
		]) {
			const error = await failure(
				runNode({ credential: merchant.credential, parameters: personal(merchant, '10', orderId) }),
			);
			expect(error?.message).toBe(message);
		}
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(0);
	});

	it('never pays an order ID twice: a re-run (n8n Retry, re-run from the failed node) returns the payout, marked already_existed', async () => {
		const merchant = await newMerchant(sandbox);
		const items = [{ invoice: 'INV-7', total: 500, receivedAt: '2026-11-22T10:00:00Z' }];
		const parameters = personal(merchant, '={{ $json.total }}', '={{ $json.invoice }}');
		const [first] = await runNode({ credential: merchant.credential, parameters, items });
		// The same intent delivered again with a new timestamp (a duplicate postback, a retry).
		const [again] = await runNode({
			credential: merchant.credential,
			parameters,
			items: [{ ...items[0], receivedAt: '2026-11-22T10:05:00Z' }],
		});
		expect(first.json.already_existed).toBe(false);
		expect(again.json).toMatchObject({
			id: first.json.id,
			order_id: 'INV-7',
			already_existed: true,
			amount: 500,
		});
		// The amount as a number or as text is the same payout.
		const [asText] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '500.00', 'INV-7'),
		});
		expect(asText.json.already_existed).toBe(true);
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(1);
	});

	it("keyed on the trigger's eventKey, a duplicate delivery of one postback pays once", async () => {
		const merchant = await newMerchant(sandbox);
		// Two deliveries of one postback: the spelling of Status and the receive time differ, the event key does not.
		const delivery = (receivedAt: string, Status: string) => ({
			eventKey: 'payment-P77-SUCCESS',
			TrsId: 'P77',
			Status,
			receivedAt,
			OutSum: '90.00',
		});
		const parameters = personal(
			merchant,
			'={{ $json.OutSum }}',
			'={{ "refund-" + $json.eventKey }}',
		);
		const [first] = await runNode({
			credential: merchant.credential,
			parameters,
			items: [delivery('2026-11-22T10:00:00Z', 'SUCCESS')],
		});
		const [second] = await runNode({
			credential: merchant.credential,
			parameters,
			items: [delivery('2026-11-22T10:00:10Z', 'success')],
		});
		expect([first.json.already_existed, second.json.already_existed]).toEqual([false, true]);
		expect(second.json.id).toBe(first.json.id);
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(1);
	});

	it('pays nothing twice when upstream items are reordered or new ones inserted on a re-run', async () => {
		const merchant = await newMerchant(sandbox);
		const parameters = personal(merchant, '={{ $json.total }}', '={{ "w-" + $json.request }}');
		const first = await runNode({
			credential: merchant.credential,
			parameters,
			items: [
				{ request: 1, total: 10 },
				{ request: 2, total: 20 },
			],
		});
		const second = await runNode({
			credential: merchant.credential,
			parameters,
			items: [
				{ request: 3, total: 30 },
				{ request: 2, total: 20 },
				{ request: 1, total: 10 },
			],
		});
		expect(first.map((i) => [i.json.order_id, i.json.already_existed])).toEqual([
			['w-1', false],
			['w-2', false],
		]);
		expect(second.map((i) => [i.json.order_id, i.json.already_existed, i.pairedItem])).toEqual([
			['w-3', false, { item: 0 }],
			['w-2', true, { item: 1 }],
			['w-1', true, { item: 2 }],
		]);
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(3);
	});

	it('refuses an order ID that already has a payout with another amount or destination, naming both', async () => {
		const merchant = await newMerchant(sandbox);
		await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '20', 'payroll-2024-03'),
		});
		const otherAmount = await failure(
			runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '25', 'payroll-2024-03'),
			}),
		);
		expect(otherAmount?.message).toMatch(
			/^Order ID payroll-2024-03 already has a payout of 20\.00 to .*; this request is 25\.00 to payout account /,
		);
		await runNode({ credential: merchant.credential, parameters: card('30', 'card-1') });
		const otherCard = await failure(
			runNode({
				credential: merchant.credential,
				parameters: card('30', 'card-1', '5555 5555 5555 4444'),
			}),
		);
		expect(otherCard?.message).toMatch(
			/^Order ID card-1 already has a payout of 30\.00 to 411111\*+1111: .*; this request is 30\.00 to card 555555\*+4444$/,
		);
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(2);
	});

	it('with On Existing Payout = Fail, stops with an error naming the existing payout instead of returning it', async () => {
		const merchant = await newMerchant(sandbox);
		const [first] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '40', 'once-only'),
		});
		const error = await failure(
			runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '40', 'once-only', { onExisting: 'fail' }),
			}),
		);
		expect(error?.message).toBe(
			`Order ID once-only was already paid out: 40.00 to ${String(first.json.account_identifier)}: payout ${String(first.json.id)} (MODERATING)`,
		);
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(1);
	});

	it('a service that times out after it moved the money: the node finds the payout it made; Retry On Fail pays nothing again', async () => {
		const merchant = await newMerchant(sandbox);
		await control(sandbox, 'POST', '/faults', {
			kind: 'drop_after',
			path: '/api/v1/payout/personal/create',
			count: 1,
		});
		const [made] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '60', 'dropped-1'),
		});
		expect(made.json).toMatchObject({ order_id: 'dropped-1', amount: 60, already_existed: false });
		const [retried] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '60', 'dropped-1'),
		});
		expect(retried.json).toMatchObject({ id: made.json.id, already_existed: true });
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(1);
	});

	it('a 5xx after which nothing was made: the error says a re-run is safe, and the re-run pays once', async () => {
		const merchant = await newMerchant(sandbox);
		await control(sandbox, 'POST', '/faults', {
			kind: '500',
			path: '/api/v1/payout/personal/create',
			count: 1,
		});
		const error = await failure(
			runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '70', 'five-hundred'),
			}),
		);
		expect(error?.httpCode).toBe('500');
		expect(error?.description).toContain(
			'running this node again with Order ID five-hundred is safe',
		);
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(0);
		const [paid] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '70', 'five-hundred'),
		});
		expect(paid.json.already_existed).toBe(false);
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(1);
	});

	it.each(PROFILES)(
		'outputs each part of a split payout as its own item paired to the input item, and finds every part on a re-run (%s)',
		async (profile) => {
			// live shows each payout's order_id; spec shows the document's fields only (no order_id): the
			// re-run finds the parts by account, currency and creation time.
			const sandbox = profile === 'live' ? liveSandbox() : await start(profile);
			const merchant = await newMerchant(sandbox);
			await patchMerchant(sandbox, merchant.merchantId, { payoutSplitSize: '100.00' });
			const items = [{ first: true }, { second: true }];
			const parameters = personal(
				merchant,
				'={{ $json.first ? "250.00" : "30" }}',
				'={{ $json.first ? "split-a" : "split-b" }}',
			);
			const out = await runNode({ credential: merchant.credential, parameters, items });
			expect(out.map((i) => [i.json.amount, i.pairedItem])).toEqual([
				[100, { item: 0 }],
				[100, { item: 0 }],
				[50, { item: 0 }],
				[30, { item: 1 }],
			]);
			expect(new Set(out.slice(0, 3).map((i) => i.json.order_id))).toEqual(new Set(['split-a']));
			expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(4);

			const again = await runNode({ credential: merchant.credential, parameters, items });
			expect(again.map((i) => [i.json.id, i.json.already_existed, i.pairedItem])).toEqual(
				out.map((i) => [i.json.id, true, i.pairedItem]),
			);
			expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(4);
			if (profile !== 'live') await sandbox.close();
		},
	);

	it('finds every part of a split payout made just before midnight when it runs again the next day', async () => {
		const merchant = await newMerchant(sandbox);
		await patchMerchant(sandbox, merchant.merchantId, { payoutSplitSize: '100.00' });
		await control(sandbox, 'POST', '/clock', { now: `${utcDay(-1)}T23:59:59Z` });
		try {
			const out = await runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '230', 'late-night'),
			});
			expect(out).toHaveLength(3);
		} finally {
			await control(sandbox, 'POST', '/clock', { now: null });
		}
		const again = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '230', 'late-night'),
		});
		expect(again.map((i) => [i.json.amount, i.json.already_existed])).toEqual([
			[100, true],
			[100, true],
			[30, true],
		]);
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(3);
	});

	it('is an error, never zero items, when the search for the parts of a split payout fails', async () => {
		const merchant = await newMerchant(sandbox);
		await patchMerchant(sandbox, merchant.merchantId, { payoutSplitSize: '100.00' });
		await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '150', 'search-fails'),
		});
		await control(sandbox, 'POST', '/faults', {
			kind: '500',
			path: '/api/v1/payout/search',
			count: 1,
		});
		const error = await failure(
			runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '150', 'search-fails'),
			}),
		);
		expect(error?.httpCode).toBe('500');
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(2);
	});

	it('is an error, never zero items, when the create answer has no payout list (money may have moved)', async () => {
		const merchant = await newMerchant(sandbox);
		// A stand-in service: no payout under the order ID yet, then a create answer without `data`.
		const target = await startRecordingServer();
		target.answers.push(
			{ status: 422, body: { success: false, message: 'api:error.payout_not_found' } },
			{ status: 200, body: { success: true } },
		);
		try {
			const error = await failure(
				runNode({
					credential: { ...merchant.credential, baseUrl: target.url },
					parameters: personal(merchant, '80', 'no-list'),
				}),
			);
			expect(target.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
				'GET /api/v1/payout/status',
				'POST /api/v1/payout/personal/create',
			]);
			expect(error?.message).toBe(
				'The service accepted payout no-list but answered without the list of payouts',
			);
			expect(error?.description).toContain('The money may have moved');
		} finally {
			await target.close();
		}
	});
});

describe('Payout > Create to Card or SBP', () => {
	it('pays out to a card (masked in the answer) and to SBP with a bank from the list', async () => {
		const merchant = await newMerchant(sandbox);
		const [toCard] = await runNode({
			credential: merchant.credential,
			parameters: card('300.50', 'card-300'),
		});
		expect(toCard.json).toMatchObject({
			amount: 300.5,
			status: 'MODERATING',
			already_existed: false,
		});
		expect(String(toCard.json.account_identifier)).toMatch(/^4111\d*\*+1111$/);

		const [toSbp] = await runNode({
			credential: merchant.credential,
			parameters: {
				resource: 'payout',
				operation: 'createRegular',
				accountType: 'sbp',
				amount: '200',
				phone: '8 (900) 123-45-67',
				bank: {
					__rl: true,
					mode: 'list',
					value: '100000000111',
					cachedResultName: 'Sberbank (Сбербанк)',
				},
				orderId: 'sbp-200',
			},
		});
		expect(toSbp.json).toMatchObject({
			amount: 200,
			account_identifier: '79001234567',
			already_existed: false,
		});
		const kinds = (await payoutsOf(sandbox, merchant.merchantId)).map((p) => [
			p.kind,
			p.accountType,
		]);
		expect(kinds).toEqual([
			['regular', 'BANK_CARD'],
			['regular', 'SBP'],
		]);
	});

	it('explains a refused direct payout: This action is unauthorized → ask support', async () => {
		const merchant = await newMerchant(sandbox, { regularPayoutsEnabled: false });
		const error = await runNode({
			credential: merchant.credential,
			parameters: { ...card('10', 'unauthorized-10'), cardHolder: 'A B' },
		}).then(
			() => undefined,
			(e: Error & { httpCode?: string; description?: string }) => e,
		);
		expect(error?.message).toBe(
			'This action is unauthorized: Your account may not use this API method',
		);
		expect(error?.description).toContain('Ask support to enable direct payouts for your account');
		expect(error?.httpCode).toBe('403');
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(0);
	});
});

describe('Payout > Get', () => {
	it('reports an unknown payout as payout_not_found (422)', async () => {
		const merchant = await newMerchant(sandbox);
		const error = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'payout', operation: 'get', findBy: 'orderId', orderId: 'nope' },
		}).then(
			() => undefined,
			(e: Error & { httpCode?: string }) => e,
		);
		expect(error?.message).toBe('api:error.payout_not_found: No payout has this ID or order ID');
		expect(error?.httpCode).toBe('422');
	});

	it('shows a moderated payout with its new status', async () => {
		const merchant = await newMerchant(sandbox);
		const [payout] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '15', 'moderated-15'),
		});
		await control(sandbox, 'POST', `/payouts/${payout.json.id}/advance`, { status: 'SUCCESS' });
		const [read] = await runNode({
			credential: merchant.credential,
			parameters: {
				resource: 'payout',
				operation: 'get',
				findBy: 'id',
				payoutId: payout.json.id as string,
			},
		});
		expect(read.json.status).toBe('SUCCESS');
	});
});

// Crypto wallets, Steam logins and the two money options (Account Currency, Recipient Pays
// Commission), on both profiles: `live` takes them (the public record's fields), `spec` answers
// what the interface document promises (card and SBP only; unknown fields ignored).
const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const ETH = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const wallet = (amount: string, orderId: string, over: INodeParameters = {}): INodeParameters => ({
	resource: 'payout',
	operation: 'createRegular',
	accountType: 'crypto',
	network: 'TRX',
	walletAddress: TRON,
	currency: 'USDT',
	amount,
	orderId,
	...over,
});
const steam = (amount: string, orderId: string, steamLogin = 'ivan_petrov'): INodeParameters => ({
	resource: 'payout',
	operation: 'createRegular',
	accountType: 'steam',
	steamLogin,
	amount,
	orderId,
});

describe.each(PROFILES)(
	'Payout > crypto, Steam and the money options, sandbox profile %s',
	(profile) => {
		let sb: Sandbox;
		beforeAll(async () => {
			sb = await start(profile);
		});
		afterAll(async () => {
			await sb.close();
		});

		it('pays USDT to a TRX wallet once per Order ID (live); a service without crypto refuses it and nothing is paid (spec)', async () => {
			const merchant = await newMerchant(sb);
			const run = (parameters: INodeParameters) =>
				runNode({ credential: merchant.credential, parameters });
			if (profile === 'spec') {
				const error = await failure(run(wallet('100', 'wallet-1')));
				expect(error?.httpCode).toBe('422');
				expect(error?.description).toContain('account_type: The selected account type is invalid.');
				expect(await payoutsOf(sb, merchant.merchantId)).toEqual([]);
				return;
			}
			const [paid] = await run(wallet('100', 'wallet-1'));
			expect(paid.json).toMatchObject({
				amount: 100,
				currency: 'USDT',
				account_identifier: TRON,
				account_currency: 'RUB',
				order_id: 'wallet-1',
				already_existed: false,
			});
			const [stored] = await payoutsOf(sb, merchant.merchantId);
			expect(stored).toMatchObject({ accountType: 'CRYPTO', network: 'TRX', currency: 'USDT' });
			// A re-run pays nothing again; the same Order ID to another wallet or in another currency is an error.
			const [again] = await run(wallet('100', 'wallet-1'));
			expect(again.json).toMatchObject({ id: paid.json.id, already_existed: true });
			const otherWallet = await failure(
				run(wallet('100', 'wallet-1', { network: 'ETH', walletAddress: ETH })),
			);
			expect(otherWallet?.message).toBe(
				`Order ID wallet-1 already has a payout of 100.00 to ${TRON}: payout ${String(paid.json.id)} (MODERATING); this request is 100.00 USDT to ETH wallet ${ETH}`,
			);
			const otherCurrency = await failure(run(wallet('100', 'wallet-1', { currency: 'RUB' })));
			expect(otherCurrency?.message).toMatch(/this request is 100\.00 RUB to TRX wallet /);
			// An Ethereum wallet, in any letter case it was given in.
			const [eth] = await run(wallet('50', 'wallet-2', { network: 'eth', walletAddress: ETH }));
			expect(eth.json).toMatchObject({ account_identifier: ETH, already_existed: false });
			expect((await payoutsOf(sb, merchant.merchantId)).map((p) => p.network)).toEqual([
				'TRX',
				'ETH',
			]);
		});

		it('pays a Steam login once per Order ID (live); spec refuses it', async () => {
			const merchant = await newMerchant(sb);
			const run = (parameters: INodeParameters) =>
				runNode({ credential: merchant.credential, parameters });
			if (profile === 'spec') {
				expect((await failure(run(steam('500', 'steam-1'))))?.httpCode).toBe('422');
				expect(await payoutsOf(sb, merchant.merchantId)).toEqual([]);
				return;
			}
			const [paid] = await run(steam('500', 'steam-1'));
			expect(paid.json).toMatchObject({ account_identifier: 'ivan_petrov', currency: 'RUB' });
			// Steam logins are not case-sensitive: the same login is the same payout.
			const [again] = await run(steam('500', 'steam-1', 'IVAN_Petrov'));
			expect(again.json).toMatchObject({ id: paid.json.id, already_existed: true });
			const other = await failure(run(steam('500', 'steam-1', 'petr_ivanov')));
			expect(other?.message).toMatch(/this request is 500\.00 to Steam login petr_ivanov$/);
			expect(await payoutsOf(sb, merchant.merchantId)).toHaveLength(1);
			expect((await payoutsOf(sb, merchant.merchantId))[0].accountType).toBe('STEAM');
		});

		it('sends Recipient Pays Commission and Account Currency when set: live takes the fee from the amount and the money from that balance; spec ignores them', async () => {
			const merchant = await newMerchant(sb, { balances: { USD: '20.00' } });
			const options = { recipientPaysCommission: true, accountCurrency: 'USD' };
			const [paid] = await runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '900', 'rpc-1', options),
			});
			const [stored] = await payoutsOf(sb, merchant.merchantId);
			if (profile === 'live') {
				// 900.00 RUB at 90 RUB per USD; the fee (28.00 RUB) comes out of the amount.
				expect(paid.json).toMatchObject({
					amount: 900,
					commission: 28,
					account_amount: 10,
					account_currency: 'USD',
				});
				expect(stored).toMatchObject({ recipientPaysCommission: true, accountCurrency: 'USD' });
			} else {
				expect(paid.json).not.toHaveProperty('account_currency');
				expect(stored).toMatchObject({ recipientPaysCommission: false, accountCurrency: 'RUB' });
			}
			// A crypto payout with them too (live): the recipient pays, the RUB balance gives 100 × 90.
			if (profile === 'live') {
				const [crypto] = await runNode({
					credential: merchant.credential,
					parameters: wallet('100', 'rpc-2', {
						options: { recipientPaysCommission: true, accountCurrency: 'RUB' },
					}),
				});
				expect(crypto.json).toMatchObject({ account_amount: 9000, account_currency: 'RUB' });
				expect((await payoutsOf(sb, merchant.merchantId))[1]).toMatchObject({
					recipientPaysCommission: true,
					network: 'TRX',
				});
			}
		});
	},
);

describe('Payout > the money options on the wire', () => {
	it('sends recipient_pays_commission 1 or 0 and account_currency only when they are added to the Options', async () => {
		const target = await startRecordingServer();
		const notFound = {
			status: 422,
			body: { success: false, message: 'api:error.payout_not_found' },
		};
		const created = { status: 200, body: { success: true, data: [{ id: 'W1', amount: 100 }] } };
		try {
			const forms: Array<Record<string, string>> = [];
			for (const options of [
				{},
				{ recipientPaysCommission: true, accountCurrency: 'USDT' },
				{ recipientPaysCommission: false, accountCurrency: 'eur' },
				{ recipientPaysCommission: '={{ "true" }}' },
			]) {
				target.requests.length = 0;
				target.answers.push(notFound, created);
				await runNode({
					credential: { apiToken: '72|wire', baseUrl: target.url },
					parameters: wallet('100', 'wire-1', { options }),
				});
				forms.push(Object.fromEntries(new URLSearchParams(target.requests[1].body)));
			}
			const sent = forms.map((form) => [form.recipient_pays_commission, form.account_currency]);
			expect(sent).toEqual([
				[undefined, undefined],
				['1', 'USDT'],
				['0', 'EUR'],
				['1', undefined],
			]);
			expect(forms[0]).toEqual({
				amount: '100.00',
				currency: 'USDT',
				account_type: 'crypto',
				account_identifier: TRON,
				account_network: 'TRX',
				order_id: 'wire-1',
			});
			// Create to Saved Account sends them the same way.
			target.requests.length = 0;
			target.answers.push(notFound, created);
			await runNode({
				credential: { apiToken: '72|wire', baseUrl: target.url },
				parameters: personal({ payoutAccountId: 'A1' }, '100', 'wire-2', {
					recipientPaysCommission: true,
					accountCurrency: 'RUB',
				}),
			});
			expect(Object.fromEntries(new URLSearchParams(target.requests[1].body))).toEqual({
				amount: '100.00',
				payout_account_id: 'A1',
				account_currency: 'RUB',
				recipient_pays_commission: '1',
				order_id: 'wire-2',
			});
		} finally {
			await target.close();
		}
	});
});
