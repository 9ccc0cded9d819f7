import type { Logger } from 'pino';
import type { Alerter } from '../alerts.ts';
import type { ServiceApi } from '../service-api.ts';
import type { HeldRows } from './lists.ts';

/** One event the catch-up stored: a final payment or payout no postback brought. */
export interface FoundEvent {
	eventId: string;
	kind: 'payment' | 'payout';
	trsId: string;
	status: string;
}

/** A record the store refused (a NUL, an over-long order ID): skipped, reported, the run goes on. */
export interface SkippedRecord {
	kind: 'payment' | 'payout';
	trsId: string;
	reason: string;
}

export interface CatchupResult {
	/** done; partial: the call budget ran out; skipped: another catch-up was running; failed. */
	outcome: 'done' | 'partial' | 'skipped' | 'failed';
	/** A deep run: bills created in the last RELAY_CATCHUP_BILL_DAYS days were searched. */
	deep: boolean;
	/** The first day (service's, Y-m-d) whose bills were searched. */
	billsSince: string | null;
	/** The oldest creation day of a bill the search returned. */
	oldestBillDate: string | null;
	calls: number;
	/** Bills the search returned. */
	bills: number;
	/** Bills whose payments were read (`bill/payments`). */
	billsRead: number;
	/** Final payments of the window those bills held. */
	payments: number;
	payouts: number;
	/** What this run could not read within its budget (the next run goes on with it). */
	toRead: { bills: number; multiBills: number; billPages: boolean; payouts: boolean };
	found: FoundEvent[];
	skippedRecords: SkippedRecord[];
	error?: string;
	/** A partial run stopped at RELAY_CATCHUP_MAX_BYTES: what it held (also raised as catchup-failed). */
	ceiling?: string;
	startedAt: number;
	durationMs: number;
}

/** What one run reads: its client, result, clock and days (service days, Y-m-d). */
export interface Window {
	api: ServiceApi;
	result: CatchupResult;
	now: number;
	token: string;
	days: number;
	today: string;
	since: string;
	billSince: string;
	pruneBefore: number;
	budget: number;
	apiRoot: string;
	fetchPage: (url: string) => Promise<Record<string, unknown>>;
	firstUrl: (path: string, from: string) => string;
	/** The run's rows held across every page (RELAY_CATCHUP_MAX_BYTES). */
	held: HeldRows;
}

/**
 * `catchup-failed`, once per cause: a failed run (its error), a record the store refused (its
 * kind and TrsId), and runs that ended partial or failed for longer than a deep interval.
 */
export async function alertTrouble(
	alerter: Alerter | undefined,
	trouble: { since?: number },
	deepIntervalS: number,
	result: CatchupResult,
	now: number,
): Promise<void> {
	if (result.skippedRecords.length > 0) {
		await alerter?.raise(
			'catchup-failed',
			result.skippedRecords.map((r) => `catchup-skipped:${r.kind}:${r.trsId}`),
			`catch-up skipped ${result.skippedRecords.length} record(s) the store cannot hold; read them in the service's account`,
			{ records: result.skippedRecords.slice(0, 50) },
		);
	}
	if (result.ceiling !== undefined) {
		await alerter?.raise(
			'catchup-failed',
			['catchup-ceiling'],
			`catch-up stopped at its memory ceiling: ${result.ceiling}; the next run goes on where it stopped`,
			{ ceiling: result.ceiling, toRead: result.toRead },
		);
	}
	if (result.outcome === 'failed') {
		await alerter?.raise(
			'catchup-failed',
			[`catchup-failed:${(result.error ?? '').replace(/\d+/g, 'N').slice(0, 200)}`],
			`catch-up failed: ${result.error ?? 'unknown error'}`,
			{ error: result.error },
		);
	}
	if (result.outcome === 'done') trouble.since = undefined;
	else if (result.outcome !== 'skipped') {
		trouble.since ??= now;
		const limitMs = deepIntervalS * 1000;
		if (now - trouble.since >= limitMs) {
			await alerter?.raise(
				'catchup-failed',
				[`catchup-partial:${trouble.since}`],
				`catch-up has not finished a run for ${Math.round((now - trouble.since) / 1000)} s (raise RELAY_CATCHUP_MAX_CALLS or look at the service's API)`,
				{ since: new Date(trouble.since).toISOString(), toRead: result.toRead },
			);
		}
	}
}

/** The run's one log line. */
export function logRun(logger: Logger, result: CatchupResult): void {
	const summary = {
		outcome: result.outcome,
		calls: result.calls,
		deep: result.deep,
		bills: result.bills,
		billsRead: result.billsRead,
		payments: result.payments,
		payouts: result.payouts,
		found: result.found.length,
		skippedRecords: result.skippedRecords.length,
		durationMs: result.durationMs,
	};
	if (result.outcome === 'failed')
		logger.error({ ...summary, error: result.error }, 'catch-up failed; the next run tries again');
	else if (result.ceiling !== undefined)
		logger.warn(
			{ ...summary, ceiling: result.ceiling },
			'catch-up stopped at its memory ceiling (RELAY_CATCHUP_MAX_BYTES); the next run goes on',
		);
	else if (result.outcome === 'partial')
		logger.warn(
			summary,
			'catch-up stopped at its call budget (RELAY_CATCHUP_MAX_CALLS); the next run goes on',
		);
	else logger.info(summary, 'catch-up run');
}
