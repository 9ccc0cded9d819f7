import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { checkRequired } from '../../helpers/validation';
import { apiRequest } from '../../transport';

const displayOptions = { show: { resource: ['payout'], operation: ['get'] } };

const properties: INodeProperties[] = [
	{
		displayName: 'Find By',
		name: 'findBy',
		type: 'options',
		default: 'id',
		options: [
			{ name: 'Payout ID', value: 'id', description: 'The ID PayPalych gave the payout' },
			{
				name: 'Order ID',
				value: 'orderId',
				description: 'The Order ID you gave the payout when you created it',
			},
		],
	},
	{
		displayName: 'Payout ID',
		name: 'payoutId',
		// A resource locator since 0.2; a workflow saved with the plain text field keeps its string,
		// which n8n passes through extractValue unchanged.
		type: 'resourceLocator',
		required: true,
		default: { mode: 'list', value: '' },
		description:
			"The payout: pick a recent one, or paste its ID from a payout's output or the PayPalych Trigger's item",
		displayOptions: { show: { findBy: ['id'] } },
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				typeOptions: { searchListMethod: 'searchPayouts', searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: 'e.g. 7f3a9c2e1b',
			},
		],
	},
	{
		displayName: 'Order ID',
		name: 'orderId',
		type: 'string',
		required: true,
		default: '',
		description: 'The Order ID you gave the payout when you created it',
		displayOptions: { show: { findBy: ['orderId'] } },
	},
];

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const node = this.getNode();
	const findBy = this.getNodeParameter('findBy', itemIndex, 'id') as string;
	const qs =
		findBy === 'orderId'
			? {
					order_id: checkRequired(
						node,
						this.getNodeParameter('orderId', itemIndex, ''),
						itemIndex,
						'Order ID',
					),
				}
			: {
					id: checkRequired(
						node,
						this.getNodeParameter('payoutId', itemIndex, '', { extractValue: true }),
						itemIndex,
						'Payout ID',
					),
				};
	const answer = await apiRequest.call(this, ENDPOINTS.payoutStatus, { qs, itemIndex });
	return [normalizeResponse(answer)];
}
