import type { Logger } from 'pino';
import type { Alerter } from '../alerts.ts';
import type { UnreadList } from './lists.ts';
import type { CatchupGap, CatchupResult } from './result.ts';

/**
 * What a catch-up run tells: its log line, its alerts, and in words what it could not see (its
 * gaps), which the admin API, the console's catch-up page and the `catchup-gap` alert all say.
 */

const REASONS: Record<UnreadList['reason'], string> = {
	budget: 'the run reached its call budget (RELAY_CATCHUP_MAX_CALLS); the next run goes on',
	memory: 'the run reached its memory ceiling (RELAY_CATCHUP_MAX_BYTES); the next run goes on',
	page_cap: 'it has more pages than a run reads of one list',
	refused_next: "its next page's address leaves the service's API, and is not followed",
	repeated_page: 'the service answered a page already read: it ignored the page asked for',
	refused: 'the service refused it',
};

/** In words, what a run could not see: each gap once, in the order the run reads. */
export function gapsOf(result: CatchupResult): CatchupGap[] {
	const gaps: CatchupGap[] = [];
	const money = result.moneyBack;
	if (money?.refunds === 'refunds_not_enabled')
		gaps.push({
			code: 'refunds-off',
			message:
				"refunds are not read: the service's refund API is not switched on for this merchant (ask the service's support); a refund postback that is lost is not found",
		});
	else if (money?.refunds === 'refused')
		gaps.push({
			code: 'refunds-refused',
			message: `refunds are not read: the service refused refund/search (${money.refundsRefusal ?? 'no reason given'}); a refund postback that is lost is not found`,
		});
	const search = result.paymentSearch;
	if (search?.state === 'refused')
		gaps.push({
			code: 'payment-search-refused',
			message: `payment/search is refused (${search.refusal ?? 'no reason given'}): payments of bills older than the bill search and chargebacks are not found`,
		});
	if (search && search.paymentsLeft > 0)
		gaps.push({
			code: 'payments-left',
			message: `${search.paymentsLeft} payment(s) the payment search listed were not looked at (the run's budget): the next run goes on with them`,
		});
	if (money && money.paymentsToCheck > 0)
		gaps.push({
			code: 'chargebacks-unchecked',
			message: `${money.paymentsToCheck} paid payment(s) since ${money.chargebacksSince ?? '—'} were not looked at for chargebacks in this run (${money.paymentsNeverChecked} never since the relay started), the oldest from ${money.oldestToCheck ?? '—'}: they are read in rotation, least recently read first; raise RELAY_CATCHUP_MAX_CALLS to read them sooner`,
		});
	for (const u of result.unread)
		gaps.push({
			code: `unread:${u.list}:${u.reason}`,
			message: `${u.list} was not read to its end${u.count > 1 ? ` (${u.count} times)` : ''}${u.detail ? ` (${u.detail})` : ''}: ${REASONS[u.reason]}`,
		});
	if (search && search.olderBills > 0)
		gaps.push({
			code: 'older-bills',
			message: `${search.olderBills} payment(s) belong to bills created before RELAY_CATCHUP_BILL_DAYS (the oldest on ${search.oldestBill ?? '—'}): no bill search reaches them, only the payment search found them`,
		});
	if (result.windowShortBy !== undefined)
		gaps.push({
			code: 'payment-window',
			message: `payments, payouts and refunds are read ${result.windowShortBy} day(s) less far back than RELAY_CATCHUP_DAYS: the window ends where the store's retention (RELAY_RETENTION_DAYS) does`,
		});
	return gaps;
}

/**
 * `catchup-gap`, once per cause: what a run could not see (gapsOf). Not what the budget or the
 * memory ceiling left for the next run (`catchup-failed` says it when it lasts), and for the
 * chargebacks only payments
 * never looked at since the relay started, once per stretch of runs that leave some.
 */
export async function alertGaps(
	alerter: Alerter | undefined,
	trouble: { uncheckedSince?: number },
	result: CatchupResult,
	now: number,
): Promise<void> {
	if (result.outcome === 'skipped') return;
	const never = result.moneyBack?.paymentsNeverChecked ?? 0;
	// A run that did not get to the chargebacks neither ends nor starts a stretch.
	if (result.moneyBack?.chargebacksSince)
		trouble.uncheckedSince = never === 0 ? undefined : (trouble.uncheckedSince ?? now);
	for (const gap of result.gaps) {
		// What the budget or the ceiling left, the next run goes on with (catchup-failed says it when it lasts).
		if (/^unread:.*:(budget|memory)$/.test(gap.code) || gap.code === 'payments-left') continue;
		if (gap.code === 'chargebacks-unchecked' && never === 0) continue;
		const cause =
			gap.code === 'chargebacks-unchecked'
				? `catchup-gap:${gap.code}:${trouble.uncheckedSince}`
				: `catchup-gap:${gap.code}`;
		await alerter?.raise('catchup-gap', cause, `catch-up cannot see everything: ${gap.message}`, {
			gap: gap.code,
			moneyBack: result.moneyBack,
			paymentSearch: result.paymentSearch,
			unread: result.unread,
		});
	}
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
		gaps: result.gaps.map((g) => g.code),
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
