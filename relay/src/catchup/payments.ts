import type { Logger } from 'pino';
import {
	PAYMENT_POSTBACK_STATUSES,
	canonicalStatus,
	createdDate,
	createdWithin,
	isTransientStatus,
	orderIdOf,
	textOf,
} from '../contract.ts';
import type { PostbackFields } from '../contract.ts';
import type { Admission } from '../admission.ts';
import { ApiError, BudgetSpent } from '../service-api.ts';
import type { Housekeeping } from '../store/types.ts';
import { placeOf } from './baseline.ts';
import { isFinalBill, paymentPostback } from './events.ts';
import { rememberLink } from './links.ts';
import { noteListed, noteUnread, readList } from './lists.ts';
import type { Listed } from './lists.ts';
import type { PaymentSearchCoverage, Window } from './result.ts';

/**
 * `payment/search`, read once a run for two purposes (docs/operator/catch-up.md, "Payments by
 * the payment search"):
 * - payments: a payment of the last RELAY_CATCHUP_DAYS days in a postback status whose bill no
 *   bill search of the run holds (a NORMAL bill sent long ago, a MULTI link older than
 *   RELAY_CATCHUP_BILL_DAYS that the relay never saw pay) is admitted as the postback the service
 *   would have sent, as a bill's payments are (runner.ts): its InvId the bill's order ID, read from
 *   the bill (`bill/status`, once a bill and run). A MULTI bill so read is remembered (links.ts).
 *   A mark per payment and status spares the next runs the bill's call. So a payment is found
 *   whatever its bill's age;
 * - chargebacks: the paid payments it lists are those whose chargebacks money-back.ts reads.
 * The window is the payments' (RELAY_CATCHUP_DAYS), or on a deep run the chargebacks' when they
 * have targets (RELAY_CATCHUP_CHARGEBACK_DAYS). A list cut by its share resumes at its next page in
 * the next run (the service lists in an order of its own: every page is read in turn).
 */

type Json = Record<string, unknown>;

/** A payment's catch-up mark: admitted (or found stored) in this status. */
export const paymentMark = (payment: Json) =>
	`payment:${textOf(payment.id)}:${canonicalStatus(payment.status)}`;

const isPostbackStatus = (row: Json) =>
	(PAYMENT_POSTBACK_STATUSES as readonly string[]).includes(canonicalStatus(row.status));

const isMulti = (bill: Json) => canonicalStatus(bill.type) === 'MULTI';

/** What the payment path uses of the runner: its admission of a payment, the store, the log. */
export interface PaymentHooks {
	/** The runner's admission of a rebuilt payment postback: undefined when it was skipped. */
	admit: (
		fields: PostbackFields,
		orderUnknown: boolean,
		record: Json,
	) => Promise<Admission | undefined>;
	store: Pick<Housekeeping, 'catchupMarks' | 'addCatchupMarks' | 'rememberLinks'>;
	logger: Logger;
}

/** A new run's coverage of the search: nothing read yet. */
export const paymentSearchCoverage = (): PaymentSearchCoverage => ({
	state: 'not_read',
	since: null,
	listed: 0,
	payments: 0,
	paymentsLeft: 0,
	olderBills: 0,
	oldestBill: null,
});

export class PaymentSearch {
	/** Where the list goes on after a run stopped before its end (for the same window). */
	#resume: { key: string; url: string } | undefined;

	/**
	 * The search from `from` to today, at most `maxPages` pages: its rows in a postback status,
	 * created in the window. undefined: the service refused it (said in the coverage and `unread`:
	 * no payment of an older bill and no chargeback is found then); an error worth a retry fails the
	 * run. The run's `paymentSearch` says what it read.
	 */
	async read(
		w: Window,
		from: string,
		maxPages: number,
		logger: Logger,
	): Promise<Listed | undefined> {
		const coverage = (w.result.paymentSearch ??= paymentSearchCoverage());
		coverage.since = from;
		const key = `${from}:${w.today}`;
		const resumeAt = this.#resume?.key === key ? this.#resume.url : undefined;
		let listed: Listed;
		try {
			listed = await readList(
				w.fetchPage,
				resumeAt ?? w.firstUrl('/api/v1/payment/search', from),
				w.apiRoot,
				maxPages,
				(row) => isPostbackStatus(row) && createdWithin(row, from, w.today),
				w.held,
			);
		} catch (error) {
			if (!(error instanceof ApiError) || isTransientStatus(error.status)) throw error;
			coverage.state = 'refused';
			coverage.refusal = error.key || `HTTP ${error.status}`;
			noteUnread(w.result.unread, 'payment/search', 'refused', coverage.refusal);
			logger.warn(
				{ status: error.status, key: error.key },
				'catch-up cannot read payment/search: payments of older bills and chargebacks are not found',
			);
			return undefined;
		}
		this.#resume = listed.next === undefined ? undefined : { key, url: listed.next };
		coverage.listed += listed.rows.length;
		coverage.state = listed.stopped || listed.end ? 'cut' : 'read';
		noteListed(w.result.unread, 'payment/search', listed);
		return listed;
	}

	/**
	 * The search's payments of the last RELAY_CATCHUP_DAYS days whose bill no bill search of this
	 * run holds, each admitted once (see above), while the calls last (`until`): those left are
	 * counted in the coverage, the run is partial, and the next run goes on with them.
	 */
	async admit(
		w: Window,
		rows: readonly Json[],
		hooks: PaymentHooks,
		until: number,
	): Promise<BudgetSpent | undefined> {
		const coverage = (w.result.paymentSearch ??= paymentSearchCoverage());
		const candidates = rows.filter(
			(row) => createdWithin(row, w.since, w.today) && !heldByBills(w, row),
		);
		const known = new Set(await hooks.store.catchupMarks(candidates.map(paymentMark)));
		const queue = candidates.filter((row) => !known.has(paymentMark(row)));
		const refused = new Set<string>();
		for (let i = 0; i < queue.length; i++) {
			const row = queue[i];
			// Counted, not forwarded (baseline.ts): no call spent on its bill.
			if (placeOf(w.baseline, row) === 'before') {
				w.result.beforeBaseline += 1;
				continue;
			}
			const billId = textOf(row.bill_id);
			if (refused.has(billId)) continue;
			let bill: Json | null | undefined = billId === '' ? {} : knownBill(w, billId);
			if (bill === undefined) {
				if (w.api.calls >= until) {
					coverage.paymentsLeft += queue.length - i;
					return new BudgetSpent(until);
				}
				bill = await this.#bill(w, billId, hooks);
			}
			if (bill === null) {
				refused.add(billId);
				continue;
			}
			const day = createdDate(bill.created_at);
			if (day !== undefined && day < w.billWindowSince) {
				coverage.olderBills += 1;
				if (coverage.oldestBill === null || day < coverage.oldestBill) coverage.oldestBill = day;
			}
			const invId = orderIdOf(bill);
			const fields = paymentPostback(row, invId ?? '', w.token);
			if (!fields) continue;
			coverage.payments += 1;
			const admitted = await hooks.admit(fields, invId === undefined, row);
			if (admitted?.outcome === 'stored' || admitted?.outcome === 'known')
				await hooks.store.addCatchupMarks([paymentMark(row)], w.now, w.pruneBefore);
		}
		return undefined;
	}

	/** The payment's bill (`bill/status`), a MULTI one remembered; null: the service refused it. */
	async #bill(w: Window, billId: string, hooks: PaymentHooks): Promise<Json | null> {
		try {
			const bill = await billOf(w, billId);
			if (isMulti(bill)) await rememberLink(hooks.store, billId, w.now, hooks.logger);
			return bill;
		} catch (error) {
			if (!(error instanceof ApiError) || isTransientStatus(error.status)) throw error;
			hooks.logger.warn(
				{ bill: billId.slice(0, 100), error: error.message },
				'catch-up skipped the payments of a bill the service would not show (bill/status)',
			);
			return null;
		}
	}
}

/** A bill this run knows without a call: listed by a search, or asked for already. */
const knownBill = (w: Window, billId: string): Json | undefined =>
	w.bills.listed.get(billId) ?? w.bills.asked.get(billId);

/**
 * A bill's record: one this run's searches listed, else `bill/status`, asked once a run (the
 * payment search and the refunds and chargebacks share it). Its errors are the call's.
 */
export async function billOf(w: Window, billId: string): Promise<Json> {
	const known = knownBill(w, billId);
	if (known !== undefined) return known;
	const bill = await w.api.billStatus(billId);
	w.bills.asked.set(billId, bill);
	return bill;
}

/**
 * Whether the bill path has the payment: its bill was read this run, or a search of this run
 * listed it as one the bill path reads (a MULTI bill, or a NORMAL bill in a final status: read
 * now, marked read before, or left for the next run).
 */
function heldByBills(w: Window, payment: Json): boolean {
	const billId = textOf(payment.bill_id);
	if (billId === '') return false;
	if (w.bills.read.has(billId)) return true;
	const bill = w.bills.listed.get(billId);
	return bill !== undefined && (isMulti(bill) || isFinalBill(bill));
}
