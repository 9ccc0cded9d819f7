import type { INodeProperties } from 'n8n-workflow';

import * as createPersonal from './createPersonal.operation';
import * as createRegular from './createRegular.operation';
import * as get from './get.operation';
import * as search from './search.operation';

export { createPersonal, createRegular, get, search };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['payout'] } },
		options: [
			{
				name: 'Create to Card, SBP, Crypto or Steam',
				value: 'createRegular',
				description:
					'Pay out from the balance to a card, a phone through SBP, a crypto wallet or a Steam account, never twice for one Order ID',
				action: 'Create a direct payout',
			},
			{
				name: 'Create to Saved Account',
				value: 'createPersonal',
				description:
					'Pay out from the balance to a payout account saved in your merchant account, never twice for one Order ID',
				action: 'Create a payout to a saved account',
			},
			{
				name: 'Get',
				value: 'get',
				description: 'Get the status of a payout by its ID or by its order ID',
				action: 'Get a payout',
			},
			{
				name: 'Search',
				value: 'search',
				description: 'List the payouts created between two dates',
				action: 'Search payouts',
			},
		],
		default: 'createPersonal',
	},
	...createPersonal.description,
	...createRegular.description,
	...get.description,
	...search.description,
];
