import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { apiRequest } from '../../transport';

const displayOptions = { show: { resource: ['balance'], operation: ['get'] } };

const properties: INodeProperties[] = [
	{
		displayName: 'Split Into Items',
		name: 'splitIntoItems',
		type: 'boolean',
		default: false,
		description: 'Whether to output one item per currency instead of one item with every currency',
	},
];

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const split = this.getNodeParameter('splitIntoItems', itemIndex, false) as boolean;
	const answer = normalizeResponse(
		await apiRequest.call(this, ENDPOINTS.merchantBalance, { itemIndex }),
	);
	if (!split) return [answer];
	const balances = Array.isArray(answer.balances) ? (answer.balances as IDataObject[]) : [];
	return balances;
}
