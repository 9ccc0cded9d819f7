import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { searchByDates } from '../../helpers/search';
import { searchFields, shopFilterField } from '../common.descriptions';

const displayOptions = { show: { resource: ['payment'], operation: ['search'] } };

export const description = updateDisplayOptions(displayOptions, [
	...searchFields('payments'),
	shopFilterField,
]);

/**
 * One output item per payment made between the two dates (inclusive): `payment/search`, from the
 * service's current reference, read like Bill › Search (a day more on each side, every page).
 */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	return await searchByDates.call(this, ENDPOINTS.paymentSearch, 'Payment › Search', itemIndex, {
		shopFilter: true,
	});
}
