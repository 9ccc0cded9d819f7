/** Datetimes are written as `Y-m-d H:i:s` in UTC; search dates are `Y-m-d` (UTC days). */

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

export function formatDateTime(ms: number): string {
	const d = new Date(ms);
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

export const DAY_MS = 86_400_000;

export function startOfUtcDay(ms: number): number {
	return Math.floor(ms / DAY_MS) * DAY_MS;
}

export function startOfUtcMonth(ms: number): number {
	const d = new Date(ms);
	return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}
