import type { IDataObject } from 'n8n-workflow';

import type { Endpoint } from '../../shared';
import type { PayPalychContext } from '../transport';
import { apiRequest } from '../transport';

export const PAGE_SIZE = 100;

/** The next cursor of a paginated answer: `meta.next_cursor`, or the `cursor` of `links.next`. */
export function nextCursor(answer: IDataObject): string | undefined {
	const meta = answer.meta as IDataObject | undefined;
	if (meta && typeof meta === 'object') {
		const cursor = meta.next_cursor;
		if (typeof cursor === 'string' && cursor !== '') return cursor;
		if (typeof cursor === 'number') return String(cursor);
	}
	const links = answer.links as IDataObject | undefined;
	if (links && typeof links === 'object' && typeof links.next === 'string' && links.next !== '') {
		try {
			const cursor = new URL(links.next, 'http://placeholder.invalid').searchParams.get('cursor');
			if (cursor) return cursor;
		} catch {
			return undefined;
		}
	}
	return undefined;
}

/**
 * Reads a list endpoint (`data` array). With `limit` undefined reads every page; otherwise stops
 * once `limit` entries are collected. Follows the next cursor when the service gives one; an
 * answer without pagination information is a single page.
 */
export async function listAll(
	this: PayPalychContext,
	endpoint: Endpoint,
	qs: Record<string, string>,
	limit: number | undefined,
	itemIndex: number,
): Promise<IDataObject[]> {
	const entries: IDataObject[] = [];
	const seen = new Set<string>();
	let cursor: string | undefined;
	for (;;) {
		const perPage =
			limit === undefined ? PAGE_SIZE : Math.min(PAGE_SIZE, Math.max(1, limit - entries.length));
		const answer = await apiRequest.call(this, endpoint, {
			qs: { ...qs, per_page: perPage, cursor },
			itemIndex,
		});
		const data = Array.isArray(answer.data) ? (answer.data as IDataObject[]) : [];
		entries.push(...data);
		if (limit !== undefined && entries.length >= limit) return entries.slice(0, limit);
		const next = nextCursor(answer);
		// Stop on the last page, and never loop on a cursor already followed.
		if (next === undefined || seen.has(next) || data.length === 0) return entries;
		seen.add(next);
		cursor = next;
	}
}
