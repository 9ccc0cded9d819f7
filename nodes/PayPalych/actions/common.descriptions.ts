import type { INodeProperties } from 'n8n-workflow';

type DisplayOptions = { show: Record<string, string[]> };

/** Return All and Limit for an operation that lists results. */
export function returnAllLimit(displayOptions: DisplayOptions): INodeProperties[] {
	return [
		{
			displayName: 'Return All',
			name: 'returnAll',
			type: 'boolean',
			default: false,
			description: 'Whether to return all results or only up to a given limit',
			displayOptions,
		},
		{
			displayName: 'Limit',
			name: 'limit',
			type: 'number',
			typeOptions: { minValue: 1 },
			default: 50,
			description: 'Max number of results to return',
			displayOptions: { show: { ...displayOptions.show, returnAll: [false] } },
		},
	];
}

/** The required Amount field of the two payout-create operations. */
export function payoutAmountField(displayOptions: DisplayOptions): INodeProperties {
	return {
		displayName: 'Amount',
		name: 'amount',
		type: 'string',
		required: true,
		default: '',
		placeholder: '1000.00',
		description: payoutAmountDescription,
		displayOptions,
	};
}

/** Start/Finish date pickers, Return All and Limit for a search operation. */
export function searchFields(resource: string, operation: string, what: string): INodeProperties[] {
	const displayOptions = { show: { resource: [resource], operation: [operation] } };
	return [
		{
			displayName: 'Start Date',
			name: 'startDate',
			type: 'dateTime',
			required: true,
			default: '',
			description: `First day (inclusive) of the creation dates of the ${what} to list. Sent as YYYY-MM-DD; must not be after Finish Date.`,
			displayOptions,
		},
		{
			displayName: 'Finish Date',
			name: 'finishDate',
			type: 'dateTime',
			required: true,
			default: '',
			description: `Last day (inclusive) of the creation dates of the ${what} to list. Sent as YYYY-MM-DD.`,
			displayOptions,
		},
		...returnAllLimit(displayOptions),
	];
}

export const amountDescription =
	'Amount with at most 2 decimals, such as 100 or 99.90, up to 99999999.99 (a comma is accepted as the decimal separator). Sent to the service as text, never as a float';

export const payoutAmountDescription =
	'Amount in RUB with at most 2 decimals, such as 1000 or 999.90. The service may split a large payout into several; each becomes its own output item';
