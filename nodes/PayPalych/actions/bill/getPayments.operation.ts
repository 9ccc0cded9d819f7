import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { normalizeResponse } from '../../helpers/normalize';
import { listAll } from '../../helpers/pagination';
import { checkRequired } from '../../helpers/validation';
import { billIdField, returnAllLimit } from '../common.descriptions';

const displayOptions = { show: { resource: ['bill'], operation: ['getPayments'] } };

export const description = updateDisplayOptions(displayOptions, [billIdField, ...returnAllLimit]);

/**
 * One output item per payment of the bill. `bill/payments` is cursor-paged on the live service
 * (`per_page`, `cursor`, `links` / `meta`): every page is read through the one pagination helper,
 * up to Limit unless Return All.
 */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const id = checkRequired(
		this.getNode(),
		this.getNodeParameter('billId', itemIndex, '', { extractValue: true }),
		itemIndex,
		'Bill ID',
	);
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
	const limit = returnAll ? undefined : (this.getNodeParameter('limit', itemIndex, 50) as number);
	const payments = await listAll.call(
		this,
		ENDPOINTS.billPayments,
		{ id },
		{
			limit,
			label: 'Bill › Get Payments',
			incomplete: 'No payment was output rather than a part of the list.',
			capAdvice: 'Turn off Return All and set a Limit to read the first payments of the bill.',
		},
		itemIndex,
	);
	return payments.map((payment) => normalizeResponse(payment));
}
