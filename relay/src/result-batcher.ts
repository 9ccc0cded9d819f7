import type { DeliveryResult } from './store/types.ts';

/** Batches being written at once; results that arrive meanwhile wait and go in the next one. */
export const RESULT_BATCHES_IN_FLIGHT = 2;
/** Most results in one batch (the forwarder's concurrency bounds them anyway). */
export const RESULT_BATCH = 500;
/**
 * How long a result waits for others when a batch could go at once. At a moderate rate the
 * deliveries finish one by one, and each lone result would be a commit (PostgreSQL: a statement
 * and a WAL record; SQLite: two thread messages and a transaction) of its own; waiting a few ms
 * lets them share one. Only the delivery's slot waits (the service has its answer long before).
 */
export const RESULT_WAIT_MS = 2;

interface Queued {
	result: DeliveryResult;
	resolve: () => void;
	reject: (error: Error) => void;
}

/**
 * Group commit of the forwarder's results (store.recordResults), in the style of the PostgreSQL
 * store's GroupInserter: a result that comes when fewer than RESULT_BATCHES_IN_FLIGHT batches are
 * being written goes out after RESULT_WAIT_MS with whatever else came meanwhile; results that come while the batches in flight are
 * full wait and go together in the next one. Each promise resolves after the commit of the batch
 * that carried its result. If a batch fails, each of its results is written alone once, so one bad
 * result fails alone.
 */
export class ResultBatcher {
	#record: (results: readonly DeliveryResult[]) => Promise<void>;
	#queue: Queued[] = [];
	#inFlight = 0;
	#scheduled = false;
	#drained: Array<() => void> = [];

	constructor(record: (results: readonly DeliveryResult[]) => Promise<void>) {
		this.#record = record;
	}

	/** Nothing queued or being written. */
	get idle(): boolean {
		return this.#inFlight === 0 && this.#queue.length === 0;
	}

	record(result: DeliveryResult): Promise<void> {
		return new Promise<void>((resolve, reject) => {
			this.#queue.push({ result, resolve, reject });
			if (this.#scheduled || this.#inFlight >= RESULT_BATCHES_IN_FLIGHT) return;
			// The results that finish within RESULT_WAIT_MS go together.
			this.#scheduled = true;
			setTimeout(() => {
				this.#scheduled = false;
				this.#pump();
			}, RESULT_WAIT_MS);
		});
	}

	/** Resolves once every result recorded so far is written (or has failed). */
	drain(): Promise<void> {
		if (this.idle) return Promise.resolve();
		return new Promise<void>((resolve) => this.#drained.push(resolve));
	}

	#pump(): void {
		while (this.#inFlight < RESULT_BATCHES_IN_FLIGHT && this.#queue.length > 0) {
			const batch = this.#queue.splice(0, RESULT_BATCH);
			this.#inFlight += 1;
			void this.#write(batch).finally(() => {
				this.#inFlight -= 1;
				this.#pump();
				if (this.idle) for (const resolve of this.#drained.splice(0)) resolve();
			});
		}
	}

	async #write(batch: Queued[]): Promise<void> {
		try {
			await this.#record(batch.map((q) => q.result));
		} catch (error) {
			if (batch.length === 1) {
				batch[0].reject(asError(error));
				return;
			}
			// One bad result (or a lost connection) failed the batch: each result on its own, in order.
			for (const q of batch) {
				try {
					await this.#record([q.result]);
					q.resolve();
				} catch (alone) {
					q.reject(asError(alone));
				}
			}
			return;
		}
		for (const q of batch) q.resolve();
	}
}

const asError = (error: unknown): Error =>
	error instanceof Error ? error : new Error(String(error));
