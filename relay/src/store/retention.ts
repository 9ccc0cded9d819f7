import type { Logger } from 'pino';
import type { Housekeeping } from './types.ts';

export const DAY_MS = 86_400_000;

/**
 * The service retries a postback at about 10 s, 100 s, … 10^5 s after its first call: 5 retries
 * within about 31 hours. The shortest retention (RELAY_RETENTION_DAYS ≥ 2, checked by the config)
 * is longer, so every retry of a postback arrives while its event, and so its dedupe key, is still
 * stored: pruning can never let a retry through as a new event.
 */
export const SERVICE_RETRY_WINDOW_MS = 111_110_000;

export interface PrunerOptions {
	store: Pick<Housekeeping, 'prune'>;
	retentionDays: number;
	logger: Logger;
	/** Time between passes. Default one hour. */
	intervalMs?: number;
	/** Events deleted per store call (one transaction each). Default 1000. */
	batch?: number;
}

/**
 * Deletes delivered events older than the retention, in batches, once shortly after start and then
 * every `intervalMs`. Events with a pending, delivering or dead delivery stay until an operator
 * deals with them. Several instances on one PostgreSQL database may prune at once.
 */
export class Pruner {
	#o: Required<PrunerOptions>;
	#timer: NodeJS.Timeout | undefined;
	#running: Promise<number> | undefined;
	#stopped = false;

	constructor(options: PrunerOptions) {
		this.#o = { intervalMs: 3_600_000, batch: 1_000, ...options };
		if (options.retentionDays * DAY_MS <= SERVICE_RETRY_WINDOW_MS) {
			throw new RangeError(
				`a retention of ${options.retentionDays} days is shorter than the service's retry window`,
			);
		}
	}

	start(firstAfterMs = 10_000): void {
		this.#stopped = false;
		this.#schedule(firstAfterMs);
	}

	#schedule(ms: number): void {
		if (this.#stopped) return;
		this.#timer = setTimeout(() => {
			this.runOnce(Date.now())
				.catch((error: unknown) =>
					this.#o.logger.error({ err: error }, 'pruning old events failed'),
				)
				.finally(() => this.#schedule(this.#o.intervalMs));
		}, ms);
		this.#timer.unref();
	}

	/** One pass: prunes batch after batch until a batch comes back short. Returns the events pruned. */
	runOnce(now: number): Promise<number> {
		this.#running ??= this.#pass(now).finally(() => {
			this.#running = undefined;
		});
		return this.#running;
	}

	async #pass(now: number): Promise<number> {
		const before = now - this.#o.retentionDays * DAY_MS;
		let total = 0;
		for (;;) {
			if (this.#stopped) break;
			const n = await this.#o.store.prune(before, this.#o.batch);
			total += n;
			if (n < this.#o.batch) break;
		}
		if (total > 0)
			this.#o.logger.info(
				{ pruned: total, before: new Date(before).toISOString() },
				'pruned delivered events',
			);
		return total;
	}

	async stop(): Promise<void> {
		this.#stopped = true;
		clearTimeout(this.#timer);
		await this.#running?.catch(() => {});
	}
}
