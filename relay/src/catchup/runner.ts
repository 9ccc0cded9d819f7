import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { RelayConfig } from '../config.ts';
import { canonicalStatus, orderIdOf } from '../contract.ts';
import type { Intake } from '../intake.ts';
import type { Metrics } from '../metrics.ts';
import type { Targets } from '../targets.ts';
import type { Alerter } from '../alerts.ts';
import { BudgetSpent, ServiceApi } from '../service-api.ts';
import { MemoryCeilingReached, billPayments, oldestDay, readList } from './lists.ts';
import { alertFound, alertTrouble, logRun } from './result.ts';
import { readRememberedLinks, rememberLink } from './links.ts';
import { runError, windowDays, windowOf } from './result.ts';
import type { CatchupResult, CatchupStore, Window } from './result.ts';
import { isFinalBill, paymentPostback, payoutPostback } from './events.ts';
import { backfill } from './baseline.ts';
import { addDays, createdDate, createdWithin } from '../contract.ts';
import { admitRecord } from './admit.ts';
import type { AdmitArgs } from './admit.ts';
import { MoneyBackCatchup } from './money-back.ts';
import type { CatchupBaseline } from '../store/baseline-marks.ts';

export type { CatchupResult, FoundEvent, SkippedRecord } from './result.ts';

export interface CatchupOptions {
	config: RelayConfig;
	/** Its baseline, marks, remembered links and lock. */
	store: CatchupStore;
	metrics: Metrics;
	logger: Logger;
	alerter?: Alerter;
	/** Where the rebuilt postbacks go in, as the routes' postbacks do. */
	intake: Pick<Intake, 'admit'>;
	targets: Targets;
	dispatcher?: Dispatcher;
	/** Back-off of the API client (tests shorten it). */
	backoffMs?: number;
	maxBackoffMs?: number;
	now?: () => number;
}

/**
 * The catch-up: every RELAY_CATCHUP_INTERVAL_S seconds it reads the service for the last
 * RELAY_CATCHUP_DAYS days (`payout/search`, `bill/search`, then `bill/payments` of each bill in
 * a final status it has not read in that status, then refunds and chargebacks with a share of the
 * budget held for them, then older bills), and stores each final payment or payout no
 * postback brought as an event of source `catch-up`, forwarded like a postback. Its dedupe key is
 * the postback's, so the late genuine postback after it is a duplicate (and the other way round).
 * One run at a time per store (PostgreSQL: across every relay on the database); a run that fails
 * is logged and the next interval tries again.
 */
export class CatchupRunner {
	readonly #o: CatchupOptions;
	#timer: NodeJS.Timeout | undefined;
	#running: Promise<CatchupResult> | undefined;
	#stopped = false;
	last: CatchupResult | undefined;
	/** The last deep run (its coverage). */
	lastDeep: CatchupResult | undefined;
	/** A deep run is due: the first after start, one every RELAY_CATCHUP_DEEP_INTERVAL_S, or one cut short. */
	#deepDue = true;
	#lastDeepAt = 0;
	/** Where the payout list, and the bill search, resume after a run stopped at its share. */
	readonly #resume: {
		payouts?: string;
		bills?: Partial<Record<'recent' | 'deep', { key: string; url: string }>>;
	} = {};
	/** When each MULTI bill was last read: the least recently read go first. */
	readonly #multiReadAt = new Map<string, number>();
	/** The MULTI bills read in the run under way (the remembered links not to read again). */
	#readThisRun = new Set<string>();
	/** Runs in a row that ended partial or failed, and since when. */
	readonly #trouble: { since?: number } = {};
	/** Refunds and chargebacks no postback brought (money-back.ts). */
	readonly #moneyBack = new MoneyBackCatchup();

	constructor(options: CatchupOptions) {
		this.#o = options;
	}

	get enabled(): boolean {
		return this.#o.config.catchup.intervalS > 0;
	}

	/** Schedules runs every interval (the first one interval after start); nothing when off. */
	start(): void {
		if (!this.enabled) return;
		this.#stopped = false;
		this.#schedule();
	}

	#schedule(): void {
		if (this.#stopped) return;
		this.#timer = setTimeout(() => {
			void this.run().finally(() => this.#schedule());
		}, this.#o.config.catchup.intervalS * 1000);
		this.#timer.unref();
	}

	async stop(): Promise<void> {
		this.#stopped = true;
		clearTimeout(this.#timer);
		await this.#running?.catch(() => undefined);
	}

	/**
	 * Runs one catch-up now (a run of this process already under way is joined). `deep`: search
	 * bills of the last RELAY_CATCHUP_BILL_DAYS days whatever the schedule. Never throws.
	 */
	run(options: { deep?: boolean } = {}): Promise<CatchupResult> {
		if (options.deep) this.#deepDue = true;
		this.#running ??= this.#run().finally(() => {
			this.#running = undefined;
		});
		return this.#running;
	}

	/** The store's baseline (written now when it has none), and an operator's back-fill (baseline.ts). */
	baseline = (): Promise<CatchupBaseline> =>
		this.#o.store.catchupBaseline((this.#o.now ?? Date.now)());
	backfill = (since: number): Promise<CatchupBaseline> =>
		backfill(this.#o.store, windowDays(this.#o.config), since, (this.#o.now ?? Date.now)());

	async #run(): Promise<CatchupResult> {
		const { store, metrics, logger } = this.#o;
		const now = (this.#o.now ?? Date.now)();
		const deep =
			this.#deepDue || now - this.#lastDeepAt >= this.#o.config.catchup.deepIntervalS * 1000;
		const result: CatchupResult = {
			outcome: 'done',
			deep,
			billsSince: null,
			oldestBillDate: null,
			calls: 0,
			bills: 0,
			billsRead: 0,
			payments: 0,
			payouts: 0,
			beforeBaseline: 0,
			baseline: null,
			toRead: { bills: 0, multiBills: 0, billPages: false, payouts: false },
			found: [],
			skippedRecords: [],
			startedAt: now,
			durationMs: 0,
		};
		const api = this.#api();
		try {
			const locked = await store.withCatchupLock(() => this.#read(api, result, now));
			if (!locked.ran) result.outcome = 'skipped';
		} catch (error) {
			if (error instanceof BudgetSpent) {
				result.outcome = 'partial';
				if (error instanceof MemoryCeilingReached) result.ceiling = error.message;
			} else {
				result.outcome = 'failed';
				result.error = runError(error, this.#o.config.catchup.shopId);
			}
		}
		result.calls = api.calls;
		result.durationMs = (this.#o.now ?? Date.now)() - now;
		if (deep && result.outcome !== 'skipped') {
			// A deep run cut short stays due: the next run goes on with it.
			this.#deepDue = result.outcome !== 'done';
			if (result.outcome === 'done') this.#lastDeepAt = now;
			this.lastDeep = result;
		}
		metrics.catchupRuns.inc({ outcome: result.outcome });
		logRun(logger, result);
		await alertFound(this.#o.alerter, result);
		await alertTrouble(
			this.#o.alerter,
			this.#trouble,
			this.#o.config.catchup.deepIntervalS,
			result,
			now,
		);
		this.last = result;
		return result;
	}

	#api(): ServiceApi {
		const { config, metrics } = this.#o;
		// The last token of PAYPALYCH_API_TOKEN: the new one during a rotation (`old,new`).
		const token = config.apiTokens[config.apiTokens.length - 1];
		return new ServiceApi({
			baseUrl: config.catchup.apiBaseUrl,
			token,
			maxCalls: config.catchup.maxCalls,
			dispatcher: this.#o.dispatcher,
			backoffMs: this.#o.backoffMs,
			maxBackoffMs: this.#o.maxBackoffMs,
			onCall: (path) => metrics.catchupApiCalls.inc({ endpoint: path.replace(/^\/api\/v1\//, '') }),
		});
	}

	async #read(api: ServiceApi, result: CatchupResult, now: number): Promise<void> {
		result.baseline = await this.#o.store.catchupBaseline(now);
		const w = windowOf(this.#o.config, api, result, now, result.baseline);
		this.#readThisRun = new Set();
		// Refunds and chargebacks keep a share of the budget that payouts and bills cannot spend: a
		// backlog never keeps a lost refund from being found (money-back.ts).
		const share = this.#moneyBack.share(w, this.#o.targets);
		api.heldBack = share;
		const payoutsCut = this.#o.targets.payout.length > 0 ? await this.#readPayouts(w) : undefined;
		const bills = this.#o.targets.payment.length > 0;
		const recentCut = bills ? await this.#readBills(w, w.since, w.today, 'recent') : undefined;
		api.heldBack = 0;
		// A service that fails them fails the run, once the older bills are read.
		const moneyBack = await this.#moneyBack
			.read(w, share, {
				admit: (kind, fields, orderUnknown, record) =>
					this.#admit(kind, fields, w, orderUnknown, record),
				store: this.#o.store,
				logger: this.#o.logger,
				targets: this.#o.targets,
			})
			.then(
				(cut) => ({ cut }),
				(error: unknown) => ({ cut: undefined, error }),
			);
		const olderCut = bills && !recentCut ? await this.#readOlderBills(w) : undefined;
		if ('error' in moneyBack) throw moneyBack.error;
		const cut = recentCut ?? olderCut ?? payoutsCut ?? moneyBack.cut;
		if (cut) throw cut;
	}

	/**
	 * The newest first: every run reads the bills created in the last RELAY_CATCHUP_DAYS days
	 * (before the refunds and chargebacks, with what their share leaves) before anything older, so
	 * a backlog of old unread bills never delays a fresh loss by more than one run; then the
	 * remembered links, and a deep run gives the bills created before them (back to
	 * RELAY_CATCHUP_BILL_DAYS) what is left of its budget: two searches over two date ranges that
	 * do not overlap (one list call more than one search over both).
	 */
	async #readOlderBills(w: Window): Promise<BudgetSpent | undefined> {
		const links = await readRememberedLinks(
			w,
			this.#o.store,
			this.#readThisRun,
			this.#o.logger,
			(bill, payments) => this.#admitPayments(w, bill, payments),
		);
		if (links || w.billSince >= w.since) return links;
		return await this.#readBills(w, w.billSince, addDays(w.since, -1), 'deep');
	}

	/** Payouts, first and with at most a quarter of the budget; a cut list resumes next run. */
	async #readPayouts(w: Window): Promise<BudgetSpent | undefined> {
		const { result, token, since, today, budget, apiRoot, fetchPage, firstUrl } = w;
		{
			const share = Math.max(1, Math.floor(budget / 4));
			const listed = await readList(
				fetchPage,
				this.#resume.payouts ?? firstUrl('/api/v1/payout/search', since),
				apiRoot,
				share,
				(row) => createdWithin(row, since, today),
				w.held,
			);
			this.#resume.payouts = listed.next;
			result.toRead.payouts = listed.next !== undefined;
			for (const payout of listed.rows) {
				const fields = payoutPostback(payout, token);
				if (!fields) continue;
				result.payouts += 1;
				await this.#admit('payout', fields, w, false, payout);
			}
			return listed.stopped;
		}
	}

	/**
	 * Bills: the search, then each bill's payments. A NORMAL bill read in its final status is not
	 * read again; a MULTI bill can take more payments in any status, so it is read every run. The
	 * two kinds take turns, MULTI bills least recently read first: neither starves the other, and a
	 * run stopped at its budget resumes with what it did not read.
	 */
	async #readBills(
		w: Window,
		billSince: string,
		billUntil: string,
		pass: 'recent' | 'deep',
	): Promise<BudgetSpent | undefined> {
		const { api, result, now } = w;
		const { store } = this.#o;
		let stopped: BudgetSpent | undefined;
		// The list takes at most half of what is left: the bills it names must be read too.
		// A search cut at its share resumes at its next page once the bills of the pages read are
		// read (the next page's bills are then those to go on with).
		const resumeKey = `${pass}:${billSince}:${billUntil}`;
		const resume = this.#resume.bills?.[pass];
		const resumeAt = resume?.key === resumeKey ? resume.url : undefined;
		const listed = await readList(
			w.fetchPage,
			resumeAt ?? w.firstUrl('/api/v1/bill/search', billSince, billUntil),
			w.apiRoot,
			Math.max(1, Math.floor(api.callsLeft / 2)),
			(row) => createdWithin(row, billSince, billUntil),
			w.held,
		);
		const listCut = listed.stopped;
		const bills = listed.rows;
		result.bills += bills.length;
		result.toRead.billPages ||= listed.next !== undefined;
		const oldest = oldestDay(bills);
		if (oldest !== null && (result.oldestBillDate === null || oldest < result.oldestBillDate))
			result.oldestBillDate = oldest;
		const isMulti = (bill: Record<string, unknown>) => canonicalStatus(bill.type) === 'MULTI';
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
			const payments = await billPayments(w, bill, this.#o.logger);
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
				if (payments.length > 0) await rememberLink(store, id, now, this.#o.logger);
			}
			await this.#admitPayments(w, bill, payments);
			if (!isMulti(bill)) await store.addCatchupMarks([markOf(bill)], now, w.pruneBefore);
		}
		result.toRead.bills += normalQueue.length;
		result.toRead.multiBills += multiQueue.length;
		if (normalQueue.length === 0 && multiQueue.every((b) => this.#multiReadAt.has(String(b.id))))
			this.#resume.bills = {
				...this.#resume.bills,
				[pass]: listed.next ? { key: resumeKey, url: listed.next } : undefined,
			};
		stopped ??= listCut;
		return stopped;
	}

	/** The payments of one bill made in the window, each admitted as its postback would be. */
	async #admitPayments(
		w: Window,
		bill: Record<string, unknown>,
		payments: ReadonlyArray<Record<string, unknown>>,
	): Promise<void> {
		const { result, token, since, today } = w;
		const invId = orderIdOf(bill);
		// A bill created in the ordinary window: a payment whose date cannot be read is its.
		const recentBill = createdWithin(bill, since, today);
		for (const payment of payments) {
			const day = createdDate(payment.created_at);
			if (day === undefined ? !recentBill : day < since || day > today) continue;
			const fields = paymentPostback(payment, invId ?? '', token);
			if (!fields) continue;
			result.payments += 1;
			await this.#admit('payment', fields, w, invId === undefined, payment);
		}
	}

	/** admitRecord (admit.ts) with this runner's intake and logger. */
	#admit(...args: AdmitArgs) {
		return admitRecord(this.#o.intake, this.#o.logger, ...args);
	}
}
