import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { checkAmount, checkRequired, inputError } from '../../helpers/validation';
import { apiRequest } from '../../transport';
import { amountDescription } from '../common.descriptions';

const displayOptions = { show: { resource: ['bill'], operation: ['create'] } };

export const description: INodeProperties[] = [
	{
		displayName: 'Shop ID',
		name: 'shopId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 9rQBbwZV1g',
		description: 'ID of the shop the bill belongs to, from the shop settings of your merchant account',
		displayOptions,
	},
	{
		displayName: 'Amount',
		name: 'amount',
		type: 'string',
		required: true,
		default: '',
		placeholder: '100.00',
		description: amountDescription,
		displayOptions,
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		displayOptions,
		options: [
			{
				displayName: 'Currency',
				name: 'currencyIn',
				type: 'options',
				default: '',
				description: 'Currency the customer pays in',
				options: [
					{ name: 'Shop Default', value: '' },
					{ name: 'EUR', value: 'EUR' },
					{ name: 'RUB', value: 'RUB' },
					{ name: 'USD', value: 'USD' },
				],
			},
			{
				displayName: 'Custom',
				name: 'custom',
				type: 'string',
				default: '',
				description: 'Any text; the service returns it as "custom" in the payment postback and the redirects',
			},
			{
				displayName: 'Description',
				name: 'description',
				type: 'string',
				default: '',
				description: 'Description of the payment',
			},
			{
				displayName: 'Name',
				name: 'name',
				type: 'string',
				default: '',
				description: 'Purpose of the payment, shown on the payment form',
			},
			{
				displayName: 'Order ID',
				name: 'orderId',
				type: 'string',
				default: '',
				description: 'Your order identifier; the payment postback returns it as InvId',
			},
			{
				displayName: 'Payer Pays Commission',
				name: 'payerPaysCommission',
				type: 'options',
				default: '',
				description: 'Who pays the fee for the incoming payment',
				options: [
					{ name: 'Shop Default', value: '' },
					{ name: 'Yes', value: '1' },
					{ name: 'No', value: '0' },
				],
			},
			{
				displayName: 'Payment Method',
				name: 'paymentMethod',
				type: 'options',
				default: '',
				description: 'Preselect a payment method on the payment form and allow no other',
				options: [
					{ name: 'Any', value: '' },
					{ name: 'Bank Card', value: 'BANK_CARD' },
					{ name: 'SBP', value: 'SBP' },
				],
			},
			{
				displayName: 'Type',
				name: 'type',
				type: 'options',
				default: 'normal',
				description: 'Normal bills accept one successful payment; multi bills accept any number',
				options: [
					{ name: 'Normal', value: 'normal' },
					{ name: 'Multi', value: 'multi' },
				],
			},
		],
	},
];

const ALLOWED: Record<string, { field: string; values: string[] }> = {
	currencyIn: { field: 'Currency', values: ['', 'RUB', 'USD', 'EUR'] },
	payerPaysCommission: { field: 'Payer Pays Commission', values: ['', '1', '0'] },
	paymentMethod: { field: 'Payment Method', values: ['', 'BANK_CARD', 'SBP'] },
	type: { field: 'Type', values: ['normal', 'multi'] },
};

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const node = this.getNode();
	const shopId = checkRequired(node, this.getNodeParameter('shopId', itemIndex), itemIndex, 'Shop ID');
	const amount = checkAmount(node, this.getNodeParameter('amount', itemIndex), itemIndex);
	const extra = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;

	for (const [name, rule] of Object.entries(ALLOWED)) {
		const value = extra[name];
		if (value === undefined) continue;
		const text = String(value);
		const match = rule.values.find((allowed) => allowed.toLowerCase() === text.toLowerCase());
		if (match === undefined) {
			throw inputError(node, rule.field, `must be one of ${rule.values.filter(Boolean).join(', ')} (got ${JSON.stringify(text)})`, itemIndex);
		}
		extra[name] = match;
	}
	const text = (name: string) => (typeof extra[name] === 'string' || typeof extra[name] === 'number' ? String(extra[name]) : undefined);

	const answer = await apiRequest.call(this, 'POST', ENDPOINTS.billCreate.path, {
		body: {
			amount,
			shop_id: shopId,
			order_id: text('orderId'),
			description: text('description'),
			type: text('type'),
			currency_in: text('currencyIn'),
			custom: text('custom'),
			payer_pays_commission: text('payerPaysCommission'),
			name: text('name'),
			payment_method: text('paymentMethod'),
		},
		itemIndex,
	});
	return [normalizeResponse(answer)];
}
