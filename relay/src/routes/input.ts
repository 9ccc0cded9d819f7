import { z } from 'zod';

/**
 * The input the admin API (routes/admin.ts) and the console (console/input.ts) read alike, parsed
 * here once so that the services get plain values: a time in the one time format of both
 * surfaces, and a delivery id. A refusal is a schema's issue; each surface answers it its way.
 */

/** The one time format of the admin API and the console, as a refusal says it. */
export const TIME_FORMAT =
	'epoch milliseconds, or an ISO 8601 date-time such as 2026-01-31T12:00 (UTC unless it names a zone)';
const NOT_A_TIME = `is not a date and time (${TIME_FORMAT})`;

const ISO =
	/^(\d{4})-(\d\d)-(\d\d)(?:[T ]([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,3})?)?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?$/i;

/**
 * A time as the admin API and the console accept it: epoch milliseconds (a number or digits), or
 * an ISO 8601 date-time (`YYYY-MM-DD`, then optionally `THH:MM[:SS[.mmm]]` — a space for the `T`
 * will do — and a zone `Z` or `±HH:MM`; without a zone it is UTC, which is what the console
 * shows). Undefined for anything else, a day that does not exist, or a time beyond 2^53 ms.
 */
export function parseTime(value: string | number): number | undefined {
	if (typeof value === 'number')
		return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
	const v = value.trim();
	if (/^\d{1,16}$/.test(v)) return parseTime(Number(v));
	const m = ISO.exec(v);
	if (!m) return undefined;
	const [, y, mo, d] = m.map(Number);
	const day = new Date(Date.UTC(y, mo - 1, d));
	if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d)
		return undefined;
	const time = v.slice(11).replace(/(Z|[+-]\d\d:?\d\d)$/i, '');
	const zone = (m[7] ?? 'Z').toUpperCase().replace(/^([+-]\d\d)(\d\d)$/, '$1:$2');
	const ms = Date.parse(`${v.slice(0, 10)}T${time || '00:00'}${zone}`);
	return Number.isFinite(ms) ? parseTime(ms) : undefined;
}

const toTime = (v: string | number, ctx: z.RefinementCtx) => {
	const ms = parseTime(v);
	if (ms === undefined) {
		ctx.addIssue({ code: 'custom', message: NOT_A_TIME });
		return z.NEVER;
	}
	return ms;
};

/** A time field of a query or a JSON body (a number or text), checked by `parseTime`. */
export const timeField = z.union([z.number(), z.string()]).transform(toTime);

/** A time field of a form (text), checked by `parseTime`. */
export const timeText = z.string({ error: 'is required' }).transform(toTime);

/** A delivery id as text (a path segment or a form field): a positive safe integer. */
export const deliveryIdText = z
	.string()
	.regex(/^\d{1,16}$/, 'is not a delivery id')
	.transform(Number)
	.refine((n) => n > 0 && Number.isSafeInteger(n), 'is not a delivery id');
