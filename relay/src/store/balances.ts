import type { PostbackEvent } from '../contract.ts';

/**
 * The statement's bookkeeping (docs/operator/statement.md): the merchant's balances as
 * `merchant/balance` answered at each day boundary in RELAY_STATEMENT_TIME_ZONE and at the relay's
 * first start, kept durably (the service keeps no history of them), and what the relay holds of
 * the movements a day's statement lists (received, forwarded).
 */

/** One currency of `merchant/balance`, its amounts as the service wrote them. */
export interface BalanceLine {
	currency: string;
	available: string;
	locked: string;
	hold: string;
}

/**
 * A snapshot: `boundary` is read at the start of `day` (the day's opening, the day before's
 * closing); `first-start` when the relay first started, on the day it started. The first one
 * written for (timeZone, day, kind) stays: another instance's later one is not kept.
 */
export interface BalanceSnapshot {
	timeZone: string;
	/** YYYY-MM-DD in `timeZone`. */
	day: string;
	kind: SnapshotKind;
	/** When `merchant/balance` answered, epoch ms. */
	takenAt: number;
	balances: BalanceLine[];
}

export type SnapshotKind = 'boundary' | 'first-start';
export const SNAPSHOT_KINDS: readonly SnapshotKind[] = ['boundary', 'first-start'];

/** What the store holds of one event a statement looks for: by TrsId or by dedupe key. */
export interface MovementTrace {
	kind: PostbackEvent;
	trsId: string | null;
	dedupeKey: string | null;
	/** Its deliveries, and how many of them were delivered. */
	deliveries: number;
	delivered: number;
}

/** The statement's port of the store (part of the housekeeping). */
export interface BalanceBook {
	/** Keeps a snapshot unless one of its (timeZone, day, kind) is kept already: whether it was. */
	keepBalanceSnapshot(snapshot: BalanceSnapshot): Promise<boolean>;
	/** The snapshots of days `from` to `to` (YYYY-MM-DD, both included) in `timeZone`, by day. */
	balanceSnapshots(timeZone: string, from: string, to: string): Promise<BalanceSnapshot[]>;
	/** The earliest day with a snapshot in `timeZone`, or null. */
	firstSnapshotDay(timeZone: string): Promise<string | null>;
	/**
	 * The events stored under these TrsIds (payments and payouts) or these dedupe keys (refunds and
	 * chargebacks), each with how many of its deliveries were delivered.
	 */
	movementTraces(
		trsIds: readonly string[],
		dedupeKeys: readonly string[],
	): Promise<MovementTrace[]>;
}

/** A snapshot row as both engines keep it: the balances as JSON text. */
export function snapshotOf(row: Record<string, unknown>): BalanceSnapshot {
	const json = row.balances_json;
	return {
		timeZone: String(row.time_zone),
		day: String(row.day),
		kind: String(row.kind) as SnapshotKind,
		takenAt: Number(row.taken_at),
		balances: (typeof json === 'string' ? JSON.parse(json) : json) as BalanceLine[],
	};
}

/** A trace row as both engines read it. */
export function traceOf(row: Record<string, unknown>): MovementTrace {
	return {
		kind: String(row.kind) as PostbackEvent,
		trsId: row.trs_id === null || row.trs_id === undefined ? null : String(row.trs_id),
		dedupeKey:
			row.dedupe_key === null || row.dedupe_key === undefined ? null : String(row.dedupe_key),
		deliveries: Number(row.deliveries ?? 0),
		delivered: Number(row.delivered ?? 0),
	};
}
