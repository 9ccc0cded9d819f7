import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { listAll } from '../../helpers/pagination';
import { checkDateRange } from '../../helpers/validation';
import { searchFields } from '../common.descriptions';

export const description: INodeProperties[] = searchFields('bill', 'search', 'bills');

/** One output item per bill created between the two dates (inclusive). */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	return await searchByDates.call(this, ENDPOINTS.billSearch.path, itemIndex);
}

export async function searchByDates(this: IExecuteFunctions, endpoint: string, itemIndex: number): Promise<IDataObject[]> {
	const { startDate, finishDate } = checkDateRange(
		this.getNode(),
		this.getNodeParameter('startDate', itemIndex),
		this.getNodeParameter('finishDate', itemIndex),
		itemIndex,
	);
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
	const limit = returnAll ? undefined : (this.getNodeParameter('limit', itemIndex, 50) as number);
	const entries = await listAll.call(this, endpoint, { start_date: startDate, finish_date: finishDate }, limit, itemIndex);
	return entries.map((entry) => normalizeResponse(entry));
}
