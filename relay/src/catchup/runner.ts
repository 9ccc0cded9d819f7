import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { RelayConfig } from '../config.ts';
import { canonicalStatus, orderIdOf } from '../contract.ts';
import type { PostbackFields } from '../contract.ts';
import type { Intake } from '../intake.ts';
import type { Metrics } from '../metrics.ts';
import type { Store } from '../store/types.ts';
import type { Targets } from '../targets.ts';
import type { Alerter } from '../alerts.ts';
import { ApiError, BudgetSpent, ServiceApi } from './api.ts';
import { isFinalBill, paymentPostback, payoutPostback } from './events.ts';

const DAY_MS = 86_400_000;

/** One event the catch-up stored: a final payment or payout no postback brought. */
export interface FoundEvent {
	eventId: string;
	kind: 'payment' | 'payout';
	trsId: string;
	status: string;
}

export interface CatchupResult {
	/** done; partial: the call budget ran out; skipped: another catch-up was running; failed. */
	outcome: 'done' | 'partial' | 'skipped' | 'failed';
	calls: number;
	bills: number;
	billsRead: number;
	payouts: number;
	found: FoundEvent[];
	error?: string;
	startedAt: number;
	durationMs: number;
}

export interface CatchupOptions {
	config: RelayConfig;
	store: Store;
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

const ymd = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The catch-up: every RELAY_CATCHUP_INTERVAL_S seconds it reads the service for the last
 * RELAY_CATCHUP_DAYS days (`bill/search`, then `bill/payments` of each bill in a final status it
 * has not read in that status, then `payout/search`), and stores each final payment or payout no
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

	/** Runs one catch-up now (a run of this process already under way is joined). Never throws. */
	run(): Promise<CatchupResult> {
		this.#running ??= this.#run().finally(() => {
			this.#running = undefined;
		});
		return this.#running;
	}

	async #run(): Promise<CatchupResult> {
		const { store, metrics, logger } = this.#o;
		const now = (this.#o.now ?? Date.now)();
		const result: CatchupResult = {
			outcome: 'done',
			calls: 0,
			bills: 0,
			billsRead: 0,
			payouts: 0,
			found: [],
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
			} else {
				result.outcome = 'failed';
				result.error = error instanceof Error ? error.message : String(error);
			}
		}
		result.calls = api.calls;
		result.durationMs = (this.#o.now ?? Date.now)() - now;
		metrics.catchupRuns.inc({ outcome: result.outcome });
		const summary = {
			outcome: result.outcome,
			calls: result.calls,
			bills: result.bills,
			billsRead: result.billsRead,
			payouts: result.payouts,
			found: result.found.length,
			durationMs: result.durationMs,
		};
		if (result.outcome === 'failed')
			logger.error(
				{ ...summary, error: result.error },
				'catch-up failed; the next run tries again',
			);
		else if (result.outcome === 'partial')
			logger.warn(
				summary,
				'catch-up stopped at its call budget (RELAY_CATCHUP_MAX_CALLS); the next run goes on',
			);
		else logger.info(summary, 'catch-up run');
		if (result.found.length > 0) {
			await this.#o.alerter?.raise(
				'catch-up',
				result.found.map((f) => `catch-up:${f.eventId}`),
				`catch-up found ${result.found.length} event(s) no postback brought: the service's postbacks are not reaching the relay`,
				{ events: result.found.slice(0, 50) },
			);
		}
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
		const { config, store } = this.#o;
		const token = config.apiTokens[config.apiTokens.length - 1];
		// Never further back than the store keeps delivered events (RELAY_RETENTION_DAYS): a payment
		// whose event was pruned would otherwise come back as a catch-up event.
		const days =
			config.retentionDays > 0
				? Math.max(1, Math.min(config.catchup.days, config.retentionDays - 1))
				: config.catchup.days;
		// UTC days; one day more at the end for a service whose day starts before UTC's.
		const window = {
			start_date: ymd(now - days * DAY_MS),
			finish_date: ymd(now + DAY_MS),
		};
		const pruneBefore = now - (days + 2) * DAY_MS;
		let budgetSpent: BudgetSpent | undefined;

		// Payments: bills in a final status, oldest first (the first to leave the window).
		if (this.#o.targets.payment.length > 0) {
			const bills = (await api.list('/api/v1/bill/search', window)).filter(isFinalBill);
			bills.sort((a, b) => String(a.created_at ?? '').localeCompare(String(b.created_at ?? '')));
			result.bills = bills.length;
			const markOf = (bill: Record<string, unknown>) =>
				`bill:${String(bill.id)}:${canonicalStatus(bill.status)}`;
			// A NORMAL bill read in its final status is not read again; a MULTI bill can take more
			// payments in the same status, so it is read every run.
			const known = new Set(
				await store.catchupMarks(
					bills.filter((b) => canonicalStatus(b.type) !== 'MULTI').map(markOf),
				),
			);
			for (const bill of bills) {
				if (known.has(markOf(bill))) continue;
				let payments: Record<string, unknown>[];
				try {
					const answer = await api.get('/api/v1/bill/payments', { id: String(bill.id) });
					payments = Array.isArray(answer.data) ? (answer.data as Record<string, unknown>[]) : [];
				} catch (error) {
					if (error instanceof BudgetSpent) {
						budgetSpent = error;
						break;
					}
					// One bill the service refuses (too_many_payments, bill_not_found) does not stop the run.
					if (
						error instanceof ApiError &&
						error.status !== null &&
						error.status < 500 &&
						error.status !== 429
					) {
						this.#o.logger.warn({ bill: bill.id, error: error.message }, 'catch-up skipped a bill');
						continue;
					}
					throw error;
				}
				result.billsRead += 1;
				const invId = orderIdOf(bill);
				for (const payment of payments) {
					const fields = paymentPostback(payment, invId ?? '', token);
					if (fields) await this.#admit('payment', fields, result, invId === undefined);
				}
				await store.addCatchupMarks([markOf(bill)], now, pruneBefore);
			}
		}

		// Payouts: every payout of the window in a postback status.
		if (!budgetSpent && this.#o.targets.payout.length > 0) {
			const payouts = await api.list('/api/v1/payout/search', window);
			for (const payout of payouts) {
				const fields = payoutPostback(payout, token);
				if (!fields) continue;
				result.payouts += 1;
				await this.#admit('payout', fields, result, false);
			}
		}
		if (budgetSpent) throw budgetSpent;
	}

	/**
	 * Admits the rebuilt postback as a catch-up event unless the store has it. `orderUnknown`: the
	 * service did not tell the bill's order ID, so InvId is '' (see Intake's look-ups).
	 */
	async #admit(
		kind: 'payment' | 'payout',
		fields: PostbackFields,
		result: CatchupResult,
		orderUnknown: boolean,
	): Promise<void> {
		const admitted = await this.#o.intake.admit(kind, fields, { via: 'catch-up', orderUnknown });
		if (admitted.outcome !== 'stored' || admitted.duplicate) return;
		result.found.push({
			eventId: admitted.eventId,
			kind,
			trsId: fields.TrsId,
			status: fields.Status,
		});
	}
}
