/**
 * One brute-force limiter for everything that checks the admin token: the admin API's bearer
 * token and the console login. Wrong tokens are counted per client address (RELAY_TRUST_PROXY
 * decides which address that is); after `max` of them in `windowMs` the client gets 429 with
 * Retry-After until its window ends, even with the right token. A right token clears the count.
 */
export class AuthThrottle {
	readonly #failures = new Map<string, { n: number; since: number }>();
	readonly #max: number;
	readonly #windowMs: number;
	readonly #now: () => number;

	constructor(options: { max: number; windowMs: number }, now: () => number = Date.now) {
		this.#max = options.max;
		this.#windowMs = options.windowMs;
		this.#now = now;
	}

	/** Seconds the client must wait, or undefined when it may try a token now. */
	retryAfter(client: string): number | undefined {
		const f = this.#failures.get(client);
		if (!f) return undefined;
		const left = f.since + this.#windowMs - this.#now();
		if (left <= 0) {
			this.#failures.delete(client);
			return undefined;
		}
		return f.n >= this.#max ? Math.max(1, Math.ceil(left / 1000)) : undefined;
	}

	fail(client: string): void {
		const now = this.#now();
		if (this.#failures.size >= 10_000) {
			for (const [key, f] of this.#failures)
				if (now - f.since >= this.#windowMs) this.#failures.delete(key);
		}
		const f = this.#failures.get(client);
		if (f && now - f.since < this.#windowMs) f.n += 1;
		else if (this.#failures.size < 10_000) this.#failures.set(client, { n: 1, since: now });
	}

	clear(client: string): void {
		this.#failures.delete(client);
	}
}
