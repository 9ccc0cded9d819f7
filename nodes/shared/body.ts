/**
 * Reading a received body into postback fields: form-encoded (how the service sends them) or JSON,
 * values kept exactly as sent, since the signature is computed over them.
 */

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
		if (DEAL_LISTS.includes(name) && Array.isArray(raw)) {
			// A P2P deal's lists of payments and payouts, as a form body spells them.
			if (!flattenInto(fields, name, raw, 0))
				return { ok: false, reason: 'nested_value', field: name };
			continue;
		}
		if (Array.isArray(raw)) return { ok: false, reason: 'repeated_field', field: name };
		if (raw === null || raw === undefined) fields[name] = '';
		else if (typeof raw === 'string') fields[name] = raw;
		else if (typeof raw === 'number' || typeof raw === 'boolean') fields[name] = String(raw);
		else return { ok: false, reason: 'nested_value', field: name };
	}
	if (Object.keys(fields).length === 0) return { ok: false, reason: 'empty_body' };
	return { ok: true, fields };
}

/**
 * The lists a P2P deal postback carries (`Payment[...]`, `Payout[...]`; docs/developer/service.md):
 * a JSON body's lists are read into the names a form body gives them (`Payment[0][id]`), so that
 * the deal is recognised (postbackKindOf) whichever way it is sent. Nothing else may be nested.
 */
const DEAL_LISTS: readonly string[] = ['Payment', 'Payout'];

/** Deepest nesting and most values a deal's list may bring: a body is 64 KiB at most anyway. */
const MAX_DEAL_DEPTH = 3;
const MAX_DEAL_VALUES = 1000;

function flattenInto(
	fields: PostbackFields,
	prefix: string,
	value: unknown,
	depth: number,
): boolean {
	if (value === null || value === undefined) fields[prefix] = '';
	else if (typeof value === 'string') fields[prefix] = value;
	else if (typeof value === 'number' || typeof value === 'boolean') fields[prefix] = String(value);
	else if (typeof value === 'object' && depth < MAX_DEAL_DEPTH) {
		for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
			if (Object.keys(fields).length > MAX_DEAL_VALUES) return false;
			if (!flattenInto(fields, `${prefix}[${key}]`, inner, depth + 1)) return false;
		}
	} else return false;
	return true;
}
