/** Date formats of the service: `Y-m-d` in search requests, `Y-m-d H:i:s` in responses. */

export const YMD = /^(\d{4})-(\d{2})-(\d{2})$/;
export const SERVICE_DATETIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

export type DateCheck = { ok: true; value: string } | { ok: false; message: string };

function isCalendarDate(year: number, month: number, day: number): boolean {
	if (month < 1 || month > 12 || day < 1) return false;
	const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
	return day <= days;
}

/**
 * Reads a date as `Y-m-d`. Accepts `2024-03-01`, an ISO date-time as n8n's date picker gives
 * it (`2024-03-01T00:00:00`, the date part is taken as written), a JS Date (its UTC date), or
 * an object with `toISODate()` (a Luxon DateTime from an expression such as `$today`).
 */
export function toYmd(input: unknown): DateCheck {
	let text: string | undefined;
	if (input instanceof Date) {
		if (Number.isNaN(input.getTime())) return { ok: false, message: 'is not a valid date' };
		text = input.toISOString().slice(0, 10);
	} else if (
		typeof input === 'object' &&
		input !== null &&
		typeof (input as { toISODate?: unknown }).toISODate === 'function'
	) {
		const iso = (input as { toISODate: () => unknown }).toISODate();
		text = typeof iso === 'string' ? iso : undefined;
	} else if (typeof input === 'string') {
		const trimmed = input.trim();
		if (trimmed === '') return { ok: false, message: 'is required' };
		const m = /^(\d{4}-\d{2}-\d{2})(?:[T ].*)?$/.exec(trimmed);
		text = m ? m[1] : undefined;
	}
	if (text === undefined) return { ok: false, message: 'must be a date in the form YYYY-MM-DD' };
	const m = YMD.exec(text);
	if (!m || !isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]))) {
		return { ok: false, message: `must be a real date in the form YYYY-MM-DD (got "${text}")` };
	}
	return { ok: true, value: text };
}

/** Y-m-d H:i:s of a Date, in UTC. */
export function formatServiceDateTime(date: Date): string {
	return date.toISOString().slice(0, 19).replace('T', ' ');
}
