import type { INodeProperties } from 'n8n-workflow';

import * as getMany from './getMany.operation';

export { getMany };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['sbpBank'] } },
		options: [
			{
				name: 'Get Many',
				value: 'getMany',
				description:
					'List the banks that accept SBP payouts, with the member_id to use as the bank of an SBP payout',
				action: 'Get many SBP banks',
			},
		],
		default: 'getMany',
	},
	...getMany.description,
];
