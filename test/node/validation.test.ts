import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { INodeParameters } from 'n8n-workflow';

import { runNode, workflowLib } from '../helpers/n8n-context.ts';
import { startRecordingServer, type RecordingServer } from '../helpers/recording-server.ts';

// Every bad input must be refused before any request: the credential points at a local server
// that counts the requests it gets.
let server: RecordingServer;
beforeAll(async () => {
	server = await startRecordingServer();
});
afterAll(async () => {
	await server.close();
});

const credential = () => ({ apiToken: 'test|token', baseUrl: server.url });

const billCreate = (over: INodeParameters): INodeParameters => ({
	resource: 'bill',
	operation: 'create',
	shopId: 'shop-1',
	amount: '100',
	...over,
});
const personal = (over: INodeParameters): INodeParameters => ({
	resource: 'payout',
	operation: 'createPersonal',
	payoutAccountId: 'acc-1',
	amount: '100',
	orderId: 'o-1',
	...over,
});
const card = (over: INodeParameters): INodeParameters => ({
	resource: 'payout',
	operation: 'createRegular',
	accountType: 'credit_card',
	amount: '100',
	cardNumber: '4111 1111 1111 1111',
	cardHolder: 'IVAN PETROV',
	orderId: 'o-1',
	...over,
});
const sbp = (over: INodeParameters): INodeParameters => ({
	resource: 'payout',
	operation: 'createRegular',
	accountType: 'sbp',
	amount: '100',
	phone: '+7 900 123-45-67',
	bank: { __rl: true, mode: 'list', value: '100000000111' },
	orderId: 'o-1',
	...over,
});
const wallet = (over: INodeParameters): INodeParameters => ({
	resource: 'payout',
	operation: 'createRegular',
	accountType: 'crypto',
	network: 'TRX',
	walletAddress: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
	currency: 'USDT',
	amount: '100',
	orderId: 'o-1',
	...over,
});
const steam = (over: INodeParameters): INodeParameters => ({
	resource: 'payout',
	operation: 'createRegular',
	accountType: 'steam',
	steamLogin: 'ivan_petrov',
	amount: '100',
	orderId: 'o-1',
	...over,
});
const search = (resource: string, startDate: string, finishDate: string): INodeParameters => ({
	resource,
	operation: 'search',
	startDate,
	finishDate,
	returnAll: true,
});

const cases: Array<[string, INodeParameters, RegExp]> = [
	['empty amount', billCreate({ amount: '' }), /^Amount is required/],
	['zero amount', billCreate({ amount: '0' }), /^Amount must be greater than 0/],
	['negative amount', billCreate({ amount: '-5' }), /^Amount must be a positive decimal number/],
	['text amount', billCreate({ amount: 'ten' }), /^Amount must be a positive decimal number/],
	['three decimals', billCreate({ amount: '1.0051' }), /^Amount must have at most 2 decimals/],
	[
		'a comma that may be a thousands separator',
		billCreate({ amount: '1,500' }),
		/^Amount is ambiguous: .*\(got "1,500"\)$/,
	],
	[
		'a space as thousands separator',
		billCreate({ amount: '1 500,00' }),
		/^Amount must not contain spaces .*\(got "1 500,00"\)$/,
	],
	[
		'a dot before three digits',
		billCreate({ amount: '1.005' }),
		/^Amount is ambiguous: .*\(got "1.005"\)$/,
	],
	[
		'float artefact given as text',
		billCreate({ amount: '0.30000000000000004' }),
		/^Amount must have at most 2 decimals/,
	],
	[
		'number with three decimals',
		billCreate({ amount: '={{ 1.234 }}' }),
		/^Amount must have at most 2 decimals/,
	],
	[
		'beyond decimal(10,2)',
		billCreate({ amount: '100000000' }),
		/^Amount must not exceed 99999999\.99/,
	],
	['missing shop ID', billCreate({ shopId: '  ' }), /^Shop ID is required/],
	[
		'unknown currency from an expression',
		billCreate({ additionalFields: { currencyIn: '={{ "GBP" }}' } }),
		/^Currency must be one of EUR, RUB, USD/,
	],
	[
		'unknown bill type from an expression',
		billCreate({ additionalFields: { type: '={{ "single" }}' } }),
		/^Type must be one of normal, multi/,
	],
	[
		'missing bill ID (get)',
		{ resource: 'bill', operation: 'get', billId: '' },
		/^Bill ID is required/,
	],
	[
		'missing bill ID (payments)',
		{ resource: 'bill', operation: 'getPayments', billId: '' },
		/^Bill ID is required/,
	],
	[
		'missing bill ID (set active)',
		{ resource: 'bill', operation: 'setActive', billId: '', active: false },
		/^Bill ID is required/,
	],
	[
		'missing payment ID',
		{ resource: 'payment', operation: 'get', paymentId: '' },
		/^Payment ID is required/,
	],
	[
		'missing payout ID',
		{ resource: 'payout', operation: 'get', findBy: 'id', payoutId: '' },
		/^Payout ID is required/,
	],
	[
		'missing payout order ID',
		{ resource: 'payout', operation: 'get', findBy: 'orderId', orderId: '' },
		/^Order ID is required/,
	],
	[
		'bill search: start not a date',
		search('bill', 'yesterday', '2024-03-01'),
		/^Start Date must be a date in the form YYYY-MM-DD/,
	],
	[
		'bill search: finish not a calendar date',
		search('bill', '2024-02-01', '2024-02-30'),
		/^Finish Date must be a real date/,
	],
	[
		'bill search: start after finish',
		search('bill', '2024-03-02', '2024-03-01'),
		/^Start Date \(2024-03-02\) must not be after Finish Date \(2024-03-01\)/,
	],
	['bill search: empty start', search('bill', '', '2024-03-01'), /^Start Date is required/],
	[
		'payout search: start after finish',
		search('payout', '2024-03-02T00:00:00', '2024-03-01T23:59:59'),
		/^Start Date \(2024-03-02\) must not be after Finish Date/,
	],
	[
		'payout search: month 13',
		search('payout', '2024-13-01', '2024-12-01'),
		/^Start Date must be a real date/,
	],
	[
		'personal payout: no account',
		personal({ payoutAccountId: '' }),
		/^Payout Account ID is required/,
	],
	[
		'personal payout: bad amount',
		personal({ amount: '12.3456' }),
		/^Amount must have at most 2 decimals/,
	],
	['personal payout: thousands separator', personal({ amount: '1,500' }), /^Amount is ambiguous/],
	['personal payout: no order ID', personal({ orderId: '' }), /^Order ID is required/],
	['card payout: no order ID', card({ orderId: '  ' }), /^Order ID is required/],
	[
		'card payout: Luhn fails',
		card({ cardNumber: '4111 1111 1111 1112' }),
		/^Card Number fails the card checksum/,
	],
	[
		'card payout: letters',
		card({ cardNumber: '4111-abcd-1111-1111' }),
		/^Card Number must contain digits only/,
	],
	[
		'card payout: too short',
		card({ cardNumber: '42424' }),
		/^Card Number must have 12 to 19 digits/,
	],
	['card payout: no number', card({ cardNumber: '' }), /^Card Number is required/],
	[
		'card payout: no holder',
		card({ cardHolder: ' ' }),
		/^Card Holder is required for card payouts/,
	],
	['card payout: zero amount', card({ amount: '0.00' }), /^Amount must be greater than 0/],
	['SBP payout: no phone', sbp({ phone: '' }), /^Phone is required for SBP payouts/],
	['SBP payout: short phone', sbp({ phone: '12345' }), /^Phone must be a Russian phone number/],
	[
		'SBP payout: foreign phone',
		sbp({ phone: '+44 20 7946 0958' }),
		/^Phone must be a Russian phone number/,
	],
	[
		'SBP payout: no bank',
		sbp({ bank: { __rl: true, mode: 'list', value: '' } }),
		/^Bank is required for SBP payouts/,
	],
	[
		'SBP payout: bank not a member ID',
		sbp({ bank: { __rl: true, mode: 'id', value: 'Sberbank' } }),
		/^Bank must be a bank member ID/,
	],
	[
		'crypto payout: no address',
		wallet({ walletAddress: '  ' }),
		/^Wallet Address is required for crypto payouts$/,
	],
	[
		'crypto payout: a Tron address one character short',
		wallet({ walletAddress: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6' }),
		/^Wallet Address is not a Tron \(TRX\) address: T and 33 more base58 characters/,
	],
	[
		'crypto payout: a Tron address with a letter base58 leaves out (0)',
		wallet({ walletAddress: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj60' }),
		/^Wallet Address is not a Tron \(TRX\) address/,
	],
	[
		'crypto payout: a mistyped Tron address (checksum)',
		wallet({ walletAddress: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u' }),
		/^Wallet Address fails the Tron address checksum: a character is mistyped/,
	],
	[
		'crypto payout: an Ethereum address on TRX',
		wallet({ walletAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }),
		/^Wallet Address is not a Tron \(TRX\) address/,
	],
	[
		'crypto payout: a Tron address on ETH',
		wallet({ network: 'ETH' }),
		/^Wallet Address is not an Ethereum \(ETH\) address: 0x and 40 hex digits/,
	],
	[
		'crypto payout: an Ethereum address with 39 hex digits',
		wallet({ network: 'ETH', walletAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAe' }),
		/^Wallet Address is not an Ethereum \(ETH\) address/,
	],
	[
		'crypto payout: a mistyped Ethereum address (EIP-55 letter case)',
		wallet({ network: 'ETH', walletAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD' }),
		/^Wallet Address fails the Ethereum address checksum \(EIP-55/,
	],
	[
		'crypto payout: an unknown network from an expression',
		wallet({ network: '={{ "BTC" }}' }),
		/^Network must be TRX \(Tron\) or ETH \(Ethereum\) \(got "BTC"\)$/,
	],
	[
		'crypto payout: an unknown currency from an expression',
		wallet({ currency: '={{ "BTC" }}' }),
		/^Currency must be one of EUR, RUB, USD, USDT \(got "BTC"\)$/,
	],
	[
		'crypto payout: an unknown Account Currency',
		wallet({ options: { accountCurrency: '={{ "GBP" }}' } }),
		/^Account Currency must be one of EUR, RUB, USD, USDT \(got "GBP"\)$/,
	],
	[
		'crypto payout: Recipient Pays Commission neither true nor false',
		wallet({ options: { recipientPaysCommission: '={{ "yes" }}' } }),
		/^Recipient Pays Commission must be true or false \(got "yes"\)$/,
	],
	[
		'Steam payout: no login',
		steam({ steamLogin: '' }),
		/^Steam Login is required for Steam payouts$/,
	],
	[
		'Steam payout: a login with a space',
		steam({ steamLogin: 'ivan petrov' }),
		/^Steam Login must be a Steam account name: 3 to 64 Latin letters, digits or underscores \(got "ivan petrov"\)$/,
	],
	[
		'Steam payout: a login of 2 characters',
		steam({ steamLogin: 'iv' }),
		/^Steam Login must be a Steam account name/,
	],
	[
		'Steam payout: a profile link instead of the login',
		steam({ steamLogin: 'https://steamcommunity.com/id/ivan' }),
		/^Steam Login must be a Steam account name/,
	],
	[
		'Steam payout: a login of 65 characters',
		steam({ steamLogin: 'a'.repeat(65) }),
		/^Steam Login must be a Steam account name/,
	],
	[
		'personal payout: an unknown Account Currency',
		personal({ options: { accountCurrency: 'BTC' } }),
		/^Account Currency must be one of EUR, RUB, USD, USDT/,
	],
];

describe('bad input is refused by name, before any request', () => {
	it.each(cases)('%s', async (_name, parameters, message) => {
		const before = server.requests.length;
		const error = await runNode({ credential: credential(), parameters }).then(
			() => undefined,
			(e: unknown) => e,
		);
		expect(error).toBeInstanceOf(workflowLib.NodeOperationError);
		expect((error as Error).message).toMatch(message);
		expect((error as { context: { itemIndex?: number } }).context.itemIndex).toBe(0);
		expect(server.requests.length).toBe(before);
	});

	it("says which network a wallet of the other network's shape belongs to", async () => {
		const before = server.requests.length;
		for (const [parameters, hint] of [
			[
				wallet({ walletAddress: '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed' }),
				'It looks like an Ethereum (ETH) address: set Network to ETH',
			],
			[wallet({ network: 'ETH' }), 'It looks like a Tron (TRX) address: set Network to TRX'],
		] as const) {
			const error = await runNode({ credential: credential(), parameters }).then(
				() => undefined,
				(e: { description?: string }) => e,
			);
			expect(error?.description).toContain(hint);
		}
		expect(server.requests.length).toBe(before);
	});

	it('names the failing item and, with continueOnFail, outputs an error item paired to it and goes on', async () => {
		server.requests.length = 0;
		server.fallback = {
			status: 200,
			body: { success: 'true', id: 'B1', status: 'NEW', amount: 10 },
		};
		const out = await runNode({
			credential: credential(),
			parameters: { resource: 'bill', operation: 'get', billId: '={{ $json.id }}' },
			items: [{ id: 'B1' }, { id: '' }, { id: 'B3' }],
			continueOnFail: true,
		});
		expect(out.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		expect(out[0].json).toMatchObject({ id: 'B1', success: true });
		expect(out[1].json.error).toMatch(/^Bill ID is required/);
		expect(out[2].json.id).toBe('B1');
		// Two requests: items 0 and 2; none for the bad item.
		expect(server.requests.map((r) => r.query.id)).toEqual(['B1', 'B3']);

		server.requests.length = 0;
		const error = await runNode({
			credential: credential(),
			parameters: { resource: 'bill', operation: 'get', billId: '={{ $json.id }}' },
			items: [{ id: 'B1' }, { id: '' }],
		}).then(
			() => undefined,
			(e: unknown) => e,
		);
		expect((error as Error).message).toMatch(/^Bill ID is required/);
		expect((error as { context: { itemIndex?: number } }).context.itemIndex).toBe(1);
	});
});
