import type { IDataObject } from 'n8n-workflow';

import { normalizeResponseAmount } from '../../shared';

/** Fields holding money in the service's answers (documented ones and those seen live). */
const AMOUNT_FIELDS = new Set([
	'amount',
	'amount_received',
	'commission',
	'account_amount',
	'refunded_amount',
	'balance_available',
	'balance_locked',
	'balance_hold',
]);

/** `true`, `"true"`, `1`, `"1"` → true; `false`, `"false"`, `0`, `"0"` → false; other values unchanged. */
export function toBoolean(value: unknown): unknown {
	if (value === true || value === 'true' || value === 1 || value === '1') return true;
	if (value === false || value === 'false' || value === 0 || value === '0') return false;
	return value;
}

/**
 * Normalises an answer without loss: `success` becomes a boolean, amounts given as decimal
 * strings become numbers when the number holds the same value, every other field (known or
 * not) passes through unchanged. Nested objects and arrays are normalised too.
 */
export function normalizeResponse<T>(value: T): T {
	if (Array.isArray(value)) return value.map((entry) => normalizeResponse(entry)) as T;
	if (typeof value !== 'object' || value === null) return value;
	const out: IDataObject = {};
	for (const [key, field] of Object.entries(value as IDataObject)) {
		if (key === 'success' || key === 'active') out[key] = toBoolean(field) as IDataObject[string];
		else if (AMOUNT_FIELDS.has(key))
			out[key] = normalizeResponseAmount(field) as IDataObject[string];
		else out[key] = normalizeResponse(field);
	}
	return out as T;
}

/** One record of an answer, normalised, without the answer's `success` flag. */
export function recordOf(value: IDataObject): IDataObject {
	const out = normalizeResponse(value);
	delete out.success;
	return out;
}

/**
 * A Russian bank's BIC as the 9 digits it has, its leading zero kept ("044525225"): the service
 * writes it as a number (44525225) where its document says integer, and may write it as text.
 * Digits only are padded; anything else (empty, null, letters) passes through unchanged.
 */
export function bicOf(value: unknown): unknown {
	const text =
		typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
			? String(value)
			: typeof value === 'string'
				? value.trim()
				: undefined;
	if (text === undefined || !/^\d{1,9}$/.test(text)) return value;
	return text.padStart(9, '0');
}
