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
				await this.#plain(batch[0], error);
				return;
			}
			// One bad result (or a lost connection) failed the batch: each result on its own, in order.
			for (const q of batch) {
				try {
					await this.#record([q.result]);
					q.resolve();
				} catch (alone) {
					await this.#plain(q, alone);
				}
			}
			return;
		}
		for (const q of batch) q.resolve();
	}

	/**
	 * A result the store refused, written once more without what came from outside (the target's
	 * answer and receipt, an error naming it): the attempt and its outcome are kept, so the retry
	 * budget and the dead letter still apply. Were it never written, the lease would run out and
	 * the delivery be sent again without end. A store that is down refuses this one too (the lease
	 * decides).
	 */
	async #plain(q: Queued, cause: unknown): Promise<void> {
		try {
			await this.#record([plainResult(q.result, cause)]);
			q.resolve();
		} catch {
			q.reject(asError(cause));
		}
	}
}

/**
 * The result without the target's answer and receipt, its error replaced by why it could not be
 * stored.
 */
export function plainResult(r: DeliveryResult, cause: unknown): DeliveryResult {
	const timing = { ...r.timing, response: null, receipt: null };
	const why = cause instanceof Error ? cause.name : 'error';
	if (r.outcome === 'delivered') return { ...r, timing };
	return {
		...r,
		timing,
		error: `${r.error.replace(/[^\x20-\x7e]/g, '?').slice(0, 200)} (the answer could not be stored: ${why})`,
	};
}

const asError = (error: unknown): Error =>
	error instanceof Error ? error : new Error(String(error));
