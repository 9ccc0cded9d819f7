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
		const midnight = midnightOf(day, timeZone);
		if (Number.isNaN(midnight)) return undefined;
		return midnight + (Number(h) * 3600 + Number(m) * 60 + Number(s)) * 1000;
	}
	if (!/\d{2}:\d{2}/.test(text)) return undefined;
	const at = Date.parse(text);
	return Number.isNaN(at) ? undefined : at;
}

/** The day after `day`. */
export const nextDay = (day: string): string => addDays(day, 1);

/** Midnights already worked out (a day's movements share a few): each one costs a date formatter. */
const midnights = new Map<string, number>();

function midnightOf(day: string, timeZone: string): number {
	const key = `${timeZone} ${day}`;
	let at = midnights.get(key);
	if (at === undefined) {
		at = midnightIn(day, timeZone).getTime();
		if (midnights.size >= 1000) midnights.clear();
		midnights.set(key, at);
	}
	return at;
}
