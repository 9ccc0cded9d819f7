import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import type { Endpoint } from '../../shared';
import { normalizeResponse } from './normalize';
import { listAll } from './pagination';
import { checkDateRange } from './validation';

/** Bill > Search and Payout > Search: every entry created between Start Date and Finish Date (inclusive). */
export async function searchByDates(
	this: IExecuteFunctions,
	endpoint: Endpoint,
	itemIndex: number,
): Promise<IDataObject[]> {
	const { startDate, finishDate } = checkDateRange(
		this.getNode(),
		this.getNodeParameter('startDate', itemIndex),
		this.getNodeParameter('finishDate', itemIndex),
		itemIndex,
	);
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
	const limit = returnAll ? undefined : (this.getNodeParameter('limit', itemIndex, 50) as number);
	const entries = await listAll.call(
		this,
		endpoint,
		{ start_date: startDate, finish_date: finishDate },
		limit,
		itemIndex,
	);
	return entries.map((entry) => normalizeResponse(entry));
}
