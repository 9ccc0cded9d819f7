import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Pool, PoolConfig } from 'pg';
import { LISTEN, NOTIFY, WAKE_CHANNEL } from './statements.ts';

/** Least time between two notifications of one instance: under load, one wakes the others per window. */
export const NOTIFY_INTERVAL_MS = 25;

/**
 * LISTEN/NOTIFY between relay instances sharing one database. `notify()` after a commit that
 * created due deliveries; every other instance that listens calls its subscribers, so its
 * forwarder claims at once instead of at the next poll (this instance's own forwarder is kicked
 * directly by the route, so its own notifications are ignored). Notifications are coalesced: at
 * most one per NOTIFY_INTERVAL_MS, calls made meanwhile share the next one; under load the others
 * are woken about 40 times a second instead of once per event, each wake-up a claim. A lost
 * notification only delays delivery until the next poll, so errors here never fail a caller.
 *
 * The listening connection reconnects by itself (250 ms, doubling up to 5 s) and wakes the
 * subscribers once reconnected: work may have arrived while it was away.
 */
export class PgWaker {
	#config: PoolConfig;
	#pool: Pool;
	#onError: (error: Error, where: string) => void;
	#listeners = new Set<() => void>();
	#client: pg.Client | undefined;
	#stopped = false;
	#retryMs = 250;
	#retryTimer: NodeJS.Timeout | undefined;
	#sending = false;
	#again = false;
	#timer: NodeJS.Timeout | undefined;
	#lastSent = 0;
	/** The payload of this instance's notifications, to tell them from the others'. */
	readonly #self = randomUUID();

	constructor(config: PoolConfig, pool: Pool, onError: (error: Error, where: string) => void) {
		this.#config = config;
		this.#pool = pool;
		this.#onError = onError;
	}

	subscribe(listener: () => void): () => void {
		this.#listeners.add(listener);
		return () => this.#listeners.delete(listener);
	}

	#wake(): void {
		for (const l of this.#listeners) l();
	}

	/** Connects and listens; rejects when the first connection fails (the relay does not start). */
	async start(): Promise<void> {
		await this.#connect();
	}

	async #connect(): Promise<void> {
		const client = new pg.Client({ ...this.#config, statement_timeout: undefined });
		let lost = false;
		const onLost = (error?: Error) => {
			if (lost) return;
			lost = true;
			if (error) this.#onError(error, 'listener connection');
			client.removeAllListeners('notification');
			client.end().catch(() => {});
			if (this.#client === client) this.#client = undefined;
			this.#reconnectLater();
		};
		client.on('error', onLost);
		client.on('notification', (n) => {
			if (n.payload !== this.#self) this.#wake();
		});
		try {
			await client.connect();
			await client.query(LISTEN);
		} catch (error) {
			lost = true;
			client.removeAllListeners('notification');
			await client.end().catch(() => {});
			throw error;
		}
		if (this.#stopped) {
			await client.end();
			return;
		}
		client.on('end', () => onLost());
		this.#client = client;
		this.#retryMs = 250;
	}

	#reconnectLater(): void {
		if (this.#stopped || this.#retryTimer) return;
		this.#retryTimer = setTimeout(() => {
			this.#retryTimer = undefined;
			if (this.#stopped) return;
			this.#connect().then(
				() => this.#wake(),
				(error: Error) => {
					this.#onError(error, 'listener reconnect');
					this.#retryMs = Math.min(this.#retryMs * 2, 5_000);
					this.#reconnectLater();
				},
			);
		}, this.#retryMs);
		this.#retryTimer.unref();
	}

	/** Tells every other listening instance that new work is due (coalesced, never throws). */
	notify(): void {
		if (this.#stopped) return;
		if (this.#sending || this.#timer) {
			this.#again = true;
			return;
		}
		const wait = this.#lastSent + NOTIFY_INTERVAL_MS - Date.now();
		if (wait > 0) {
			this.#timer = setTimeout(() => {
				this.#timer = undefined;
				this.#send();
			}, wait);
			return;
		}
		this.#send();
	}

	#send(): void {
		if (this.#stopped) return;
		this.#sending = true;
		this.#again = false;
		this.#lastSent = Date.now();
		this.#pool
			.query(NOTIFY, [WAKE_CHANNEL, this.#self])
			.catch((error: Error) => this.#onError(error, 'notify'))
			.finally(() => {
				this.#sending = false;
				if (this.#again) {
					this.#again = false;
					this.notify();
				}
			});
	}

	async stop(): Promise<void> {
		this.#stopped = true;
		clearTimeout(this.#retryTimer);
		clearTimeout(this.#timer);
		const client = this.#client;
		this.#client = undefined;
		if (client) {
			client.removeAllListeners('end');
			await client.end().catch(() => {});
		}
		// A NOTIFY still in flight finishes before the pool ends (pool.end waits for it).
	}
}
