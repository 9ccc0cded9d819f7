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

/**
 * The service's country, and the time zone Daily Limit counts its day in by default: PayPalych
 * is a Russian service and is likely to write its times (and count its days) in Moscow time.
 */
export const SERVICE_TIME_ZONE = 'Europe/Moscow';

/** A Y-m-d moved by whole days: `addDays('2024-03-01', -1)` is `2024-02-29`. */
export function addDays(ymd: string, days: number): string {
	const m = YMD.exec(ymd);
	if (!m) throw new Error(`not a Y-m-d date: ${ymd}`);
	return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + days))
		.toISOString()
		.slice(0, 10);
}

/** Whether a time zone name is one this runtime knows (`Europe/Moscow`, `UTC`, ...). */
export function isKnownTimeZone(timeZone: string): boolean {
	if (timeZone.trim() === '') return false;
	try {
		new Intl.DateTimeFormat('en-US', { timeZone });
		return true;
	} catch {
		return false;
	}
}

/** The calendar date (Y-m-d) of an instant in a time zone. Throws RangeError for an unknown zone. */
export function dateIn(timeZone: string, at: Date = new Date()): string {
	const parts = new Intl.DateTimeFormat('en-US', {
		timeZone,
		year: 'numeric',
		month: '2-digit',
		day: '2-digit',
	}).formatToParts(at);
	const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
	return `${part('year')}-${part('month')}-${part('day')}`;
}

/**
 * The query dates of a search for the rows created from `start` to `finish` (Y-m-d, both days
 * included): one day more on each side. The interface document does not say whether the service's
 * `finish_date` is inclusive or in which time zone it counts days; asked this way, every row of
 * the range is in the answer whatever the answer to either question, and `createdWithin` keeps
 * the rows of the range.
 */
export function widenedDates(
	start: string,
	finish: string,
): { start_date: string; finish_date: string } {
	return { start_date: addDays(start, -1), finish_date: addDays(finish, 1) };
}

const DATE_TIME_WITH_OFFSET =
	/^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * The calendar date a row was created on, as the service's day: the date part of `created_at` as
 * written (`Y-m-d H:i:s` carries no zone: the service's own clock). A `created_at` with an explicit
 * offset (`2024-03-01T21:30:00Z`, as Laravel writes dates by default) is an instant, and its date
 * is taken in `timeZone`. Undefined when `created_at` is missing or not a date.
 */
export function createdDate(
	createdAt: unknown,
	timeZone: string = SERVICE_TIME_ZONE,
): string | undefined {
	if (typeof createdAt !== 'string') return undefined;
	const text = createdAt.trim();
	const zoned = DATE_TIME_WITH_OFFSET.exec(text);
	if (zoned) {
		const [, y, mo, d, h, mi, s = '0', offset] = zoned;
		if (!toYmd(`${y}-${mo}-${d}`).ok) return undefined;
		let offsetMinutes = 0;
		if (offset.toUpperCase() !== 'Z') {
			const digits = offset.replace(':', '');
			const sign = digits.startsWith('-') ? -1 : 1;
			offsetMinutes = sign * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5)));
		}
		const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
		return dateIn(timeZone, new Date(utc - offsetMinutes * 60_000));
	}
	const plain = /^(\d{4}-\d{2}-\d{2})(?:[T ]|$)/.exec(text);
	if (!plain) return undefined;
	const checked = toYmd(plain[1]);
	return checked.ok ? checked.value : undefined;
}

/**
 * Whether a row (with `created_at`) was created from `start` to `finish` (Y-m-d, both included),
 * on the service's day (see `createdDate`). A row whose `created_at` cannot be read is kept: a
 * filter that cannot tell must not hide a row (a payout the daily limit should count, a bill
 * catch-up should see).
 */
export function createdWithin(
	row: unknown,
	start: string,
	finish: string,
	timeZone: string = SERVICE_TIME_ZONE,
): boolean {
	const createdAt =
		typeof row === 'object' && row !== null
			? (row as { created_at?: unknown }).created_at
			: undefined;
	const day = createdDate(createdAt, timeZone);
	return day === undefined || (day >= start && day <= finish);
}
