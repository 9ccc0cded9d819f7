import type { IDataObject, IExecuteFunctions, INode, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS, PAYOUT_ACCOUNT_TYPES, PAYOUT_CURRENCIES } from '../../../shared';
import { createGuardedPayout, payoutCreateFields } from '../../helpers/guardrails';
import {
	cardIntent,
	cryptoIntent,
	sbpIntent,
	steamIntent,
	type PayoutIntent,
} from '../../helpers/payout';
import { payoutMoneyFields } from '../../helpers/payoutOptions';
import {
	checkAmount,
	checkBank,
	checkCardHolder,
	checkCardNumber,
	checkPhone,
	inputError,
} from '../../helpers/validation';
import { checkNetwork, checkSteamLogin, checkWalletAddress } from '../../helpers/wallet';
import { payoutAmountField } from '../common.descriptions';

const displayOptions = { show: { resource: ['payout'], operation: ['createRegular'] } };

/** How each account type is shown (every one must have a label). */
const PAY_TO: Record<(typeof PAYOUT_ACCOUNT_TYPES)[number], { name: string; description: string }> =
	{
		credit_card: { name: 'Card', description: 'A bank card, by card number and holder name' },
		sbp: {
			name: 'SBP',
			description: 'An account reached by phone number through the Faster Payments System',
		},
		crypto: {
			name: 'Crypto Wallet',
			description: 'A wallet address on the Tron (TRX) or Ethereum (ETH) network',
		},
		steam: { name: 'Steam', description: 'A Steam account, by its login' },
	};
const forCard = { show: { accountType: ['credit_card'] } };
const forSbp = { show: { accountType: ['sbp'] } };
const forCrypto = { show: { accountType: ['crypto'] } };
const forSteam = { show: { accountType: ['steam'] } };

/** What cards, SBP and Steam are paid in (payout/regular/create's `currency`). */
const RUB = 'RUB';

const properties: INodeProperties[] = [
	{
		displayName: 'Pay To',
		name: 'accountType',
		type: 'options',
		default: 'credit_card',
		options: PAYOUT_ACCOUNT_TYPES.map((value) => ({ ...PAY_TO[value], value })),
		description: 'Where the money goes (PayPalych support switches direct payouts on)',
	},
	payoutAmountField,
	{
		displayName: 'Card Number',
		name: 'cardNumber',
		type: 'string',
		required: true,
		default: '',
		placeholder: '4276 1000 1234 5678',
		description: 'The card number; spaces and dashes are fine',
		displayOptions: forCard,
	},
	{
		displayName: 'Card Holder',
		name: 'cardHolder',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'IVAN PETROV',
		description: 'Cardholder name as written on the card',
		displayOptions: forCard,
	},
	{
		displayName: 'Phone',
		name: 'phone',
		type: 'string',
		required: true,
		default: '',
		placeholder: '+7 900 123-45-67',
		description: "The recipient's phone number, such as +7 900 123-45-67",
		displayOptions: forSbp,
	},
	{
		displayName: 'Bank',
		name: 'bank',
		type: 'resourceLocator',
		required: true,
		default: { mode: 'list', value: '' },
		description: "The recipient's bank, from PayPalych's list of SBP banks",
		displayOptions: forSbp,
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				typeOptions: { searchListMethod: 'searchSbpBanks', searchable: true },
			},
			{
				displayName: 'By Member ID',
				name: 'id',
				type: 'string',
				placeholder: 'e.g. 100000000111',
				validation: [
					{
						type: 'regex',
						properties: { regex: '^\\d+$', errorMessage: 'The member ID is a number' },
					},
				],
			},
		],
	},
	{
		displayName: 'Network',
		name: 'network',
		type: 'options',
		default: 'TRX',
		options: [
			{
				name: 'Ethereum (ETH)',
				value: 'ETH',
				description: 'An ERC-20 address: 0x and 40 hex digits',
			},
			{
				name: 'Tron (TRX)',
				value: 'TRX',
				description: 'A TRC-20 address: T and 33 more letters and digits',
			},
		],
		description: "The network of the recipient's wallet",
		displayOptions: forCrypto,
	},
	{
		displayName: 'Wallet Address',
		name: 'walletAddress',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
		description: "The recipient's wallet address: copy and paste it, never retype it",
		displayOptions: forCrypto,
	},
	{
		displayName: 'Currency',
		name: 'currency',
		type: 'options',
		default: 'USDT',
		options: [...PAYOUT_CURRENCIES].sort().map((currency) => ({ name: currency, value: currency })),
		description: 'The currency of Amount, Max Amount and Daily Limit, such as USDT',
		displayOptions: forCrypto,
	},
	{
		displayName: 'Steam Login',
		name: 'steamLogin',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. ivan_petrov',
		description: 'The name the recipient signs in to Steam with, not the profile name',
		displayOptions: forSteam,
	},
	...payoutCreateFields,
];

export const description = updateDisplayOptions(displayOptions, properties);

/** The form fields and the intent of a payout to the chosen destination, every input checked. */
function destinationOf(
	this: IExecuteFunctions,
	itemIndex: number,
	accountType: string,
	amount: string,
): { params: Record<string, string>; intent: PayoutIntent } {
	const node = this.getNode();
	const read = (name: string, options?: { extractValue: boolean }) =>
		this.getNodeParameter(name, itemIndex, '', options);
	if (accountType === 'credit_card') {
		const cardNumber = checkCardNumber(node, read('cardNumber'), itemIndex);
		const cardHolder = checkCardHolder(node, read('cardHolder'), itemIndex);
		return {
			params: {
				amount,
				currency: RUB,
				account_type: 'credit_card',
				account_identifier: cardNumber,
				card_holder: cardHolder,
			},
			intent: cardIntent(amount, cardNumber),
		};
	}
	if (accountType === 'sbp') {
		const phone = checkPhone(node, read('phone'), itemIndex);
		const bank = checkBank(node, read('bank', { extractValue: true }), itemIndex);
		return {
			params: {
				amount,
				currency: RUB,
				account_type: 'sbp',
				account_identifier: phone,
				account_bank: bank,
			},
			intent: sbpIntent(amount, phone, bank),
		};
	}
	if (accountType === 'crypto') {
		const network = checkNetwork(
			node,
			this.getNodeParameter('network', itemIndex, 'TRX'),
			itemIndex,
		);
		const address = checkWalletAddress(node, read('walletAddress'), network, itemIndex);
		const currency = checkCurrency(
			node,
			this.getNodeParameter('currency', itemIndex, 'USDT'),
			itemIndex,
		);
		return {
			params: {
				amount,
				currency,
				account_type: 'crypto',
				account_identifier: address,
				account_network: network,
			},
			intent: cryptoIntent(amount, currency, network, address),
		};
	}
	if (accountType === 'steam') {
		const login = checkSteamLogin(node, read('steamLogin'), itemIndex);
		return {
			params: { amount, currency: RUB, account_type: 'steam', account_identifier: login },
			intent: steamIntent(amount, login),
		};
	}
	throw inputError(
		node,
		'Pay To',
		`must be Card, SBP, Crypto Wallet or Steam (got ${JSON.stringify(accountType)})`,
		itemIndex,
	);
}

/** A crypto payout's Currency: one of the payout currencies (any letter case); upper case. */
function checkCurrency(node: INode, value: unknown, itemIndex: number): string {
	const code = typeof value === 'string' ? value.trim().toUpperCase() : '';
	if ((PAYOUT_CURRENCIES as readonly string[]).includes(code)) return code;
	throw inputError(
		node,
		'Currency',
		`must be one of ${[...PAYOUT_CURRENCIES].sort().join(', ')} (got ${JSON.stringify(value ?? '')})`,
		itemIndex,
		'Nothing was paid.',
	);
}

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const node = this.getNode();
	const accountType = this.getNodeParameter('accountType', itemIndex) as string;
	const amount = checkAmount(node, this.getNodeParameter('amount', itemIndex), itemIndex);
	const { params, intent } = destinationOf.call(this, itemIndex, accountType, amount);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	return await createGuardedPayout.call(
		this,
		itemIndex,
		ENDPOINTS.payoutRegularCreate,
		{ ...params, ...payoutMoneyFields(node, options, itemIndex) },
		intent,
	);
}
