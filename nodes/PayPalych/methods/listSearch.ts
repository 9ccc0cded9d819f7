import type { IDataObject, ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import {
	ENDPOINTS,
	SERVICE_TIME_ZONE,
	addDays,
	dateIn,
	widenedDates,
	type Endpoint,
} from '../../shared';
import { listAll } from '../helpers/pagination';
import { bicOf } from '../helpers/normalize';
import { credentialShopId } from '../helpers/shop';
import { apiRequest } from '../transport';

/** The SBP bank dictionary as a searchable list: "name_en (name)" labels, member_id values. */
export async function searchSbpBanks(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	const answer = await apiRequest.call(this, ENDPOINTS.sbpBanks);
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
			return { name: label, value: String(bank.member_id), bic: String(bicOf(bank.bic) ?? '') };
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

/** Days back that Bill ID and Payout ID "From List" look at. */
const RECENT_DAYS = 30;
/** Entries a list shows at most (newest first). */
const RECENT_LIMIT = 200;

/**
 * The last RECENT_DAYS days up to today on the service's clock (Moscow is ahead of UTC), a day
 * more on each side: an exclusive `finish_date` still lists today's entries.
 */
function recentRange(): Record<string, string> {
	const today = dateIn(SERVICE_TIME_ZONE);
	return widenedDates(addDays(today, -RECENT_DAYS), today);
}

/**
 * Recent bills or payouts as a searchable list (the search matches the order ID too):
 * "<id> · order <order_id> · <amount> <currency> · <status> · <created_at>".
 */
async function searchRecent(
	context: ILoadOptionsFunctions,
	endpoint: Endpoint,
	filter: string | undefined,
): Promise<INodeListSearchResult> {
	const qs = recentRange();
	if (endpoint === ENDPOINTS.billSearch) {
		const shopId = await credentialShopId.call(context);
		if (shopId !== '') qs.shop_id = shopId;
	}
	const entries = await listAll.call(
		context,
		endpoint,
		qs,
		{ limit: RECENT_LIMIT, label: 'The list', partialOk: true },
		0,
	);
	const needle = (filter ?? '').trim().toLowerCase();
	const text = (value: unknown) =>
		typeof value === 'string' || typeof value === 'number' ? String(value) : '';
	const results = entries
		.filter((entry) => text(entry.id) !== '')
		.map((entry) => {
			const amount = [text(entry.amount), text(entry.currency_in ?? entry.currency)]
				.filter((s) => s !== '')
				.join(' ');
			const order = text(entry.order_id).trim();
			const name = [
				text(entry.id),
				order === '' ? '' : `order ${order}`,
				amount,
				text(entry.status),
				text(entry.created_at),
			]
				.filter((s) => s !== '')
				.join(' · ');
			return { name, value: text(entry.id), created: text(entry.created_at) };
		})
		.filter((entry) => needle === '' || entry.name.toLowerCase().includes(needle))
		.sort((a, b) => b.created.localeCompare(a.created))
		.map(({ name, value }) => ({ name, value }));
	return { results };
}

/** Bill ID "From List": the bills of the last RECENT_DAYS days (bill/search), newest first. */
export async function searchBills(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	return await searchRecent(this, ENDPOINTS.billSearch, filter);
}

/** Payout ID "From List": the payouts of the last RECENT_DAYS days (payout/search), newest first. */
export async function searchPayouts(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	return await searchRecent(this, ENDPOINTS.payoutSearch, filter);
}
