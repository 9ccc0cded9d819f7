import type { IDataObject, IExecuteFunctions, INodeProperties, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { ENDPOINTS } from '../../shared';
import { apiRequest } from '../transport';
import { normalizeResponse } from './normalize';
import { listAll } from './pagination';
import { deriveOrderId, randomOrderId } from './orderId';

export const ORDER_ID_RULE =
	'Leave empty to let the node derive a stable ID: "n8n-" and 24 hex digits of SHA-256 over the workflow ID, the node name, the item index, the input item and the payout amount and destination. A retried or re-run execution with the same input gets the same ID, and the node returns the payout already made for it (marked already_existed) instead of paying twice.';

/** The Options collection of the two payout-create operations. */
export function payoutOptions(operation: string): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show: { resource: ['payout'], operation: [operation] } },
		options: [
			{
				displayName: 'Allow Duplicate Payout',
				name: 'allowDuplicate',
				type: 'boolean',
				default: false,
				description:
					'Whether to pay again even when the same input was already paid out: the node then uses a random order ID instead of the derived one. Ignored when Order ID is set.',
			},
			{
				displayName: 'Order ID',
				name: 'orderId',
				type: 'string',
				default: '',
				description: `Your unique ID of this payout. The service refuses a second payout with the same ID; the node then returns the existing payout. ${ORDER_ID_RULE}`,
			},
		],
	};
}

function errorKey(error: unknown): string | undefined {
	const context = (error as { context?: IDataObject } | undefined)?.context;
	return typeof context?.errorKey === 'string' ? context.errorKey : undefined;
}

function orderIdTaken(error: unknown): boolean {
	const context = (error as { context?: IDataObject } | undefined)?.context;
	const fields = context?.fieldErrors as IDataObject | undefined;
	return errorKey(error) === 'invalid_request_data' && fields !== undefined && fields.order_id !== undefined;
}

/** The payout with this order ID, or undefined when the service has none. */
export async function findPayoutByOrderId(
	this: IExecuteFunctions,
	orderId: string,
	itemIndex: number,
): Promise<IDataObject | undefined> {
	try {
		return await apiRequest.call(this, 'GET', ENDPOINTS.payoutStatus.path, { qs: { order_id: orderId }, itemIndex });
	} catch (error) {
		if (errorKey(error) === 'api:error.payout_not_found') return undefined;
		throw new NodeApiError(this.getNode(), error as JsonObject, { itemIndex });
	}
}

/**
 * All payouts already made under this order ID. payout/status answers the first one; a split
 * payout has more parts, found by searching the day it was created. Without a usable search the
 * first one is all there is to return.
 */
async function existingPayouts(
	this: IExecuteFunctions,
	first: IDataObject,
	orderId: string,
	itemIndex: number,
): Promise<IDataObject[]> {
	const marked = (payout: IDataObject) => {
		const out = normalizeResponse(payout);
		delete out.success;
		return { ...out, order_id: out.order_id ?? orderId, already_existed: true };
	};
	const day = typeof first.created_at === 'string' ? first.created_at.slice(0, 10) : '';
	if (/^\d{4}-\d{2}-\d{2}$/.test(day)) {
		let parts: IDataObject[] = [];
		try {
			const sameDay = await listAll.call(this, ENDPOINTS.payoutSearch.path, { start_date: day, finish_date: day }, undefined, itemIndex);
			parts = sameDay.filter((payout) => payout.order_id === orderId);
		} catch {
			parts = [];
		}
		if (parts.length > 1 && parts.some((payout) => payout.id === first.id)) return parts.map(marked);
	}
	return [marked(first)];
}

/**
 * Creates a payout at most once per order ID. Looks the order ID up first and returns the
 * existing payout (already_existed: true) when there is one; if the create call is refused
 * because the order ID was taken meanwhile, looks it up again. Each payout of a split answer is
 * its own entry.
 */
export async function createPayoutOnce(
	this: IExecuteFunctions,
	itemIndex: number,
	endpoint: string,
	body: Record<string, string | undefined>,
	destination: Record<string, string>,
): Promise<IDataObject[]> {
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const given = typeof options.orderId === 'string' || typeof options.orderId === 'number' ? String(options.orderId).trim() : '';
	let orderId = given;
	let lookUp = true;
	if (orderId === '') {
		if (options.allowDuplicate === true) {
			orderId = randomOrderId();
			lookUp = false;
		} else {
			orderId = deriveOrderId({
				workflowId: String(this.getWorkflow().id ?? ''),
				nodeName: this.getNode().name,
				itemIndex,
				input: this.getInputData()[itemIndex]?.json ?? {},
				payout: destination,
			});
		}
	}

	if (lookUp) {
		const existing = await findPayoutByOrderId.call(this, orderId, itemIndex);
		if (existing) return await existingPayouts.call(this, existing, orderId, itemIndex);
	}

	let answer: IDataObject;
	try {
		answer = await apiRequest.call(this, 'POST', endpoint, { body: { ...body, order_id: orderId }, itemIndex });
	} catch (error) {
		if (orderIdTaken(error)) {
			const existing = await findPayoutByOrderId.call(this, orderId, itemIndex);
			if (existing) return await existingPayouts.call(this, existing, orderId, itemIndex);
		}
		throw new NodeApiError(this.getNode(), error as JsonObject, { itemIndex });
	}
	const payouts = Array.isArray(answer.data) ? (answer.data as IDataObject[]) : [];
	return payouts.map((payout) => {
		const out = normalizeResponse(payout);
		return { ...out, order_id: out.order_id ?? orderId, already_existed: false };
	});
}
