import type { Logger } from 'pino';
import { addDays, canonicalStatus, createdDate, createdWithin, orderIdOf } from '../contract.ts';
import type { PostbackFields } from '../contract.ts';
import type { Admission } from '../admission.ts';
import { BudgetSpent } from '../service-api.ts';
import type { Housekeeping } from '../store/types.ts';
import { isFinalBill, paymentPostback } from './events.ts';
import { readRememberedLinks, rememberLink } from './links.ts';
import { billPayments, noteListed, oldestDay, readList } from './lists.ts';
import { paymentMark } from './payments.ts';
import type { Window } from './result.ts';

/** What the bill path uses of the runner: its admission of a payment, the store, the log. */
export interface BillHooks {
	admit: (
		w: Window,
		fields: PostbackFields,
		orderUnknown: boolean,
		record: Record<string, unknown>,
	) => Promise<Admission | undefined>;
	store: Pick<
		Housekeeping,
		'catchupMarks' | 'addCatchupMarks' | 'rememberLinks' | 'linksToRead' | 'markLinksRead'
	>;
	logger: Logger;
}

const isMulti = (bill: Record<string, unknown>) => canonicalStatus(bill.type) === 'MULTI';

/**
 * The catch-up's bills (docs/operator/catch-up.md): `bill/search` over a range of creation days,
 * then `bill/payments` of each bill in a final status not read in it yet and of every MULTI bill;
 * the remembered MULTI links; each payment of the window admitted as its postback would be.
 */
export class BillReader {
	/** Where each bill search resumes after a run stopped at its share. */
	#resume: Partial<Record<'recent' | 'deep', { key: string; url: string }>> = {};
	/** When each MULTI bill was last read: the least recently read go first. */
	readonly #multiReadAt = new Map<string, number>();
	/** The MULTI bills read in the run under way (the remembered links not to read again). */
	#readThisRun = new Set<string>();
	readonly #hooks: BillHooks;

	constructor(hooks: BillHooks) {
		this.#hooks = hooks;
	}

	/** A new run: nothing read in it yet. */
	startRun(): void {
		this.#readThisRun = new Set();
	}

	/**
	 * The newest first: every run reads the bills created in the last RELAY_CATCHUP_DAYS days
	 * (before the refunds and chargebacks, with what their share leaves) before anything older, so
	 * a backlog of old unread bills never delays a fresh loss by more than one run; then the
	 * remembered links, and a deep run gives the bills created before them (back to
	 * RELAY_CATCHUP_BILL_DAYS) what is left of its budget: two searches over two date ranges that
	 * do not overlap (one list call more than one search over both).
	 */
	async readOlder(w: Window): Promise<BudgetSpent | undefined> {
		const links = await readRememberedLinks(
			w,
			this.#hooks.store,
			this.#readThisRun,
			this.#hooks.logger,
			(bill, payments) => this.#admitPayments(w, bill, payments),
		);
		if (links || w.billSince >= w.since) return links;
		return await this.read(w, w.billSince, addDays(w.since, -1), 'deep');
	}

	/**
	 * Bills: the search, then each bill's payments. A NORMAL bill read in its final status is not
	 * read again; a MULTI bill can take more payments in any status, so it is read every run. The
	 * two kinds take turns, MULTI bills least recently read first: neither starves the other, and a
	 * run stopped at its budget resumes with what it did not read.
	 */
	async read(
		w: Window,
		billSince: string,
		billUntil: string,
		pass: 'recent' | 'deep',
	): Promise<BudgetSpent | undefined> {
		const { api, result, now } = w;
		const { store, logger } = this.#hooks;
		let stopped: BudgetSpent | undefined;
		// The list takes at most half of what is left: the bills it names must be read too.
		// A search cut at its share resumes at its next page once the bills of the pages read are
		// read (the next page's bills are then those to go on with).
		const resumeKey = `${pass}:${billSince}:${billUntil}`;
		const resume = this.#resume[pass];
		const resumeAt = resume?.key === resumeKey ? resume.url : undefined;
		const listed = await readList(
			w.fetchPage,
			resumeAt ?? w.firstUrl('/api/v1/bill/search', billSince, billUntil),
			w.apiRoot,
			Math.max(1, Math.floor(api.callsLeft / 2)),
			(row) => createdWithin(row, billSince, billUntil),
			w.held,
		);
		noteListed(result.unread, 'bill/search', listed);
		const listCut = listed.stopped;
		const bills = listed.rows;
		for (const bill of bills) w.bills.listed.set(String(bill.id), bill);
		result.bills += bills.length;
		result.toRead.billPages ||= listed.next !== undefined;
		const oldest = oldestDay(bills);
		if (oldest !== null && (result.oldestBillDate === null || oldest < result.oldestBillDate))
			result.oldestBillDate = oldest;
		const markOf = (bill: Record<string, unknown>) =>
			`bill:${String(bill.id)}:${canonicalStatus(bill.status)}`;
		const normal = bills.filter((b) => !isMulti(b) && isFinalBill(b));
		const known = new Set(await store.catchupMarks(normal.map(markOf)));
		// The newest first: a fresh loss before an old backlog.
		const normalQueue = normal
			.filter((b) => !known.has(markOf(b)))
			.sort((a, b) => String(b.created_at ?? '').localeCompare(String(a.created_at ?? '')));
		// A MULTI bill already read this run (a remembered link) is not read again in the deep pass.
		const multiQueue = bills
			.filter((b) => isMulti(b) && !this.#readThisRun.has(String(b.id)))
			.sort(
				(a, b) =>
					(this.#multiReadAt.get(String(a.id)) ?? 0) - (this.#multiReadAt.get(String(b.id)) ?? 0),
			);
		const queues = [normalQueue, multiQueue];
		let turn = 0;
		while (!stopped && (normalQueue.length > 0 || multiQueue.length > 0)) {
			const queue = queues[turn % 2].length > 0 ? queues[turn % 2] : queues[(turn + 1) % 2];
			turn += 1;
			const bill = queue[0];
			const payments = await billPayments(w, bill, logger);
			if (payments instanceof BudgetSpent) {
				stopped = payments;
				break;
			}
			queue.shift();
			if (payments === undefined) continue;
			result.billsRead += 1;
			if (isMulti(bill)) {
				const id = String(bill.id);
				this.#multiReadAt.set(id, now);
				this.#readThisRun.add(id);
				if (payments.length > 0) await rememberLink(store, id, now, logger);
			}
			await this.#admitPayments(w, bill, payments);
			if (!isMulti(bill)) await store.addCatchupMarks([markOf(bill)], now, w.pruneBefore);
		}
		result.toRead.bills += normalQueue.length;
		result.toRead.multiBills += multiQueue.length;
		if (normalQueue.length === 0 && multiQueue.every((b) => this.#multiReadAt.has(String(b.id))))
			this.#resume[pass] = listed.next ? { key: resumeKey, url: listed.next } : undefined;
		stopped ??= listCut;
		return stopped;
	}

	/**
	 * The payments of one bill made in the window, each admitted as its postback would be, and
	 * marked (payments.ts: the payment search does not ask for their bill again).
	 */
	async #admitPayments(
		w: Window,
		bill: Record<string, unknown>,
		payments: ReadonlyArray<Record<string, unknown>>,
	): Promise<void> {
		const { result, token, since, today } = w;
		w.bills.read.add(String(bill.id));
		const invId = orderIdOf(bill);
		// A bill created in the ordinary window: a payment whose date cannot be read is its.
		const recentBill = createdWithin(bill, since, today);
		const marks: string[] = [];
		for (const payment of payments) {
			const day = createdDate(payment.created_at);
			if (day === undefined ? !recentBill : day < since || day > today) continue;
			const fields = paymentPostback(payment, invId ?? '', token);
			if (!fields) continue;
			result.payments += 1;
			const admitted = await this.#hooks.admit(w, fields, invId === undefined, payment);
			if (admitted?.outcome === 'stored' || admitted?.outcome === 'known')
				marks.push(paymentMark(payment));
		}
		if (marks.length > 0) await this.#hooks.store.addCatchupMarks(marks, w.now, w.pruneBefore);
	}
}
