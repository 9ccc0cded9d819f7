import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { normalizeResponse, toBoolean } from '../../helpers/normalize';
import { checkRequired } from '../../helpers/validation';
import { apiRequest } from '../../transport';
import { billIdField } from '../common.descriptions';

const displayOptions = { show: { resource: ['bill'], operation: ['setActive'] } };

const properties: INodeProperties[] = [
	billIdField,
	{
		displayName: 'Active',
		name: 'active',
		type: 'boolean',
		default: true,
		description: 'Whether the bill accepts payments (a paid normal bill cannot be switched)',
	},
];

export const description = updateDisplayOptions(displayOptions, properties);

/** Switches a bill on or off. The answer's activity flag comes as `active` or `activity`: output always has boolean `active`. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const id = checkRequired(
		this.getNode(),
		this.getNodeParameter('billId', itemIndex, '', { extractValue: true }),
		itemIndex,
		'Bill ID',
	);
	const active = this.getNodeParameter('active', itemIndex, true) as boolean;
	const answer = normalizeResponse(
		await apiRequest.call(this, ENDPOINTS.billToggleActivity, {
			body: { id, active: active ? '1' : '0' },
			itemIndex,
		}),
	);
	if (answer.active === undefined && answer.activity !== undefined) {
		answer.active = toBoolean(answer.activity) as IDataObject[string];
	}
	return [answer];
}
