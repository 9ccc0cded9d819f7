import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS, withPaymentId } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { listAll } from '../../helpers/pagination';
import { withRefundAdvice } from '../../helpers/refundable';
import { searchByDates } from '../../helpers/search';
import { checkRequired } from '../../helpers/validation';
import { returnAllLimit, searchFields } from '../common.descriptions';

const displayOptions = { show: { resource: ['refund'], operation: ['search'] } };

const byDates = { show: { searchBy: ['dates'] } };

const properties: INodeProperties[] = [
	{
		displayName: 'Search By',
		name: 'searchBy',
		type: 'options',
		default: 'paymentId',
		options: [
			{ name: 'Payment ID', value: 'paymentId', description: 'Every refund of one payment' },
			{
				name: 'Date Range',
				value: 'dates',
				description: 'The refunds created between two dates',
			},
		],
	},
	{
		displayName: 'Payment ID',
		name: 'paymentId',
		type: 'string',
		required: true,
		default: '',
		description: 'ID of the payment whose refunds to list',
		displayOptions: { show: { searchBy: ['paymentId'] } },
	},
	// Start/Finish Date for a date range; Return All and Limit for both.
	...searchFields('refunds')
		.filter((field) => field.name === 'startDate' || field.name === 'finishDate')
		.map((field) => ({ ...field, displayOptions: byDates })),
	...returnAllLimit,
];

export const description = updateDisplayOptions(displayOptions, properties);

/**
 * One output item per refund, read through every page of refund/search, each naming its payment
 * as `payment_id` (the service's records may name it as `entity_id` only).
 */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const searchBy = this.getNodeParameter('searchBy', itemIndex, 'paymentId') as string;
	if (searchBy === 'dates') {
		const found = await withRefundAdvice(
			this,
			async () =>
				await searchByDates.call(this, ENDPOINTS.refundSearch, 'Refund › Search', itemIndex),
		);
		return found.map((refund) => withPaymentId(refund));
	}
	const paymentId = checkRequired(
		this.getNode(),
		this.getNodeParameter('paymentId', itemIndex, ''),
		itemIndex,
		'Payment ID',
	);
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
	const limit = returnAll ? undefined : (this.getNodeParameter('limit', itemIndex, 50) as number);
	const refunds = await withRefundAdvice(
		this,
		async () =>
			await listAll.call(
				this,
				ENDPOINTS.refundSearch,
				{ payment_id: paymentId },
				{ limit, label: 'Refund › Search' },
				itemIndex,
			),
	);
	return refunds.map((refund) => withPaymentId(normalizeResponse(refund)));
}
