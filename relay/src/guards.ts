import { request as undiciRequest } from 'undici';
import { ENDPOINTS } from './contract.ts';
import type { PostbackFields } from './contract.ts';
import type { RelayConfig } from './config.ts';
import { pairKeyOf } from './store/pair-key.ts';
import type { InsertResult, PairLimit } from './store/types.ts';

/**
 * What one customer-visible signature may cause. A payment's `SignatureValue` covers only
 * `OutSum` and `InvId` and is shown to the customer in the success/fail redirect; `TrsId`,
 * `Status` and every other field are not signed. So:
 * - each signed pair (kind, signed amount in cents, signed id) may store at most `max` distinct
 *   postback events per window (the service's retries of a stored event are duplicates and always
 *   acknowledged);
 * - a payout postback is stored only when the service knows its TrsId as a payout
 *   (`payout/status`): a payment's pair verifies as a payout postback with `Amount=OutSum`,
 *   `TrsId=InvId` (one MD5 layout), and the service is the only one who can tell them apart.
 */

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
		kind: 'payment' | 'payout',
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

export type PayoutVerdict = { ok: true } | { ok: false; code: 403 | 503; reason: string };

/**
 * Asks the service whether it knows the payout postback's TrsId (`payout/status?id=`), with the
 * token that verified the signature. Not known (4xx other than 401/403/429): refused, nothing is
 * stored. The service or the network failing, or the relay's own token refused: 503, so the
 * service sends the postback again later.
 */
export async function checkPayout(
	config: Pick<RelayConfig, 'apiBaseUrl' | 'apiTokens' | 'deliveryTimeoutMs'>,
	fields: PostbackFields,
	tokenIndex: number,
): Promise<PayoutVerdict> {
	const trsId = (fields.TrsId ?? '').trim();
	if (trsId === '') return { ok: false, code: 403, reason: 'TrsId is empty' };
	const url = `${config.apiBaseUrl}${ENDPOINTS.payoutStatus.path}?${new URLSearchParams({ id: trsId })}`;
	const token = config.apiTokens[tokenIndex] ?? config.apiTokens[0];
	try {
		const res = await undiciRequest(url, {
			method: 'GET',
			headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
			headersTimeout: config.deliveryTimeoutMs,
			bodyTimeout: config.deliveryTimeoutMs,
		});
		const text = await res.body.text();
		if (res.statusCode === 200) {
			let body: unknown;
			try {
				body = JSON.parse(text);
			} catch {
				return { ok: false, code: 503, reason: 'payout/status answered no JSON' };
			}
			const record = body as { id?: unknown; data?: { id?: unknown } };
			const id = record?.id ?? record?.data?.id;
			if (id !== undefined && String(id) === trsId) return { ok: true };
			return { ok: false, code: 403, reason: 'the service answered another payout' };
		}
		if (
			res.statusCode >= 400 &&
			res.statusCode < 500 &&
			![401, 403, 408, 429].includes(res.statusCode)
		) {
			return {
				ok: false,
				code: 403,
				reason: `the service does not know payout ${trsId.slice(0, 64)}`,
			};
		}
		return {
			ok: false,
			code: 503,
			reason: `payout/status answered HTTP ${res.statusCode}`,
		};
	} catch (error) {
		return {
			ok: false,
			code: 503,
			reason: `payout/status could not be read (${(error as Error).message.slice(0, 120)})`,
		};
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
