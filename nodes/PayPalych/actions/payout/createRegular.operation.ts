import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS, PAYOUT_ACCOUNT_TYPES } from '../../../shared';
import { createGuardedPayout, payoutCreateFields } from '../../helpers/guardrails';
import { cardIntent, sbpIntent, type PayoutIntent } from '../../helpers/payout';
import {
	checkAmount,
	checkBank,
	checkCardHolder,
	checkCardNumber,
	checkPhone,
	inputError,
} from '../../helpers/validation';
import { payoutAmountField } from '../common.descriptions';

const displayOptions = { show: { resource: ['payout'], operation: ['createRegular'] } };

/** How each account type of the contract is shown (every one must have a label). */
const PAY_TO: Record<(typeof PAYOUT_ACCOUNT_TYPES)[number], { name: string; description: string }> =
	{
		credit_card: { name: 'Card', description: 'A bank card, by card number and holder name' },
		sbp: {
			name: 'SBP',
			description: 'An account reached by phone number through the Faster Payments System',
		},
	};
const forCard = { show: { accountType: ['credit_card'] } };
const forSbp = { show: { accountType: ['sbp'] } };

const properties: INodeProperties[] = [
	{
		displayName: 'Pay To',
		name: 'accountType',
		type: 'options',
		default: 'credit_card',
		options: PAYOUT_ACCOUNT_TYPES.map((value) => ({ ...PAY_TO[value], value })),
		description:
			'Where the money goes. Direct payouts must be enabled for your account by PayPalych support.',
	},
	payoutAmountField,
	{
		displayName: 'Card Number',
		name: 'cardNumber',
		type: 'string',
		required: true,
		default: '',
		placeholder: '4276 1000 1234 5678',
		description:
			'Card number, 12 to 19 digits; spaces and dashes are removed, the checksum (Luhn) is checked',
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
		description:
			'Recipient phone number; +7, 8, spaces, dashes and parentheses are accepted and sent as 7XXXXXXXXXX',
		displayOptions: forSbp,
	},
	{
		displayName: 'Bank',
		name: 'bank',
		type: 'resourceLocator',
		required: true,
		default: { mode: 'list', value: '' },
		description: "Recipient's bank, from the service's SBP bank list (its member_id)",
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
	...payoutCreateFields,
];

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const node = this.getNode();
	const accountType = this.getNodeParameter('accountType', itemIndex) as string;
	const amount = checkAmount(node, this.getNodeParameter('amount', itemIndex), itemIndex);
	let params: Record<string, string>;
	let intent: PayoutIntent;
	if (accountType === 'credit_card') {
		const cardNumber = checkCardNumber(
			node,
			this.getNodeParameter('cardNumber', itemIndex, ''),
			itemIndex,
		);
		const cardHolder = checkCardHolder(
			node,
			this.getNodeParameter('cardHolder', itemIndex, ''),
			itemIndex,
		);
		params = {
			amount,
			currency: 'RUB',
			account_type: 'credit_card',
			account_identifier: cardNumber,
			card_holder: cardHolder,
		};
		intent = cardIntent(amount, cardNumber);
	} else if (accountType === 'sbp') {
		const phone = checkPhone(node, this.getNodeParameter('phone', itemIndex, ''), itemIndex);
		const bank = checkBank(
			node,
			this.getNodeParameter('bank', itemIndex, '', { extractValue: true }),
			itemIndex,
		);
		params = {
			amount,
			currency: 'RUB',
			account_type: 'sbp',
			account_identifier: phone,
			account_bank: bank,
		};
		intent = sbpIntent(amount, phone, bank);
	} else {
		throw inputError(
			node,
			'Pay To',
			`must be Card or SBP (got ${JSON.stringify(accountType)})`,
			itemIndex,
		);
	}
	return await createGuardedPayout.call(
		this,
		itemIndex,
		ENDPOINTS.payoutRegularCreate,
		params,
		intent,
	);
}
