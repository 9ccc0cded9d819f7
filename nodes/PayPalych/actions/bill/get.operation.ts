import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { checkRequired } from '../../helpers/validation';
import { apiRequest } from '../../transport';
import { billIdField } from '../common.descriptions';

const displayOptions = { show: { resource: ['bill'], operation: ['get'] } };

export const description = updateDisplayOptions(displayOptions, [billIdField]);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const id = checkRequired(
		this.getNode(),
		this.getNodeParameter('billId', itemIndex, '', { extractValue: true }),
		itemIndex,
		'Bill ID',
	);
	const answer = await apiRequest.call(this, ENDPOINTS.billStatus, {
		qs: { id },
		itemIndex,
	});
	return [normalizeResponse(answer)];
}
