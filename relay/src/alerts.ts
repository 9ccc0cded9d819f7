import type { Logger } from 'pino';
import { request } from 'undici';
import type { Dispatcher } from 'undici';
import type { Metrics } from './metrics.ts';
import type { ReadStore } from './store/types.ts';

/** What an alert is about. */
export type AlertKind =
	| 'catch-up'
	| 'catchup-failed'
	| 'catchup-gap'
	| 'dead'
	| 'backlog'
	| 'statement';

export interface Alert {
	kind: AlertKind;
	/** One cause is alerted once: the same cause again is not. */
	cause: string;
	message: string;
	at: number;
	details: Record<string, unknown>;
}

export interface AlerterOptions {
	targets: readonly string[];
	logger: Logger;
	metrics?: Metrics;
	dispatcher?: Dispatcher;
	timeoutMs?: number;
	/** Attempts per target (1 s, 2 s, … apart). */
	attempts?: number;
	sleep?: (ms: number) => Promise<void>;
}

/** How many alerts the console shows, and how many causes are remembered. */
const RECENT = 20;
const CAUSES = 10_000;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Raises alerts: each cause once (a second alert of the same cause is dropped), kept for the
 * console, and POSTed as a short JSON message to every RELAY_ALERT_TARGETS URL (an n8n webhook, a
 * chat bot). A target that fails is tried a few times, then logged; it never stops the relay.
 */
export class Alerter {
	readonly recent: Alert[] = [];
	readonly #causes = new Set<string>();
	readonly #o: AlerterOptions;

	constructor(options: AlerterOptions) {
		this.#o = options;
	}

	/** Whether this cause was already alerted (by this process). */
	has(cause: string): boolean {
		return this.#causes.has(cause);
	}

	/**
	 * Raises one alert for the causes not raised before (none new: nothing happens, false);
	 * resolves after it was posted to every target (or given up). `logged`: fields for the alert's
	 * log line besides its kind and cause (short ones: the details go to the targets).
	 */
	async raise(
		kind: AlertKind,
		causes: string | readonly string[],
		message: string,
		details: Record<string, unknown> = {},
		logged: Record<string, unknown> = {},
	): Promise<boolean> {
		const fresh = (typeof causes === 'string' ? [causes] : causes).filter(
			(c) => !this.#causes.has(c),
		);
		if (fresh.length === 0) return false;
		for (const cause of fresh) {
			this.#causes.add(cause);
			if (this.#causes.size > CAUSES) {
				const oldest = this.#causes.values().next().value;
				if (oldest !== undefined) this.#causes.delete(oldest);
			}
		}
		const alert: Alert = { kind, cause: fresh.join(','), message, at: Date.now(), details };
		this.recent.unshift(alert);
		this.recent.length = Math.min(this.recent.length, RECENT);
		this.#o.metrics?.alerts.inc({ cause: kind });
		this.#o.logger.warn({ ...logged, alert: kind, cause: alert.cause.slice(0, 500) }, message);
		await Promise.all(this.#o.targets.map((target) => this.#post(target, alert)));
		return true;
	}

	async #post(target: string, alert: Alert): Promise<void> {
		const body = JSON.stringify({
			source: 'paypalych-relay',
			alert: alert.kind,
			message: alert.message,
			cause: alert.cause,
			at: new Date(alert.at).toISOString(),
			...alert.details,
		});
		const attempts = this.#o.attempts ?? 3;
		let last = '';
		for (let attempt = 1; attempt <= attempts; attempt++) {
			try {
				const answer = await request(target, {
					method: 'POST',
					headers: { 'content-type': 'application/json', 'user-agent': 'paypalych-relay' },
					body,
					headersTimeout: this.#o.timeoutMs ?? 5_000,
					bodyTimeout: this.#o.timeoutMs ?? 5_000,
					dispatcher: this.#o.dispatcher,
				});
				await answer.body.dump();
				if (answer.statusCode >= 200 && answer.statusCode < 300) return;
				last = `HTTP ${answer.statusCode}`;
			} catch (error) {
				last = error instanceof Error ? error.message : String(error);
			}
			if (attempt < attempts) await (this.#o.sleep ?? delay)(1000 * 2 ** (attempt - 1));
		}
		this.#o.logger.error({ target: safeUrl(target), error: last }, 'alert could not be posted');
	}
}

/** How much of a target's answer a dead alert carries (the store keeps up to 1 KiB). */
export const ALERT_RESPONSE_CHARS = 300;

/** The start of a target's answer for an alert: at most ALERT_RESPONSE_CHARS characters, or null. */
export function responseStart(response: string | null): string | null {
	if (response === null || response === '') return null;
	const chars = Array.from(response);
	return chars.length <= ALERT_RESPONSE_CHARS
		? response
		: `${chars.slice(0, ALERT_RESPONSE_CHARS).join('')}…`;
}

/** The URL without credentials or query (a chat bot URL may carry a secret). */
function safeUrl(url: string): string {
	try {
		const u = new URL(url);
		return `${u.protocol}//${u.host}${u.pathname}`;
	} catch {
		return '(bad URL)';
	}
}

export interface MonitorOptions {
	store: Pick<ReadStore, 'listDeliveries' | 'oldestUndelivered'>;
	alerter: Alerter;
	/** Oldest undelivered event older than this many seconds: an alert; 0: never. */
	backlogS: number;
	intervalMs?: number;
	logger: Logger;
	now?: () => number;
}

/**
 * Watches the store for the two alerts that are not the catch-up's: a delivery that went dead
 * (one alert per dead delivery, the new ones of one check in one message) and a backlog (the
 * oldest undelivered event older than RELAY_ALERT_BACKLOG_S: one alert until the backlog is gone,
 * then armed again).
 */
export class AlertMonitor {
	readonly #o: MonitorOptions;
	#timer: NodeJS.Timeout | undefined;
	#backlogEpisode = 0;
	#inBacklog = false;
	#checking: Promise<void> | undefined;

	constructor(options: MonitorOptions) {
		this.#o = options;
	}

	start(): void {
		const every = this.#o.intervalMs ?? 15_000;
		this.#timer = setInterval(() => void this.check(), every);
		this.#timer.unref();
	}

	async stop(): Promise<void> {
		clearInterval(this.#timer);
		await this.#checking;
	}

	/** One look at the store; never throws (a failure is logged, the next check tries again). */
	check(): Promise<void> {
		this.#checking ??= this.#check().finally(() => {
			this.#checking = undefined;
		});
		return this.#checking;
	}

	async #check(): Promise<void> {
		const { store, alerter, logger } = this.#o;
		try {
			const dead = await store.listDeliveries({ status: 'dead', limit: 100 });
			const fresh = dead.filter((d) => !alerter.has(`dead:${d.id}`));
			if (fresh.length > 0) {
				// One message for the deliveries that went dead since the last check. Each carries the
				// start of the target's last answer: a trigger's refusal names its cause and its fix
				// (the default Order Check on a service without order IDs), an HTTP status does not.
				const deliveries = fresh.map((d) => ({
					id: d.id,
					eventId: d.eventId,
					target: safeUrl(d.target),
					status: d.lastStatus,
					error: d.lastError,
					response: responseStart(d.lastResponse),
				}));
				await alerter.raise(
					'dead',
					fresh.map((d) => `dead:${d.id}`),
					`${fresh.length} deliver${fresh.length === 1 ? 'y' : 'ies'} went dead: the relay gave up forwarding; see /admin/dead and replay after fixing the target`,
					{ deliveries },
					{ deliveries: deliveries.slice(0, 10) },
				);
			}
			if (this.#o.backlogS > 0) {
				const oldest = await store.oldestUndelivered();
				const now = (this.#o.now ?? Date.now)();
				const ageS = oldest === null ? 0 : Math.floor((now - oldest) / 1000);
				if (ageS > this.#o.backlogS) {
					if (!this.#inBacklog) {
						this.#inBacklog = true;
						this.#backlogEpisode += 1;
						await alerter.raise(
							'backlog',
							`backlog:${oldest}:${this.#backlogEpisode}`,
							`the oldest undelivered event is ${ageS} s old (more than RELAY_ALERT_BACKLOG_S=${this.#o.backlogS})`,
							{ oldestReceivedAt: new Date(oldest as number).toISOString(), ageSeconds: ageS },
						);
					}
				} else {
					this.#inBacklog = false;
				}
			}
		} catch (error) {
			logger.error({ err: error }, 'alert check failed; the next check tries again');
		}
	}
}
