import type { INodeProperties } from 'n8n-workflow';

import * as get from './get.operation';
import * as search from './search.operation';

export { get, search };

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
			{
				name: 'Search',
				value: 'search',
				description: 'List the payments made between two dates',
				action: 'Search payments',
			},
		],
		default: 'get',
	},
	...get.description,
	...search.description,
];
