import type { Logger } from 'pino';
import { addDays, dateIn, textOf } from '../contract.ts';
import type { Metrics } from '../metrics.ts';
import type { ServiceApi } from '../service-api.ts';
import type { BalanceBook, BalanceLine, SnapshotKind } from '../store/balances.ts';

/**
 * The balance's history, which the service does not keep: `merchant/balance` recorded once at the
 * relay's first start on a store (kind `first-start`) and at each day boundary in
 * RELAY_STATEMENT_TIME_ZONE after it (kind `boundary`, the day's opening and the day before's
 * closing), each with the time it was read. A boundary is looked for every RELAY_STATEMENT_CHECK_S
 * seconds: one missed (the relay was down at midnight, the service did not answer) is recorded at
 * the next look of the same day, with its own time. Several instances may look at once: the store
 * keeps the first one, and only the instance whose snapshot was kept checks the day that closed.
 */

export interface KeeperOptions {
	store: Pick<BalanceBook, 'keepBalanceSnapshot' | 'firstSnapshotDay'>;
	/** A client for one snapshot (a few calls). */
	api: () => ServiceApi;
	timeZone: string;
	checkMs: number;
	now: () => number;
	logger: Logger;
	metrics: Metrics;
	/** Called by the instance that kept a day's boundary snapshot, with the day that closed. */
	onDayClosed: (day: string) => Promise<void>;
}

/** The balances of a `merchant/balance` answer (a `balances` list, or the list itself, or under `data`). */
export function balanceLines(answer: unknown): BalanceLine[] {
	const root = answer as Record<string, unknown> | null;
	const list = Array.isArray(answer)
		? answer
		: (root?.balances ??
			(root?.data as Record<string, unknown> | undefined)?.balances ??
			root?.data);
	if (!Array.isArray(list)) throw new Error('merchant/balance answered without a list of balances');
	const lines: BalanceLine[] = [];
	for (const entry of list) {
		if (entry === null || typeof entry !== 'object') continue;
		const row = entry as Record<string, unknown>;
		const currency = textOf(row.currency).toUpperCase();
		if (currency === '') continue;
		lines.push({
			currency,
			available: textOf(row.balance_available) || '0',
			locked: textOf(row.balance_locked) || '0',
			hold: textOf(row.balance_hold) || '0',
		});
	}
	return lines;
}

export class BalanceKeeper {
	readonly #o: KeeperOptions;
	#timer: NodeJS.Timeout | undefined;
	#running: Promise<void> | undefined;
	/** The first day with a snapshot in the zone, once known. */
	#firstDay: string | null = null;

	constructor(options: KeeperOptions) {
		this.#o = options;
	}

	start(): void {
		if (this.#o.checkMs <= 0 || this.#timer) return;
		void this.look();
		this.#timer = setInterval(() => void this.look(), this.#o.checkMs);
		this.#timer.unref();
	}

	async stop(): Promise<void> {
		if (this.#timer) clearInterval(this.#timer);
		this.#timer = undefined;
		await this.#running;
	}

	/** One look (one at a time): the first start's snapshot, else today's boundary if missing. */
	look(): Promise<void> {
		this.#running ??= this.#look().finally(() => {
			this.#running = undefined;
		});
		return this.#running;
	}

	async #look(): Promise<void> {
		const { store, timeZone, logger } = this.#o;
		try {
			const today = dateIn(timeZone, new Date(this.#o.now()));
			this.#firstDay ??= await store.firstSnapshotDay(timeZone);
			if (this.#firstDay === null) {
				await this.#take(today, 'first-start');
				this.#firstDay = today;
				return;
			}
			if (today <= this.#firstDay || this.#kept === today) return;
			if (await this.#take(today, 'boundary')) await this.#o.onDayClosed(addDays(today, -1));
			this.#kept = today;
		} catch (error) {
			logger.warn(
				{ error: error instanceof Error ? error.message : String(error) },
				'balance snapshot not recorded; the next look tries again',
			);
		}
	}

	/** The last day whose boundary this keeper found kept (no store call until the next day). */
	#kept: string | undefined;

	/** Reads the balance and keeps it: whether this snapshot was the one kept. */
	async #take(day: string, kind: SnapshotKind): Promise<boolean> {
		const { store, timeZone, metrics, logger } = this.#o;
		let lines: BalanceLine[];
		try {
			lines = balanceLines(await this.#o.api().merchantBalance());
		} catch (error) {
			metrics.balanceSnapshots.inc({ kind, outcome: 'failed' });
			throw error;
		}
		const takenAt = this.#o.now();
		const kept = await store.keepBalanceSnapshot({ timeZone, day, kind, takenAt, balances: lines });
		metrics.balanceSnapshots.inc({ kind, outcome: kept ? 'kept' : 'known' });
		if (kept) logger.info({ day, kind, currencies: lines.length }, 'balance snapshot recorded');
		return kept;
	}
}
