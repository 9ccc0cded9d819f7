import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { createRefundOnce } from '../../helpers/refund';
import { refundCreateFields } from '../../helpers/refundFields';

const displayOptions = { show: { resource: ['refund'], operation: ['create'] } };

export const description = updateDisplayOptions(displayOptions, refundCreateFields);

/** One output item: the refund made (or already made under this Order ID), or a Dry Run's plan. */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	return await createRefundOnce.call(this, itemIndex);
}
