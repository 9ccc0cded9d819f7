/**
 * Datetimes are written as `Y-m-d H:i:s` in the profile's time zone (UTC in `live`, Moscow time in
 * `spec`). Search dates are `Y-m-d` days of that zone (the interface document) or date-times (the
 * service's reference describes them as date-times in UTC): see parseSearchDate.
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

/** A search date read: the instant it names, and whether it was a date alone (a whole day). */
export interface SearchDate {
	ms: number;
	dateOnly: boolean;
}

const DATE_TIME =
	/^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * A search's `start_date` or `finish_date`: `Y-m-d` (the start of that day on a clock `offsetMs`
 * ahead of UTC, dateOnly) or a date-time, `Y-m-d H:i:s` or ISO 8601 (`2025-03-10T12:00:00Z`,
 * seconds optional, a fraction of a second dropped): on that clock unless it names its own offset.
 * null when it is neither or not a real date and time.
 */
export function parseSearchDate(text: string, offsetMs = 0): SearchDate | null {
	const day = parseYmd(text);
	if (day !== null) return { ms: day - offsetMs, dateOnly: true };
	const match = DATE_TIME.exec(text);
	if (!match) return null;
	const date = parseYmd(`${match[1]}-${match[2]}-${match[3]}`);
	const [hours, minutes, seconds] = [Number(match[4]), Number(match[5]), Number(match[6] ?? 0)];
	if (date === null || hours > 23 || minutes > 59 || seconds > 59) return null;
	const zone = match[7];
	let zoneMs = offsetMs;
	if (zone !== undefined) {
		const digits = zone.toUpperCase() === 'Z' ? '+0000' : zone.replace(':', '');
		const sign = digits.startsWith('-') ? -1 : 1;
		const [zoneHours, zoneMinutes] = [Number(digits.slice(1, 3)), Number(digits.slice(3, 5))];
		if (zoneHours > 23 || zoneMinutes > 59) return null;
		zoneMs = sign * (zoneHours * 3_600_000 + zoneMinutes * 60_000);
	}
	return { ms: date + ((hours * 60 + minutes) * 60 + seconds) * 1000 - zoneMs, dateOnly: false };
}

/** Instants from `from` (included) to `until` (excluded). */
export interface Window {
	from: number;
	until: number;
}

/**
 * The rows a search's dates take, on `created_at` (whole seconds, as the answers write it): from
 * `start`; to the end of `finish` when `finishIncluded` (its whole day for a date alone, its second
 * for a date-time), else to `finish` itself (a date alone: the start of that day).
 */
export function searchWindow(
	start: SearchDate,
	finish: SearchDate,
	finishIncluded: boolean,
): Window {
	const end = finish.dateOnly ? DAY_MS : 1000;
	return { from: start.ms, until: finishIncluded ? finish.ms + end : finish.ms };
}

/** Whether an instant is in a window, counted in whole seconds (`created_at` has no fraction). */
export function inWindow(ms: number, window: Window): boolean {
	const second = Math.floor(ms / 1000) * 1000;
	return second >= window.from && second < window.until;
}
