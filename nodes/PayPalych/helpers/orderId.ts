import type { IDataObject } from 'n8n-workflow';

import { errorKeyOf, httpCodeOf } from '../transport';
import { recordOf } from './normalize';

/**
 * What Payout › Create and Refund › Create share to move money once per Order ID: how a refusal
 * names a taken Order ID, when a failed call may still have moved the money, and the output rows.
 */

/** The service refused the Order ID as already used (a validation error on `order_id`). */
export function orderIdTaken(error: unknown): boolean {
	const fields = (error as { context?: IDataObject } | undefined)?.context?.fieldErrors as
		| IDataObject
		| undefined;
	return errorKeyOf(error) === 'invalid_request_data' && fields?.order_id !== undefined;
}

/** No answer, or a 5xx: the service may have moved the money before it failed to answer. */
export function mayHaveMovedMoney(error: unknown): boolean {
	const code = httpCodeOf(error);
	return code === undefined || code >= 500;
}

/** The service's records as output rows, each with the Order ID and whether it existed before. */
export function withOrderId(
	records: IDataObject[],
	orderId: string,
	alreadyExisted: boolean,
): IDataObject[] {
	return records.map((record) => {
		const out = recordOf(record);
		return { ...out, order_id: out.order_id ?? orderId, already_existed: alreadyExisted };
	});
}
