import type { Logger } from 'pino';
import { createdDate, readPages } from '../contract.ts';
import { ApiError, BudgetSpent } from '../service-api.ts';
import type { ServiceApi } from '../service-api.ts';

/** A list read with the shared readPages, at most `maxPages` pages (its share of the budget). */
export async function readList(
	fetchPage: (url: string) => Promise<Record<string, unknown>>,
	firstUrl: string,
	apiRoot: string,
	maxPages: number,
	keep: (row: Record<string, unknown>) => boolean,
): Promise<{ rows: Record<string, unknown>[]; next?: string; stopped?: BudgetSpent }> {
	const rows: Record<string, unknown>[] = [];
	let next: string | undefined;
	try {
		const read = await readPages<Record<string, unknown>>(fetchPage, {
			firstUrl,
			apiRoot,
			maxPages,
			keep: (row) => row !== null && typeof row === 'object' && keep(row),
		});
		rows.push(...read.rows);
		if (read.end === 'page_cap') next = read.next;
		return { rows, next, stopped: next ? new BudgetSpent(maxPages) : undefined };
	} catch (error) {
		if (error instanceof BudgetSpent) return { rows, next: firstUrl, stopped: error };
		throw error;
	}
}

/** A bill's payments; undefined: the service refused this bill (skipped); BudgetSpent: stop. */
export async function billPayments(
	api: ServiceApi,
	bill: Record<string, unknown>,
	logger: Logger,
): Promise<Record<string, unknown>[] | undefined | BudgetSpent> {
	try {
		const answer = await api.billPayments(String(bill.id));
		return Array.isArray(answer.data)
			? (answer.data as unknown[]).filter(
					(p): p is Record<string, unknown> => p !== null && typeof p === 'object',
				)
			: [];
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
