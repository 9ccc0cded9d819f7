import type { IDataObject, IExecuteFunctions, INodeExecutionData, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import * as balance from './balance';
import * as bill from './bill';
import * as payment from './payment';
import * as payout from './payout';
import * as sbpBank from './sbpBank';

type OperationRun = (this: IExecuteFunctions, itemIndex: number) => Promise<IDataObject[]>;

const OPERATIONS: Record<string, Record<string, OperationRun>> = {
	bill: {
		create: bill.create.execute,
		get: bill.get.execute,
		getPayments: bill.getPayments.execute,
		search: bill.search.execute,
		setActive: bill.setActive.execute,
	},
	payment: { get: payment.get.execute },
	balance: { get: balance.get.execute },
	payout: {
		createPersonal: payout.createPersonal.execute,
		createRegular: payout.createRegular.execute,
		get: payout.get.execute,
		search: payout.search.execute,
	},
	sbpBank: { getMany: sbpBank.getMany.execute },
};

/** Runs the chosen operation once per input item; every output item is paired with its input item. */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const output: INodeExecutionData[] = [];

	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const resource = this.getNodeParameter('resource', itemIndex) as string;
			const operation = this.getNodeParameter('operation', itemIndex) as string;
			const run = OPERATIONS[resource]?.[operation];
			if (!run) {
				throw new NodeOperationError(this.getNode(), `The operation "${operation}" of resource "${resource}" is not known`, {
					itemIndex,
				});
			}
			const results = await run.call(this, itemIndex);
			for (const json of results) output.push({ json, pairedItem: { item: itemIndex } });
		} catch (error) {
			if (this.continueOnFail()) {
				const json: IDataObject = { error: error.message };
				if (error.description) json.description = error.description;
				if (error.httpCode) json.httpCode = error.httpCode;
				if (error.context?.errorKey) json.errorKey = error.context.errorKey;
				output.push({ json, pairedItem: { item: itemIndex } });
				continue;
			}
			if (error instanceof NodeApiError || error instanceof NodeOperationError) {
				if (error.context.itemIndex === undefined) error.context.itemIndex = itemIndex;
			}
			if (error instanceof NodeApiError) {
				// The constructor hands back the same error (with its key, code and sentence).
				throw new NodeApiError(this.getNode(), error as unknown as JsonObject, { itemIndex });
			}
			throw new NodeOperationError(this.getNode(), error as Error, { itemIndex });
		}
	}
	return [output];
}
