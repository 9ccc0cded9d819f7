import { POSTBACK_RULES, toCents } from '../contract.ts';
import type { PostbackEvent } from '../contract.ts';

/**
 * The signed pair of a payment or payout postback, as the per-pair limit counts it (see
 * relay/src/routes/guards.ts): its kind, its signed amount in cents (as sent when it is not an
 * amount) and its signed id. `100.5` and `100.50` are one pair. Stored with each event
 * (`pair_key`, indexed), so the limit is one indexed count inside the insert. Redirects have none.
 * The one place the relay normalises a signed amount for this.
 */
export function pairKeyOf(
	kind: PostbackEvent,
	fields: Readonly<Record<string, string>>,
): string | null {
	if (kind !== 'payment' && kind !== 'payout') return null;
	const rule = POSTBACK_RULES[kind];
	const amount = fields[rule.amountField] ?? '';
	const cents = toCents(amount);
	return JSON.stringify([kind, cents === undefined ? amount : cents, fields[rule.idField] ?? '']);
}

/** Rows a store fills in a go when it adds `pair_key` to events stored before it had one. */
export const PAIR_KEY_BACKFILL_BATCH = 1_000;

/** How far back the backfill reaches: the longest RELAY_PAIR_LIMIT_WINDOW_MS (a day). */
export const PAIR_KEY_BACKFILL_MS = 24 * 3_600_000;
