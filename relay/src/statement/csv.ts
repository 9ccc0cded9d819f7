import type { Statement } from './statement-shape.ts';

/**
 * The day's movements as CSV (RFC 4180: comma, CRLF, fields quoted where needed), one row per
 * movement, the columns of Statement › Get's movements plus `delivery` (what n8n got of it: empty,
 * `not-received` or `not-delivered`). A text a spreadsheet would run as a formula (`=`, `+`, `-`,
 * `@`, tab, CR at its start; not a number) gets a leading `'`.
 */

export const CSV_COLUMNS = [
	'kind',
	'id',
	'createdAt',
	'status',
	'currency',
	'amount',
	'commission',
	'balanceEffect',
	'unknownEffect',
	'orderId',
	'billId',
	'paymentId',
	'delivery',
] as const;

const NUMBER = /^-?\d+(?:\.\d+)?$/;

export function csvField(value: unknown): string {
	if (value === null || value === undefined) return '';
	let text = String(value);
	if (/^[=+\-@\t\r]/.test(text) && !NUMBER.test(text)) text = `'${text}`;
	return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function statementCsv(s: Statement): string {
	const missed = new Map((s.notDelivered ?? []).map((m) => [`${m.kind}:${m.id}`, m.reason]));
	const rows = [CSV_COLUMNS.join(',')];
	for (const m of s.movements) {
		const delivery = missed.get(`${m.kind}:${m.id}`) ?? '';
		const record: Record<string, unknown> = { ...m, delivery };
		rows.push(CSV_COLUMNS.map((c) => csvField(record[c])).join(','));
	}
	return `${rows.join('\r\n')}\r\n`;
}
