import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Alerter } from '../alerts.ts';
import type { RelayConfig } from '../config.ts';
import { addDays, dateIn, statementDay } from '../contract.ts';
import { OperationRefused } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import { ServiceApi } from '../service-api.ts';
import type { BalanceBook, BalanceSnapshot } from '../store/balances.ts';
import type { Housekeeping } from '../store/types.ts';
import type { Targets } from '../targets.ts';
import { checkDeliveries } from './deliveries.ts';
import { ledgerOf } from './ledger.ts';
import type { LedgerInput } from './ledger.ts';
import { readDay } from './reader.ts';
import { BalanceKeeper, balanceLines } from './snapshots.ts';
import { alertDay } from './report.ts';
import type { Statement } from './statement-shape.ts';

/**
 * The daily statement (docs/operator/statement.md): for a day in RELAY_STATEMENT_TIME_ZONE, the
 * balance at its start and end (BalanceKeeper's snapshots; the balance now for today), the day's
 * movements read from the service (reader.ts) and summed by the shared contract (ledger.ts), what
 * n8n never got of them (deliveries.ts), and what the movements do not explain of the balance's
 * change. Works with the catch-up off. One read of a day at a time: callers asking for the same
 * day meanwhile share it.
 */

export type { Statement };

export interface StatementsOptions {
	config: RelayConfig;
	store: BalanceBook & Pick<Housekeeping, 'catchupBaseline'>;
	metrics: Metrics;
	alerter?: Alerter;
	targets: Targets;
	logger: Logger;
	dispatcher?: Dispatcher;
	now?: () => number;
	/** How often the keeper looks (default RELAY_STATEMENT_CHECK_S; 0 there keeps it off). */
	checkMs?: number;
	backoffMs?: number;
}

const DAY_MS = 86_400_000;

export class Statements {
	readonly keeper: BalanceKeeper;
	readonly #o: StatementsOptions;
	readonly #reading = new Map<string, Promise<Statement>>();
	readonly #now: () => number;

	constructor(options: StatementsOptions) {
		this.#o = options;
		this.#now = options.now ?? Date.now;
		const { statement } = options.config;
		this.keeper = new BalanceKeeper({
			store: options.store,
			api: () => this.#api(5),
			timeZone: statement.timeZone,
			checkMs: statement.checkS > 0 ? (options.checkMs ?? statement.checkS * 1000) : 0,
			now: this.#now,
			logger: options.logger,
			metrics: options.metrics,
			onDayClosed: (day) => this.#dayClosed(day),
		});
	}

	get timeZone(): string {
		return this.#o.config.statement.timeZone;
	}

	/** The statement of `day` (YYYY-MM-DD); a bad, future or unrecorded day is refused (400). */
	async statement(day: string): Promise<Statement> {
		await this.#check(day);
		let reading = this.#reading.get(day);
		if (!reading) {
			reading = this.#read(day).finally(() => this.#reading.delete(day));
			this.#reading.set(day, reading);
		}
		return reading;
	}

	async #check(day: string): Promise<void> {
		const zone = this.timeZone;
		try {
			statementDay(day, zone);
		} catch {
			throw new OperationRefused(400, 'Bad request', 'day must be a date, YYYY-MM-DD');
		}
		const today = dateIn(zone, new Date(this.#now()));
		if (day > today)
			throw new OperationRefused(
				400,
				'Bad request',
				`${day} has not begun in ${zone} (today is ${today})`,
			);
		const first = await this.#o.store.firstSnapshotDay(zone);
		if (first === null || day < first)
			throw new OperationRefused(
				400,
				'Bad request',
				first === null
					? 'no balance has been recorded yet: the statement starts with the first day the relay recorded one'
					: `the relay recorded no balance before ${first} (${zone}): a statement starts with that day`,
			);
	}

	async #read(day: string): Promise<Statement> {
		const { config, store } = this.#o;
		const zone = this.timeZone;
		const now = this.#now();
		const closed = day < dateIn(zone, new Date(now));
		const snapshots = await store.balanceSnapshots(zone, day, addDays(day, 1));
		const opening = openingOf(snapshots, day);
		const api = this.#api(config.statement.maxCalls);
		const closing = closed ? closingOf(snapshots, addDays(day, 1)) : await this.#live(api, now);
		const window = { from: opening?.at ?? -Infinity, to: closing?.at ?? Infinity };
		const read = await readDay(statementDay(day, zone), {
			api,
			baseUrl: config.catchup.apiBaseUrl,
			shopId: config.catchup.shopId,
			window: opening || closing ? window : null,
			pace: pacer(config.statement.callsPerS),
		});
		const input: LedgerInput = {
			day,
			timeZone: zone,
			opening,
			closing,
			...missingOf(opening, closing, closed),
			dayMovements: read.day,
			around: read.around,
			unread: read.unread,
		};
		const baseline = await store.catchupBaseline(now);
		const statement: Statement = {
			day,
			timeZone: zone,
			closed,
			opening: opening?.point ?? null,
			closing: closing?.point ?? null,
			currencies: ledgerOf(input),
			notDelivered: null,
			notWatched: [],
			beforeRelay: 0,
			unread: read.unread,
			calls: api.calls,
			movements: read.day,
		};
		const retention = config.retentionDays;
		if (retention > 0 && Date.parse(`${addDays(day, 1)}T00:00:00Z`) < now - retention * DAY_MS) {
			statement.notDeliveredReason = `the relay keeps events ${retention} days (RELAY_RETENTION_DAYS): what it received that day may be pruned`;
			return statement;
		}
		const check = await checkDeliveries(
			store,
			read.day,
			(kind) => this.#o.targets[kind].length > 0,
			baseline.since,
			zone,
		);
		Object.assign(statement, {
			notDelivered: check.items,
			notWatched: check.notWatched,
			beforeRelay: check.beforeRelay,
		});
		return statement;
	}

	/** The balance now, as today's closing. */
	async #live(api: ServiceApi, now: number): Promise<LedgerInput['closing']> {
		const lines = balanceLines(await api.merchantBalance());
		return { point: { kind: 'live', takenAt: new Date(now).toISOString() }, at: now, lines };
	}

	/** A day closed (its boundary snapshot kept by this instance): checked, alerted when it does not tie out. */
	async #dayClosed(day: string): Promise<void> {
		try {
			const statement = await this.statement(day);
			await alertDay(this.#o.alerter, this.#o.metrics, statement);
		} catch (error) {
			this.#o.logger.warn(
				{ day, error: error instanceof Error ? error.message : String(error) },
				'the statement of the day that closed could not be read',
			);
		}
	}

	#api(maxCalls: number): ServiceApi {
		const { config, metrics } = this.#o;
		return new ServiceApi({
			baseUrl: config.catchup.apiBaseUrl,
			// The last token of PAYPALYCH_API_TOKEN: the new one during a rotation (`old,new`).
			token: config.apiTokens[config.apiTokens.length - 1],
			maxCalls,
			runDeadlineMs: 30 * 60_000,
			dispatcher: this.#o.dispatcher,
			backoffMs: this.#o.backoffMs,
			maxBackoffMs: this.#o.backoffMs,
			onCall: (path) =>
				metrics.statementApiCalls.inc({ endpoint: path.replace(/^\/api\/v1\//, '') }),
		});
	}
}

type Side = NonNullable<LedgerInput['opening']>;

const sideOf = (s: BalanceSnapshot): Side => ({
	point: { kind: s.kind, takenAt: new Date(s.takenAt).toISOString() },
	at: s.takenAt,
	lines: s.balances,
});

/** The day's opening: its boundary snapshot, else the first start's of that day. */
function openingOf(snapshots: readonly BalanceSnapshot[], day: string): Side | null {
	const mine = snapshots.filter((s) => s.day === day);
	const found =
		mine.find((s) => s.kind === 'boundary') ?? mine.find((s) => s.kind === 'first-start');
	return found ? sideOf(found) : null;
}

/** The day's closing: the next day's boundary snapshot. */
function closingOf(snapshots: readonly BalanceSnapshot[], next: string): Side | null {
	const found = snapshots.find((s) => s.day === next && s.kind === 'boundary');
	return found ? sideOf(found) : null;
}

function missingOf(
	opening: Side | null,
	closing: Side | null,
	closed: boolean,
): { missing?: string } {
	if (opening === null)
		return {
			missing:
				'no balance was recorded at the start of the day (the relay did not run at midnight)',
		};
	if (closing === null && closed)
		return {
			missing:
				'no balance was recorded at the end of the day (the relay did not run on the next day yet)',
		};
	return {};
}

/** Waits so that calls go at most `perS` a second (0: no pace). */
function pacer(perS: number): (() => Promise<void>) | undefined {
	if (perS <= 0) return undefined;
	let next = 0;
	return async () => {
		const now = Date.now();
		const wait = next - now;
		next = Math.max(now, next) + 1000 / perS;
		if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
	};
}
