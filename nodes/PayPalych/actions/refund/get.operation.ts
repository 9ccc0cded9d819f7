import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS, withPaymentId } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { withRefundAdvice } from '../../helpers/refundable';
import { checkRequired } from '../../helpers/validation';
import { apiRequest } from '../../transport';

const displayOptions = { show: { resource: ['refund'], operation: ['get'] } };

const properties: INodeProperties[] = [
	{
		displayName: 'Refund ID',
		name: 'refundId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. r4Xk2mQ9pL',
		description: "The refund's ID, from Refund › Create or the PayPalych Trigger's item",
	},
];

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const id = checkRequired(
		this.getNode(),
		this.getNodeParameter('refundId', itemIndex),
		itemIndex,
		'Refund ID',
	);
	const answer = await withRefundAdvice(
		this,
		async () => await apiRequest.call(this, ENDPOINTS.refundStatus, { qs: { id }, itemIndex }),
	);
	return [withPaymentId(normalizeResponse(answer))];
}
