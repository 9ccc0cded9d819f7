import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { checkRequired } from '../../helpers/validation';
import { apiRequest } from '../../transport';

const displayOptions = { show: { resource: ['payment'], operation: ['get'] } };

const properties: INodeProperties[] = [
	{
		displayName: 'Payment ID',
		name: 'paymentId',
		type: 'string',
		required: true,
		default: '',
		description:
			'ID of the payment (the TrsId of the payment postback, or an ID from Bill > Get Payments)',
	},
];

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const id = checkRequired(
		this.getNode(),
		this.getNodeParameter('paymentId', itemIndex),
		itemIndex,
		'Payment ID',
	);
	const answer = await apiRequest.call(this, ENDPOINTS.paymentStatus, {
		qs: { id },
		itemIndex,
	});
	return [normalizeResponse(answer)];
}
