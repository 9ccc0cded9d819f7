import type { INodeProperties } from 'n8n-workflow';

/** Return All and Limit for an operation that lists results (wrap with updateDisplayOptions). */
export const returnAllLimit: INodeProperties[] = [
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { returnAll: [false] } },
	},
];

/**
 * A bill's payment page (link_page_url, e.g. https://pal24.pro/<path>/<bill_id>): the bill ID is the
 * page address's last path segment.
 */
export const BILL_PAGE_URL_REGEX = '^https?://[^/?#]+/(?:[^?#]*/)?([A-Za-z0-9_-]+)/?(?:[?#].*)?$';

/**
 * The Bill ID of Bill > Get, Get Payments and Set Active. Read it with `extractValue: true`; a
 * workflow saved when this was a plain text field keeps its string, which n8n passes through.
 */
export const billIdField: INodeProperties = {
	displayName: 'Bill ID',
	name: 'billId',
	type: 'resourceLocator',
	required: true,
	default: { mode: 'list', value: '' },
	description:
		'The bill: pick a recent one, paste the ID Bill › Create gave, or paste its payment page address',
	modes: [
		{
			displayName: 'From List',
			name: 'list',
			type: 'list',
			typeOptions: { searchListMethod: 'searchBills', searchable: true },
		},
		{
			displayName: 'By ID',
			name: 'id',
			type: 'string',
			placeholder: 'e.g. a1B2c3D4e5',
		},
		{
			displayName: 'By URL',
			name: 'url',
			type: 'string',
			placeholder: 'e.g. https://pal24.pro/.../a1B2c3D4e5',
			validation: [
				{
					type: 'regex',
					properties: {
						regex: BILL_PAGE_URL_REGEX,
						errorMessage: 'Not a payment page address (Payment Page URL of Bill › Create)',
					},
				},
			],
			extractValue: { type: 'regex', regex: BILL_PAGE_URL_REGEX },
		},
	],
};

/** The required Amount field of the two payout-create operations. */
export const payoutAmountField: INodeProperties = {
	displayName: 'Amount',
	name: 'amount',
	type: 'string',
	required: true,
	default: '',
	placeholder: '1000.00',
	description: 'Amount in RUB, or in Currency for a crypto payout, such as 1000 or 999.90',
};

/** Start/Finish date pickers, Return All and Limit for a search operation over `what`. */
export function searchFields(what: string): INodeProperties[] {
	return [
		{
			displayName: 'Start Date',
			name: 'startDate',
			type: 'dateTime',
			required: true,
			default: '',
			description: `The first day the ${what} to list were created on`,
		},
		{
			displayName: 'Finish Date',
			name: 'finishDate',
			type: 'dateTime',
			required: true,
			default: '',
			description: `The last day the ${what} to list were created on, included`,
		},
		...returnAllLimit,
	];
}

/** The optional shop filter of Bill › Search and Payment › Search (sent as `shop_id`). */
export const shopFilterField: INodeProperties = {
	displayName: 'Shop ID',
	name: 'shopId',
	type: 'string',
	default: '',
	placeholder: 'e.g. 9rQBbwZV1g',
	description:
		"Only this shop's entries; empty uses the credential's Shop ID, and with neither every shop is listed",
};

export const amountDescription = 'Amount with at most 2 decimals, such as 100 or 99.90';
