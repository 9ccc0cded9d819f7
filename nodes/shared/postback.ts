import { createHash } from 'crypto';
import { isWellFormedSignature, md5Upper, signaturesMatch } from './signature';
import {
	PAYMENT_POSTBACK_STATUSES,
	PAYOUT_POSTBACK_STATUSES,
	canonicalStatus,
	isPaidStatus,
} from './statuses';
import { decimalToNumber, toCents } from './money';

/** The four kinds of call the service (or the customer's browser) makes to the merchant. */
export type PostbackEvent = 'payment' | 'payout' | 'success' | 'fail';
export const POSTBACK_EVENTS: readonly PostbackEvent[] = ['payment', 'payout', 'success', 'fail'];

/**
 * Money going back to the payer: the refund and chargeback postbacks the service posts to the
 * shop's Refund URL and Chargeback URL (docs/developer/service.md; not in the interface
 * document). Kept apart from PostbackEvent so that everything keyed by the four events stays as
 * it is.
 */
export type MoneyBackEvent = 'refund' | 'chargeback';
export const MONEY_BACK_EVENTS: readonly MoneyBackEvent[] = ['refund', 'chargeback'];

/** Every kind of call with a signature rule. */
export type SignedEvent = PostbackEvent | MoneyBackEvent;

export function isMoneyBackEvent(value: unknown): value is MoneyBackEvent {
	return typeof value === 'string' && (MONEY_BACK_EVENTS as readonly string[]).includes(value);
}

export interface PostbackRule {
	/**
	 * The fields the signature covers, in order: the service signs upper-case
	 * `MD5(<field 1>:<field 2>:...:token)` over the values exactly as sent.
	 */
	signedFields: readonly string[];
	/** First signed field (the amount). */
	amountField: string;
	/** Second signed field (the order or transaction id). */
	idField: string;
	/**
	 * Fields that must be present for the call to be considered at all. InvId is not among them:
	 * `order_id` is optional when a bill is created, and a missing InvId is read as an empty one
	 * (the service signs `OutSum::token` then).
	 */
	required: readonly string[];
	/** Statuses this event carries; empty for redirects (they carry none). */
	statuses: readonly string[];
	/** Whether the call is identified by TrsId + Status (postbacks) and so deduplicated. */
	deduplicate: boolean;
	/** Fields holding amounts: the output gets a numeric twin next to the original string. */
	amountFields: readonly string[];
}

/** A refund's or chargeback's rule: the service's id of it is `Id`, its payment `PaymentId`. */
export type MoneyBackRule = Omit<PostbackRule, 'amountField' | 'idField'> & {
	/** The field holding the service's id of the refund or chargeback. */
	recordIdField: 'Id';
};

export const POSTBACK_RULES: Readonly<
	Record<PostbackEvent, PostbackRule> & Record<MoneyBackEvent, MoneyBackRule>
> = {
	payment: {
		signedFields: ['OutSum', 'InvId'],
		amountField: 'OutSum',
		idField: 'InvId',
		required: ['OutSum', 'TrsId', 'Status', 'SignatureValue'],
		statuses: PAYMENT_POSTBACK_STATUSES,
		deduplicate: true,
		amountFields: ['OutSum', 'Commission', 'BalanceAmount'],
	},
	payout: {
		signedFields: ['Amount', 'TrsId'],
		amountField: 'Amount',
		idField: 'TrsId',
		required: ['Amount', 'TrsId', 'Status', 'SignatureValue'],
		statuses: PAYOUT_POSTBACK_STATUSES,
		deduplicate: true,
		amountFields: ['Amount', 'Commission', 'BalanceAmount', 'BalanceCommission'],
	},
	success: {
		signedFields: ['OutSum', 'InvId'],
		amountField: 'OutSum',
		idField: 'InvId',
		required: ['OutSum', 'SignatureValue'],
		statuses: [],
		deduplicate: false,
		amountFields: ['OutSum'],
	},
	fail: {
		signedFields: ['OutSum', 'InvId'],
		amountField: 'OutSum',
		idField: 'InvId',
		required: ['OutSum', 'SignatureValue'],
		statuses: [],
		deduplicate: false,
		amountFields: ['OutSum'],
	},
	// Refund postback: `Id, Amount, Currency, Status, InvId, BillId, PaymentId, SignatureValue`,
	// signed `MD5(Amount:Currency:BillId:PaymentId:Id:token)`. Status is not signed and not
	// required: the service's record gives it.
	refund: {
		signedFields: ['Amount', 'Currency', 'BillId', 'PaymentId', 'Id'],
		recordIdField: 'Id',
		required: ['Amount', 'Currency', 'BillId', 'PaymentId', 'Id', 'SignatureValue'],
		statuses: [],
		deduplicate: true,
		amountFields: ['Amount'],
	},
	// Chargeback postback, signed `MD5(BillId:PaymentId:Id:token)`; its other fields (the sandbox
	// sends the refund's set) are unconfirmed and not required.
	chargeback: {
		signedFields: ['BillId', 'PaymentId', 'Id'],
		recordIdField: 'Id',
		required: ['BillId', 'PaymentId', 'Id', 'SignatureValue'],
		statuses: [],
		deduplicate: true,
		amountFields: ['Amount'],
	},
};

export function isPostbackEvent(value: unknown): value is PostbackEvent {
	return typeof value === 'string' && (POSTBACK_EVENTS as readonly string[]).includes(value);
}

/** Postback fields, every value a string exactly as received. */
export type PostbackFields = Record<string, string>;

export type ParseResult =
	| { ok: true; fields: PostbackFields }
	| {
			ok: false;
			reason: 'empty_body' | 'not_an_object' | 'repeated_field' | 'nested_value' | 'bad_json';
			field?: string;
	  };

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
		const looksJson =
			/json/i.test(contentType) ||
			(!/urlencoded/i.test(contentType) && text.trim().startsWith('{'));
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
export function expectedSignature(
	event: SignedEvent,
	fields: PostbackFields,
	token: string,
): string {
	const signed = POSTBACK_RULES[event].signedFields.map((field) => fields[field] ?? '');
	return md5Upper(`${signed.join(':')}:${token}`);
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
	event: SignedEvent,
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
	return matched === -1
		? { ok: false, reason: 'bad_signature' }
		: { ok: true, tokenIndex: matched };
}

/**
 * The canonical identity of a postback: TrsId without surrounding white space and Status in
 * canonical form (trimmed, upper case), plus the two values the signature covers exactly as sent.
 * `success`, ` SUCCESS` and `Success` are one status, so a replay in another spelling is the same
 * postback everywhere (trigger dedupe, status filter, `paid`, relay dedupe).
 *
 * The signed values are part of the key so that a forged call cannot take a genuine postback's
 * place: TrsId and Status are not signed, so someone holding a signature from a redirect can send
 * a call with the TrsId of a real payment before the service does. With the signed pair in the
 * key that call and the genuine postback are two events; the forged one fails confirmation and
 * the genuine one is still stored and delivered.
 *
 * The signed amount enters the key as whole cents (`100.5`, `100.50` and `100.500` are one
 * amount, `10050c`), so a spelling of the same amount is the same postback, and the relay's
 * catch-up event (built from the service's records) and the late genuine postback after it are
 * one event. An amount that is not a plain decimal enters the key as sent, marked apart
 * (`as-sent:5c`), so that it never equals the key of a decimal's cents (`0.05` is `5c`).
 */
export interface PostbackIdentity {
	event: PostbackEvent;
	trsId: string;
	status: string;
	/** The signed amount (OutSum or Amount) and id (InvId or TrsId), exactly as sent. */
	signedAmount: string;
	signedId: string;
}

export function postbackIdentity(
	event: PostbackEvent,
	fields: PostbackFields,
): PostbackIdentity | undefined {
	const rule = POSTBACK_RULES[event];
	if (!rule.deduplicate) return undefined;
	return {
		event,
		trsId: (fields.TrsId ?? '').trim(),
		status: canonicalStatus(fields.Status),
		signedAmount: fields[rule.amountField] ?? '',
		signedId: fields[rule.idField] ?? '',
	};
}

/**
 * The dedupe key of a postback (redirects have none: undefined). Every delivery of one postback,
 * in any spelling of its Status or with white space around its TrsId, gets the same key.
 */
export function postbackKey(event: PostbackEvent, fields: PostbackFields): string | undefined {
	const id = postbackIdentity(event, fields);
	if (id === undefined) return undefined;
	return JSON.stringify([id.event, id.trsId, id.status, amountKey(id.signedAmount), id.signedId]);
}

/** Marks an amount kept as sent in a key, apart from the `<cents>c` of a decimal. */
export const AS_SENT_AMOUNT_PREFIX = 'as-sent:';

/**
 * The signed amount as the key holds it: whole cents when it is a plain decimal (`0.05` is `5c`),
 * else as sent behind AS_SENT_AMOUNT_PREFIX (`5c` is `as-sent:5c`). The two forms never meet: a
 * cents key is digits and `c`, an as-sent key starts with the prefix.
 */
export function amountKey(amount: string): string {
	const cents = toCents(amount);
	return cents === undefined ? `${AS_SENT_AMOUNT_PREFIX}${amount}` : `${cents}c`;
}

/**
 * A short, stable key of one postback for workflows, the same for every delivery of it: use it as
 * the Order ID of a payout made because of this postback, so a duplicate delivery cannot pay twice.
 * Built from the event, the transaction ID and the canonical status: `payment-<TrsId>-SUCCESS`;
 * a TrsId outside `[A-Za-z0-9_.-]` or longer than 40 characters is replaced by a SHA-256 digest.
 */
export function eventKeyOf(event: SignedEvent, trsId: string, status: string): string {
	const id = trsId.trim();
	const part = /^[A-Za-z0-9_.-]{1,40}$/.test(id)
		? id
		: createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 24);
	const canonical =
		canonicalStatus(status)
			.replace(/[^A-Z0-9_]/g, '_')
			.slice(0, 20) || 'NONE';
	return `${event}-${part}-${canonical}`;
}

/** Human-readable reason for a rejected call; never contains a token or a signature. */
export function describeRejection(
	result: Exclude<VerifyResult, { ok: true }> | Exclude<ParseResult, { ok: true }>,
): string {
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
 * The item a workflow receives for a verified call: every field as received (a missing InvId as
 * ''), plus `event`, `verified` and a numeric twin `<Field>Number` for each amount.
 * Postbacks also get `status` (canonical), `eventKey` and `paid` from the postback's own Status;
 * the trigger replaces `paid` with what the service confirms. Redirects never get `paid`: a
 * redirect is the customer's browser coming back and proves no payment.
 */
export function enrichPostback(
	event: PostbackEvent,
	fields: PostbackFields,
): Record<string, unknown> {
	const out: Record<string, unknown> = { ...fields, event, verified: true };
	if (POSTBACK_RULES[event].idField === 'InvId' && out.InvId === undefined) out.InvId = '';
	const identity = postbackIdentity(event, fields);
	if (identity) {
		out.status = identity.status;
		out.eventKey = eventKeyOf(event, identity.trsId, identity.status);
	}
	if (event === 'payment') out.paid = isPaidStatus(fields.Status);
	for (const field of POSTBACK_RULES[event].amountFields) {
		if (fields[field] === undefined) continue;
		const n = decimalToNumber(fields[field]);
		if (n !== undefined) out[`${field}Number`] = n;
	}
	return out;
}

/**
 * Postback fields the trigger can stand behind: the two the signature covers, TrsId and Status
 * (the service's record must have them), CurrencyIn (compared with the payment's currency where
 * the service gives it) and the signature itself.
 */
export const CONFIRMABLE_FIELDS: Readonly<Record<'payment' | 'payout', readonly string[]>> = {
	payment: ['OutSum', 'InvId', 'TrsId', 'Status', 'CurrencyIn', 'SignatureValue'],
	payout: ['Amount', 'TrsId', 'Status', 'SignatureValue'],
};

/**
 * The fields each event's item keeps at its top level: what the signature or the service's record
 * covers. A redirect's signature covers OutSum and InvId only, and nothing is confirmed for it.
 */
export const TOP_LEVEL_FIELDS: Readonly<Record<PostbackEvent, readonly string[]>> = {
	...CONFIRMABLE_FIELDS,
	success: ['OutSum', 'InvId', 'SignatureValue'],
	fail: ['OutSum', 'InvId', 'SignatureValue'],
};

/**
 * The item of a verified call, one rule for all four events: at the top only the fields of
 * TOP_LEVEL_FIELDS (and their numeric twins) beside the trigger's own names (`event`, `verified`,
 * `status`, `eventKey`, `paid`, and what the trigger adds later: `confirmed`, `payment`...);
 * every other field, as received, under `unverified`. A sender who adds `paid`, `confirmed`,
 * `status` or `payment` to a body (a redirect's signature is public; a postback's other fields
 * are not signed) finds them under `unverified`, never where the trigger's verdicts are.
 */
export function verifiedItem(
	event: PostbackEvent,
	fields: PostbackFields,
): Record<string, unknown> {
	const keep = TOP_LEVEL_FIELDS[event];
	const top: PostbackFields = {};
	const unverified: Record<string, string> = {};
	for (const [name, value] of Object.entries(fields)) {
		if (keep.includes(name)) top[name] = value;
		else Object.defineProperty(unverified, name, { value, enumerable: true, writable: true });
	}
	return { ...enrichPostback(event, top), unverified };
}
