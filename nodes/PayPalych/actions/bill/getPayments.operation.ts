import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { checkRequired } from '../../helpers/validation';
import { apiRequest } from '../../transport';

// The Bill ID field is shared with Bill > Get (see get.operation.ts).
export const description: INodeProperties[] = [];

/** One output item per payment of the bill. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const id = checkRequired(this.getNode(), this.getNodeParameter('billId', itemIndex), itemIndex, 'Bill ID');
	const answer = await apiRequest.call(this, 'GET', ENDPOINTS.billPayments.path, { qs: { id }, itemIndex });
	const data = Array.isArray(answer.data) ? (answer.data as IDataObject[]) : [];
	return data.map((payment) => normalizeResponse(payment));
}
