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
			{ name: 'Payout ID', value: 'id', description: 'The ID the service gave the payout' },
			{
				name: 'Order ID',
				value: 'orderId',
				description: 'Your order ID of the payout (or the one the node derived)',
			},
		],
	},
	{
		displayName: 'Payout ID',
		name: 'payoutId',
		type: 'string',
		required: true,
		default: '',
		description:
			'The ID of the payout (the ID of a payout-create output item, or TrsId of a payout postback)',
		displayOptions: { show: { findBy: ['id'] } },
	},
	{
		displayName: 'Order ID',
		name: 'orderId',
		type: 'string',
		required: true,
		default: '',
		description: 'The order_id of the payout',
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
						this.getNodeParameter('payoutId', itemIndex, ''),
						itemIndex,
						'Payout ID',
					),
				};
	const answer = await apiRequest.call(this, 'GET', ENDPOINTS.payoutStatus.path, { qs, itemIndex });
	return [normalizeResponse(answer)];
}
