import {
	ENDPOINTS,
	apiRootOf,
	chargebackMovements,
	isTransientStatus,
	listUrl,
	pages,
	paymentMovement,
	payoutMovement,
	refundMovement,
	textOf,
	widenedDates,
} from '../contract.ts';
import type { StatementDay, StatementMovement } from '../contract.ts';
import { ApiError, BudgetSpent } from '../service-api.ts';
import type { ServiceApi } from '../service-api.ts';
import { pageShape } from '../catchup/lists.ts';
import { instantOf } from './window.ts';

/**
 * The day's movements as the service lists them, read by the statement itself (it works with the
 * catch-up off): every page of `payment/search`, `refund/search` and `payout/search` over the day
 * widened by one day on each side (as every search of the package reads a day), and the
 * chargebacks each of the day's paid payments shows (its search row's list, else
 * `payment/status?chargeback=1`, one call a payment). Each row becomes a movement through the
 * shared contract at once (the rows are not kept): the day's own movements, and those of the days
 * around it that fall between the day's two balance snapshots (`window`), the rest dropped.
 */

type Json = Record<string, unknown>;

/** A list the statement did not read to its end, and why. */
export interface UnreadList {
	list: string;
	reason: 'budget' | 'refused' | 'page_cap' | 'refused_next' | 'repeated_page';
	detail?: string;
}

export interface DayMovements {
	/** The day's movements (created on the day), in the order read. */
	day: StatementMovement[];
	/** Movements of the days around it that fall within the window (for the balance's change). */
	around: StatementMovement[];
	unread: UnreadList[];
}

export interface ReadOptions {
	api: ServiceApi;
	baseUrl: string;
	shopId?: string;
	/** The snapshots' times: a movement of another day between them counts in the change. */
	window: { from: number; to: number } | null;
	/** Most pages of one list (100 rows a page). */
	maxPages?: number;
	/** Called before each call (the pace). */
	pace?: () => Promise<void>;
}

const PAID = ['SUCCESS', 'OVERPAID', 'UNDERPAID'];

/** Reads the day's movements (see above). Errors worth a retry throw (after the client's retries). */
export async function readDay(day: StatementDay, o: ReadOptions): Promise<DayMovements> {
	const out: DayMovements = { day: [], around: [], unread: [] };
	const keep = (m: StatementMovement) => {
		if (day.isOnDay(m.createdAt)) out.day.push(m);
		else if (inWindow(m, o.window, day.timeZone)) out.around.push(m);
	};
	const unpaid: string[] = [];
	await readList(day, o, out, ENDPOINTS.paymentSearch.path, (row) => {
		const m = paymentMovement(row);
		keep(m);
		if (!day.isOnDay(m.createdAt) || !PAID.includes(m.status)) return;
		const shown = chargebackMovements(row);
		if (hasChargebackList(row)) for (const c of shown) keepChargeback(day, o, out, c);
		else unpaid.push(m.id);
	});
	await readList(day, o, out, ENDPOINTS.refundSearch.path, (row) => keep(refundMovement(row)));
	await readList(day, o, out, ENDPOINTS.payoutSearch.path, (row) => keep(payoutMovement(row)));
	await readChargebacks(day, o, out, unpaid);
	return out;
}

/** Whether a payment row carries its chargebacks (`chargeback` or `chargebacks` as a list). */
function hasChargebackList(row: Json): boolean {
	return Array.isArray(row.chargeback) || Array.isArray(row.chargebacks);
}

/** A chargeback counts on the day it was created; one of another day within the window too. */
function keepChargeback(
	day: StatementDay,
	o: ReadOptions,
	out: DayMovements,
	c: StatementMovement,
): void {
	if (day.isOnDay(c.createdAt)) out.day.push(c);
	else if (inWindow(c, o.window, day.timeZone)) out.around.push(c);
}

function inWindow(m: StatementMovement, window: ReadOptions['window'], zone: string): boolean {
	if (window === null) return false;
	const at = instantOf(m.createdAt, zone);
	return at !== undefined && at >= window.from && at < window.to;
}

/** Shop-filtered searches (as the catch-up sends them): not payout/search, not refund/search. */
const SHOP_FILTERED = /\/(?:bill|payment)\/search$/;

/** One list, every page, each row handed to `take` as it comes; what stops it is noted. */
async function readList(
	day: StatementDay,
	o: ReadOptions,
	out: DayMovements,
	path: string,
	take: (row: Json) => void,
): Promise<void> {
	const list = path.replace('/api/v1/', '');
	const firstUrl = listUrl(o.baseUrl, path, {
		...widenedDates(day.day, day.day),
		per_page: 100,
		...(o.shopId && SHOP_FILTERED.test(path) ? { shop_id: o.shopId } : {}),
	});
	const fetchPage = async (url: string) => {
		await o.pace?.();
		return pageShape(await o.api.page(url));
	};
	try {
		for await (const page of pages<unknown>(fetchPage, {
			firstUrl,
			apiRoot: apiRootOf(o.baseUrl),
			maxPages: o.maxPages ?? 1000,
		})) {
			for (const row of page.rows)
				if (row !== null && typeof row === 'object' && !Array.isArray(row)) take(row as Json);
			if (page.end === 'page_cap' || page.end === 'refused_next' || page.end === 'repeated_page')
				out.unread.push({ list, reason: page.end });
		}
	} catch (error) {
		if (error instanceof BudgetSpent) out.unread.push({ list, reason: 'budget' });
		else if (error instanceof ApiError && !isTransientStatus(error.status))
			out.unread.push({ list, reason: 'refused', detail: error.key || `HTTP ${error.status}` });
		else throw error;
	}
}

/** The chargebacks of the day's paid payments whose rows did not carry them: one call each. */
async function readChargebacks(
	day: StatementDay,
	o: ReadOptions,
	out: DayMovements,
	ids: readonly string[],
): Promise<void> {
	let refused = 0;
	for (let i = 0; i < ids.length; i++) {
		let record: Json;
		try {
			await o.pace?.();
			record = await o.api.paymentStatus(ids[i], { chargeback: true });
		} catch (error) {
			if (error instanceof BudgetSpent) {
				const left = ids.length - i;
				out.unread.push({ list: 'payment/status', reason: 'budget', detail: `${left} payment(s)` });
				return;
			}
			if (error instanceof ApiError && !isTransientStatus(error.status)) {
				refused += 1;
				continue;
			}
			throw error;
		}
		for (const c of chargebackMovements({ ...record, id: textOf(record.id) || ids[i] }))
			keepChargeback(day, o, out, c);
	}
	if (refused > 0)
		out.unread.push({ list: 'payment/status', reason: 'refused', detail: `${refused} payment(s)` });
}
