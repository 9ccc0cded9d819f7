/**
 * Money as integer cents (kopecks). Never floats: amounts are parsed from their decimal
 * text and formatted back from integers.
 */

/** decimal(10,2): at most 8 integer digits. */
export const MAX_CENTS = 9_999_999_999;

const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/** Laravel's `numeric` rule, restricted to plain decimal notation. */
export function isNumeric(text: string): boolean {
	return NUMERIC.test(text.trim());
}

export type ParsedAmount =
	| { ok: true; cents: number }
	| { ok: false; reason: 'not_positive' | 'too_precise' | 'too_large' };

/** Parses a numeric text (see isNumeric) into positive cents within decimal(10,2). */
export function parseAmount(text: string): ParsedAmount {
	const match = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
	if (!match) return { ok: false, reason: 'not_positive' };
	const sign = match[1] ?? '';
	const whole = (match[2] ?? '').replace(/^0+/, '') || '0';
	const fraction = match[3] ?? '';
	if (fraction.length > 2 && /[1-9]/.test(fraction.slice(2)))
		return { ok: false, reason: 'too_precise' };
	if (whole.length > 8) return { ok: false, reason: 'too_large' };
	const cents = Number(whole) * 100 + Number((fraction + '00').slice(0, 2));
	if (sign === '-' || cents <= 0) return { ok: false, reason: 'not_positive' };
	if (cents > MAX_CENTS) return { ok: false, reason: 'too_large' };
	return { ok: true, cents };
}

/** Parses a control-API amount ("1000.00", 1000, "0") into non-negative cents, or null. */
export function parseControlAmount(value: unknown): number | null {
	const text = typeof value === 'number' ? String(value) : value;
	if (typeof text !== 'string' || !isNumeric(text)) return null;
	if (/^[+]?0*(?:\.0*)?$/.test(text.trim())) return 0;
	const parsed = parseAmount(text);
	return parsed.ok ? parsed.cents : null;
}

/** "1234.50" */
export function format2(cents: number): string {
	const sign = cents < 0 ? '-' : '';
	const abs = Math.abs(cents);
	return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** "1234.50000000", the balance format. */
export function format8(cents: number): string {
	return `${format2(cents)}000000`;
}

/** A JSON number for bill and payment amounts (100.05, 35400). */
export function toNumber(cents: number): number {
	return Number(format2(cents));
}

/** Rounded share of an amount in basis points (300 = 3 %), in whole cents. */
export function share(cents: number, basisPoints: number): number {
	return Math.round((cents * basisPoints) / 10_000);
}
