import type { IDataObject, ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { ENDPOINTS } from '../../shared';
import { apiRequest } from '../transport';

/** The SBP bank dictionary as a searchable list: "name_en (name)" labels, member_id values. */
export async function searchSbpBanks(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	const answer = await apiRequest.call(this, 'GET', ENDPOINTS.sbpBanks.path);
	const banks = Array.isArray(answer.data) ? (answer.data as IDataObject[]) : [];
	const needle = (filter ?? '').trim().toLowerCase();
	const results = banks
		.map((bank) => {
			const nameEn = typeof bank.name_en === 'string' ? bank.name_en : '';
			const name = typeof bank.name === 'string' ? bank.name : '';
			const label =
				nameEn && name && nameEn !== name
					? `${nameEn} (${name})`
					: nameEn || name || String(bank.member_id);
			return { name: label, value: String(bank.member_id), bic: String(bank.bic ?? '') };
		})
		.filter((bank) => bank.value !== 'undefined')
		.filter(
			(bank) =>
				needle === '' ||
				bank.name.toLowerCase().includes(needle) ||
				bank.bic.includes(needle) ||
				bank.value === needle,
		)
		.sort((a, b) => a.name.localeCompare(b.name))
		.map(({ name, value }) => ({ name, value }));
	return { results };
}
