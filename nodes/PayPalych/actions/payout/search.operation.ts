import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { searchByDates } from '../bill/search.operation';
import { searchFields } from '../common.descriptions';

export const description: INodeProperties[] = searchFields('payout', 'search', 'payouts');

/** One output item per payout created between the two dates (inclusive). */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	return await searchByDates.call(this, ENDPOINTS.payoutSearch.path, itemIndex);
}
