import { isIPv6 } from 'node:net';

/** Most clients (addresses or IPv6 /64 networks) whose wrong tokens are remembered at once. */
export const AUTH_TABLE_SIZE = 10_000;

/** How long a client that gave the right token may still try a token while the relay is locked. */
const KNOWN_CLIENT_MS = 24 * 3_600_000;
const DAY_MS = 24 * 3_600_000;

/**
 * Where the known operator clients are kept beyond this process (the store: every instance and
 * every restart sees them). `remember` a client that gave the right token; `known`: it did since.
 */
export interface OperatorMemory {
	remember(client: string, at: number): Promise<void>;
	known(client: string, since: number): Promise<boolean>;
}

/**
 * The operator memory in the store's marks: one mark per client and UTC day it gave the right
 * token (`operator:<client>:<day>`), pruned with the catch-up's marks; a client is known when it
 * has the mark of a day the `since` time falls in, or of a later one.
 */
export function operatorMemoryIn(marks: {
	catchupMarks(marks: readonly string[]): Promise<string[]>;
	addCatchupMarks(marks: readonly string[], now: number, pruneBefore: number): Promise<void>;
}): OperatorMemory {
	const mark = (client: string, day: number) => `operator:${client}:${day}`;
	return {
		remember: (client, at) => marks.addCatchupMarks([mark(client, Math.floor(at / DAY_MS))], at, 0),
		known: async (client, since) => {
			const first = Math.floor(since / DAY_MS);
			const wanted = [first, first + 1, first + 2].map((day) => mark(client, day));
			return (await marks.catchupMarks(wanted)).length > 0;
		},
	};
}

/** Why a token check is refused: this client's own wrong tokens, or everyone's together. */
export interface AuthRefusal {
	retryAfter: number;
	scope: 'client' | 'everywhere';
}

/**
 * The client as the limiter counts it: an IPv4 address as it is (an IPv4-mapped IPv6 address
 * too), an IPv6 address by its /64 network (one host holds a whole /64, so every address of it is
 * one client), anything else as given.
 */
export function clientKey(address: string): string {
	const bare = address.replace(/%.*$/, '').toLowerCase();
	if (!isIPv6(bare)) return address;
	const groups = expandIPv6(bare);
	if (groups === undefined) return address;
	// ::ffff:a.b.c.d is an IPv4 client.
	if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
		return [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join('.');
	}
	return `${groups
		.slice(0, 4)
		.map((g) => g.toString(16))
		.join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (`::` and a trailing IPv4 part expanded). */
function expandIPv6(address: string): number[] | undefined {
	let text = address;
	const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
	if (v4) {
		const [a, b, c, d] = v4.slice(1).map(Number);
		text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
	}
	const [head, tail] = text.split('::');
	const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
	const left = part(head);
	const right = part(tail);
	const fill = tail === undefined ? 0 : 8 - left.length - right.length;
	const groups = [...left, ...Array<number>(fill).fill(0), ...right];
	return groups.length === 8 && groups.every((g) => Number.isInteger(g)) ? groups : undefined;
}

/**
 * One brute-force limiter for everything that checks the admin token: the admin API's bearer
 * token and the console login. It never fails open:
 *
 * - Wrong tokens are counted per client (RELAY_TRUST_PROXY decides which address that is; an IPv6
 *   address counts by its /64). After `max` of them in `windowMs` the client gets 429 with
 *   Retry-After until its window ends, even with the right token. A right token clears the count.
 * - Beside it, a ceiling on wrong tokens from everyone together (`globalMax` per `windowMs`): past
 *   it every token check gets 429 until the window ends, the right token too, so that guesses
 *   spread over many addresses learn nothing; only a client that gave the right token in the last
 *   24 hours (kept in the store: every instance, every restart) and a direct call from the relay's
 *   own host (`refusal`'s break-glass) still have their token checked: the operator is not locked
 *   out by someone else.
 * - The table of clients is bounded: when it is full the oldest entry is evicted, so a new client
 *   is always counted.
 */
export class AuthThrottle {
	readonly #failures = new Map<string, { n: number; since: number }>();
	readonly #known = new Map<string, number>();
	readonly #max: number;
	readonly #globalMax: number;
	readonly #windowMs: number;
	readonly #tableSize: number;
	readonly #now: () => number;
	readonly #memory: OperatorMemory | undefined;
	/** The day each client was last remembered in the memory by this process (one write a day). */
	readonly #remembered = new Map<string, number>();
	#global = { n: 0, since: 0 };

	constructor(
		options: {
			max: number;
			windowMs: number;
			globalMax?: number;
			tableSize?: number;
			memory?: OperatorMemory;
		},
		now: () => number = Date.now,
	) {
		this.#max = options.max;
		this.#windowMs = options.windowMs;
		this.#globalMax = options.globalMax ?? 1000;
		this.#tableSize = options.tableSize ?? AUTH_TABLE_SIZE;
		this.#memory = options.memory;
		this.#now = now;
	}

	/**
	 * Whether a token check from `address` is refused now, and why. While every token check is
	 * locked (the ceiling for everyone), a client that gave the right token in the last 24 hours
	 * (in this process, or in the operator memory: another instance, before a restart) and a
	 * `breakGlass` call (a direct connection from the relay's own host) are still checked.
	 */
	async refusal(address: string, { breakGlass = false } = {}): Promise<AuthRefusal | undefined> {
		const client = clientKey(address);
		const now = this.#now();
		const own = this.#ownWait(client, now);
		if (own !== undefined) return { retryAfter: own, scope: 'client' };
		const globalLeft = this.#global.since + this.#windowMs - now;
		if (globalLeft <= 0 || this.#global.n < this.#globalMax || breakGlass) return undefined;
		const seen = this.#known.get(client);
		if (seen !== undefined && now - seen < KNOWN_CLIENT_MS) return undefined;
		if (
			this.#memory &&
			(await this.#memory.known(client, now - KNOWN_CLIENT_MS).catch(() => false))
		) {
			this.#known.set(client, now);
			return undefined;
		}
		return { retryAfter: Math.max(1, Math.ceil(globalLeft / 1000)), scope: 'everywhere' };
	}

	/** Seconds the client must wait, or undefined when it may try a token now. */
	retryAfter(address: string): number | undefined {
		const client = clientKey(address);
		const now = this.#now();
		const own = this.#ownWait(client, now);
		if (own !== undefined) return own;
		const globalLeft = this.#global.since + this.#windowMs - now;
		if (globalLeft > 0 && this.#global.n >= this.#globalMax) {
			const seen = this.#known.get(client);
			if (seen === undefined || now - seen >= KNOWN_CLIENT_MS)
				return Math.max(1, Math.ceil(globalLeft / 1000));
		}
		return undefined;
	}

	#ownWait(client: string, now: number): number | undefined {
		const f = this.#failures.get(client);
		if (!f) return undefined;
		const left = f.since + this.#windowMs - now;
		if (left <= 0) {
			this.#failures.delete(client);
			return undefined;
		}
		return f.n >= this.#max ? Math.max(1, Math.ceil(left / 1000)) : undefined;
	}

	fail(address: string): void {
		const client = clientKey(address);
		const now = this.#now();
		if (now - this.#global.since >= this.#windowMs) this.#global = { n: 0, since: now };
		this.#global.n += 1;
		const f = this.#failures.get(client);
		if (f && now - f.since < this.#windowMs) {
			f.n += 1;
			return;
		}
		// A new window for this client goes to the end of the table (the newest entry).
		this.#failures.delete(client);
		while (this.#failures.size >= this.#tableSize) {
			const oldest = this.#failures.keys().next().value as string;
			this.#failures.delete(oldest);
		}
		this.#failures.set(client, { n: 1, since: now });
	}

	/** The right token: the client's count is cleared and it is remembered as known. */
	clear(address: string): void {
		const client = clientKey(address);
		this.#failures.delete(client);
		this.#known.delete(client);
		while (this.#known.size >= this.#tableSize) {
			const oldest = this.#known.keys().next().value as string;
			this.#known.delete(oldest);
		}
		const now = this.#now();
		this.#known.set(client, now);
		const day = Math.floor(now / DAY_MS);
		if (this.#memory && this.#remembered.get(client) !== day) {
			this.#remembered.delete(client);
			while (this.#remembered.size >= this.#tableSize)
				this.#remembered.delete(this.#remembered.keys().next().value as string);
			this.#remembered.set(client, day);
			// Best effort: a store that fails now leaves the operator known to this process.
			this.#memory.remember(client, now).catch(() => this.#remembered.delete(client));
		}
	}
}

/**
 * The break-glass: a call that reached the relay straight from its own host (a loopback socket,
 * no proxy header), as an operator with a shell on the host makes it (`curl http://127.0.0.1:…`).
 * A reverse proxy on the same host adds X-Forwarded-For (or Forwarded), so what it passes on is
 * not one.
 */
export function isBreakGlass(request: {
	socket: { remoteAddress?: string };
	headers: Record<string, unknown>;
}): boolean {
	const socket = (request.socket.remoteAddress ?? '').replace(/^::ffff:/i, '');
	const loopback = socket === '::1' || socket.startsWith('127.');
	return (
		loopback &&
		request.headers['x-forwarded-for'] === undefined &&
		request.headers.forwarded === undefined
	);
}

/** What a refused token check says to the person who sent it. */
export function refusalSentence(refusal: AuthRefusal): string {
	const minutes = Math.ceil(refusal.retryAfter / 60);
	return refusal.scope === 'client'
		? `Too many wrong tokens from this address. Wait ${minutes} minute(s) and try again.`
		: `Too many wrong tokens from everywhere: the relay has locked token checks for ${minutes} minute(s). An operator who signed in from this address in the last 24 hours, or who calls the relay from its own host (http://127.0.0.1), is still let in.`;
}
