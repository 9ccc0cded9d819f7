import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { createdWithin, widenedDates, type Endpoint } from '../../shared';
import { normalizeResponse } from './normalize';
import { listAll } from './pagination';
import { shopIdFor } from './shop';
import { checkDateRange } from './validation';

/**
 * Bill > Search, Payment > Search and Payout > Search: every entry created from Start Date to Finish Date (both
 * included, on the service's own days). The service is asked for a day more on each side (its
 * `finish_date` may be exclusive, its days may be Moscow's) and the entries whose `created_at`
 * falls in the range are kept. With `shopFilter`, the node's Shop ID (else the credential's), when
 * one is set, is sent as `shop_id`.
 */
export async function searchByDates(
	this: IExecuteFunctions,
	endpoint: Endpoint,
	label: string,
	itemIndex: number,
	options: { shopFilter?: boolean; qs?: Record<string, string> } = {},
): Promise<IDataObject[]> {
	const { startDate, finishDate } = checkDateRange(
		this.getNode(),
		this.getNodeParameter('startDate', itemIndex),
		this.getNodeParameter('finishDate', itemIndex),
		itemIndex,
	);
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
	const limit = returnAll ? undefined : (this.getNodeParameter('limit', itemIndex, 50) as number);
	const qs: Record<string, string> = { ...widenedDates(startDate, finishDate), ...options.qs };
	if (options.shopFilter === true) {
		const shopId = await shopIdFor.call(this, this.getNodeParameter('shopId', itemIndex, ''));
		if (shopId !== '') qs.shop_id = shopId;
	}
	const entries = await listAll.call(
		this,
		endpoint,
		qs,
		{ limit, label, keep: (row) => createdWithin(row, startDate, finishDate) },
		itemIndex,
	);
	return entries.map((entry) => normalizeResponse(entry));
}
