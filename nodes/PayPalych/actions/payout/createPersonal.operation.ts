import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { createGuardedPayout, payoutCreateFields } from '../../helpers/guardrails';
import { accountIntent } from '../../helpers/payout';
import { payoutMoneyFields } from '../../helpers/payoutOptions';
import { checkAmount, checkRequired } from '../../helpers/validation';
import { payoutAmountField } from '../common.descriptions';

const displayOptions = { show: { resource: ['payout'], operation: ['createPersonal'] } };

const properties: INodeProperties[] = [
	{
		displayName: 'Payout Account ID',
		name: 'payoutAccountId',
		type: 'string',
		required: true,
		default: '',
		description: 'The ID of a payout account saved in your merchant account',
	},
	payoutAmountField,
	...payoutCreateFields,
];

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const node = this.getNode();
	const payoutAccountId = checkRequired(
		node,
		this.getNodeParameter('payoutAccountId', itemIndex),
		itemIndex,
		'Payout Account ID',
	);
	const amount = checkAmount(node, this.getNodeParameter('amount', itemIndex), itemIndex);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const params = {
		amount,
		payout_account_id: payoutAccountId,
		...payoutMoneyFields(node, options, itemIndex),
	};
	return await createGuardedPayout.call(
		this,
		itemIndex,
		ENDPOINTS.payoutPersonalCreate,
		params,
		accountIntent(amount, payoutAccountId),
	);
}
