import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';
import * as get from './get.operation';
import * as getPayments from './getPayments.operation';
import * as search from './search.operation';
import * as setActive from './setActive.operation';

export { create, get, getPayments, search, setActive };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['bill'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				description:
					'Create a bill (payment link) and get the payment page URL to send to the customer',
				action: 'Create a bill',
			},
			{
				name: 'Get',
				value: 'get',
				description: 'Get the status, amount and type of a bill by its ID',
				action: 'Get a bill',
			},
			{
				name: 'Get Payments',
				value: 'getPayments',
				description: 'List the payments made on a bill, one item per payment',
				action: 'Get payments of a bill',
			},
			{
				name: 'Search',
				value: 'search',
				description: 'List the bills created between two dates',
				action: 'Search bills',
			},
			{
				name: 'Set Active',
				value: 'setActive',
				description: 'Switch a bill on (accepts payments) or off',
				action: 'Set a bill active or inactive',
			},
		],
		default: 'create',
	},
	...create.description,
	...get.description,
	...getPayments.description,
	...search.description,
	...setActive.description,
];
