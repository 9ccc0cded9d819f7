/**
 * Datetimes are written as `Y-m-d H:i:s` in the profile's time zone (UTC in `live`, Moscow time in
 * `spec`); search dates are `Y-m-d` days of that zone.
 */
import type { Profile } from './model.ts';

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

export const DAY_MS = 86_400_000;

/** Moscow time: UTC+3 all year (no daylight saving time since 2014). */
export const MOSCOW_OFFSET_MS = 3 * 3_600_000;

/** How far the profile's clock is ahead of UTC. */
export function zoneOffsetMs(profile: Profile): number {
	return profile === 'spec' ? MOSCOW_OFFSET_MS : 0;
}

/** `Y-m-d H:i:s` of an instant, on a clock `offsetMs` ahead of UTC. */
export function formatDateTime(ms: number, offsetMs = 0): string {
	const d = new Date(ms + offsetMs);
	return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** Start of the UTC day for a strict `Y-m-d` text, or null when it is not a real date. */
export function parseYmd(text: string): number | null {
	const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
	if (!match) return null;
	const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
	const ms = Date.UTC(y, m - 1, d);
	const back = new Date(ms);
	if (back.getUTCFullYear() !== y || back.getUTCMonth() !== m - 1 || back.getUTCDate() !== d)
		return null;
	return ms;
}

/** Start of the day (on a clock `offsetMs` ahead of UTC) that holds the instant `ms`. */
export function startOfDay(ms: number, offsetMs = 0): number {
	return Math.floor((ms + offsetMs) / DAY_MS) * DAY_MS - offsetMs;
}

/** Start of the month (on a clock `offsetMs` ahead of UTC) that holds the instant `ms`. */
export function startOfMonth(ms: number, offsetMs = 0): number {
	const d = new Date(ms + offsetMs);
	return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) - offsetMs;
}
