import { request as undiciRequest } from 'undici';
import { ENDPOINTS, POSTBACK_RULES, toCents } from '../contract.ts';
import type { PostbackEvent, PostbackFields } from '../contract.ts';
import type { RelayContext } from '../context.ts';

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

/** The signed pair as the per-pair limit counts it: [kind, cents of the signed amount, signed id]. */
export function signedPairKey(kind: PostbackEvent, fields: PostbackFields): string {
	const rule = POSTBACK_RULES[kind];
	const amount = fields[rule.amountField] ?? '';
	const cents = toCents(amount);
	return JSON.stringify([kind, cents === undefined ? amount : cents, fields[rule.idField] ?? '']);
}

/**
 * Serialises check-then-store per signed pair inside this process, so a burst of parallel calls
 * with one pair cannot all see "below the limit" (several instances on one PostgreSQL database
 * may each let one call through at the edge of the limit).
 */
export class PairLimiter {
	readonly #chains = new Map<string, Promise<unknown>>();

	readonly ctx: RelayContext;

	constructor(ctx: RelayContext) {
		this.ctx = ctx;
	}

	/**
	 * Runs `store` unless the pair already has `max` other events in the window; returns
	 * `{ limited: seconds }` then (nothing stored).
	 */
	async run<T>(
		kind: 'payment' | 'payout',
		fields: PostbackFields,
		dedupeKey: string,
		store: () => Promise<T>,
	): Promise<{ limited: number } | { value: T }> {
		const { max, windowMs } = this.ctx.config.pairLimit;
		if (max === 0) return { value: await store() };
		const key = signedPairKey(kind, fields);
		const previous = this.#chains.get(key) ?? Promise.resolve();
		const run = previous
			.catch(() => {})
			.then(async (): Promise<{ limited: number } | { value: T }> => {
				const now = Date.now();
				const rule = POSTBACK_RULES[kind];
				const cents = toCents(fields[rule.amountField]);
				const events = await this.ctx.store.signedPairEvents(
					kind,
					fields[rule.idField] ?? '',
					now - windowMs,
				);
				if (events.some((e) => e.dedupeKey === dedupeKey)) return { value: await store() };
				const same = events.filter((e) =>
					cents === undefined ? e.amount === fields[rule.amountField] : toCents(e.amount) === cents,
				);
				if (same.length >= max) return { limited: Math.ceil(Math.min(windowMs, 3_600_000) / 1000) };
				return { value: await store() };
			});
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
	ctx: RelayContext,
	fields: PostbackFields,
	tokenIndex: number,
): Promise<PayoutVerdict> {
	const trsId = (fields.TrsId ?? '').trim();
	if (trsId === '') return { ok: false, code: 403, reason: 'TrsId is empty' };
	const url = `${ctx.config.apiBaseUrl}${ENDPOINTS.payoutStatus.path}?${new URLSearchParams({ id: trsId })}`;
	const token = ctx.config.apiTokens[tokenIndex] ?? ctx.config.apiTokens[0];
	try {
		const res = await undiciRequest(url, {
			method: 'GET',
			headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
			headersTimeout: ctx.config.deliveryTimeoutMs,
			bodyTimeout: ctx.config.deliveryTimeoutMs,
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
