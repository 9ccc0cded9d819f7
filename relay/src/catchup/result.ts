import type { Logger } from 'pino';
import type { Alerter } from '../alerts.ts';
import type { RelayConfig } from '../config.ts';
import {
	ENDPOINTS,
	SERVICE_TIME_ZONE,
	addDays,
	apiRootOf,
	dateIn,
	listUrl,
	widenedDates,
} from '../contract.ts';
import { ApiError } from '../service-api.ts';
import type { ServiceApi } from '../service-api.ts';
import { HeldRows } from './lists.ts';
import type { MoneyBackEvent } from '../contract.ts';
import type { CatchupBaseline } from '../store/baseline-marks.ts';
import type { CatchupBook } from '../store/catchup-book.ts';
import type { Housekeeping } from '../store/types.ts';

/** What the catch-up uses of the store: its baseline, marks, remembered links and lock. */
export type CatchupStore = CatchupBook & Pick<Housekeeping, 'withCatchupLock'>;

/** What a run read of refunds and chargebacks (money-back.ts). */
export interface MoneyBackCoverage {
	/**
	 * `read`: refund/search answered; `refunds_not_enabled`: the service refused it (403: the
	 * refund API is not switched on for the merchant; ask the service's support); `refused`:
	 * another refusal (`refundsRefusal`); `not_read`: no refund target, or the budget ran out first.
	 */
	refunds: 'read' | 'refunds_not_enabled' | 'refused' | 'not_read';
	refundsRefusal?: string;
	/** `refunds_not_enabled` as an earlier run heard it: not asked again before the next deep run. */
	refundsRemembered?: true;
	/** Refunds the search listed in the window. */
	refundsListed: number;
	/** Paid payments of the window whose chargebacks this run read, and those left for later runs. */
	paymentsChecked: number;
	paymentsToCheck: number;
}

/** One event the catch-up stored: a final payment, payout, refund or chargeback no postback brought. */
export interface FoundEvent {
	eventId: string;
	/** A refund's or chargeback's `trsId` is its Id. */
	kind: 'payment' | 'payout' | MoneyBackEvent;
	trsId: string;
	status: string;
	/** Recorded before the relay's first start, forwarded because an operator asked for a back-fill (no alert). */
	backfill?: true;
}

/** A record the store refused (a NUL, an over-long order ID): skipped, reported, the run goes on. */
export interface SkippedRecord {
	kind: 'payment' | 'payout' | MoneyBackEvent;
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
	/**
	 * Of those payments and payouts, the ones recorded before the baseline (`baseline.since`):
	 * counted, not forwarded, no alert (see baseline.ts).
	 */
	beforeBaseline: number;
	/** The store's baseline as this run read it (null when the run did not get that far). */
	baseline: CatchupBaseline | null;
	/** What this run could not read within its budget (the next run goes on with it). */
	toRead: { bills: number; multiBills: number; billPages: boolean; payouts: boolean };
	found: FoundEvent[];
	skippedRecords: SkippedRecord[];
	error?: string;
	/** Refunds and chargebacks (catchup/money-back.ts): absent when the run did not get to them. */
	moneyBack?: MoneyBackCoverage;
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
	/** Records before `baseline.since` are counted, not forwarded (baseline.ts). */
	baseline: CatchupBaseline;
	token: string;
	days: number;
	today: string;
	since: string;
	billSince: string;
	pruneBefore: number;
	budget: number;
	apiRoot: string;
	fetchPage: (url: string) => Promise<Record<string, unknown>>;
	firstUrl: (path: string, from: string, to?: string) => string;
	/** The run's rows held across every page (RELAY_CATCHUP_MAX_BYTES). */
	held: HeldRows;
	/** The first page of a bill's payments (`bill/payments`: cursor-paged on the service). */
	billPaymentsUrl: (billId: string) => string;
}

const DAY_MS = 86_400_000;

/** How many days back a run reads payments and payouts: RELAY_CATCHUP_DAYS, within the retention. */
export function windowDays(config: RelayConfig): number {
	return config.retentionDays > 0
		? Math.max(1, Math.min(config.catchup.days, config.retentionDays - 1))
		: config.catchup.days;
}

/**
 * What one run reads. Payments and payouts by their own date, never further back than the store
 * keeps delivered events (RELAY_RETENTION_DAYS): a payment whose event was pruned would come back
 * otherwise. Service days (Moscow), asked one day wider on each side and filtered by created_at.
 */
export function windowOf(
	config: RelayConfig,
	api: ServiceApi,
	result: CatchupResult,
	now: number,
	baseline: CatchupBaseline,
): Window {
	const token = config.apiTokens[config.apiTokens.length - 1];
	const days = windowDays(config);
	const today = dateIn(SERVICE_TIME_ZONE, new Date(now));
	const since = addDays(today, -days);
	const billSince = result.deep ? addDays(today, -config.catchup.billDays) : since;
	result.billsSince = billSince;
	return {
		api,
		result,
		now,
		baseline,
		token,
		days,
		today,
		since,
		billSince,
		pruneBefore: now - (Math.max(days, config.catchup.billDays) + 2) * DAY_MS,
		budget: config.catchup.maxCalls,
		apiRoot: apiRootOf(config.catchup.apiBaseUrl),
		fetchPage: (url: string) => api.page(url),
		firstUrl: (path: string, from: string, to = today) =>
			listUrl(config.catchup.apiBaseUrl, path, {
				...widenedDates(from, to),
				per_page: 100,
				...(config.catchup.shopId && SHOP_FILTERED.test(path)
					? { shop_id: config.catchup.shopId }
					: {}),
			}),
		held: new HeldRows(config.catchup.maxBytes),
		// No per_page: the service's own page size, whatever its largest allowed one is.
		billPaymentsUrl: (billId: string) =>
			listUrl(config.catchup.apiBaseUrl, ENDPOINTS.billPayments.path, { id: billId }),
	};
}

/** The searches the service filters by shop (docs/developer/service.md); not payout/search. */
const SHOP_FILTERED = /\/(?:bill|payment)\/search$/;

/**
 * A failed run's error for the operator: a search the service refused for want of `shop_id`
 * (a deployment that requires it answers 422 naming the field) says which setting to set.
 */
export function runError(error: unknown, shopId: string | undefined): string {
	const message = error instanceof Error ? error.message : String(error);
	if (
		shopId === undefined &&
		error instanceof ApiError &&
		error.status === 422 &&
		SHOP_FILTERED.test(error.path.split('?')[0]) &&
		/shop_id/i.test(`${error.key} ${error.answer}`)
	)
		return `${message}: the service requires shop_id on its searches; set PAYPALYCH_SHOP_ID to your shop's id`;
	return message;
}

/**
 * `catch-up`, once per event: what a run found that no postback brought (what a back-fill asked
 * for is no sign of lost postbacks, and raises nothing).
 */
export async function alertFound(alerter: Alerter | undefined, result: CatchupResult) {
	const lost = result.found.filter((f) => !f.backfill);
	if (lost.length === 0) return;
	await alerter?.raise(
		'catch-up',
		lost.map((f) => `catch-up:${f.eventId}`),
		`catch-up found ${lost.length} event(s) no postback brought: the service's postbacks are not reaching the relay`,
		{ events: lost.slice(0, 50) },
	);
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
		beforeBaseline: result.beforeBaseline,
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
