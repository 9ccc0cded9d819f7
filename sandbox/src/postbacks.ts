/**
 * Postback delivery: form-encoded POSTs, retried on anything but HTTP 200 after
 * 10 s, 100 s, 1000 s, 10000 s, 100000 s (times the time factor), each attempt logged.
 */
import type { Fields } from './model.ts';

export const MAX_ATTEMPTS = 6;

export interface DeliveryAttempt {
	/** The delivery: the same for every attempt of one postback. */
	id: string;
	kind: 'payment' | 'payout';
	trsId: string;
	url: string;
	body: Fields;
	attempt: number;
	/** HTTP status of the answer, or null when there was none (timeout, connection error). */
	status: number | null;
	error: string | null;
	/** The first 1000 characters of the answer. */
	response: string | null;
	delivered: boolean;
	/** Given up without a request by the lose-postbacks switch. */
	lost?: boolean;
	/** Delay before the next attempt in ms (already scaled), or null when none follows. */
	nextAttemptInMs: number | null;
	at: string;
}

export interface DelivererOptions {
	timeFactor: number;
	timeoutMs: number;
}

interface Delivery {
	id: string;
	kind: 'payment' | 'payout';
	trsId: string;
	url: string;
	body: Fields;
}

export class Deliverer {
	readonly log: DeliveryAttempt[] = [];
	private readonly options: DelivererOptions;
	private readonly timers = new Set<NodeJS.Timeout>();
	private readonly inFlight = new Set<AbortController>();
	private seq = 0;
	private generation = 0;

	constructor(options: DelivererOptions) {
		this.options = options;
	}

	/** Delay after failed attempt n (1-based): 10^n seconds times the time factor. */
	retryDelayMs(attempt: number): number {
		return 10 ** attempt * 1000 * this.options.timeFactor;
	}

	/**
	 * Sends a postback, retried on failure. `lost`: the postback is given up at once without a
	 * request (the lose-postbacks switch), logged as one attempt with `lost: true`.
	 */
	send(kind: 'payment' | 'payout', url: string, body: Fields, trsId: string, lost = false): string {
		this.seq += 1;
		const delivery: Delivery = { id: `D${this.seq}`, kind, trsId, url, body };
		if (lost) {
			this.log.push({
				...delivery,
				attempt: 1,
				status: null,
				error:
					'lost: the sandbox gave up on this postback without sending it (losePostback switch)',
				response: null,
				delivered: false,
				lost: true,
				nextAttemptInMs: null,
				at: new Date().toISOString(),
			});
			return delivery.id;
		}
		this.schedule(delivery, 1, 0);
		return delivery.id;
	}

	/** Number of deliveries with an attempt still to come. */
	get pending(): number {
		return this.timers.size + this.inFlight.size;
	}

	private schedule(delivery: Delivery, attempt: number, delayMs: number): void {
		const generation = this.generation;
		const timer = setTimeout(() => {
			this.timers.delete(timer);
			if (generation !== this.generation) return;
			void this.attempt(delivery, attempt, generation);
		}, delayMs);
		this.timers.add(timer);
	}

	private async attempt(delivery: Delivery, attempt: number, generation: number): Promise<void> {
		const controller = new AbortController();
		this.inFlight.add(controller);
		const timeout = setTimeout(
			() => controller.abort(new Error('timeout')),
			this.options.timeoutMs,
		);
		let status: number | null = null;
		let error: string | null = null;
		let response: string | null = null;
		try {
			const answer = await fetch(delivery.url, {
				method: 'POST',
				headers: {
					'content-type': 'application/x-www-form-urlencoded',
					'user-agent': 'paypalych-sandbox',
				},
				body: new URLSearchParams(delivery.body).toString(),
				signal: controller.signal,
				redirect: 'manual',
			});
			status = answer.status;
			response = (await answer.text()).slice(0, 1000);
		} catch (caught) {
			const reason = controller.signal.aborted ? controller.signal.reason : caught;
			const cause = (caught as { cause?: { code?: string } })?.cause?.code;
			error = reason instanceof Error ? reason.message : String(reason);
			if (cause && !error.includes(cause)) error = `${error} (${cause})`;
		} finally {
			clearTimeout(timeout);
			this.inFlight.delete(controller);
		}
		if (generation !== this.generation) return;
		const delivered = status === 200;
		const retry = !delivered && attempt < MAX_ATTEMPTS;
		const nextAttemptInMs = retry ? this.retryDelayMs(attempt) : null;
		this.log.push({
			id: delivery.id,
			kind: delivery.kind,
			trsId: delivery.trsId,
			url: delivery.url,
			body: delivery.body,
			attempt,
			status,
			error,
			response,
			delivered,
			nextAttemptInMs,
			at: new Date().toISOString(),
		});
		if (retry && nextAttemptInMs !== null) this.schedule(delivery, attempt + 1, nextAttemptInMs);
	}

	/** Cancels every pending attempt (and aborts those in flight); keeps or clears the log. */
	cancelAll(clearLog: boolean): void {
		this.generation += 1;
		for (const timer of this.timers) clearTimeout(timer);
		this.timers.clear();
		for (const controller of this.inFlight) controller.abort(new Error('sandbox closed'));
		this.inFlight.clear();
		if (clearLog) this.log.length = 0;
	}
}
