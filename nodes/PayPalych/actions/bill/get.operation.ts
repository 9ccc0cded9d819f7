import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { checkRequired } from '../../helpers/validation';
import { apiRequest } from '../../transport';

export const description: INodeProperties[] = [
	{
		displayName: 'Bill ID',
		name: 'billId',
		type: 'string',
		required: true,
		default: '',
		description: 'The bill_id returned by Bill > Create',
		displayOptions: { show: { resource: ['bill'], operation: ['get', 'getPayments'] } },
	},
];

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const id = checkRequired(this.getNode(), this.getNodeParameter('billId', itemIndex), itemIndex, 'Bill ID');
	const answer = await apiRequest.call(this, 'GET', ENDPOINTS.billStatus.path, { qs: { id }, itemIndex });
	return [normalizeResponse(answer)];
}
