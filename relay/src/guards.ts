import { boundedRequest } from './bounded-request.ts';
import {
	ENDPOINTS,
	PAYMENT_POSTBACK_STATUSES,
	canonicalStatus,
	confirmPayment,
	confirmPayout,
	orderIdOf,
	billOfUnnamedOrder,
} from './contract.ts';
import type { PostbackEvent, PostbackFields } from './contract.ts';
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
 *   `TrsId=InvId` (one MD5 layout), and the service is the only one who can tell them apart;
 * - a payment postback over the pair limit is looked up (`payment/status`) instead of refused: a
 *   popular MULTI link gives every sale one InvId and amount, so one signed pair;
 * - every look-up an incoming postback causes is bounded (LookUpBudget): per signed pair and for
 *   all pairs together per minute, and a refusal is remembered for a while, so forged calls cannot
 *   spend the merchant's API quota;
 * - redirects (success and fail share one signed pair) may store `RELAY_REDIRECT_LIMIT_PER_PAYMENT_DAY`
 *   events per pair a day, beside the per-minute limit of the routes.
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

export type LookUpVerdict = { ok: true } | { ok: false; code: 403 | 503; reason: string };

/** Largest answer a look-up reads: one payment or payout record is well under 4 KiB. */
export const LOOK_UP_MAX_ANSWER_BYTES = 64 * 1024;

type LookUpConfig = Pick<RelayConfig, 'apiBaseUrl' | 'apiTokens' | 'deliveryTimeoutMs'>;

type ApiRecord = Record<string, unknown>;
type Refused = Extract<LookUpVerdict, { ok: false }>;

/**
 * One `payment/status`, `payout/status` or `bill/status` call for `id`, with the token that
 * verified the signature, bounded like every call to the service's API (boundedRequest: a largest
 * answer and an overall deadline of RELAY_DELIVERY_TIMEOUT_MS, the postback's sender is waiting).
 * Answers the record (flat or under `data`). Not known (4xx other than 401/403/408/429): refused.
 * The service or the network failing, or the relay's own token refused: 503, so the service sends
 * the postback again later.
 */
async function readRecord(
	config: LookUpConfig,
	what: 'payment' | 'payout' | 'bill',
	id: string,
	tokenIndex: number,
): Promise<{ record: ApiRecord } | Refused> {
	const endpoint =
		what === 'payment'
			? ENDPOINTS.paymentStatus
			: what === 'payout'
				? ENDPOINTS.payoutStatus
				: ENDPOINTS.billStatus;
	const path = `${what}/status`;
	const url = `${config.apiBaseUrl}${endpoint.path}?${new URLSearchParams({ id })}`;
	const token = config.apiTokens[tokenIndex] ?? config.apiTokens[0];
	try {
		const res = await boundedRequest(url, {
			headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
			deadlineMs: config.deliveryTimeoutMs,
			maxBytes: LOOK_UP_MAX_ANSWER_BYTES,
		});
		if (res.status === 200) {
			let body: unknown;
			try {
				body = JSON.parse(res.text);
			} catch {
				return { ok: false, code: 503, reason: `${path} answered no JSON` };
			}
			if (!body || typeof body !== 'object') {
				return { ok: false, code: 503, reason: `${path} answered no JSON object` };
			}
			const data = (body as { data?: unknown }).data;
			const record =
				data && typeof data === 'object' && !Array.isArray(data)
					? (data as ApiRecord)
					: (body as ApiRecord);
			return { record };
		}
		if (res.status >= 400 && res.status < 500 && ![401, 403, 408, 429].includes(res.status)) {
			return {
				ok: false,
				code: 403,
				reason: `the service does not know ${what} ${id.slice(0, 64)}`,
			};
		}
		return { ok: false, code: 503, reason: `${path} answered HTTP ${res.status}` };
	} catch (error) {
		return {
			ok: false,
			code: 503,
			reason: `${path} could not be read (${(error as Error).message.slice(0, 120)})`,
		};
	}
}

/** The postback's record (`payment/status` or `payout/status` for its TrsId), handed to `judge`. */
async function lookUp(
	config: LookUpConfig,
	kind: 'payment' | 'payout',
	fields: PostbackFields,
	tokenIndex: number,
	judge: (record: ApiRecord, trsId: string) => LookUpVerdict | Promise<LookUpVerdict>,
): Promise<LookUpVerdict> {
	const trsId = (fields.TrsId ?? '').trim();
	if (trsId === '') return { ok: false, code: 403, reason: 'TrsId is empty' };
	const read = await readRecord(config, kind, trsId, tokenIndex);
	return 'record' in read ? await judge(read.record, trsId) : read;
}

/**
 * Asks the service whether it knows the payout postback's TrsId (`payout/status?id=`): stored
 * only when the record's id is the TrsId.
 */
export function checkPayout(
	config: LookUpConfig,
	fields: PostbackFields,
	tokenIndex: number,
): Promise<LookUpVerdict> {
	return lookUp(config, 'payout', fields, tokenIndex, (record, trsId) => {
		const id = record.id;
		if (id !== undefined && id !== null && String(id) === trsId) return { ok: true };
		return { ok: false, code: 403, reason: 'the service answered another payout' };
	});
}

/**
 * Asks the service whether its payout record confirms the payout postback, compared the way the
 * trigger does (confirmPayout in nodes/shared: the id, the status, and Amount as the payout's
 * amount or amount + commission); not final yet: 503, the service retries. Used when another
 * payout postback with the same TrsId and status and another signed pair is stored (fidelity.ts):
 * a payout's signed pair is (Amount, TrsId), so only the amount tells the two apart, which
 * checkPayout (the id alone) does not look at.
 */
export function checkPayoutRecord(
	config: LookUpConfig,
	fields: PostbackFields,
	tokenIndex: number,
): Promise<LookUpVerdict> {
	return lookUp(config, 'payout', fields, tokenIndex, (record) => {
		const confirmation = confirmPayout(fields, record);
		if (confirmation.ok) return { ok: true };
		return { ok: false, code: confirmation.retry ? 503 : 403, reason: confirmation.reason };
	});
}

/**
 * Asks the service whether it knows a final payment with the postback's TrsId, status and amount
 * (`payment/status?id=`), compared the way the trigger does (confirmPayment in nodes/shared: OutSum
 * is the payment's `amount`, `amount_received`, `amount_received + commission` or `amount` plus
 * the postback's Commission; CurrencyIn; and InvId against the order ID when the payment record
 * names one). A payment not yet final (NEW, PROCESS): 503, the service retries. Used for a payment
 * postback over RELAY_PAIR_LIMIT (a popular MULTI link: one InvId and amount for every sale).
 */
export function checkPayment(
	config: LookUpConfig,
	fields: PostbackFields,
	tokenIndex: number,
): Promise<LookUpVerdict> {
	return lookUp(config, 'payment', fields, tokenIndex, (record) =>
		judgePayment(fields, record, orderIdOf(record)),
	);
}

/**
 * checkPayment, and the order too: when the payment record names no order ID, its bill's
 * (`bill/status`, one call more) where the service shows one. Used when another payment postback
 * with the same TrsId and status and another signed pair is stored (fidelity.ts): a signature
 * borrowed from another order of the same amount agrees on everything but InvId. Where the
 * service shows no order ID at all, the amount is all there is to compare.
 */
export function checkPaymentOrder(
	config: LookUpConfig,
	fields: PostbackFields,
	tokenIndex: number,
): Promise<LookUpVerdict> {
	return lookUp(config, 'payment', fields, tokenIndex, async (record) => {
		let orderId = orderIdOf(record);
		const billId = billOfUnnamedOrder(record);
		if (billId !== undefined) {
			const bill = await readRecord(config, 'bill', billId, tokenIndex);
			if (!('record' in bill)) return bill;
			orderId = orderIdOf(bill.record);
		}
		return judgePayment(fields, record, orderId);
	});
}

/** Whether a final payment record (and its order ID, when known) confirms the postback. */
function judgePayment(
	fields: PostbackFields,
	record: ApiRecord,
	orderId: string | null | undefined,
): LookUpVerdict {
	const status = canonicalStatus(record.status);
	const confirmation = confirmPayment(fields, record, orderId, false);
	if (!confirmation.ok) {
		return { ok: false, code: confirmation.retry ? 503 : 403, reason: confirmation.reason };
	}
	if (!(PAYMENT_POSTBACK_STATUSES as readonly string[]).includes(status)) {
		return { ok: false, code: 503, reason: `the service shows the payment as ${status}` };
	}
	return { ok: true };
}

/**
 * What bounds the look-ups an incoming postback makes the relay do with the service (issue 26
 * point 5): a refusal is remembered for `refusalMemoryMs` (at most `remembered` of them, the
 * oldest forgotten first), each signed pair may cause `perPair` look-ups a minute, and all pairs
 * together `global` a minute. `take` answers what to do before a call; `refused` remembers one.
 */
export class LookUpBudget {
	readonly #perPair: WindowCounter;
	readonly #global: WindowCounter;
	readonly #refusals = new Map<string, { until: number; reason: string }>();
	readonly #memoryMs: number;
	readonly #remembered: number;

	constructor(
		options: { perPair: number; global: number; refusalMemoryMs: number },
		remembered = 10_000,
	) {
		this.#perPair = new WindowCounter(options.perPair, 60_000);
		this.#global = new WindowCounter(options.global, 60_000, 1);
		this.#memoryMs = options.refusalMemoryMs;
		this.#remembered = remembered;
	}

	/** The key a refusal is remembered under: the signed pair and the TrsId it was asked for. */
	static keyOf(pairKey: string, fields: PostbackFields): string {
		return `${pairKey}\n${(fields.TrsId ?? '').trim()}`;
	}

	/**
	 * Before a look-up: `remembered` (refused a short while ago: refuse again, no call), `pair`
	 * (this signed pair's look-ups this minute are spent), `global` (all look-ups this minute are
	 * spent), each with seconds to wait; undefined: make the call.
	 */
	take(
		pairKey: string,
		fields: PostbackFields,
		now = Date.now(),
	):
		| { over: 'remembered'; reason: string }
		| { over: 'pair' | 'global'; retryAfter: number }
		| undefined {
		const key = LookUpBudget.keyOf(pairKey, fields);
		const known = this.#refusals.get(key);
		if (known && known.until > now) return { over: 'remembered', reason: known.reason };
		if (known) this.#refusals.delete(key);
		const pair = this.#perPair.take(pairKey, now);
		if (pair !== undefined) return { over: 'pair', retryAfter: pair };
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
