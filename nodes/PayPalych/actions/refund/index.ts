import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';
import * as get from './get.operation';
import * as search from './search.operation';

export { create, get, search };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['refund'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				description:
					'Send money of a payment back to the payer, whole or in part, never twice for one Order ID',
				action: 'Create a refund',
			},
			{
				name: 'Get',
				value: 'get',
				description: 'Get the status of a refund by its ID',
				action: 'Get a refund',
			},
			{
				name: 'Search',
				value: 'search',
				description: 'List the refunds of a payment, or those created between two dates',
				action: 'Search refunds',
			},
		],
		default: 'create',
	},
	...create.description,
	...get.description,
	...search.description,
];
