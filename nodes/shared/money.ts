/**
 * Money rules. Amounts are never sent as floats: they are validated and turned into decimal
 * strings built from whole cents, so no float artefact (0.30000000000000004) reaches the wire.
 */

/** decimal(10,2): at most 8 integer digits and 2 decimals. */
export const MAX_AMOUNT = '99999999.99';
const MAX_CENTS = 9999999999;

export type AmountCheck =
	| { ok: true; value: string; cents: number }
	| { ok: false; message: string };

/** Whole cents as a decimal string with two decimals: 150 → "1.50", -5 → "-0.05". */
export function formatCents(cents: number): string {
	const sign = cents < 0 ? '-' : '';
	const abs = Math.abs(cents);
	return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/**
 * Whole cents of a decimal the service sent (a number, or text such as "100.50" or "0.12000000"),
 * or undefined when it is not a plain decimal with at most 2 significant decimals.
 */
export function toCents(value: unknown): number | undefined {
	if (typeof value === 'number')
		return Number.isFinite(value) ? Math.round(value * 100) : undefined;
	if (typeof value !== 'string') return undefined;
	const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value.trim());
	if (!match) return undefined;
	const [, sign, whole, frac = ''] = match;
	if (frac.length > 2 && !/^0+$/.test(frac.slice(2))) return undefined;
	const cents = Number(whole) * 100 + Number((frac + '00').slice(0, 2));
	return sign === '-' ? -cents : cents;
}

/**
 * Reads the decimal separator of an amount typed as text. A comma is a decimal separator only
 * when it is the one separator and one or two digits follow it ("100,5", "100,50"). Anything that
 * may hold a thousands separator is refused rather than guessed: "1,500" (one and a half, or
 * fifteen hundred?), "1 500,00", "1.500" and "1.000.000" (a dot before groups of three digits).
 */
function readDecimalText(
	input: string,
): { ok: true; text: string } | { ok: false; message: string } {
	const text = input.trim();
	if (/\s/.test(text)) {
		return {
			ok: false,
			message:
				'must not contain spaces (a thousands separator?): write the plain number, such as 1500.00',
		};
	}
	if (text.includes(',')) {
		if (text.includes('.') || !/^\d+,\d{1,2}$/.test(text)) {
			return {
				ok: false,
				message:
					'is ambiguous: a comma is read only as a decimal separator with one or two digits after it; write 1500 or 1.50',
			};
		}
		return { ok: true, text: text.replace(',', '.') };
	}
	if (/^[1-9]\d{0,2}(\.\d{3})+$/.test(text)) {
		return {
			ok: false,
			message:
				'is ambiguous: a dot before three digits may be a thousands separator; write 1.50 for one and a half or 1500 for fifteen hundred',
		};
	}
	return { ok: true, text };
}

/**
 * Validates an amount given as a number or a string ("100", "100.5", "100,50") and returns its
 * canonical decimal string with two decimals ("100.50"). A number and the same value as text
 * ("1500" and 1500) give the same result; text that may hold a thousands separator is refused.
 */
export function normalizeAmount(input: unknown): AmountCheck {
	let cents: number;
	if (typeof input === 'number') {
		if (!Number.isFinite(input)) return { ok: false, message: 'must be a number' };
		const scaled = input * 100;
		cents = Math.round(scaled);
		// A float that is a whole number of cents up to representation error (0.1 + 0.2) is accepted.
		if (Math.abs(scaled - cents) > 1e-6 * Math.max(1, Math.abs(scaled))) {
			return { ok: false, message: 'must have at most 2 decimals' };
		}
	} else if (typeof input === 'string') {
		if (input.trim() === '') return { ok: false, message: 'is required' };
		const read = readDecimalText(input);
		if (!read.ok) return read;
		const match = /^(\d+)(?:\.(\d+))?$/.exec(read.text);
		if (!match)
			return { ok: false, message: 'must be a positive decimal number such as 100 or 99.90' };
		const [, whole, frac = ''] = match;
		if (frac.length > 2 && !/^0+$/.test(frac.slice(2))) {
			return { ok: false, message: 'must have at most 2 decimals' };
		}
		const wholeDigits = whole.replace(/^0+(?=\d)/, '');
		if (wholeDigits.length > 8) return { ok: false, message: `must not exceed ${MAX_AMOUNT}` };
		cents = Number(wholeDigits) * 100 + Number((frac + '00').slice(0, 2));
	} else {
		return { ok: false, message: 'must be a number' };
	}
	if (cents <= 0) return { ok: false, message: 'must be greater than 0' };
	if (cents > MAX_CENTS) return { ok: false, message: `must not exceed ${MAX_AMOUNT}` };
	return { ok: true, value: formatCents(cents), cents };
}

/**
 * Reads a decimal the service sent (a JSON number, or a string such as "0.12000000") as a number.
 * Returns undefined for anything that is not a plain decimal.
 */
export function decimalToNumber(value: unknown): number | undefined {
	if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
	if (typeof value !== 'string') return undefined;
	const text = value.trim();
	if (!/^-?\d+(\.\d+)?$/.test(text)) return undefined;
	return Number(text);
}

/**
 * Normalises an amount of a response without loss: a decimal string becomes a number when the
 * number holds the same value (every amount within decimal(10,2), every balance the service
 * sends with trailing zeros); otherwise the original value is kept.
 */
export function normalizeResponseAmount(value: unknown): unknown {
	const n = decimalToNumber(value);
	if (n === undefined || typeof value !== 'string') return value;
	const [, frac = ''] = value.trim().split('.');
	const significant = frac.replace(/0+$/, '');
	return n.toFixed(significant.length) === stripTrailingZeros(value.trim()) ? n : value;
}

function stripTrailingZeros(text: string): string {
	if (!text.includes('.')) return text;
	return text.replace(/0+$/, '').replace(/\.$/, '');
}

/**
 * What a payment credited to the merchant, in whole cents, whichever answer the service gives:
 * `amount_received` (the interface document's field), else `account_amount` (newer answers drop
 * `amount_received` and add it) when it is in the payment's own currency
 * (`account_currency_code` absent or the same as `currency_in`). Undefined when neither is there.
 */
export function receivedCents(payment: Readonly<Record<string, unknown>>): number | undefined {
	const received = toCents(payment.amount_received);
	if (received !== undefined) return received;
	const accountCurrency =
		typeof payment.account_currency_code === 'string' ? payment.account_currency_code.trim() : '';
	const currency = typeof payment.currency_in === 'string' ? payment.currency_in.trim() : '';
	if (
		accountCurrency !== '' &&
		currency !== '' &&
		accountCurrency.toUpperCase() !== currency.toUpperCase()
	)
		return undefined;
	return toCents(payment.account_amount);
}
