import type { INodeProperties } from 'n8n-workflow';

import * as get from './get.operation';

export { get };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['balance'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description:
					'Get the money you can pay out now, and the money locked or on hold, in each currency',
				action: 'Get the balance',
			},
		],
		default: 'get',
	},
	...get.description,
];
