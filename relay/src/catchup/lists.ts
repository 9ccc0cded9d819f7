import type { Logger } from 'pino';
import { createdDate, pages } from '../contract.ts';
import { ApiError, BudgetSpent } from '../service-api.ts';

/** One catch-up run held more of the service's rows than RELAY_CATCHUP_MAX_BYTES: it stops there. */
export class MemoryCeilingReached extends BudgetSpent {
	readonly maxBytes: number;
	readonly heldBytes: number;
	readonly heldRows: number;
	constructor(maxBytes: number, heldBytes: number, heldRows: number) {
		super(0);
		this.name = 'MemoryCeilingReached';
		this.message = `the run holds ${heldRows} rows (${heldBytes} bytes of the service's JSON), over its ceiling of ${maxBytes} bytes (RELAY_CATCHUP_MAX_BYTES)`;
		this.maxBytes = maxBytes;
		this.heldBytes = heldBytes;
		this.heldRows = heldRows;
	}
}

/**
 * What one catch-up run holds of the service's lists, counted across every page of every list it
 * reads (payouts, then bills): rows, and their weight as the service's JSON. Over `maxBytes` the
 * list being read stops after the page that crossed it (one page, at most API_MAX_ANSWER_BYTES,
 * over the ceiling), with what was read kept: a partial run that goes on where it stopped.
 */
export class HeldRows {
	rows = 0;
	bytes = 0;
	readonly maxBytes: number;
	constructor(maxBytes: number) {
		this.maxBytes = maxBytes;
	}
	/** Counts `rows` kept of a page weighing `bytes`; the ceiling reached, or undefined. */
	add(rows: number, bytes: number): MemoryCeilingReached | undefined {
		this.rows += rows;
		this.bytes += bytes;
		return this.bytes > this.maxBytes
			? new MemoryCeilingReached(this.maxBytes, this.bytes, this.rows)
			: undefined;
	}
}

/**
 * A list read page by page (the shared `pages`), at most `maxPages` pages (its share of the
 * budget), its kept rows held in `held` (the run's ceiling). Rows are added one at a time, never
 * spread into a call (a list of 200,000 rows would overflow the stack). Stopped by the call
 * budget, the run's deadline or the ceiling: the rows read so far, `next` where to go on.
 */
export async function readList(
	fetchPage: (url: string) => Promise<Record<string, unknown>>,
	firstUrl: string,
	apiRoot: string,
	maxPages: number,
	keep: (row: Record<string, unknown>) => boolean,
	held?: HeldRows,
): Promise<Listed> {
	const rows: Record<string, unknown>[] = [];
	let resumeAt = firstUrl;
	try {
		for await (const page of pages<unknown>(fetchPage, { firstUrl, apiRoot, maxPages })) {
			let kept = 0;
			for (const row of page.rows) {
				if (row === null || typeof row !== 'object' || !keep(row as Record<string, unknown>))
					continue;
				rows.push(row as Record<string, unknown>);
				kept += 1;
			}
			const weight = page.rows.length > 0 ? Math.ceil((page.bytes * kept) / page.rows.length) : 0;
			const over = held?.add(kept, weight);
			if (over && page.next !== undefined) return { rows, next: page.next, stopped: over };
			if (page.end === 'page_cap')
				return { rows, next: page.next, stopped: new BudgetSpent(maxPages) };
			if (page.end === 'refused_next' || page.end === 'repeated_page')
				return { rows, end: page.end };
			if (page.next !== undefined) resumeAt = page.next;
		}
		return { rows };
	} catch (error) {
		if (error instanceof BudgetSpent) return { rows, next: resumeAt, stopped: error };
		throw error;
	}
}

/** What readList read: the rows kept, and why it stopped before the list's end, if it did. */
export interface Listed {
	rows: Record<string, unknown>[];
	/** Where to go on (a list stopped by the budget, the deadline or the ceiling). */
	next?: string;
	stopped?: BudgetSpent;
	/**
	 * The service's paging ended the read before the list's end: a `links.next` that leaves the API
	 * root (`refused_next`), or a next page that was one already read (`repeated_page`).
	 */
	end?: 'refused_next' | 'repeated_page';
}

/** Why a list of a run was not read to its end (the run's `unread`). */
export type UnreadReason =
	| 'budget'
	| 'memory'
	| 'page_cap'
	| 'refused_next'
	| 'repeated_page'
	| 'refused';

/** A list a run did not read to its end, and why (`count`: how many times in the run). */
export interface UnreadList {
	list: string;
	reason: UnreadReason;
	count: number;
	/** The service's refusal, or the bill whose payments were cut at their page cap. */
	detail?: string;
}

/** Says in `unread` that `list` was not read to its end (once per list and reason, counted). */
export function noteUnread(
	unread: UnreadList[],
	list: string,
	reason: UnreadReason,
	detail?: string,
): void {
	const same = unread.find((u) => u.list === list && u.reason === reason);
	if (same) same.count += 1;
	else unread.push({ list, reason, count: 1, ...(detail === undefined ? {} : { detail }) });
}

/** Says in `unread` why readList stopped before the list's end, if it did. */
export function noteListed(unread: UnreadList[], list: string, listed: Listed): void {
	if (listed.stopped)
		noteUnread(unread, list, listed.stopped instanceof MemoryCeilingReached ? 'memory' : 'budget');
	else if (listed.end) noteUnread(unread, list, listed.end);
}

/**
 * A list's answer with `links` and `meta` as objects, as the shared page reader reads them: the
 * service's typed clients show them as one-element lists on bill/payments and most searches
 * (docs/developer/service.md); an object and a one-element list are both read.
 */
export function pageShape(answer: Record<string, unknown>): Record<string, unknown> {
	const one = (value: unknown) =>
		Array.isArray(value) &&
		value.length === 1 &&
		typeof value[0] === 'object' &&
		value[0] !== null &&
		!Array.isArray(value[0])
			? (value[0] as unknown)
			: value;
	const links = one(answer.links);
	const meta = one(answer.meta);
	return links === answer.links && meta === answer.meta ? answer : { ...answer, links, meta };
}

/** The most pages of one bill's payments a run reads (100 rows a page): a cap, said in the log. */
export const BILL_PAYMENT_PAGES = 100;

/**
 * A bill's payments, every page (`bill/payments` is cursor-paged on the live service: a MULTI
 * link's later payments are on its later pages), through the shared page reader. undefined: the
 * service refused this bill (skipped); BudgetSpent: the run's budget, deadline or memory ceiling
 * stopped it (the bill is not marked read: the next run reads it again). Past BILL_PAYMENT_PAGES
 * pages the rest is left unread and the log says so.
 */
export async function billPayments(
	w: {
		fetchPage: (url: string) => Promise<Record<string, unknown>>;
		apiRoot: string;
		held: HeldRows;
		billPaymentsUrl: (billId: string) => string;
		result: { unread: UnreadList[] };
	},
	bill: Record<string, unknown>,
	logger: Logger,
): Promise<Record<string, unknown>[] | undefined | BudgetSpent> {
	const rows: Record<string, unknown>[] = [];
	try {
		for await (const page of pages<unknown>(w.fetchPage, {
			firstUrl: w.billPaymentsUrl(String(bill.id)),
			apiRoot: w.apiRoot,
			maxPages: BILL_PAYMENT_PAGES,
		})) {
			let kept = 0;
			for (const row of page.rows) {
				if (row === null || typeof row !== 'object') continue;
				rows.push(row as Record<string, unknown>);
				kept += 1;
			}
			const weight = page.rows.length > 0 ? Math.ceil((page.bytes * kept) / page.rows.length) : 0;
			const over = w.held.add(kept, weight);
			if (over && page.next !== undefined) return over;
			if (page.end === 'refused_next' || page.end === 'repeated_page')
				noteUnread(w.result.unread, 'bill/payments', page.end, String(bill.id));
			if (page.end === 'page_cap') {
				noteUnread(w.result.unread, 'bill/payments', 'page_cap', String(bill.id));
				logger.warn(
					{ bill: bill.id, pages: BILL_PAYMENT_PAGES, payments: rows.length },
					"catch-up read the first pages of a bill's payments, up to its cap; the rest are not read",
				);
			}
		}
		return rows;
	} catch (error) {
		if (error instanceof BudgetSpent) return error;
		// One bill the service refuses (too_many_payments, bill_not_found) does not stop the run.
		if (
			error instanceof ApiError &&
			error.status !== null &&
			error.status < 500 &&
			error.status !== 429
		) {
			logger.warn({ bill: bill.id, error: error.message }, 'catch-up skipped a bill');
			return undefined;
		}
		throw error;
	}
}

/** The oldest creation day (Y-m-d) of these rows, or null. */
export function oldestDay(rows: readonly Record<string, unknown>[]): string | null {
	let oldest: string | null = null;
	for (const row of rows) {
		const day = createdDate(row.created_at);
		if (day !== undefined && (oldest === null || day < oldest)) oldest = day;
	}
	return oldest;
}
