import type { INodeProperties } from 'n8n-workflow';

import * as get from './get.operation';

export { get };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['payment'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description: 'Get the status, amounts and masked card of a payment by its ID',
				action: 'Get a payment',
			},
		],
		default: 'get',
	},
	...get.description,
];
