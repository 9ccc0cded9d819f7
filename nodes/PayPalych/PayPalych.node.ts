import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { MAIN_CONNECTION } from '../compat';

import * as balance from './actions/balance';
import * as bill from './actions/bill';
import * as payment from './actions/payment';
import * as payout from './actions/payout';
import * as refund from './actions/refund';
import { router } from './actions/router';
import * as sbpBank from './actions/sbpBank';
import * as statement from './actions/statement';
import { actionSubtitle } from './helpers/subtitle';
import { listSearch } from './methods';

export class PayPalych implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'PayPalych',
		name: 'payPalych',
		icon: { light: 'file:../../icons/paypalych.svg', dark: 'file:../../icons/paypalych.dark.svg' },
		group: ['transform'],
		version: 1,
		// Replaced in the constructor by the chosen operation's action name ("Create a bill").
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description:
			'Create bills (payment links), read payments and balances, send payouts and refunds with PayPalych',
		defaults: { name: 'PayPalych' },
		usableAsTool: true,
		// Not NodeConnectionTypes.Main: n8n 1.x before 1.85 lacks that export (see ../compat).
		inputs: [MAIN_CONNECTION],
		outputs: [MAIN_CONNECTION],
		credentials: [{ name: 'payPalychApi', required: true }],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{
						name: 'Balance',
						value: 'balance',
						description: 'Balances of the merchant account per currency',
					},
					{ name: 'Bill', value: 'bill', description: 'A payment link the customer pays on' },
					{ name: 'Payment', value: 'payment', description: 'A payment made on a bill' },
					{
						name: 'Payout',
						value: 'payout',
						description:
							'A withdrawal from the balance to a saved account, a card, SBP, a crypto wallet or Steam',
					},
					{
						name: 'Refund',
						value: 'refund',
						description:
							'Money of a payment sent back to the payer (PayPalych support switches refunds on)',
					},
					{
						name: 'SBP Bank',
						value: 'sbpBank',
						description: 'Banks reachable through the Faster Payments System',
					},
					{
						name: 'Statement',
						value: 'statement',
						description:
							"A day's payments, refunds, chargebacks and payouts tied to the balance (read-only)",
					},
				],
				default: 'bill',
			},
			...bill.description,
			...payment.description,
			...balance.description,
			...payout.description,
			...refund.description,
			...sbpBank.description,
			...statement.description,
		],
	};

	methods = { listSearch };

	constructor() {
		this.description.subtitle = actionSubtitle(this.description.properties);
	}

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
