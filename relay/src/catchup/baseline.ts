import { OperationRefused } from '../errors.ts';
import type { CatchupBaseline } from '../store/baseline-marks.ts';
import type { Housekeeping } from '../store/types.ts';

/**
 * The catch-up's baseline (docs/operator/catch-up.md, "The first start"): what the service recorded
 * before the relay first started on its store was delivered to n8n some other way (or lost before
 * the relay existed), so the catch-up counts it and does not forward it, and raises no alert about
 * it, unless an operator asked for a back-fill, which moves the baseline back.
 *
 * A record is before the baseline only when its own `created_at` says so for certain:
 * - A time with an offset (`2024-03-01T21:30:00Z`) is that instant.
 * - A time without one (`Y-m-d H:i:s`, the service's clock, in a zone the interface document does
 *   not name: UTC on the live service, Moscow time is likely) is read as UTC: the latest instant
 *   among the zones a Russian service could write (UTC and every zone ahead of it). So a record
 *   written in Moscow time in the last three hours before the baseline counts as after it and is
 *   forwarded (a duplicate the trigger answers), never the other way round. A time is the latest
 *   instant it can name: `12:00:00` is up to 12:00:00.999, `12:00` up to 12:00:59.999.
 * - No readable time (none on the payment: its bill's creation time does not help, a bill made
 *   before the baseline can be paid after it): after the baseline, forwarded.
 */
const DATE_TIME =
	/^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/** The latest instant (epoch ms) a record's `created_at` can mean, or undefined when unreadable. */
export function latestInstant(createdAt: unknown): number | undefined {
	if (typeof createdAt !== 'string') return undefined;
	const m = DATE_TIME.exec(createdAt.trim());
	if (!m) return undefined;
	const [, y, mo, d, h, mi, seconds, fraction = '', offset] = m;
	const s = seconds ?? '0';
	const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
	if (day.getUTCMonth() !== Number(mo) - 1 || day.getUTCDate() !== Number(d)) return undefined;
	if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
	let offsetMinutes = 0;
	if (offset !== undefined && offset.toUpperCase() !== 'Z') {
		const digits = offset.replace(':', '');
		const sign = digits.startsWith('-') ? -1 : 1;
		offsetMinutes = sign * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5)));
	}
	// A time written to the minute, the second or a fraction means any instant up to the next one.
	const unit =
		seconds === undefined
			? 60_000
			: fraction === ''
				? 1000
				: 10 ** (3 - Math.min(3, fraction.length));
	const ms = Math.floor(Number(`0.${fraction || '0'}`) * 1000) + unit - 1;
	return (
		Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms) -
		offsetMinutes * 60_000
	);
}

/** Whether a payment or payout was recorded before `since` for certain (see above). */
export function recordedBefore(record: Record<string, unknown>, since: number): boolean {
	const at = latestInstant(record.created_at);
	return at !== undefined && at < since;
}

/**
 * Where a payment or payout stands: `before` the baseline (counted, not forwarded, no alert),
 * `backfill` (before the relay's first start, forwarded because an operator moved the baseline
 * back: no alert), or `after` (forwarded, alerted: a postback that did not reach the relay).
 */
export function placeOf(
	baseline: CatchupBaseline,
	record: Record<string, unknown>,
): 'before' | 'backfill' | 'after' {
	if (recordedBefore(record, baseline.since)) return 'before';
	return recordedBefore(record, baseline.firstStart) ? 'backfill' : 'after';
}

const DAY_MS = 86_400_000;

/**
 * An operator's back-fill: the baseline moved back to `since` (durably, for every instance), so
 * that the next run forwards what the service recorded since then and the relay does not hold.
 * Refused (400) in the future or further back than the runs read (`days`: RELAY_CATCHUP_DAYS
 * within the retention; they read whole service days, so a day's grace).
 */
export async function backfill(
	store: Pick<Housekeeping, 'backfillCatchup'>,
	days: number,
	since: number,
	now: number,
): Promise<CatchupBaseline> {
	if (since > now) throw new OperationRefused(400, 'Bad request', 'since is in the future');
	if (since < now - (days + 1) * DAY_MS)
		throw new OperationRefused(
			400,
			'Bad request',
			`since is further back than the catch-up reads (${days} days, RELAY_CATCHUP_DAYS)`,
		);
	return await store.backfillCatchup(since, now);
}
