import type {
	IDataObject,
	IExecuteFunctions,
	INodeProperties,
	INodePropertyOptions,
} from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { BILL_TYPES, CURRENCIES_IN, ENDPOINTS, PAYMENT_METHODS } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import {
	checkEmail,
	checkTtl,
	checkUrl,
	itemsBody,
	REQUEST_FIELDS,
	requestFieldsBody,
} from '../../helpers/billFields';
import { requiredShopId } from '../../helpers/shop';
import { checkAmount, inputError } from '../../helpers/validation';
import { apiRequest } from '../../transport';
import { amountDescription } from '../common.descriptions';

// The choices of the additional fields, built from the contract's lists (nodes/shared/statuses.ts).
const PAYMENT_METHOD_NAMES: Record<(typeof PAYMENT_METHODS)[number], string> = {
	BANK_CARD: 'Bank Card',
	SBP: 'SBP',
};
const BILL_TYPE_NAMES: Record<(typeof BILL_TYPES)[number], string> = {
	normal: 'Normal',
	multi: 'Multi',
};

const currencyOptions: INodePropertyOptions[] = [
	{ name: 'Shop Default', value: '' },
	...[...CURRENCIES_IN].sort().map((currency) => ({ name: currency, value: currency })),
];
const payerPaysCommissionOptions: INodePropertyOptions[] = [
	{ name: 'Shop Default', value: '' },
	{ name: 'Yes', value: '1' },
	{ name: 'No', value: '0' },
];
const paymentMethodOptions: INodePropertyOptions[] = [
	{ name: 'Any', value: '' },
	...PAYMENT_METHODS.map((method) => ({ name: PAYMENT_METHOD_NAMES[method], value: method })),
];
const localeOptions: INodePropertyOptions[] = [
	{ name: 'Service Default', value: '' },
	{ name: 'English', value: 'en' },
	{ name: 'Russian', value: 'ru' },
];
const requestFieldOptions: INodePropertyOptions[] = REQUEST_FIELDS.map((field) => ({
	name: field.charAt(0).toUpperCase() + field.slice(1),
	value: field,
}));
const billTypeOptions: INodePropertyOptions[] = BILL_TYPES.map((type) => ({
	name: BILL_TYPE_NAMES[type],
	value: type,
}));

const displayOptions = { show: { resource: ['bill'], operation: ['create'] } };

const properties: INodeProperties[] = [
	{
		displayName: 'Shop ID',
		name: 'shopId',
		type: 'string',
		default: '',
		placeholder: 'e.g. 9rQBbwZV1g',
		description: 'The shop the bill belongs to, from the shop settings of your merchant account',
		hint: 'Required unless your PayPalych credential has a Shop ID',
	},
	{
		displayName: 'Amount',
		name: 'amount',
		type: 'string',
		required: true,
		default: '',
		placeholder: '100.00',
		description: amountDescription,
	},
	{
		displayName: 'Order ID',
		name: 'orderId',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ $json.orderNumber }}',
		description: "Your shop's order number, returned with the payment",
		hint: "The PayPalych Trigger's Order Check looks the paid order up by this ID",
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		options: [
			{
				displayName: 'Currency',
				name: 'currencyIn',
				type: 'options',
				default: '',
				description: 'Currency the customer pays in',
				options: currencyOptions,
			},
			{
				displayName: 'Custom',
				name: 'custom',
				type: 'string',
				default: '',
				description: 'Any text of yours, returned with the payment',
			},
			{
				displayName: 'Description',
				name: 'description',
				type: 'string',
				default: '',
				description: 'Description of the payment',
			},
			{
				displayName: 'Fail URL',
				name: 'failUrl',
				type: 'string',
				default: '',
				placeholder: 'https://shop.example/payment-failed',
				description:
					'The page the customer sees after a failed payment, instead of the shop setting',
			},
			{
				displayName: 'Items',
				name: 'items',
				type: 'fixedCollection',
				typeOptions: { multipleValues: true },
				placeholder: 'Add Item',
				default: {},
				description:
					'The goods shown on the payment form; use Items (JSON) for a list from an earlier node',
				options: [
					{
						displayName: 'Item',
						name: 'item',
						values: [
							{
								displayName: 'Category',
								name: 'category',
								type: 'string',
								default: '',
							},
							{
								displayName: 'Name',
								name: 'name',
								type: 'string',
								default: '',
								description: 'Name of the item',
							},
							{
								displayName: 'Price',
								name: 'price',
								type: 'string',
								default: '',
								placeholder: '990.00',
								description: 'Price of one unit, with at most 2 decimals',
							},
							{
								displayName: 'Quantity',
								name: 'quantity',
								type: 'number',
								typeOptions: { minValue: 0.001, numberPrecision: 3 },
								default: 1,
							},
						],
					},
				],
			},
			{
				displayName: 'Items (JSON)',
				name: 'itemsJson',
				type: 'json',
				default: '',
				placeholder: '[{"name": "T-shirt", "price": "990.00", "quantity": 1}]',
				description:
					'The goods as a JSON list of objects with name, price and quantity, and optionally category and extra',
			},
			{
				displayName: 'Locale',
				name: 'locale',
				type: 'options',
				default: '',
				description: 'Language of the payment form',
				options: localeOptions,
			},
			{
				displayName: 'Name',
				name: 'name',
				type: 'string',
				default: '',
				description: 'Purpose of the payment, shown on the payment form',
			},
			{
				// Where Order ID lived before it became a field of its own: a workflow saved then keeps
				// its value (n8n drops a collection's values that have no option), and the node reads
				// it when the Order ID field is empty. Hidden: never offered for new workflows.
				displayName: 'Order ID',
				name: 'orderId',
				type: 'hidden',
				default: '',
			},
			{
				displayName: 'Payer Email',
				name: 'payerEmail',
				type: 'string',
				placeholder: 'name@email.com',
				default: '',
				description: "The customer's email address, filled in on the payment form",
			},
			{
				displayName: 'Payer Pays Commission',
				name: 'payerPaysCommission',
				type: 'options',
				default: '',
				description: 'Who pays the fee for the incoming payment',
				options: payerPaysCommissionOptions,
			},
			{
				displayName: 'Payment Method',
				name: 'paymentMethod',
				type: 'options',
				default: '',
				description: 'Preselect a payment method on the payment form and allow no other',
				options: paymentMethodOptions,
			},
			{
				displayName: 'Request Fields',
				name: 'requestFields',
				type: 'multiOptions',
				default: [],
				description: 'What the payment form asks the customer to fill in',
				options: requestFieldOptions,
			},
			{
				displayName: 'Return URL',
				name: 'returnUrl',
				type: 'string',
				default: '',
				placeholder: 'https://shop.example/cart',
				description:
					'Where the "Back to shop" button of the payment form leads, on your shop\'s own domain',
			},
			{
				displayName: 'Success URL',
				name: 'successUrl',
				type: 'string',
				default: '',
				placeholder: 'https://shop.example/thanks',
				description:
					'The page the customer sees after a successful payment, instead of the shop setting',
			},
			{
				displayName: 'TTL',
				name: 'ttl',
				type: 'number',
				typeOptions: { minValue: 1 },
				default: 3600,
				description: 'How many seconds the bill can be paid, such as 600 for ten minutes',
			},
			{
				displayName: 'Type',
				name: 'type',
				type: 'options',
				default: 'normal',
				description: 'Normal bills accept one successful payment; multi bills accept any number',
				options: billTypeOptions,
			},
		],
	},
];

export const description = updateDisplayOptions(displayOptions, properties);

/** The option fields whose value (from an expression too) must be one of their choices. */
const CHOICES: Record<string, { field: string; options: INodePropertyOptions[] }> = {
	currencyIn: { field: 'Currency', options: currencyOptions },
	locale: { field: 'Locale', options: localeOptions },
	payerPaysCommission: { field: 'Payer Pays Commission', options: payerPaysCommissionOptions },
	paymentMethod: { field: 'Payment Method', options: paymentMethodOptions },
	type: { field: 'Type', options: billTypeOptions },
};

/** The Order ID sent: the field's, else the one a workflow saved in Additional Fields keeps. */
export function orderIdOf(field: unknown, additional: unknown): string | undefined {
	for (const value of [field, additional]) {
		const text = typeof value === 'string' || typeof value === 'number' ? String(value) : '';
		if (text.trim() !== '') return text;
	}
	return undefined;
}

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const node = this.getNode();
	const shopId = await requiredShopId.call(
		this,
		node,
		this.getNodeParameter('shopId', itemIndex, ''),
		itemIndex,
	);
	const amount = checkAmount(node, this.getNodeParameter('amount', itemIndex), itemIndex);
	const extra = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;

	for (const [name, rule] of Object.entries(CHOICES)) {
		const value = extra[name];
		if (value === undefined) continue;
		const text = String(value);
		const values = rule.options.map((option) => String(option.value));
		const match = values.find((allowed) => allowed.toLowerCase() === text.toLowerCase());
		if (match === undefined) {
			throw inputError(
				node,
				rule.field,
				`must be one of ${values.filter(Boolean).join(', ')} (got ${JSON.stringify(text)})`,
				itemIndex,
			);
		}
		extra[name] = match;
	}
	const text = (name: string) =>
		typeof extra[name] === 'string' || typeof extra[name] === 'number'
			? String(extra[name])
			: undefined;

	const reference: Record<string, string | undefined> = {
		ttl: checkTtl(node, extra.ttl, itemIndex),
		locale: text('locale'),
		payer_email: checkEmail(node, 'Payer Email', extra.payerEmail, itemIndex),
		success_url: checkUrl(node, 'Success URL', extra.successUrl, itemIndex),
		fail_url: checkUrl(node, 'Fail URL', extra.failUrl, itemIndex),
		return_url: checkUrl(node, 'Return URL', extra.returnUrl, itemIndex),
		...requestFieldsBody(node, extra.requestFields, itemIndex),
		...itemsBody(node, extra.itemsJson, extra.items, itemIndex),
	};

	const answer = await apiRequest.call(this, ENDPOINTS.billCreate, {
		body: {
			amount,
			shop_id: shopId,
			order_id: orderIdOf(this.getNodeParameter('orderId', itemIndex, ''), extra.orderId),
			description: text('description'),
			type: text('type'),
			currency_in: text('currencyIn'),
			custom: text('custom'),
			payer_pays_commission: text('payerPaysCommission'),
			name: text('name'),
			payment_method: text('paymentMethod'),
			...reference,
		},
		itemIndex,
	});
	return [normalizeResponse(answer)];
}
