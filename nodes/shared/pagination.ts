/**
 * Reading a paginated list of the service (`bill/search`, `payout/search`) whatever pagination it
 * uses. The interface document specifies none; what is seen or plausible: one answer with every
 * row, a cursor (`meta.next_cursor`), or Laravel's numbered pages (`links.next` as a full URL with
 * `?page=N`, `meta.current_page` / `meta.last_page`). `links` and `meta` are read as objects or as
 * lists of one object (pageObjectOf). The next page is, in this order:
 * 1. `links.next` as given (whatever parameter it carries), when it points at the credential's
 *    own origin and API path: the request carries the Bearer token, which must never go to a host
 *    an answer names. A `links.next` elsewhere is not followed (see `refusedNext`);
 * 2. else `meta.next_cursor`, as `cursor` on the URL just read;
 * 3. else, when `meta.current_page < meta.last_page`, `page=current_page + 1` on the URL just read.
 * Reading stops on the last page, on a page with no rows, on a page already read (the same URL,
 * the same `current_page` or the same rows again: a service that ignores the page parameter), and
 * at a page cap. A row whose `id` was already read (rows shifted between two page requests) is
 * left out. Pure: the caller passes the function that fetches one page (with its credentials).
 */

import { createHash } from 'crypto';

/** Fetches one page: a GET of this absolute URL with the credential, answering the JSON object. */
export type PageFetcher = (url: string) => Promise<Record<string, unknown>>;

/** Why reading stopped. */
export type PagesEnd =
	/** No next page: the service said this was the last one (or gave no pagination at all). */
	| 'last_page'
	/** The page had no rows. */
	| 'empty_page'
	/** The next page was one already read. */
	| 'repeated_page'
	/** The caller stopped (enough rows). */
	| 'stopped'
	/** maxPages pages were read and the service names another one (`next`). */
	| 'page_cap'
	/** `links.next` points outside the API root and nothing else names a next page. */
	| 'refused_next';

/** One page as `pages()` yields it. */
export interface Page<T> {
	/** The URL this page was read from. */
	url: string;
	/** 1 for the first page read, 2 for the next, ... */
	number: number;
	/** Its rows (`data`), without rows already yielded on an earlier page. */
	rows: T[];
	/** The size of the page's `data` as JSON, in characters: what its rows weigh. */
	bytes: number;
	/** The URL of the next page: where a reader that stops here resumes. Undefined on the last. */
	next?: string;
	/** Set on the last page yielded: why there is no next one. */
	end?: PagesEnd;
	/** A `links.next` that was not followed because it leaves the API root (origin and path). */
	refusedNext?: string;
}

export interface PagesOptions {
	/** The first page: the endpoint's absolute URL with its query (see `listUrl`). */
	firstUrl: string;
	/** The API root a `links.next` must stay under, e.g. `https://pal24.pro/api/v1/` (see `apiRootOf`). */
	apiRoot: string;
	/** Most pages read (default DEFAULT_MAX_PAGES). */
	maxPages?: number;
}

/** The default page cap: a guard against a service that never ends, not a limit on real lists. */
export const DEFAULT_MAX_PAGES = 1000;

/** The API root under a base URL: `https://pal24.pro` gives `https://pal24.pro/api/v1/`. */
export function apiRootOf(baseUrl: string): string {
	return `${baseUrl.replace(/\/+$/, '')}/api/v1/`;
}

/** An endpoint's absolute URL with a query: `listUrl(base, '/api/v1/bill/search', {...})`. */
export function listUrl(
	baseUrl: string,
	path: string,
	query: Readonly<Record<string, string | number | undefined>>,
): string {
	const url = new URL(`${baseUrl.replace(/\/+$/, '')}${path}`);
	for (const [name, value] of Object.entries(query)) {
		if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
	}
	return url.toString();
}

/**
 * Whether a URL is one the credential's token may be sent to: the API root's scheme, host and
 * port, a path under the API root's path, and no user name or password in it.
 */
export function isUnderApiRoot(candidate: string, apiRoot: string): boolean {
	let url: URL;
	let root: URL;
	try {
		url = new URL(candidate);
		root = new URL(apiRoot);
	} catch {
		return false;
	}
	if (url.username !== '' || url.password !== '') return false;
	if (url.origin !== root.origin) return false;
	const prefix = root.pathname.endsWith('/') ? root.pathname : `${root.pathname}/`;
	return url.pathname.startsWith(prefix);
}

function objectOf(value: unknown): Record<string, unknown> | undefined {
	return typeof value === 'object' && value !== null && !Array.isArray(value)
		? (value as Record<string, unknown>)
		: undefined;
}

/**
 * An answer's `links` or `meta`: an object, or a list of one object (the service's typed client
 * models them so on bill/payments, bill/search, payment/search and payout/search, and as objects
 * on refund/search; both are read wherever they come). Anything else (a list of several entries,
 * as Laravel's page links inside `meta` are) names no page: undefined.
 */
export function pageObjectOf(value: unknown): Record<string, unknown> | undefined {
	if (Array.isArray(value)) return value.length === 1 ? objectOf(value[0]) : undefined;
	return objectOf(value);
}

function positiveInt(value: unknown): number | undefined {
	const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
	return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/**
 * What names a page in a URL: the URL itself, and its `cursor` and `page` parameters. A next URL
 * that shares one of them with a page already read is that page again (the same cursor behind
 * another spelling of the URL is the same page).
 */
function pageMarks(url: string): string[] {
	const marks = [`url ${url}`];
	try {
		const params = new URL(url).searchParams;
		const cursor = params.get('cursor');
		if (cursor !== null && cursor !== '') marks.push(`cursor ${cursor}`);
		const page = positiveInt(params.get('page') ?? undefined);
		if (page !== undefined) marks.push(`page ${page}`);
	} catch {
		// An unreadable URL is named by its text only.
	}
	return marks;
}

function withParam(url: string, name: string, value: string): string {
	const next = new URL(url);
	next.searchParams.set(name, value);
	return next.toString();
}

/**
 * The URL of the page after `answer` (read from `url`), or why there is none. `links.next` is
 * taken as given, resolved against the URL read; outside the API root it is refused and the
 * meta fields are tried instead.
 */
export function nextPageUrl(
	answer: Record<string, unknown>,
	url: string,
	apiRoot: string,
): { next?: string; refused?: string } {
	let refused: string | undefined;
	const links = pageObjectOf(answer.links);
	if (links && typeof links.next === 'string' && links.next.trim() !== '') {
		let resolved: string | undefined;
		try {
			resolved = new URL(links.next.trim(), url).toString();
		} catch {
			resolved = undefined;
		}
		if (resolved !== undefined && isUnderApiRoot(resolved, apiRoot)) return { next: resolved };
		refused = links.next.trim();
	}
	const meta = pageObjectOf(answer.meta);
	const cursor = meta?.next_cursor;
	if ((typeof cursor === 'string' && cursor !== '') || typeof cursor === 'number') {
		return { next: withParam(url, 'cursor', String(cursor)), refused };
	}
	const current = positiveInt(meta?.current_page);
	const last = positiveInt(meta?.last_page);
	if (current !== undefined && last !== undefined && current < last) {
		return { next: withParam(url, 'page', String(current + 1)), refused };
	}
	return { refused };
}

/**
 * Every page of a list, one at a time: `for await (const page of pages(fetch, options))`. A reader
 * may stop at any page and resume later from its `next` (as `firstUrl`). An error of the fetcher
 * ends the iteration with that error; the last page yielded says where to resume.
 */
export async function* pages<T = Record<string, unknown>>(
	fetchPage: PageFetcher,
	options: PagesOptions,
): AsyncGenerator<Page<T>, void, undefined> {
	const maxPages = Math.max(1, options.maxPages ?? DEFAULT_MAX_PAGES);
	const readMarks = new Set<string>();
	const readContents = new Set<string>();
	const readIds = new Set<string>();
	let url = options.firstUrl;
	for (let number = 1; ; number++) {
		const answer = await fetchPage(url);
		const data = Array.isArray(answer.data) ? (answer.data as unknown[]) : [];
		const current = positiveInt(pageObjectOf(answer.meta)?.current_page);
		const text = JSON.stringify(data);
		const bytes = text.length;
		// A digest, not the rows' text: every page read is remembered without being held.
		const content = createHash('sha256').update(text).digest('base64');
		// The same page number, or the same rows, as a page read before: the service ignored the
		// page asked for.
		const repeated =
			(current !== undefined && readMarks.has(`page ${current}`)) ||
			(data.length > 0 && readContents.has(content));
		for (const mark of pageMarks(url)) readMarks.add(mark);
		if (current !== undefined) readMarks.add(`page ${current}`);
		readContents.add(content);
		if (repeated) {
			yield { url, number, rows: [], bytes: 0, end: 'repeated_page' };
			return;
		}
		const rows: T[] = [];
		for (const row of data) {
			const id = objectOf(row)?.id;
			const key = typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
			if (key !== undefined) {
				if (readIds.has(key)) continue;
				readIds.add(key);
			}
			rows.push(row as T);
		}
		if (data.length === 0) {
			yield { url, number, rows, bytes, end: 'empty_page' };
			return;
		}
		const { next, refused } = nextPageUrl(answer, url, options.apiRoot);
		const refusedNext = refused === undefined ? {} : { refusedNext: refused };
		if (next === undefined) {
			yield {
				url,
				number,
				rows,
				bytes,
				end: refused ? 'refused_next' : 'last_page',
				...refusedNext,
			};
			return;
		}
		if (pageMarks(next).some((mark) => readMarks.has(mark))) {
			yield { url, number, rows, bytes, end: 'repeated_page', ...refusedNext };
			return;
		}
		if (number >= maxPages) {
			yield { url, number, rows, bytes, next, end: 'page_cap', ...refusedNext };
			return;
		}
		yield { url, number, rows, bytes, next, ...refusedNext };
		url = next;
	}
}

export interface ReadPagesOptions<T> extends PagesOptions {
	/** Only rows it accepts are kept (and counted towards `limit`): a date filter. */
	keep?: (row: T) => boolean;
	/** Stop once this many rows are kept. */
	limit?: number;
}

export interface ReadPagesResult<T> {
	rows: T[];
	/** Pages read. */
	pages: number;
	end: PagesEnd;
	/** Whether every row of the list was read (or `limit` rows were kept). */
	complete: boolean;
	/** Where reading would go on (after a page cap). */
	next?: string;
	/** A `links.next` that was not followed because it leaves the API root. */
	refusedNext?: string;
}

/** Every kept row of a list (see `pages`), up to `limit`. */
export async function readPages<T = Record<string, unknown>>(
	fetchPage: PageFetcher,
	options: ReadPagesOptions<T>,
): Promise<ReadPagesResult<T>> {
	const rows: T[] = [];
	let read = 0;
	let last: Page<T> | undefined;
	let refusedNext: string | undefined;
	for await (const page of pages<T>(fetchPage, options)) {
		read = page.number;
		last = page;
		refusedNext = page.refusedNext ?? refusedNext;
		for (const row of page.rows) {
			if (options.keep && !options.keep(row)) continue;
			rows.push(row);
			if (options.limit !== undefined && rows.length >= options.limit) {
				return {
					rows,
					pages: read,
					end: 'stopped',
					complete: true,
					...(refusedNext ? { refusedNext } : {}),
				};
			}
		}
	}
	const end = last?.end ?? 'last_page';
	return {
		rows,
		pages: read,
		end,
		complete: end !== 'page_cap' && end !== 'refused_next',
		...(last?.next ? { next: last.next } : {}),
		...(refusedNext ? { refusedNext } : {}),
	};
}
