import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { searchByDates } from '../../helpers/search';
import { searchFields, shopFilterField } from '../common.descriptions';

const displayOptions = { show: { resource: ['bill'], operation: ['search'] } };

export const description = updateDisplayOptions(displayOptions, [
	...searchFields('bills'),
	shopFilterField,
]);

/** One output item per bill created between the two dates (inclusive). */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	return await searchByDates.call(this, ENDPOINTS.billSearch, 'Bill › Search', itemIndex, {
		shopFilter: true,
	});
}
