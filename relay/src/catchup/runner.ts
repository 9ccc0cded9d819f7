import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { RelayConfig } from '../config.ts';
import { createdWithin } from '../contract.ts';
import type { Intake } from '../intake.ts';
import type { Metrics } from '../metrics.ts';
import type { Targets } from '../targets.ts';
import type { Alerter } from '../alerts.ts';
import { BudgetSpent, ServiceApi } from '../service-api.ts';
import { MemoryCeilingReached, noteListed, readList } from './lists.ts';
import { alertFound, alertGaps, alertTrouble, gapsOf, logRun } from './report.ts';
import { runError, windowDays, windowOf } from './result.ts';
import type { CatchupResult, CatchupStore, Window } from './result.ts';
import { payoutPostback } from './events.ts';
import { backfill } from './baseline.ts';
import { admitRecord } from './admit.ts';
import type { AdmitArgs } from './admit.ts';
import { BillReader } from './bills.ts';
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
 * a final status it has not read in that status (bills.ts), then with a share of the budget held
 * for them refunds and the one payment search: the payments of bills no bill search holds, and
 * the chargebacks of its paid payments (money-back.ts, payments.ts), then the remembered links
 * and older bills), and stores each final payment, payout, refund or chargeback no postback
 * brought as an event of source `catch-up`, forwarded like a postback. Its dedupe key is the
 * postback's, so the late genuine postback after it is a duplicate (and the other way round).
 * What a run could not see is said in its `gaps` and alerted (report.ts). One run at a time per
 * store (PostgreSQL: across every relay on the database); a run that fails is logged and the
 * next interval tries again.
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
	/** Where the payout list resumes after a run stopped at its share. */
	#payoutsResume: string | undefined;
	/** Runs in a row that ended partial or failed, and since when; the gap in chargebacks, since when. */
	readonly #trouble: { since?: number; uncheckedSince?: number } = {};
	/** Refunds, chargebacks and the payment search (money-back.ts, payments.ts). */
	readonly #moneyBack = new MoneyBackCatchup();
	/** Bills, their payments and the remembered links (bills.ts). */
	readonly #bills: BillReader;

	constructor(options: CatchupOptions) {
		this.#o = options;
		this.#bills = new BillReader({
			admit: (w, fields, orderUnknown, record) =>
				this.#admit('payment', fields, w, orderUnknown, record),
			store: options.store,
			logger: options.logger,
		});
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
			unread: [],
			gaps: [],
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
		result.gaps = gapsOf(result);
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
		await alertGaps(this.#o.alerter, this.#trouble, result, now);
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
		this.#bills.startRun();
		// Refunds, chargebacks and the payment search keep a share of the budget that payouts and
		// bills cannot spend: a backlog never keeps a lost refund from being found (money-back.ts).
		const share = this.#moneyBack.share(w, this.#o.targets);
		api.heldBack = share;
		const payoutsCut = this.#o.targets.payout.length > 0 ? await this.#readPayouts(w) : undefined;
		const bills = this.#o.targets.payment.length > 0;
		const recentCut = bills ? await this.#bills.read(w, w.since, w.today, 'recent') : undefined;
		api.heldBack = 0;
		// A service that fails them fails the run, once the older bills are read.
		const moneyBack = await this.#moneyBack
			.read(w, share, {
				admit: (kind, fields, orderUnknown, record) =>
					this.#admit(kind, fields, w, orderUnknown, record),
				admitPayment: (fields, orderUnknown, record) =>
					this.#admit('payment', fields, w, orderUnknown, record),
				store: this.#o.store,
				logger: this.#o.logger,
				targets: this.#o.targets,
			})
			.then(
				(cut) => ({ cut }),
				(error: unknown) => ({ cut: undefined, error }),
			);
		const olderCut = bills && !recentCut ? await this.#bills.readOlder(w) : undefined;
		if ('error' in moneyBack) throw moneyBack.error;
		const cut = recentCut ?? olderCut ?? payoutsCut ?? moneyBack.cut;
		if (cut) throw cut;
	}

	/** Payouts, first and with at most a quarter of the budget; a cut list resumes next run. */
	async #readPayouts(w: Window): Promise<BudgetSpent | undefined> {
		const { result, token, since, today, budget, apiRoot, fetchPage, firstUrl } = w;
		{
			const share = Math.max(1, Math.floor(budget / 4));
			const listed = await readList(
				fetchPage,
				this.#payoutsResume ?? firstUrl('/api/v1/payout/search', since),
				apiRoot,
				share,
				(row) => createdWithin(row, since, today),
				w.held,
			);
			noteListed(result.unread, 'payout/search', listed);
			this.#payoutsResume = listed.next;
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

	/** admitRecord (admit.ts) with this runner's intake and logger. */
	#admit(...args: AdmitArgs) {
		return admitRecord(this.#o.intake, this.#o.logger, ...args);
	}
}
