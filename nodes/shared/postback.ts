import { isWellFormedSignature, md5Upper, signaturesMatch } from './signature';
import { PAYMENT_POSTBACK_STATUSES, PAYOUT_POSTBACK_STATUSES, isPaidStatus } from './statuses';
import { decimalToNumber } from './money';

/** The four kinds of call the service (or the customer's browser) makes to the merchant. */
export type PostbackEvent = 'payment' | 'payout' | 'success' | 'fail';
export const POSTBACK_EVENTS: readonly PostbackEvent[] = ['payment', 'payout', 'success', 'fail'];

export interface PostbackRule {
	/** First signed field (the amount). */
	amountField: string;
	/** Second signed field (the order or transaction id). */
	idField: string;
	/** Fields that must be present for the call to be considered at all. */
	required: readonly string[];
	/** Statuses this event carries; empty for redirects (they carry none). */
	statuses: readonly string[];
	/** Whether the call is identified by TrsId + Status (postbacks) and so deduplicated. */
	deduplicate: boolean;
	/** Fields holding amounts: the output gets a numeric twin next to the original string. */
	amountFields: readonly string[];
}

export const POSTBACK_RULES: Readonly<Record<PostbackEvent, PostbackRule>> = {
	payment: {
		amountField: 'OutSum',
		idField: 'InvId',
		required: ['OutSum', 'InvId', 'TrsId', 'Status', 'SignatureValue'],
		statuses: PAYMENT_POSTBACK_STATUSES,
		deduplicate: true,
		amountFields: ['OutSum', 'Commission', 'BalanceAmount'],
	},
	payout: {
		amountField: 'Amount',
		idField: 'TrsId',
		required: ['Amount', 'TrsId', 'Status', 'SignatureValue'],
		statuses: PAYOUT_POSTBACK_STATUSES,
		deduplicate: true,
		amountFields: ['Amount', 'Commission', 'BalanceAmount', 'BalanceCommission'],
	},
	success: {
		amountField: 'OutSum',
		idField: 'InvId',
		required: ['OutSum', 'InvId', 'SignatureValue'],
		statuses: [],
		deduplicate: false,
		amountFields: ['OutSum'],
	},
	fail: {
		amountField: 'OutSum',
		idField: 'InvId',
		required: ['OutSum', 'InvId', 'SignatureValue'],
		statuses: [],
		deduplicate: false,
		amountFields: ['OutSum'],
	},
};

export function isPostbackEvent(value: unknown): value is PostbackEvent {
	return typeof value === 'string' && (POSTBACK_EVENTS as readonly string[]).includes(value);
}

/** Postback fields, every value a string exactly as received. */
export type PostbackFields = Record<string, string>;

export type ParseResult =
	| { ok: true; fields: PostbackFields }
	| { ok: false; reason: 'empty_body' | 'not_an_object' | 'repeated_field' | 'nested_value' | 'bad_json'; field?: string };

/**
 * Turns a received body into postback fields.
 * - a string or Buffer is read as `application/x-www-form-urlencoded`, or as JSON when the
 *   content type says so (or it starts with `{`);
 * - an object (a body a framework already parsed) is taken field by field.
 * Values stay as received: form values are never re-formatted; JSON numbers and booleans become
 * their JSON text exactly as sent (`18.50` gives "18.50"). A field given twice, or a nested value, makes the body unusable.
 */
export function parsePostbackBody(body: unknown, contentType = ''): ParseResult {
	if (body === undefined || body === null) return { ok: false, reason: 'empty_body' };
	if (typeof body === 'string' || body instanceof Uint8Array) {
		const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
		if (text.trim() === '') return { ok: false, reason: 'empty_body' };
		const looksJson = /json/i.test(contentType) || (!/urlencoded/i.test(contentType) && text.trim().startsWith('{'));
		if (looksJson) {
			let parsed: unknown;
			try {
				parsed = parseJsonKeepingNumberText(text);
			} catch {
				return { ok: false, reason: 'bad_json' };
			}
			return fieldsFromObject(parsed);
		}
		return fieldsFromForm(text);
	}
	return fieldsFromObject(body);
}

/**
 * JSON.parse that keeps every number as the exact text it was sent as (`18.50` stays "18.50",
 * not 18.5), so a JSON postback is verified over the values as received. It uses the source text
 * the reviver receives on Node 22 and later; where that is missing, numbers keep their value.
 */
function parseJsonKeepingNumberText(text: string): unknown {
	return JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
		typeof value === 'number' && typeof context?.source === 'string' ? context.source : value,
	);
}

function fieldsFromForm(text: string): ParseResult {
	const fields: PostbackFields = {};
	for (const [name, value] of new URLSearchParams(text)) {
		if (Object.prototype.hasOwnProperty.call(fields, name)) {
			return { ok: false, reason: 'repeated_field', field: name };
		}
		fields[name] = value;
	}
	if (Object.keys(fields).length === 0) return { ok: false, reason: 'empty_body' };
	return { ok: true, fields };
}

function fieldsFromObject(value: unknown): ParseResult {
	if (typeof value !== 'object' || value === null || Array.isArray(value)) {
		return { ok: false, reason: 'not_an_object' };
	}
	const fields: PostbackFields = {};
	for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
		if (Array.isArray(raw)) return { ok: false, reason: 'repeated_field', field: name };
		if (raw === null || raw === undefined) fields[name] = '';
		else if (typeof raw === 'string') fields[name] = raw;
		else if (typeof raw === 'number' || typeof raw === 'boolean') fields[name] = String(raw);
		else return { ok: false, reason: 'nested_value', field: name };
	}
	if (Object.keys(fields).length === 0) return { ok: false, reason: 'empty_body' };
	return { ok: true, fields };
}

/** The signature the service puts on a call of this kind, computed from the received values. */
export function expectedSignature(event: PostbackEvent, fields: PostbackFields, token: string): string {
	const rule = POSTBACK_RULES[event];
	return md5Upper(`${fields[rule.amountField] ?? ''}:${fields[rule.idField] ?? ''}:${token}`);
}

export type VerifyResult =
	| { ok: true; tokenIndex: number }
	| { ok: false; reason: 'missing_field'; field: string }
	| { ok: false; reason: 'malformed_signature' | 'bad_signature' | 'no_token' };

/**
 * Verifies a call against one token or several (an old and a new one during rotation).
 * Every token is tried, whatever matched first, so the time taken does not tell which.
 */
export function verifyPostback(
	event: PostbackEvent,
	fields: PostbackFields,
	tokens: string | readonly string[],
): VerifyResult {
	const rule = POSTBACK_RULES[event];
	for (const field of rule.required) {
		if (typeof fields[field] !== 'string') return { ok: false, reason: 'missing_field', field };
	}
	const candidates = (typeof tokens === 'string' ? [tokens] : tokens).filter((t) => t !== '');
	if (candidates.length === 0) return { ok: false, reason: 'no_token' };
	const received = fields.SignatureValue;
	if (!isWellFormedSignature(received)) return { ok: false, reason: 'malformed_signature' };
	let matched = -1;
	candidates.forEach((token, index) => {
		const ok = signaturesMatch(expectedSignature(event, fields, token), received);
		if (ok && matched === -1) matched = index;
	});
	return matched === -1 ? { ok: false, reason: 'bad_signature' } : { ok: true, tokenIndex: matched };
}

/** A postback is identified by TrsId + Status; redirects are not deduplicated (undefined). */
export function postbackKey(event: PostbackEvent, fields: PostbackFields): string | undefined {
	if (!POSTBACK_RULES[event].deduplicate) return undefined;
	return `${event}:${fields.TrsId ?? ''}:${fields.Status ?? ''}`;
}

/** Human-readable reason for a rejected call; never contains a token or a signature. */
export function describeRejection(result: Exclude<VerifyResult, { ok: true }> | Exclude<ParseResult, { ok: true }>): string {
	switch (result.reason) {
		case 'missing_field':
			return `Required field ${result.field} is missing`;
		case 'malformed_signature':
			return 'SignatureValue is missing or is not a 32-character hex MD5';
		case 'bad_signature':
			return 'SignatureValue does not match the API token';
		case 'no_token':
			return 'No API token is configured to verify the call';
		case 'empty_body':
			return 'The body is empty';
		case 'not_an_object':
			return 'The body is not a set of fields';
		case 'repeated_field':
			return `Field ${result.field ?? ''} is given more than once`;
		case 'nested_value':
			return `Field ${result.field ?? ''} holds a nested value`;
		case 'bad_json':
			return 'The body is not valid JSON';
	}
}

/**
 * The item a workflow receives for a verified call: every field as received, plus `event`,
 * `verified`, `paid` (payment-like events), and a numeric twin `<Field>Number` for each amount.
 */
export function enrichPostback(event: PostbackEvent, fields: PostbackFields): Record<string, unknown> {
	const out: Record<string, unknown> = { ...fields, event, verified: true };
	if (event === 'payment') out.paid = isPaidStatus(fields.Status);
	if (event === 'success') out.paid = true;
	if (event === 'fail') out.paid = false;
	for (const field of POSTBACK_RULES[event].amountFields) {
		if (fields[field] === undefined) continue;
		const n = decimalToNumber(fields[field]);
		if (n !== undefined) out[`${field}Number`] = n;
	}
	return out;
}
