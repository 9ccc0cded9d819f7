/**
 * The search endpoints' dates and pages: `bill/search`, `payment/search` and `payout/search` in
 * either profile, and the cursor pages of every list (those searches in `live`, `bill/payments`,
 * `refund/search`).
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { SandboxContext } from '../context.ts';
import { inWindow, parseSearchDate, searchWindow, zoneOffsetMs, type Window } from '../dates.ts';
import type { Merchant, Profile } from '../model.ts';
import { fieldError, rules, validate, type Input } from '../validate.ts';
import { getInput } from './common.ts';

const searchSchema = z.object({
	start_date: rules.date(),
	finish_date: rules.date(),
	per_page: rules.integer().optional(),
	cursor: rules.string(1000).optional(),
	shop_id: rules.string().optional(),
	order_id: rules.string().optional(),
});

/** The `spec` profile's query: the document's dates and Laravel's `page` (anything else ignored). */
const pageSchema = z.object({
	start_date: rules.date(),
	finish_date: rules.date(),
	page: z.unknown().optional(),
	shop_id: rules.string().optional(),
	order_id: rules.string().optional(),
});

/**
 * The filters bill/search and payment/search take beyond the document's dates
 * (docs/developer/service.md): `shop_id` and `order_id`, each applied when given; `requireShopId`
 * makes `shop_id` required (Laravel's 422), as one deployment does.
 */
export interface SearchFilters<T> {
	shopOf: (item: T) => string;
	orderOf: (item: T) => string | null;
	requireShopId: boolean;
}

function filtered<T>(
	items: T[],
	input: { shop_id?: string | undefined; order_id?: string | undefined },
	filters: SearchFilters<T> | undefined,
): T[] {
	if (!filters) return items;
	return items.filter(
		(item) =>
			(input.shop_id === undefined || filters.shopOf(item) === input.shop_id) &&
			(input.order_id === undefined || filters.orderOf(item) === input.order_id),
	);
}

const shopRequired =
	(filters: SearchFilters<unknown> | undefined) =>
	(input: Input): Record<string, string> =>
		filters?.requireShopId && input['shop_id'] === undefined
			? { shop_id: 'The :attribute field is required.' }
			: {};

/**
 * What a search's dates take, on the profile's clock (UTC in `live`, Moscow in `spec`): each date
 * `Y-m-d` (a day) or a date-time (an instant; UTC in `live`, as the service's reference describes
 * them, unless it names its offset). `finishIncluded`: up to the end of `finish_date`'s day or
 * second; else up to `finish_date` itself. A finish before the start is Laravel's 422.
 */
export function dateWindow(
	profile: Profile,
	startText: string,
	finishText: string,
	finishIncluded: boolean,
): Window {
	const offset = zoneOffsetMs(profile);
	const start = parseSearchDate(startText, offset);
	if (start === null) throw fieldError('start_date', 'The :attribute field must be a valid date.');
	const finish = parseSearchDate(finishText, offset);
	if (finish === null)
		throw fieldError('finish_date', 'The :attribute field must be a valid date.');
	if (finish.ms < start.ms)
		throw fieldError(
			'finish_date',
			'The :attribute field must be a date after or equal to start date.',
		);
	return searchWindow(start, finish, finishIncluded);
}

/**
 * The search endpoints. `live`: `start_date` / `finish_date` (a `Y-m-d` day or a date-time, both
 * included, UTC, on created_at); pagination only when `per_page` or `cursor` is given, with
 * `links` and `meta` as one-element lists (as the service's typed client models them). `spec`: see
 * searchSpec.
 */
export function search<T extends { createdAt: number }>(
	ctx: SandboxContext,
	request: FastifyRequest,
	merchant: Merchant,
	items: T[],
	view: (item: T) => Record<string, unknown>,
	filters?: SearchFilters<T>,
): Record<string, unknown> {
	if (merchant.profile === 'spec') return searchSpec(ctx, request, merchant, items, view, filters);
	const input = getInput(request);
	const data = validate(searchSchema, input, shopRequired(filters as SearchFilters<unknown>));
	const window = dateWindow(merchant.profile, data.start_date, data.finish_date, true);
	const found = filtered(items, data, filters).filter((item) => inWindow(item.createdAt, window));
	if (data.per_page === undefined && data.cursor === undefined) {
		return { success: true, data: found.map(view) };
	}
	return cursorPage(ctx, request, found, view, data.per_page, data.cursor, 15, 'list');
}

interface Cursor {
	o: number;
}

function encodeCursor(offset: number): string {
	return Buffer.from(JSON.stringify({ o: offset } satisfies Cursor)).toString('base64url');
}

function decodeCursor(text: string): number | null {
	try {
		const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
		const offset = (value as Cursor | null)?.o;
		return typeof offset === 'number' && Number.isSafeInteger(offset) && offset >= 0
			? offset
			: null;
	} catch {
		return null;
	}
}

/**
 * How a cursor page gives its `links` and `meta`: as objects, or each as a list of one object (the
 * typed client's model of bill/payments, bill/search, payment/search and payout/search).
 */
export type PageShape = 'object' | 'list';

/**
 * One cursor page of `items` (Laravel's cursorPaginate): `per_page` rows (1 to 1000, default
 * `defaultPerPage`) from the position `cursor` names; `links` `{next, prev}` as full URLs with the
 * request's query, `meta` `{per_page, next_cursor, prev_cursor}` (null at either end), each an
 * object or a one-element list (`shape`).
 */
export function cursorPage<T>(
	ctx: SandboxContext,
	request: FastifyRequest,
	items: T[],
	view: (item: T) => Record<string, unknown>,
	perPageInput: number | undefined,
	cursorInput: string | undefined,
	defaultPerPage: number,
	shape: PageShape = 'object',
): Record<string, unknown> {
	const perPage = perPageInput ?? defaultPerPage;
	if (perPage < 1 || perPage > 1000)
		throw fieldError('per_page', 'The :attribute field must be between 1 and 1000.');
	const offset = cursorInput === undefined ? 0 : decodeCursor(cursorInput);
	if (offset === null) throw fieldError('cursor', 'The :attribute is invalid.');
	const page = items.slice(offset, offset + perPage);
	const nextCursor = offset + perPage < items.length ? encodeCursor(offset + perPage) : null;
	const prevCursor = offset > 0 ? encodeCursor(Math.max(0, offset - perPage)) : null;
	const link = (cursor: string | null) => {
		if (cursor === null) return null;
		const url = new URL(request.url, ctx.baseUrl(request));
		url.searchParams.set('cursor', cursor);
		url.searchParams.set('per_page', String(perPage));
		return `${ctx.baseUrl(request)}${url.pathname}${url.search}`;
	};
	const links = { next: link(nextCursor), prev: link(prevCursor) };
	const meta = { per_page: perPage, next_cursor: nextCursor, prev_cursor: prevCursor };
	return {
		success: true,
		data: page.map(view),
		links: shape === 'list' ? [links] : links,
		meta: shape === 'list' ? [meta] : meta,
	};
}

/** Laravel reads a page number that is not a positive integer as page 1. */
function pageNumber(value: unknown): number {
	const text = typeof value === 'string' ? value.trim() : '';
	const n = /^\d+$/.test(text) ? Number(text) : 1;
	return Number.isSafeInteger(n) && n >= 1 ? n : 1;
}

/**
 * The search endpoints in the `spec` profile, the other answer the document allows:
 * - Moscow time (UTC+3), `finish_date` exclusive: `created_at` from `start_date` (a day's start,
 *   or a date-time on the Moscow clock) to `finish_date` (the same date twice lists nothing);
 * - always Laravel's numbered pages of `merchant.searchPageSize` rows, whatever `per_page` says:
 *   `links` (`first`, `last`, `prev`, `next`: full URLs with the request's query and `page=N`) and
 *   `meta` (`current_page`, `from`, `last_page`, `path`, `per_page`, `to`, `total`); `cursor` is
 *   ignored. A page past the last one has no rows.
 */
function searchSpec<T extends { createdAt: number }>(
	ctx: SandboxContext,
	request: FastifyRequest,
	merchant: Merchant,
	items: T[],
	view: (item: T) => Record<string, unknown>,
	filters: SearchFilters<T> | undefined,
): Record<string, unknown> {
	const input = getInput(request);
	const data = validate(pageSchema, input, shopRequired(filters as SearchFilters<unknown>));
	const window = dateWindow(merchant.profile, data.start_date, data.finish_date, false);
	const found = filtered(items, data, filters).filter((item) => inWindow(item.createdAt, window));
	const perPage = merchant.searchPageSize;
	const lastPage = Math.max(1, Math.ceil(found.length / perPage));
	const page = pageNumber(input['page']);
	const rows = found.slice((page - 1) * perPage, page * perPage);
	const base = ctx.baseUrl(request);
	const path = `${base}${request.url.split('?')[0] ?? ''}`;
	const link = (n: number | null) => {
		if (n === null) return null;
		const url = new URL(request.url, base);
		url.searchParams.set('page', String(n));
		return `${path}${url.search}`;
	};
	const from = rows.length > 0 ? (page - 1) * perPage + 1 : null;
	return {
		success: true,
		data: rows.map(view),
		links: {
			first: link(1),
			last: link(lastPage),
			prev: page > 1 ? link(Math.min(page - 1, lastPage)) : null,
			next: page < lastPage ? link(page + 1) : null,
		},
		meta: {
			current_page: page,
			from,
			last_page: lastPage,
			path,
			per_page: perPage,
			to: from === null ? null : from + rows.length - 1,
			total: found.length,
		},
	};
}
