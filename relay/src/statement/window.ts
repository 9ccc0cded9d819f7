import { addDays, midnightIn } from '../contract.ts';

/**
 * When a record was created, as an instant (epoch ms): a `created_at` with an offset as written,
 * one without (`Y-m-d H:i:s`, the service's own clock, whose zone the service does not say) in
 * the statement's zone, RELAY_STATEMENT_TIME_ZONE: the zone whose days the records are dated in
 * (their date part) must be the zone whose midnights the balance is recorded at, or no day ties
 * out. undefined when it is not a date. The statement places a movement between two balance
 * snapshots by it.
 */
export function instantOf(createdAt: string, timeZone: string): number | undefined {
	const text = createdAt.trim();
	const local = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?$/.exec(text);
	if (local) {
		const [, day, h, m, s = '0'] = local;
		const midnight = midnightIn(day, timeZone).getTime();
		if (Number.isNaN(midnight)) return undefined;
		return midnight + (Number(h) * 3600 + Number(m) * 60 + Number(s)) * 1000;
	}
	if (!/\d{2}:\d{2}/.test(text)) return undefined;
	const at = Date.parse(text);
	return Number.isNaN(at) ? undefined : at;
}

/** The day after `day`. */
export const nextDay = (day: string): string => addDays(day, 1);
