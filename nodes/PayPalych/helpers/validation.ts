import type { INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { normalizeAmount, toYmd } from '../../shared';

/** A bad input: NodeOperationError whose message starts with the field's display name. */
export function inputError(
	node: INode,
	field: string,
	problem: string,
	itemIndex: number,
	description?: string,
): NodeOperationError {
	return new NodeOperationError(node, `${field} ${problem}`, { itemIndex, description });
}

/** Amount: positive, at most 2 decimals, within decimal(10,2); returns the canonical string ("100.50"). */
export function checkAmount(
	node: INode,
	value: unknown,
	itemIndex: number,
	field = 'Amount',
): string {
	const result = normalizeAmount(typeof value === 'string' && value.trim() === '' ? '' : value);
	if (!result.ok) {
		throw inputError(
			node,
			field,
			`${result.message} (got ${JSON.stringify(value ?? '')})`,
			itemIndex,
			'Use a positive amount with at most 2 decimals, such as 100 or 99.90',
		);
	}
	return result.value;
}

/** A required text parameter, trimmed. */
export function checkRequired(
	node: INode,
	value: unknown,
	itemIndex: number,
	field: string,
): string {
	const text =
		typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
	if (text === '') throw inputError(node, field, 'is required', itemIndex);
	return text;
}

/** Start and finish dates as Y-m-d, start not after finish. */
export function checkDateRange(
	node: INode,
	start: unknown,
	finish: unknown,
	itemIndex: number,
): { startDate: string; finishDate: string } {
	const s = toYmd(start);
	if (!s.ok) throw inputError(node, 'Start Date', s.message, itemIndex);
	const f = toYmd(finish);
	if (!f.ok) throw inputError(node, 'Finish Date', f.message, itemIndex);
	if (s.value > f.value) {
		throw inputError(
			node,
			'Start Date',
			`(${s.value}) must not be after Finish Date (${f.value})`,
			itemIndex,
		);
	}
	return { startDate: s.value, finishDate: f.value };
}

/** Luhn checksum over a string of digits. */
export function luhnValid(digits: string): boolean {
	let sum = 0;
	let double = false;
	for (let i = digits.length - 1; i >= 0; i--) {
		let d = digits.charCodeAt(i) - 48;
		if (double) {
			d *= 2;
			if (d > 9) d -= 9;
		}
		sum += d;
		double = !double;
	}
	return sum % 10 === 0;
}

/** Card number: spaces and dashes allowed, 12 to 19 digits, valid Luhn checksum. Returns the digits. */
export function checkCardNumber(node: INode, value: unknown, itemIndex: number): string {
	const raw = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : '';
	const digits = raw.replace(/[\s-]/g, '');
	if (digits === '') throw inputError(node, 'Card Number', 'is required', itemIndex);
	if (!/^\d+$/.test(digits))
		throw inputError(node, 'Card Number', 'must contain digits only', itemIndex);
	if (digits.length < 12 || digits.length > 19) {
		throw inputError(
			node,
			'Card Number',
			`must have 12 to 19 digits (got ${digits.length})`,
			itemIndex,
		);
	}
	if (!luhnValid(digits)) {
		throw inputError(
			node,
			'Card Number',
			'fails the card checksum (Luhn): check for a mistyped digit',
			itemIndex,
		);
	}
	return digits;
}

/**
 * Normalises a Russian phone number for SBP to 7XXXXXXXXXX. Accepts +7, 8 or 7 prefixes, or ten
 * digits starting with 9, with spaces, dashes, dots and parentheses.
 */
export function normalizePhone(value: unknown): string | undefined {
	const raw =
		typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
	if (!/^\+?[\d\s().-]+$/.test(raw)) return undefined;
	if (raw.indexOf('+') > 0) return undefined;
	let digits = raw.replace(/\D/g, '');
	if (raw.startsWith('+') && !digits.startsWith('7')) return undefined;
	if (digits.length === 11 && digits.startsWith('8') && !raw.startsWith('+'))
		digits = `7${digits.slice(1)}`;
	else if (digits.length === 10 && digits.startsWith('9') && !raw.startsWith('+'))
		digits = `7${digits}`;
	return /^7\d{10}$/.test(digits) ? digits : undefined;
}

export function checkPhone(node: INode, value: unknown, itemIndex: number): string {
	if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) {
		throw inputError(node, 'Phone', 'is required for SBP payouts', itemIndex);
	}
	const phone = normalizePhone(value);
	if (!phone) {
		throw inputError(
			node,
			'Phone',
			`must be a Russian phone number such as +7 900 123-45-67 (got ${JSON.stringify(value)})`,
			itemIndex,
		);
	}
	return phone;
}

/** Card holder name: required, Latin letters as on the card. */
export function checkCardHolder(node: INode, value: unknown, itemIndex: number): string {
	const text = typeof value === 'string' ? value.trim().replace(/\s+/g, ' ') : '';
	if (text === '') throw inputError(node, 'Card Holder', 'is required for card payouts', itemIndex);
	return text;
}

/** SBP bank member_id from the bank list: required, digits. */
export function checkBank(node: INode, value: unknown, itemIndex: number): string {
	const text =
		typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
	if (text === '')
		throw inputError(
			node,
			'Bank',
			'is required for SBP payouts: choose the recipient bank from the list',
			itemIndex,
		);
	if (!/^\d+$/.test(text)) {
		throw inputError(
			node,
			'Bank',
			`must be a bank member ID (digits) from the SBP bank list (got ${JSON.stringify(text)})`,
			itemIndex,
		);
	}
	return text;
}
