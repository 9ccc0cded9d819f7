import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import type { PayPalychMap } from '../node.type';
import * as balance from './balance';
import * as bill from './bill';
import * as payment from './payment';
import * as payout from './payout';
import * as refund from './refund';
import * as sbpBank from './sbpBank';
import * as statement from './statement';

type OperationRun = (this: IExecuteFunctions, itemIndex: number) => Promise<IDataObject[]>;

const OPERATIONS = {
	bill: {
		create: bill.create.execute,
		get: bill.get.execute,
		getPayments: bill.getPayments.execute,
		search: bill.search.execute,
		setActive: bill.setActive.execute,
	},
	payment: { get: payment.get.execute, search: payment.search.execute },
	balance: { get: balance.get.execute },
	payout: {
		createPersonal: payout.createPersonal.execute,
		createRegular: payout.createRegular.execute,
		get: payout.get.execute,
		search: payout.search.execute,
	},
	refund: {
		create: refund.create.execute,
		get: refund.get.execute,
		search: refund.search.execute,
	},
	sbpBank: { getMany: sbpBank.getMany.execute },
	statement: { get: statement.get.execute },
} satisfies { [R in keyof PayPalychMap]: Record<PayPalychMap[R], OperationRun> };

function runnerOf(resource: string, operation: string): OperationRun | undefined {
	const operations: Record<string, OperationRun> | undefined = Object.prototype.hasOwnProperty.call(
		OPERATIONS,
		resource,
	)
		? OPERATIONS[resource as keyof PayPalychMap]
		: undefined;
	return operations && Object.prototype.hasOwnProperty.call(operations, operation)
		? operations[operation]
		: undefined;
}

/**
 * The one place errors are wrapped: an error an operation throws (already a NodeApiError or
 * NodeOperationError from the transport or the input checks, or anything else) leaves the node as
 * a NodeApiError or NodeOperationError that names the item.
 */
function asNodeError(
	this: IExecuteFunctions,
	error: unknown,
	itemIndex: number,
): NodeApiError | NodeOperationError {
	const wrapped =
		error instanceof NodeApiError || error instanceof NodeOperationError
			? error
			: new NodeOperationError(this.getNode(), error as Error, { itemIndex });
	if (wrapped.context.itemIndex === undefined) wrapped.context.itemIndex = itemIndex;
	return wrapped;
}

/** Runs the chosen operation once per input item; every output item is paired with its input item. */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const output: INodeExecutionData[] = [];

	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const resource = this.getNodeParameter('resource', itemIndex) as string;
			const operation = this.getNodeParameter('operation', itemIndex) as string;
			const run = runnerOf(resource, operation);
			if (!run) {
				throw new NodeOperationError(
					this.getNode(),
					`The operation "${operation}" of resource "${resource}" is not known`,
					{
						itemIndex,
					},
				);
			}
			const results = await run.call(this, itemIndex);
			for (const json of results) output.push({ json, pairedItem: { item: itemIndex } });
		} catch (caught) {
			const error = asNodeError.call(this, caught, itemIndex);
			if (!this.continueOnFail()) throw error;
			const json: IDataObject = { error: error.message };
			if (error.description) json.description = error.description;
			if (error instanceof NodeApiError && error.httpCode) json.httpCode = error.httpCode;
			if (error.context.errorKey) json.errorKey = error.context.errorKey as string;
			output.push({ json, pairedItem: { item: itemIndex } });
		}
	}
	return [output];
}
