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
					'List the banks that accept SBP payouts, with the ID to use as the Bank of an SBP payout',
				action: 'Get many SBP banks',
			},
		],
		default: 'getMany',
	},
	...getMany.description,
];
