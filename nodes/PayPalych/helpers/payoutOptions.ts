/*
 * The options both payout-create operations send with the payout, from the service's current
 * reference: Account Currency (`account_currency`, the balance the payout is taken from) and
 * Recipient Pays Commission (`recipient_pays_commission`). Each is sent only when it is added to
 * the Options; without it the service decides (its default balance, the sender pays the fee).
 */

import type { IDataObject, INode, INodeProperties } from 'n8n-workflow';

import { PAYOUT_CURRENCIES } from '../../shared';
import { inputError } from './validation';

const currencyOptions = [...PAYOUT_CURRENCIES]
	.sort()
	.map((currency) => ({ name: currency, value: currency }));

/** The two options, added to the Options collection of both payout-create operations. */
export const payoutMoneyOptions: INodeProperties[] = [
	{
		displayName: 'Account Currency',
		name: 'accountCurrency',
		type: 'options',
		default: 'RUB',
		options: currencyOptions,
		description:
			'The balance the payout is taken from, converted by PayPalych if it is another currency',
	},
	{
		displayName: 'Recipient Pays Commission',
		name: 'recipientPaysCommission',
		type: 'boolean',
		default: false,
		description: "Whether the fee comes out of the recipient's amount instead of your balance",
	},
];

/** A boolean option as n8n may hand it over from an expression: true/false, "true"/"false", 1/0. */
function booleanOf(value: unknown): boolean | undefined {
	if (value === true || value === 'true' || value === 1 || value === '1') return true;
	if (value === false || value === 'false' || value === 0 || value === '0') return false;
	return undefined;
}

/**
 * The form fields of the two options, only those added to the Options (an Account Currency an
 * expression left empty is not sent). A value outside their lists is refused before any request.
 */
export function payoutMoneyFields(
	node: INode,
	options: IDataObject,
	itemIndex: number,
): Record<string, string> {
	const fields: Record<string, string> = {};
	const currency = options.accountCurrency;
	if (currency !== undefined && currency !== null && String(currency).trim() !== '') {
		const code = typeof currency === 'string' ? currency.trim().toUpperCase() : '';
		if (!(PAYOUT_CURRENCIES as readonly string[]).includes(code)) {
			throw inputError(
				node,
				'Account Currency',
				`must be one of ${[...PAYOUT_CURRENCIES].sort().join(', ')} (got ${JSON.stringify(currency)})`,
				itemIndex,
				'Nothing was paid.',
			);
		}
		fields.account_currency = code;
	}
	if (options.recipientPaysCommission !== undefined && options.recipientPaysCommission !== '') {
		const pays = booleanOf(options.recipientPaysCommission);
		if (pays === undefined) {
			throw inputError(
				node,
				'Recipient Pays Commission',
				`must be true or false (got ${JSON.stringify(options.recipientPaysCommission)})`,
				itemIndex,
				'Nothing was paid.',
			);
		}
		fields.recipient_pays_commission = pays ? '1' : '0';
	}
	return fields;
}
