import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { checkRequired } from '../../helpers/validation';
import { apiRequest } from '../../transport';

const displayOptions = { show: { resource: ['payment'], operation: ['get'] } };

const properties: INodeProperties[] = [
	{
		displayName: 'Payment ID',
		name: 'paymentId',
		type: 'string',
		required: true,
		default: '',
		description: "The payment's ID, from the PayPalych Trigger's item or from Bill › Get Payments",
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Include Chargebacks',
				name: 'includeChargebacks',
				type: 'boolean',
				default: false,
				description: 'Whether to list the chargebacks of the payment too',
			},
			{
				displayName: 'Include Refunds',
				name: 'includeRefunds',
				type: 'boolean',
				default: false,
				description:
					'Whether to list the refunds of the payment too (PayPalych support switches refunds on)',
			},
		],
	},
];

export const description = updateDisplayOptions(displayOptions, properties);

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const id = checkRequired(
		this.getNode(),
		this.getNodeParameter('paymentId', itemIndex),
		itemIndex,
		'Payment ID',
	);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const answer = await apiRequest.call(this, ENDPOINTS.paymentStatus, {
		qs: {
			id,
			refunds: options.includeRefunds === true ? '1' : undefined,
			chargeback: options.includeChargebacks === true ? '1' : undefined,
		},
		itemIndex,
	});
	return [normalizeResponse(answer)];
}
