import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ENDPOINTS } from '../../../shared';
import { bicOf, normalizeResponse } from '../../helpers/normalize';
import { apiRequest } from '../../transport';
import { returnAllLimit } from '../common.descriptions';

const displayOptions = { show: { resource: ['sbpBank'], operation: ['getMany'] } };

export const description = updateDisplayOptions(displayOptions, returnAllLimit);

/** One item per active SBP bank: member_id (the Bank of an SBP payout), name, name_en, bic (9 digits). */
export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const returnAll = this.getNodeParameter('returnAll', itemIndex, false) as boolean;
	const answer = await apiRequest.call(this, ENDPOINTS.sbpBanks, { itemIndex });
	const banks = (Array.isArray(answer.data) ? (answer.data as IDataObject[]) : []).map((bank) => {
		const normalized = normalizeResponse(bank);
		if (normalized.bic !== undefined) normalized.bic = bicOf(normalized.bic) as IDataObject[string];
		return normalized;
	});
	if (returnAll) return banks;
	return banks.slice(0, this.getNodeParameter('limit', itemIndex, 50) as number);
}
