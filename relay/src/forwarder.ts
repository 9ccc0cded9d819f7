import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import { receiptOf } from './contract.ts';
import { failureReason, outcomeOf, send, timingOf } from './delivery-attempt.ts';
import type { AttemptAnswer } from './delivery-attempt.ts';
import type { Metrics } from './metrics.ts';
import type { ClaimedDelivery, DeliveryLease, QueueStore } from './store/types.ts';
import { afterFailure } from './retry-policy.ts';
import type { Outcome, RetrySchedule } from './retry-policy.ts';
import { ResultBatcher } from './result-batcher.ts';

export interface ForwarderOptions {
	store: QueueStore;
	metrics: Metrics;
	logger: Logger;
	concurrency: number;
	leaseMs: number;
	deliveryTimeoutMs: number;
	retryBudgetMs: number;
	baseDelayMs: number;
	maxDelayMs: number;
	pollIntervalMs: number;
	/** A success answer counts only with an X-PayPalych-Receipt header (RELAY_REQUIRE_RECEIPT). */
	requireReceipt: boolean;
	dispatcher?: Dispatcher;
	/** Source of jitter, [0, 1). */
	random?: () => number;
}

interface InFlight {
	abort: AbortController;
	done: Promise<void>;
}

/**
 * Delivers stored events to their targets: claims due deliveries with a lease (a crashed relay's
 * claims expire and are claimed again), sends the original body and content type, and records
 * success, a scheduled retry, or death. At-least-once: a target may see an event twice, and
 * gets the same X-PayPalych-Event-Id / Idempotency-Key each time.
 */
export class Forwarder {
	readonly owner = randomUUID();
	#o: ForwarderOptions;
	#schedule: RetrySchedule;
	#running = false;
	#stopping = false;
	#loopDone: Promise<void> = Promise.resolve();
	#inflight = new Map<number, InFlight>();
	#wake: (() => void) | undefined;
	#kicked = false;
	/**
	 * Whether a claim may find something: set by kick() (new work stored, here or by another
	 * instance), by every poll (retries and expired leases come due with time) and by a claim that
	 * filled every free slot; cleared by a claim that found fewer. A finished delivery frees a slot
	 * but claims again only while this is set: with the hand-off, most deliveries never need a
	 * claim, and an empty claim is a write transaction for nothing.
	 */
	#dueMaybe = true;
	#unsubscribe: (() => void) | undefined;
	/** Slots promised to deliveries being stored leased to this forwarder (see lease()). */
	#reserved = 0;
	/** Each attempt's result goes through it: results that finish together share one store call. */
	#results: ResultBatcher;

	constructor(options: ForwarderOptions) {
		this.#o = options;
		const { baseDelayMs, maxDelayMs, retryBudgetMs } = options;
		this.#schedule = {
			baseDelayMs,
			maxDelayMs,
			retryBudgetMs,
			random: options.random ?? Math.random,
		};
		this.#results = new ResultBatcher((results) => options.store.recordResults(results));
	}

	get inFlight(): number {
		return this.#inflight.size;
	}

	start(): void {
		if (this.#running) return;
		this.#running = true;
		this.#stopping = false;
		// Another instance sharing the store may have stored the work (PostgreSQL).
		this.#unsubscribe = this.#o.store.onNewWork?.(() => this.kick());
		this.#loopDone = this.#loop();
	}

	/**
	 * Hand-off: reserves `n` delivery slots for an event about to be stored, and returns the lease
	 * to store its deliveries with (NewEvent.lease); undefined when the forwarder is not running or
	 * has not `n` free slots (the deliveries are then stored pending and claimed as usual). Every
	 * lease() is followed by one adopt() with the same `n`, whatever the insert's outcome.
	 */
	lease(n: number): DeliveryLease | undefined {
		if (!this.#running || n === 0) return undefined;
		if (this.#inflight.size + this.#reserved + n > this.#o.concurrency) return undefined;
		this.#reserved += n;
		return { owner: this.owner, until: Date.now() + this.#o.leaseMs };
	}

	/**
	 * Takes the deliveries stored leased to this forwarder (InsertResult.claimed) and sends them at
	 * once, and gives back the `reserved` slots. A forwarder stopped meanwhile gives their leases
	 * back instead (they are claimed again at the next start, by this instance or another).
	 */
	adopt(claimed: readonly ClaimedDelivery[] | undefined, reserved: number): void {
		this.#reserved = Math.max(0, this.#reserved - reserved);
		for (const d of claimed ?? []) {
			if (this.#running && !this.#inflight.has(d.id)) {
				this.#launch(d);
				continue;
			}
			this.#o.store.releaseLease(d.id, this.owner, Date.now()).catch((error: unknown) => {
				this.#o.logger.warn(
					{ err: error, deliveryId: d.id },
					'giving back a handed-off delivery failed; it is claimed again when its lease expires',
				);
			});
		}
	}

	/** Something new may be due: look now instead of at the next poll. */
	kick(): void {
		this.#dueMaybe = true;
		this.#wakeLoop();
	}

	#wakeLoop(): void {
		this.#kicked = true;
		const wake = this.#wake;
		this.#wake = undefined;
		wake?.();
	}

	/**
	 * Stops claiming, lets in-flight deliveries finish for up to `graceMs`, then aborts the rest and
	 * gives their leases back (no attempt counted) so the next start sends them at once.
	 */
	async stop(graceMs = 10_000): Promise<void> {
		if (!this.#running) return;
		this.#running = false;
		this.#unsubscribe?.();
		this.#unsubscribe = undefined;
		this.kick();
		await this.#loopDone;
		const pending = [...this.#inflight.values()];
		if (pending.length > 0) {
			let timer: NodeJS.Timeout | undefined;
			const grace = new Promise<void>((resolve) => {
				timer = setTimeout(resolve, graceMs);
			});
			await Promise.race([Promise.all(pending.map((p) => p.done)), grace]);
			clearTimeout(timer);
			this.#stopping = true;
			for (const p of this.#inflight.values()) p.abort.abort();
			await Promise.all([...this.#inflight.values()].map((p) => p.done));
		}
		// Each delivery above waited for the commit of its result: this only makes sure of it.
		await this.#results.drain();
	}

	async #sleep(ms: number): Promise<void> {
		if (this.#kicked) {
			this.#kicked = false;
			return;
		}
		await new Promise<void>((resolve) => {
			const timer = setTimeout(() => {
				this.#wake = undefined;
				this.#dueMaybe = true;
				resolve();
			}, ms);
			this.#wake = () => {
				clearTimeout(timer);
				resolve();
			};
		});
		this.#kicked = false;
	}

	async #loop(): Promise<void> {
		const { concurrency } = this.#o;
		while (this.#running) {
			const free = concurrency - this.#inflight.size - this.#reserved;
			// Claim in batches: wait until a quarter of the slots is free unless nothing is in flight.
			if (
				free > 0 &&
				this.#dueMaybe &&
				(this.#inflight.size === 0 || free >= Math.max(1, Math.floor(concurrency / 4)))
			) {
				this.#dueMaybe = false;
				let claimed: ClaimedDelivery[] = [];
				try {
					claimed = await this.#o.store.claimDue(Date.now(), free, this.#o.leaseMs, this.owner);
				} catch (error) {
					this.#dueMaybe = true;
					this.#o.logger.error({ err: error }, 'claiming deliveries failed');
				}
				if (!this.#running) {
					// stop() arrived while claiming: give the claims back at once.
					await Promise.all(
						claimed.map((d) =>
							this.#o.store.releaseLease(d.id, this.owner, Date.now()).catch(() => {}),
						),
					);
					break;
				}
				for (const d of claimed) this.#launch(d);
				if (claimed.length === free) {
					this.#dueMaybe = true;
					continue;
				}
			}
			await this.#sleep(this.#o.pollIntervalMs);
		}
	}

	#launch(d: ClaimedDelivery): void {
		const abort = new AbortController();
		const done = this.#deliver(d, abort)
			.catch((error: unknown) => {
				this.#o.logger.error(
					{ err: error, deliveryId: d.id },
					'recording a delivery result failed',
				);
			})
			.finally(() => {
				this.#inflight.delete(d.id);
				// A slot is free: worth a claim only while more may be due.
				if (this.#dueMaybe) this.#wakeLoop();
			});
		this.#inflight.set(d.id, { abort, done });
	}

	/**
	 * One attempt, as svix's worker cuts it: prepare and send (delivery-attempt.ts), then handle
	 * the success or the failure. Aborted by stop(): the lease is given back, no attempt counted.
	 */
	async #deliver(d: ClaimedDelivery, abort: AbortController): Promise<void> {
		const answer = await send(d, abort, this.#o);
		if (answer.cancelled && this.#stopping) {
			await this.#o.store.releaseLease(d.id, this.owner, Date.now());
			this.#o.logger.info(
				{ deliveryId: d.id, eventId: d.eventId },
				'delivery released at shutdown',
			);
			return;
		}
		const outcome = outcomeOf(d, answer, this.#o.requireReceipt);
		if (answer.status !== undefined) {
			const receipt = receiptOf(answer.receipt) ?? 'none';
			this.#o.metrics.receipts.inc({ kind: d.kind, receipt });
		}
		if (outcome === 'success') await this.#succeeded(d, answer);
		else await this.#failed(d, answer, outcome);
	}

	async #succeeded(d: ClaimedDelivery, answer: AttemptAnswer): Promise<void> {
		const { metrics, logger } = this.#o;
		const now = answer.endedAt;
		const httpStatus = answer.status ?? 0;
		const timing = timingOf(d, answer);
		await this.#results.record({ outcome: 'delivered', id: d.id, now, httpStatus, timing });
		metrics.delivered.inc({ kind: d.kind });
		metrics.latency.observe(Math.max(0, now - d.receivedAt) / 1000);
		// One info line per delivery: what reached which target, and what the trigger answered.
		logger.info({ ...logFields(d, answer), receipt: timing.receipt }, 'delivered');
	}

	async #failed(
		d: ClaimedDelivery,
		answer: AttemptAnswer,
		outcome: Exclude<Outcome, 'success'>,
	): Promise<void> {
		const { metrics, logger } = this.#o;
		const now = answer.endedAt;
		const error = failureReason(answer, outcome);
		const failed = {
			id: d.id,
			owner: this.owner,
			now,
			httpStatus: answer.status ?? null,
			error,
			timing: timingOf(d, answer),
		};
		const attempt = {
			status: answer.status,
			retryAfter: answer.retryAfter,
			attempt: d.attempts - d.attemptBase,
			budgetStart: d.budgetStart,
		};
		const next = afterFailure(outcome, attempt, now, this.#schedule);
		const log = { ...logFields(d, answer), error };
		if (next.next === 'dead') {
			await this.#results.record({ ...failed, outcome: 'dead' });
			metrics.dead.inc({ kind: d.kind });
			logger.error(log, DEAD_BECAUSE[next.why]);
			return;
		}
		await this.#results.record({ ...failed, outcome: 'retry', nextAttemptAt: next.at });
		metrics.retries.inc({ kind: d.kind });
		logger.warn({ ...log, retryInMs: next.delayMs }, 'delivery failed; will retry');
	}
}

/** The log line of a dead delivery, by why it died. */
const DEAD_BECAUSE = {
	refused: 'delivery refused by the target; dead (requeue through the admin API)',
	budget: 'retry budget spent; delivery dead (requeue through the admin API)',
} as const;

function logFields(d: ClaimedDelivery, answer: AttemptAnswer) {
	return {
		deliveryId: d.id,
		eventId: d.eventId,
		kind: d.kind,
		target: d.target,
		attempt: d.attempts,
		status: answer.status,
	};
}
