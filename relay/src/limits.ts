import type { PostbackEvent, PostbackFields } from './contract.ts';
import type { RelayConfig } from './config.ts';
import { pairKeyOf } from './store/pair-key.ts';
import type { InsertResult, PairLimit } from './store/types.ts';

/**
 * What one customer-visible signature may cause, counted in this process. A payment's
 * `SignatureValue` covers only `OutSum` and `InvId` and is shown to the customer in the
 * success/fail redirect, so anyone who paid once holds a valid signed pair:
 * - each signed pair (kind, signed amount in cents, signed id) may store at most `max` distinct
 *   postback events per window (PairLimiter; the service's retries of a stored event are
 *   duplicates and always acknowledged);
 * - redirects (success and fail share one signed pair) may store `RELAY_REDIRECT_LIMIT_PER_PAYMENT_DAY`
 *   events per pair a day, beside the per-minute limit of the routes (PairLimiter too);
 * - every look-up an incoming postback causes (look-ups.ts) is bounded (LookUpBudget): per signed
 *   pair and sender's network, per network, and for all together per minute, and a refusal is
 *   remembered for a while, so forged calls cannot spend the merchant's API quota. Every buyer of a
 *   MULTI link holds its signed pair: counting per network keeps a buyer's calls from spending the
 *   allowance of the service's own postbacks, which come from the service's network.
 */

/**
 * The network a sender's address belongs to, as the allowances count it: an IPv4 /24, an IPv6
 * /48 (what one site or customer is given); an IPv4-mapped IPv6 address counts as IPv4. Loopback
 * is no network ('', as an unknown address): behind a reverse proxy the relay does not trust
 * (RELAY_TRUST_PROXY unset) every sender is the proxy, and the allowances are shared as one.
 */
export function networkOf(address: string | undefined): string {
	if (!address) return '';
	const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
	const ip = mapped ? mapped[1] : address;
	if (ip === '::1' || ip.startsWith('127.')) return '';
	if (/^\d+\.\d+\.\d+\.\d+$/.test(ip)) return `${ip.split('.').slice(0, 3).join('.')}.0/24`;
	if (!ip.includes(':')) return ip;
	const [head, tail = ''] = ip.split('::');
	const left = head ? head.split(':') : [];
	const right = tail ? tail.split(':') : [];
	const groups = ip.includes('::')
		? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
		: left;
	const prefix = groups
		.slice(0, 3)
		.map((g) => (Number.parseInt(g || '0', 16) || 0).toString(16))
		.join(':');
	return `${prefix}::/48`;
}

/**
 * Serialises check-then-store per signed pair inside this process, so a burst of parallel calls
 * with one pair cannot all see "below the limit" (several instances on one PostgreSQL database
 * may each let one call through at the edge of the limit). The check itself is the store's, in
 * the insert's own transaction (NewEvent.pairLimit): no read of its own before the insert.
 */
export class PairLimiter {
	readonly #chains = new Map<string, Promise<unknown>>();

	readonly #limit: RelayConfig['pairLimit'];

	constructor(limit: RelayConfig['pairLimit']) {
		this.#limit = limit;
	}

	/**
	 * Runs `store` with the pair limit to apply; returns `{ limited: seconds }` when the store
	 * refused the event (nothing stored).
	 */
	async run(
		kind: PostbackEvent,
		fields: PostbackFields,
		store: (pairLimit: PairLimit | undefined) => Promise<InsertResult>,
	): Promise<{ limited: number } | { value: InsertResult }> {
		const { max, windowMs } = this.#limit;
		if (max === 0) return { value: await store(undefined) };
		const key = pairKeyOf(kind, fields) ?? '';
		const previous = this.#chains.get(key);
		const insert = async () => {
			const value = await store({ max, since: Date.now() - windowMs });
			return value.limited
				? { limited: Math.ceil(Math.min(windowMs, 3_600_000) / 1000) }
				: { value };
		};
		// The common case, a pair with nothing in flight, goes straight to the store.
		const run = previous ? previous.catch(() => {}).then(insert) : insert();
		this.#chains.set(key, run);
		try {
			return await run;
		} finally {
			if (this.#chains.get(key) === run) this.#chains.delete(key);
		}
	}
}

/**
 * What bounds the look-ups an incoming postback makes the relay do with the service. Each sender's
 * network (networkOf) has its own allowances: `perPair` look-ups a minute for one signed pair, and
 * half of `global` for all its pairs (when the network is known); all networks together have
 * `global` a minute. A refusal is
 * remembered for `refusalMemoryMs` (at most `remembered` of them, the oldest forgotten first)
 * under the whole postback it refused: a postback that differs in any field (the genuine one
 * beside a forged copy of it) is looked up on its own. `take` answers what to do before a call;
 * `refused` remembers one.
 */
export class LookUpBudget {
	readonly #perPair: WindowCounter;
	readonly #perNetwork: WindowCounter;
	readonly #global: WindowCounter;
	readonly #refusals = new Map<string, { until: number; reason: string }>();
	readonly #noBill = new Set<string>();
	readonly #memoryMs: number;
	readonly #remembered: number;

	constructor(
		options: { perPair: number; global: number; refusalMemoryMs: number },
		remembered = 10_000,
	) {
		this.#perPair = new WindowCounter(options.perPair, 60_000);
		this.#perNetwork = new WindowCounter(Math.max(1, Math.floor(options.global / 2)), 60_000);
		this.#global = new WindowCounter(options.global, 60_000, 1);
		this.#memoryMs = options.refusalMemoryMs;
		this.#remembered = remembered;
	}

	/**
	 * The key a refusal is remembered under: the signed pair and every field of the postback as the
	 * relay compares them (TrsId trimmed), so only the same postback again is refused from memory.
	 */
	static keyOf(pairKey: string, fields: PostbackFields): string {
		const canonical = Object.entries({ ...fields, TrsId: (fields.TrsId ?? '').trim() })
			.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
			.map(([k, v]) => `${k}=${v}`);
		return [pairKey, ...canonical].join('\n');
	}

	/**
	 * Before a look-up: `remembered` (refused a short while ago: refuse again, no call), `pair`
	 * (this signed pair's look-ups from this network this minute are spent), `global` (this
	 * network's share, or all look-ups this minute, are spent), each with seconds to wait;
	 * undefined: make the call.
	 */
	take(
		pairKey: string,
		fields: PostbackFields,
		now = Date.now(),
		network = '',
	):
		| { over: 'remembered'; reason: string }
		| { over: 'pair' | 'global'; retryAfter: number }
		| undefined {
		const key = LookUpBudget.keyOf(pairKey, fields);
		const known = this.#refusals.get(key);
		if (known && known.until > now) return { over: 'remembered', reason: known.reason };
		if (known) this.#refusals.delete(key);
		const pair = this.#perPair.take(`${network}\n${pairKey}`, now);
		if (pair !== undefined) return { over: 'pair', retryAfter: pair };
		const share = network === '' ? undefined : this.#perNetwork.take(network, now);
		if (share !== undefined) return { over: 'global', retryAfter: share };
		const global = this.#global.take('all', now);
		if (global !== undefined) return { over: 'global', retryAfter: global };
		return undefined;
	}

	/** Remembers a refusal (the service does not know it, or contradicts it). */
	refused(pairKey: string, fields: PostbackFields, reason: string, now = Date.now()): void {
		if (this.#memoryMs === 0) return;
		const key = LookUpBudget.keyOf(pairKey, fields);
		this.#refusals.delete(key);
		while (this.#refusals.size >= this.#remembered) {
			this.#refusals.delete(this.#refusals.keys().next().value as string);
		}
		this.#refusals.set(key, { until: now + this.#memoryMs, reason });
	}

	/**
	 * Whether the service told (a look-up, see Intake) that this TrsId names no bill: a payment it
	 * knows, or an id it knows as neither. Identical postbacks with it are then one payment's
	 * retries, answered as duplicates with no further call.
	 */
	namesNoBill(trsId: string): boolean {
		return this.#noBill.has(trsId);
	}

	/** Remembers a TrsId that names no bill (at most `remembered` of them, the oldest go first). */
	rememberNoBill(trsId: string): void {
		if (this.#noBill.has(trsId)) return;
		while (this.#noBill.size >= this.#remembered) {
			this.#noBill.delete(this.#noBill.values().next().value as string);
		}
		this.#noBill.add(trsId);
	}

	/** How many refusals are remembered (for the tests of the bound). */
	get remembered(): number {
		return this.#refusals.size;
	}
}

/**
 * At most `max` calls per key in a fixed window of `windowMs` from the key's first call (as
 * @fastify/rate-limit counts): `take` answers the seconds until the key may call again, or
 * undefined when this call is within the limit. At most `keys` keys are kept (the oldest go first).
 */
export class WindowCounter {
	readonly #windows = new Map<string, { count: number; resetAt: number }>();
	readonly max: number;
	readonly windowMs: number;
	readonly keys: number;

	constructor(max: number, windowMs: number, keys = 5_000) {
		this.max = max;
		this.windowMs = windowMs;
		this.keys = keys;
	}

	take(key: string, now = Date.now()): number | undefined {
		let window = this.#windows.get(key);
		if (!window || window.resetAt <= now) {
			this.#windows.delete(key);
			if (this.#windows.size >= this.keys) {
				this.#windows.delete(this.#windows.keys().next().value as string);
			}
			window = { count: 0, resetAt: now + this.windowMs };
			this.#windows.set(key, window);
		}
		window.count += 1;
		return window.count > this.max
			? Math.max(1, Math.ceil((window.resetAt - now) / 1000))
			: undefined;
	}
}
