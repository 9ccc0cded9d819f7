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
import { HeldRows, pageShape } from './lists.ts';
import type { UnreadList } from './lists.ts';
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
	/**
	 * The first day (service's, Y-m-d) whose paid payments were listed for their chargebacks: a deep
	 * run's is RELAY_CATCHUP_CHARGEBACK_DAYS back, an ordinary run's RELAY_CATCHUP_DAYS. null: no
	 * chargeback target.
	 */
	chargebacksSince: string | null;
	/** Paid payments of the window whose chargebacks this run read, and those left for later runs. */
	paymentsChecked: number;
	paymentsToCheck: number;
	/** Of those left, the ones whose chargebacks no run of this process has read yet. */
	paymentsNeverChecked: number;
	/** The creation day (Y-m-d) of the oldest payment left; null when none is left. */
	oldestToCheck: string | null;
}

/** What a run read of `payment/search` (payments.ts): one list for payments and chargebacks. */
export interface PaymentSearchCoverage {
	/**
	 * `read`: to its end; `cut`: not to its end (`unread` says why; the next run goes on where it
	 * stopped); `refused`: the service refused it (`refusal`); `not_read`: no payment or chargeback
	 * target, or the budget ran out first.
	 */
	state: 'read' | 'cut' | 'refused' | 'not_read';
	refusal?: string;
	/** The first day (service's, Y-m-d) listed: the payments' window, or the chargebacks' if longer. */
	since: string | null;
	/** Rows the search listed in that window. */
	listed: number;
	/**
	 * Payments of the last RELAY_CATCHUP_DAYS days in a postback status whose bill no bill search of
	 * this run holds (an older bill, a MULTI link): each admitted as a bill's payment is, once.
	 */
	payments: number;
	/** Of those, the ones left for the next run (the budget ran out). */
	paymentsLeft: number;
	/** Of those, the ones whose bill is older than RELAY_CATCHUP_BILL_DAYS, and its creation day. */
	olderBills: number;
	oldestBill: string | null;
}

/** Something a run could not see (report.ts gapsOf). */
export interface CatchupGap {
	/** What it is about: `refunds-off`, `payment-search-refused`, `chargebacks-unchecked`, ... */
	code: string;
	message: string;
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
	/** The payment search (catchup/payments.ts): absent when the run did not get to it. */
	paymentSearch?: PaymentSearchCoverage;
	/** Lists this run did not read to their end, and why (the next run goes on with them). */
	unread: UnreadList[];
	/** What this run could not see, in words (report.ts gapsOf): the console shows it, alerts say it. */
	gaps: CatchupGap[];
	/**
	 * Days the payments' window is short of RELAY_CATCHUP_DAYS: it never reaches further back than
	 * the store keeps events (RELAY_RETENTION_DAYS − 1). Absent when it is not short.
	 */
	windowShortBy?: number;
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
	/** The first day whose paid payments are listed for their chargebacks (`since` on an ordinary run). */
	chargebackSince: string;
	/** The first day a deep run searches bills from (RELAY_CATCHUP_BILL_DAYS back), whatever the run. */
	billWindowSince: string;
	/**
	 * Bills this run's searches listed (by id), those whose payments it read, and those it asked
	 * `bill/status` for (payments.ts billOf: each bill once a run).
	 */
	bills: {
		listed: Map<string, Record<string, unknown>>;
		read: Set<string>;
		asked: Map<string, Record<string, unknown>>;
	};
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
	const billWindowSince = addDays(today, -config.catchup.billDays);
	const billSince = result.deep ? billWindowSince : since;
	const chargebackSince = result.deep
		? addDays(today, -Math.max(config.catchup.chargebackDays, days))
		: since;
	result.billsSince = billSince;
	if (days < config.catchup.days) result.windowShortBy = config.catchup.days - days;
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
		chargebackSince,
		billWindowSince,
		bills: { listed: new Map(), read: new Set(), asked: new Map() },
		// A mark outlives every window that could show its record again: a chargeback's mark the
		// payment's whole window (RELAY_CATCHUP_CHARGEBACK_DAYS).
		pruneBefore:
			now - (Math.max(days, config.catchup.billDays, config.catchup.chargebackDays) + 2) * DAY_MS,
		budget: config.catchup.maxCalls,
		apiRoot: apiRootOf(config.catchup.apiBaseUrl),
		fetchPage: async (url: string) => pageShape(await api.page(url)),
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
