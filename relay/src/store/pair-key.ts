import { POSTBACK_RULES, isMoneyBackEvent, toCents } from '../contract.ts';
import type { PostbackEvent } from '../contract.ts';

/**
 * The signed pair of a payment or payout postback, as the per-pair limit counts it (see
 * relay/src/limits.ts): its kind, its signed amount in cents (as sent when it is not an
 * amount) and its signed id. `100.5` and `100.50` are one pair. Stored with each event
 * (`pair_key`, indexed), so the limit is one indexed count inside the insert. The success and fail
 * redirects carry one signature (OutSum, InvId) and share one pair, `redirect`, which their daily
 * ceiling counts (RELAY_REDIRECT_LIMIT_PER_PAYMENT_DAY); it is never a payment's pair. A refund's
 * or chargeback's signature covers its `Id` (with its payment and bill): its pair is its kind and
 * Id. The one place the relay normalises a signed amount for this.
 */
export function pairKeyOf(
	kind: PostbackEvent,
	fields: Readonly<Record<string, string>>,
): string | null {
	if (isMoneyBackEvent(kind)) return JSON.stringify([kind, (fields.Id ?? '').trim()]);
	const rule = POSTBACK_RULES[kind];
	if (!rule) return null;
	const amount = fields[rule.amountField] ?? '';
	const cents = toCents(amount);
	const pair = kind === 'success' || kind === 'fail' ? 'redirect' : kind;
	return JSON.stringify([pair, cents === undefined ? amount : cents, fields[rule.idField] ?? '']);
}

/** Rows a store fills in a go when it adds `pair_key` to events stored before it had one. */
export const PAIR_KEY_BACKFILL_BATCH = 1_000;

/** How far back the backfill reaches: the longest RELAY_PAIR_LIMIT_WINDOW_MS (a day). */
export const PAIR_KEY_BACKFILL_MS = 24 * 3_600_000;

/** A payment or payout event stored without its pair key (EVENTS_WITHOUT_PAIR_KEY's row). */
export interface KeylessEvent {
	id: string;
	kind: PostbackEvent;
	fields: Record<string, string>;
}

/**
 * Gives the payment and payout events of the last day stored without a pair key (by a relay from
 * before the column, or an older one still running) theirs, PAIR_KEY_BACKFILL_BATCH at a time:
 * the pair limit counts them. Older events are outside every pair window. Each store reads with
 * EVENTS_WITHOUT_PAIR_KEY and writes in its own way; the keys are computed here, on the calling
 * thread (SQLite's writer thread does not load the wire contract). Returns how many were filled.
 */
export async function fillPairKeys(
	now: number,
	read: (since: number, limit: number) => Promise<KeylessEvent[]>,
	write: (ids: string[], keys: string[]) => Promise<void>,
): Promise<number> {
	let filled = 0;
	for (;;) {
		const rows = await read(now - PAIR_KEY_BACKFILL_MS, PAIR_KEY_BACKFILL_BATCH);
		if (rows.length === 0) return filled;
		await write(
			rows.map((r) => r.id),
			rows.map((r) => pairKeyOf(r.kind, r.fields) ?? ''),
		);
		filled += rows.length;
	}
}
