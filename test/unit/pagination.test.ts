// The wire contract's pagination (readPages / pages) and date-range helpers, with a page fetcher
// that answers from a table: every kind of pagination the document leaves open, where reading
// stops, and that the Bearer token (the fetcher's) only goes to the credential's own API root.
import { describe, expect, it } from 'vitest';
import {
	DEFAULT_MAX_PAGES,
	addDays,
	apiRootOf,
	createdDate,
	createdWithin,
	dateIn,
	isKnownTimeZone,
	isUnderApiRoot,
	listUrl,
	pages,
	readPages,
	widenedDates,
} from '../../dist/nodes/shared/index.js';

const BASE = 'https://pal24.pro';
const ROOT = apiRootOf(BASE);
const FIRST = listUrl(BASE, '/api/v1/bill/search', {
	start_date: '2025-03-01',
	finish_date: '2025-03-31',
	per_page: 100,
});

type Answer = Record<string, unknown>;

/** A fetcher that answers by URL (or by the page asked for) and records every URL it is given. */
function service(answer: (url: URL, call: number) => Answer) {
	const asked: string[] = [];
	const fetchPage = async (url: string) => {
		asked.push(url);
		return answer(new URL(url), asked.length);
	};
	return { asked, fetchPage };
}

const rows = (...ids: number[]) => ids.map((id) => ({ id, created_at: '2025-03-10 12:00:00' }));

/** Laravel's numbered pages: `links.next` a full URL with the query and `page=N`, `meta` with the numbers. */
function laravel(total: number, perPage: number, origin = BASE) {
	return (url: URL): Answer => {
		const page = Number(url.searchParams.get('page') ?? '1');
		const last = Math.max(1, Math.ceil(total / perPage));
		const ids = Array.from({ length: total }, (_, i) => i + 1).slice(
			(page - 1) * perPage,
			page * perPage,
		);
		const next = new URL(url.toString().replace(BASE, origin));
		next.searchParams.set('page', String(page + 1));
		return {
			success: true,
			data: rows(...ids),
			links: { next: page < last ? next.toString() : null },
			meta: { current_page: page, last_page: last, per_page: perPage, total },
		};
	};
}

describe('readPages follows what the service sends', () => {
	it('Laravel pages: links.next as given, every page once, rows in order', async () => {
		const s = service(laravel(35, 15));
		const result = await readPages(s.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(result).toMatchObject({ pages: 3, end: 'last_page', complete: true });
		expect(result.rows.map((r) => r.id)).toEqual(Array.from({ length: 35 }, (_, i) => i + 1));
		expect(s.asked.map((u) => new URL(u).searchParams.get('page'))).toEqual([null, '2', '3']);
		// links.next carried the query; it was followed as given.
		expect(new URL(s.asked[2]).searchParams.get('start_date')).toBe('2025-03-01');
	});

	it('links.next with whatever parameter it carries (an offset), relative to the page read', async () => {
		const s = service((url) => {
			const offset = Number(url.searchParams.get('offset') ?? '0');
			return {
				data: offset < 4 ? rows(offset + 1, offset + 2) : [],
				links: { next: offset < 4 ? `/api/v1/bill/search?offset=${offset + 2}` : null },
			};
		});
		const result = await readPages(s.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(result.rows.map((r) => r.id)).toEqual([1, 2, 3, 4]);
		expect(s.asked.slice(1)).toEqual([
			`${BASE}/api/v1/bill/search?offset=2`,
			`${BASE}/api/v1/bill/search?offset=4`,
		]);
		expect(result.end).toBe('empty_page');
	});

	it('meta.next_cursor as `cursor` on the URL read, when there is no links.next', async () => {
		const s = service((url) => {
			const cursor = url.searchParams.get('cursor');
			if (cursor === null) return { data: rows(1), meta: { next_cursor: 'c2' } };
			if (cursor === 'c2') return { data: rows(2), meta: { next_cursor: 'c3' } };
			return { data: rows(3), meta: { next_cursor: null } };
		});
		const result = await readPages(s.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(result.rows.map((r) => r.id)).toEqual([1, 2, 3]);
		expect(s.asked.map((u) => new URL(u).searchParams.get('cursor'))).toEqual([null, 'c2', 'c3']);
		expect(new URL(s.asked[1]).searchParams.get('finish_date')).toBe('2025-03-31');
	});

	it('meta.current_page < meta.last_page with `page`, when neither links.next nor a cursor is given', async () => {
		const s = service((url) => {
			const page = Number(url.searchParams.get('page') ?? '1');
			return { data: rows(page), meta: { current_page: String(page), last_page: '3' } };
		});
		const result = await readPages(s.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(result.rows.map((r) => r.id)).toEqual([1, 2, 3]);
		expect(result).toMatchObject({ pages: 3, end: 'last_page', complete: true });
	});

	it('links and meta as lists of one object (the typed client models them so): links.next, meta.next_cursor, meta page numbers', async () => {
		// links.next in a one-element list.
		const byLink = service((url) => {
			const cursor = url.searchParams.get('cursor');
			const next = cursor === null ? 'c2' : cursor === 'c2' ? 'c3' : null;
			const row = cursor === null ? 1 : cursor === 'c2' ? 2 : 3;
			const nextUrl = next === null ? null : `${ROOT}bill/search?cursor=${next}`;
			return { data: rows(row), links: [{ next: nextUrl, prev: null }], meta: [{ per_page: 1 }] };
		});
		const linked = await readPages(byLink.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(linked).toMatchObject({ pages: 3, end: 'last_page', complete: true });
		expect(linked.rows.map((r) => r.id)).toEqual([1, 2, 3]);
		// meta.next_cursor in a one-element list, links.next null.
		const byCursor = service((url) => {
			const cursor = url.searchParams.get('cursor');
			const next = cursor === null ? 'c2' : cursor === 'c2' ? 'c3' : null;
			const row = cursor === null ? 1 : cursor === 'c2' ? 2 : 3;
			return { data: rows(row), links: [{ next: null }], meta: [{ next_cursor: next }] };
		});
		const cursored = await readPages(byCursor.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(cursored.rows.map((r) => r.id)).toEqual([1, 2, 3]);
		expect(byCursor.asked.map((u) => new URL(u).searchParams.get('cursor'))).toEqual([
			null,
			'c2',
			'c3',
		]);
		// Laravel's page numbers in a one-element list; the same page number twice is a repeat.
		const byNumber = service((url) => {
			const page = Number(url.searchParams.get('page') ?? '1');
			return { data: rows(page), meta: [{ current_page: page, last_page: 3 }] };
		});
		const numbered = await readPages(byNumber.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(numbered.rows.map((r) => r.id)).toEqual([1, 2, 3]);
		const stuck = service((_url, call) => ({
			data: rows(call),
			meta: [{ current_page: 1, last_page: 3 }],
		}));
		const repeated = await readPages(stuck.fetchPage, {
			firstUrl: listUrl(BASE, '/api/v1/bill/search', {}),
			apiRoot: ROOT,
		});
		expect(repeated).toMatchObject({ pages: 2, end: 'repeated_page' });
	});

	it('links or meta as a list of several entries name no page', async () => {
		const s = service(() => ({
			data: rows(1),
			links: [{ next: `${ROOT}bill/search?page=2` }, { next: `${ROOT}bill/search?page=3` }],
			meta: [{ next_cursor: 'a' }, { next_cursor: 'b' }],
		}));
		const result = await readPages(s.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(result).toMatchObject({ pages: 1, end: 'last_page' });
		expect(s.asked).toEqual([FIRST]);
	});

	it('an answer without pagination is one page', async () => {
		const s = service(() => ({ success: true, data: rows(1, 2, 3) }));
		const result = await readPages(s.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(result).toMatchObject({ pages: 1, end: 'last_page', complete: true });
		expect(s.asked).toEqual([FIRST]);
	});
});

describe('readPages stops', () => {
	it('on a page with no rows, even when the service names another', async () => {
		const s = service((url) => ({
			data: url.searchParams.get('page') === '2' ? [] : rows(1),
			links: {
				next: `${BASE}/api/v1/bill/search?page=${Number(url.searchParams.get('page') ?? 1) + 1}`,
			},
		}));
		const result = await readPages(s.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(result).toMatchObject({ pages: 2, end: 'empty_page', complete: true });
	});

	it('on a repeated page: the same URL, the same cursor, the same page number, the same rows', async () => {
		const sameUrl = service(() => ({ data: rows(1), links: { next: FIRST } }));
		expect(await readPages(sameUrl.fetchPage, { firstUrl: FIRST, apiRoot: ROOT })).toMatchObject({
			pages: 1,
			end: 'repeated_page',
		});
		const sameCursor = service((url) => ({
			data: rows(url.searchParams.has('cursor') ? 2 : 1),
			links: {
				next: `${BASE}/api/v1/bill/search?cursor=c2${url.searchParams.has('cursor') ? '' : '&per_page=100'}`,
			},
		}));
		const cursorResult = await readPages(sameCursor.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(cursorResult.rows.map((r) => r.id)).toEqual([1, 2]);
		expect(sameCursor.asked).toHaveLength(2);
		// A service that ignores `page`: page 1 again under page=2 (its meta says so).
		const ignoresPage = service(() => ({
			data: rows(1, 2),
			meta: { current_page: 1, last_page: 5 },
		}));
		const ignored = await readPages(ignoresPage.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(ignored).toMatchObject({ pages: 2, end: 'repeated_page', complete: true });
		expect(ignored.rows.map((r) => r.id)).toEqual([1, 2]);
		// ... or without meta, the same rows again under another URL.
		let n = 0;
		const sameRows = service(() => ({
			data: rows(7),
			links: { next: `${BASE}/api/v1/bill/search?n=${++n}` },
		}));
		const same = await readPages(sameRows.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(same).toMatchObject({ pages: 2, end: 'repeated_page' });
		expect(same.rows.map((r) => r.id)).toEqual([7]);
	});

	it('at the page cap, saying where it would go on; a reader resumes there', async () => {
		const s = service(laravel(100, 10));
		const capped = await readPages(s.fetchPage, { firstUrl: FIRST, apiRoot: ROOT, maxPages: 3 });
		expect(capped).toMatchObject({ pages: 3, end: 'page_cap', complete: false });
		expect(capped.rows).toHaveLength(30);
		expect(new URL(capped.next as string).searchParams.get('page')).toBe('4');
		const rest = await readPages(s.fetchPage, { firstUrl: capped.next as string, apiRoot: ROOT });
		expect(rest).toMatchObject({ pages: 7, end: 'last_page', complete: true });
		expect([...capped.rows, ...rest.rows].map((r) => r.id)).toEqual(
			Array.from({ length: 100 }, (_, i) => i + 1),
		);
		expect(DEFAULT_MAX_PAGES).toBeGreaterThanOrEqual(100);
	});

	it('at the limit of kept rows; rows the filter drops do not count', async () => {
		const s = service(laravel(50, 10));
		const result = await readPages(s.fetchPage, {
			firstUrl: FIRST,
			apiRoot: ROOT,
			keep: (row: { id: number }) => row.id % 2 === 0,
			limit: 12,
		});
		expect(result.rows.map((r) => r.id)).toEqual([2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24]);
		expect(result).toMatchObject({ pages: 3, end: 'stopped', complete: true });
	});

	it('leaves out a row already read (rows shifted between two page requests)', async () => {
		const s = service((url) =>
			url.searchParams.get('page') === '2'
				? { data: rows(2, 3), meta: { current_page: 2, last_page: 2 } }
				: { data: rows(1, 2), meta: { current_page: 1, last_page: 2 } },
		);
		const result = await readPages(s.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(result.rows.map((r) => r.id)).toEqual([1, 2, 3]);
	});

	it('hands pages one at a time, with where to resume', async () => {
		const s = service(laravel(25, 10));
		const seen: Array<[number, number, string | undefined]> = [];
		for await (const page of pages(s.fetchPage, { firstUrl: FIRST, apiRoot: ROOT })) {
			seen.push([page.number, page.rows.length, page.end]);
			if (page.number === 2) {
				expect(new URL(page.next as string).searchParams.get('page')).toBe('3');
				break;
			}
		}
		expect(seen).toEqual([
			[1, 10, undefined],
			[2, 10, undefined],
		]);
		expect(s.asked).toHaveLength(2);
	});
});

describe('the token goes only to the credential’s own API root', () => {
	const elsewhere = [
		'https://evil.example/api/v1/bill/search?page=2',
		'http://pal24.pro/api/v1/bill/search?page=2', // a downgrade to plain HTTP
		'https://pal24.pro:8443/api/v1/bill/search?page=2', // another port
		'https://pal24.pro/admin/export?page=2', // outside the API path
		'https://pal24.pro/api/v10/bill/search?page=2', // a prefix of the path is not under it
		'https://pal24.pro@evil.example/api/v1/bill/search?page=2', // user info: the host is evil.example
		'https://user:pw@pal24.pro/api/v1/bill/search?page=2',
		'//evil.example/api/v1/bill/search?page=2', // scheme-relative
		'https://pal24.pro.evil.example/api/v1/bill/search?page=2',
		'https://pal24.pro/api/v1/../../admin?page=2', // resolves outside the API path
		'javascript:alert(1)',
	];

	it.each(elsewhere)('never fetches %s', async (next) => {
		const s = service((url) =>
			url.toString() === FIRST ? { data: rows(1), links: { next } } : { data: rows(99) },
		);
		const result = await readPages(s.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(s.asked).toEqual([FIRST]);
		expect(result).toMatchObject({ end: 'refused_next', complete: false, refusedNext: next });
		expect(result.rows.map((r) => r.id)).toEqual([1]);
	});

	it('a refused links.next falls back to the meta page numbers on the own URL', async () => {
		const s = service(laravel(30, 10, 'http://internal-app:8000'));
		const result = await readPages(s.fetchPage, { firstUrl: FIRST, apiRoot: ROOT });
		expect(result).toMatchObject({ pages: 3, complete: true, end: 'last_page' });
		expect(result.refusedNext).toMatch(/^http:\/\/internal-app:8000\//);
		expect(s.asked.every((u) => u.startsWith(`${BASE}/api/v1/`))).toBe(true);
		expect(result.rows).toHaveLength(30);
	});

	it('a base URL with a path prefix keeps links under that prefix', () => {
		const root = apiRootOf('https://proxy.example/paypalych/');
		expect(root).toBe('https://proxy.example/paypalych/api/v1/');
		expect(isUnderApiRoot('https://proxy.example/paypalych/api/v1/bill/search?page=2', root)).toBe(
			true,
		);
		expect(isUnderApiRoot('https://proxy.example/api/v1/bill/search?page=2', root)).toBe(false);
		expect(isUnderApiRoot('not a url', root)).toBe(false);
	});
});

describe('date ranges that do not depend on the service’s time zone or inclusive end', () => {
	it('asks a day more on each side', () => {
		expect(widenedDates('2024-03-01', '2024-03-01')).toEqual({
			start_date: '2024-02-29',
			finish_date: '2024-03-02',
		});
		expect(widenedDates('2024-12-31', '2025-01-01')).toEqual({
			start_date: '2024-12-30',
			finish_date: '2025-01-02',
		});
		expect(addDays('2025-03-01', -1)).toBe('2025-02-28');
		expect(() => addDays('1 March', 1)).toThrow();
	});

	it('Y-m-d dates a day wider hold the range under a date-time reading too (midnight UTC)', () => {
		// The service's reference describes start_date / finish_date as date-times in UTC: a
		// `Y-m-d` is then that day's midnight UTC, and the finish may be an instant, inclusive or
		// not. The widened dates still take in the whole range, on a UTC or a Moscow clock.
		const { start_date, finish_date } = widenedDates('2025-03-10', '2025-03-11');
		const from = Date.parse(`${start_date}T00:00:00Z`);
		const until = Date.parse(`${finish_date}T00:00:00Z`); // an exclusive reading's end
		for (const [first, last] of [
			['2025-03-10T00:00:00Z', '2025-03-11T23:59:59Z'], // UTC days
			['2025-03-10T00:00:00+03:00', '2025-03-11T23:59:59+03:00'], // Moscow days
		]) {
			expect(Date.parse(first)).toBeGreaterThanOrEqual(from);
			expect(Date.parse(last)).toBeLessThan(until);
		}
	});

	it('keeps the rows created in the range, on the day the service wrote', () => {
		const at = (created_at: unknown) => ({ id: 1, created_at });
		expect(createdWithin(at('2024-03-01 00:00:00'), '2024-03-01', '2024-03-02')).toBe(true);
		expect(createdWithin(at('2024-03-02 23:59:59'), '2024-03-01', '2024-03-02')).toBe(true);
		expect(createdWithin(at('2024-02-29 23:59:59'), '2024-03-01', '2024-03-02')).toBe(false);
		expect(createdWithin(at('2024-03-03 00:00:00'), '2024-03-01', '2024-03-02')).toBe(false);
		// An instant with an offset is read in the time zone (Moscow by default).
		expect(createdDate('2024-03-01T21:30:00Z')).toBe('2024-03-02');
		expect(createdDate('2024-03-01T21:30:00.000000Z', 'UTC')).toBe('2024-03-01');
		expect(createdDate('2024-03-02T00:30:00+03:00', 'UTC')).toBe('2024-03-01');
		expect(createdDate('2024-03-02T00:30:00+0300', 'UTC')).toBe('2024-03-01');
		// What cannot be read is kept: a filter that cannot tell must not hide a row.
		for (const unreadable of [undefined, null, '', 'yesterday', 12, '2024-13-01 00:00:00'])
			expect(createdWithin(at(unreadable), '2024-03-01', '2024-03-01')).toBe(true);
		expect(createdWithin(null, '2024-03-01', '2024-03-01')).toBe(true);
	});

	it('knows the date in a time zone, and which zones exist', () => {
		const late = new Date('2025-03-10T21:30:00Z');
		expect(dateIn('Europe/Moscow', late)).toBe('2025-03-11');
		expect(dateIn('UTC', late)).toBe('2025-03-10');
		expect(dateIn('America/New_York', late)).toBe('2025-03-10');
		expect(isKnownTimeZone('Europe/Moscow')).toBe(true);
		expect(isKnownTimeZone('Mars/Olympus_Mons')).toBe(false);
		expect(isKnownTimeZone('')).toBe(false);
	});
});
