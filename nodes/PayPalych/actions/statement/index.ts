import type { INodeProperties } from 'n8n-workflow';

import * as get from './get.operation';

export { get };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['statement'] } },
		options: [
			{
				name: 'Get',
				value: 'get',
				description:
					"Get a day's payments, refunds, chargebacks and payouts with their commission and effect on the balance",
				action: 'Get a daily statement',
			},
		],
		default: 'get',
	},
	...get.description,
];
