/**
 * The error catalogue: every error key of the interface document, with a sentence a merchant
 * understands and, where one helps, what to do about it.
 */

export interface ErrorEntry {
	message: string;
	hint?: string;
}

export const UNAUTHENTICATED_KEY = 'Unauthenticated';
export const UNAUTHORIZED_KEY = 'This action is unauthorized';
export const VALIDATION_KEY = 'invalid_request_data';

export const ERROR_CATALOGUE: Readonly<Record<string, ErrorEntry>> = {
	[UNAUTHENTICATED_KEY]: {
		message: 'The API token was rejected',
		hint: 'Refresh it on the API integration page and paste the new one into the PayPalych credential',
	},
	[UNAUTHORIZED_KEY]: {
		message: 'Your account may not use this API method',
		hint: 'Ask support to enable direct payouts for your account',
	},
	[VALIDATION_KEY]: {
		message: 'The service rejected the request data',
		hint: 'Check the fields named in the details',
	},
	'api:error.invalid_amount': {
		message: 'The amount is not accepted',
		hint: 'Use a positive amount with at most 2 decimals, within the limits of your account',
	},
	'api:error.merchant_banned': {
		message: 'Your merchant account is banned',
		hint: 'Contact PayPalych support',
	},
	'api:error.merchant_not_found': {
		message: 'No merchant account belongs to this API token',
		hint: 'Check the API token in the credential',
	},
	'api:error.merchant_subscription_inactive': {
		message: 'Your merchant subscription is inactive',
		hint: 'Renew the subscription in your merchant account',
	},
	'api:error.merchant_subscription_not_found': {
		message: 'Your merchant account has no subscription',
		hint: 'Choose a subscription in your merchant account',
	},
	'api:error.merchant_not_verified': {
		message: 'Your merchant account does not have Verified status',
		hint: 'Payouts need a verified merchant: complete verification in your merchant account',
	},
	'api:error.shop_not_found': {
		message: 'No shop has this shop ID',
		hint: 'Copy the shop ID from the shop settings of your merchant account',
	},
	'api:error.shop_not_enabled': {
		message: 'The shop is not enabled (the merchant is deactivated)',
		hint: 'Contact PayPalych support',
	},
	'api:error.access_denied': {
		message: 'Your merchant account has no access to this shop',
		hint: 'Use a shop ID of your own merchant account',
	},
	'api:error.rate-not-found': {
		message: 'The currency or country is not supported',
		hint: 'Choose RUB, USD or EUR, or leave the currency empty to use the shop default',
	},
	'api:error.bill_not_found': {
		message: 'No bill has this ID',
		hint: 'Use the bill_id returned by Bill > Create',
	},
	'api:error.bill_is_finished': {
		message: 'The bill is already paid, so it can no longer be switched on or off',
	},
	'api:error.too_many_payments': {
		message: 'The bill has too many payments to list in one request',
	},
	'api:error.payment_not_found': {
		message: 'No payment has this ID',
	},
	'api:error.payout_not_found': {
		message: 'No payout has this ID or order ID',
	},
	'api:error.payout_account_not_found': {
		message: 'No saved payout account has this ID',
		hint: 'Copy the payout account ID from your merchant account',
	},
	'api:error.payout_account_banned': {
		message: 'The payout account is banned',
		hint: 'Use another payout account or contact support',
	},
	'api:error.daily_payout_limit_exceeded': {
		message: 'The daily payout limit is exceeded',
		hint: 'Try again tomorrow or ask support to raise the limit',
	},
	'api:error.monthly_payout_limit_exceeded': {
		message: 'The monthly payout limit is exceeded',
		hint: 'Try again next month or ask support to raise the limit',
	},
	'api:error.balance_not_enough': {
		message: 'The available balance is below the payout amount',
		hint: 'Read Balance > Get and pay out at most balance_available',
	},
	'api:error.direction_not_available': {
		message: 'Payouts to this account are not available',
		hint: 'Use another payout account or method',
	},
	'api:error.too_many_payouts': {
		message: 'The request would create too many payouts',
		hint: 'Split the amount into smaller payouts',
	},
	'api:error.ip_access_denied': {
		message: "This server's address is not on the API allow-list of your merchant account",
		hint: "Add this server's address to the API allow-list in your merchant account",
	},
	'api:error.transaction_rejected': {
		message: 'The service rejected the transaction',
		hint: 'Check the amount, currency and payment method of the bill, or contact PayPalych support with the time of the request',
	},
	// The refund API of the service's current reference (docs/developer/service.md); the key names
	// are unconfirmed, and a refusal without one is recognised by the refund operations themselves.
	'api:error.refunds_not_enabled': {
		message: 'The refund API is not switched on for your merchant account',
		hint: "Ask the service's support to enable refunds for your merchant account; nothing was refunded",
	},
	'api:error.refund_amount_exceeded': {
		message: 'The refund is more than the payment can still give back',
		hint: 'Read the payment with Payment > Get (Include Refunds) and refund at most its amount minus refunded_amount',
	},
	'api:error.refund_not_allowed': {
		message: 'This payment cannot be refunded',
		hint: 'Only a payment that took money (SUCCESS, OVERPAID, UNDERPAID) can be refunded',
	},
	'api:error.refund_not_found': {
		message: 'No refund has this ID',
		hint: 'Use the id of a Refund > Create output item or of a refund postback',
	},
	'api:error.general_error': {
		message: 'The service had an internal error',
		hint: 'Try again later; if it persists, contact PayPalych support',
	},
};

export interface DescribedError {
	/** The error key: `api:error.<name>`, `Unauthenticated`, `This action is unauthorized`, `invalid_request_data`, or `http_<code>`. */
	key: string;
	httpCode?: number;
	/** "<key>: <sentence>" */
	message: string;
	/** The hint, the service's own text, and any field errors. */
	description: string;
	fieldErrors?: Record<string, string[]>;
}

/**
 * Whether `key` is an entry of the catalogue itself: never a property every object inherits
 * (`constructor`, `__proto__`, `toString`), which an answer of the service may name.
 */
export function isCatalogueKey(key: string): boolean {
	return Object.prototype.hasOwnProperty.call(ERROR_CATALOGUE, key);
}

/** The catalogue's entry for `key`; undefined for any other name, an inherited one too. */
function entryOf(key: string): ErrorEntry | undefined {
	return isCatalogueKey(key) ? ERROR_CATALOGUE[key] : undefined;
}

/** Most characters of the service's own text read: a key is far shorter, the rest is shown cut. */
const MAX_TEXT = 2000;
/** Most values read in one array or object of an error answer, at each level. */
const MAX_ENTRIES = 100;
/** Most field errors and messages per field kept from `errors`. */
const MAX_FIELD_ERRORS = 20;
/** Most characters of one field message kept. */
const MAX_FIELD_TEXT = 300;

/** A value as text without calling anything of its own (`{"toString": 1}` cannot throw here). */
function textOf(value: unknown): string {
	if (typeof value === 'string') return value.slice(0, MAX_FIELD_TEXT);
	if (typeof value === 'number' || typeof value === 'boolean' || value === null)
		return String(value);
	try {
		return (JSON.stringify(value) ?? '').slice(0, MAX_FIELD_TEXT);
	} catch {
		return '';
	}
}

/** Cuts a long text of the service to MAX_TEXT characters, saying that it was cut. */
function cut(text: string): string {
	return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
	if (typeof value === 'string') {
		try {
			value = JSON.parse(value);
		} catch {
			return undefined;
		}
	}
	return typeof value === 'object' && value !== null && !Array.isArray(value)
		? (value as Record<string, unknown>)
		: undefined;
}

/** Matches a message such as "Unauthenticated." or "This action is unauthorized." to its key. */
function keyOf(message: string): string | undefined {
	const trimmed = message.slice(0, MAX_TEXT).trim();
	if (isCatalogueKey(trimmed)) return trimmed;
	const noDot = trimmed.replace(/\.$/, '');
	if (isCatalogueKey(noDot)) return noDot;
	// Only a key of the catalogue: `api:error.__proto__` or a name the catalogue lacks is none.
	for (const m of trimmed.matchAll(/api:error\.[A-Za-z0-9_-]+/g))
		if (isCatalogueKey(m[0])) return m[0];
	return undefined;
}

/** The fields of an error answer that may carry its key, in the order they are read. */
export const ERROR_KEY_FIELDS = [
	'message',
	'error',
	'error_code',
	'error_message',
	'errors',
] as const;

/**
 * The key in one field's value: a string (`"api:error.payout_not_found"`, `"Unauthenticated."`,
 * or a catalogue name without its prefix in a code field, `"payout_not_found"`), or the first
 * key among the values of an array or an object (`errors`), a few levels deep.
 */
function keyIn(value: unknown, bareNames: boolean, depth = 0): string | undefined {
	if (typeof value === 'string') {
		const key = keyOf(value);
		if (key) return key;
		const bare = value.trim();
		if (bareNames && /^[A-Za-z0-9_-]{1,100}$/.test(bare) && isCatalogueKey(`api:error.${bare}`))
			return `api:error.${bare}`;
		return undefined;
	}
	if (depth >= 3 || typeof value !== 'object' || value === null) return undefined;
	const entries = Array.isArray(value) ? value : Object.values(value);
	for (const entry of entries.slice(0, MAX_ENTRIES)) {
		const key = keyIn(entry, bareNames, depth + 1);
		if (key) return key;
	}
	return undefined;
}

/**
 * The one reader of an error answer's key, wherever the service puts it: `message` (the
 * interface document's place), `error`, `error_code`, `error_message`, or `errors` (a string, a
 * list or an object of field messages), in that order; the first `api:error.*` key (or the 401
 * and unauthorized sentences) found. A JSON text is parsed first. Undefined when none carries one.
 */
export function apiErrorKeyOf(body: unknown): string | undefined {
	const record = asRecord(body);
	if (!record) return typeof body === 'string' ? keyOf(body) : undefined;
	for (const field of ERROR_KEY_FIELDS) {
		const key = keyIn(record[field], field === 'error' || field === 'error_code');
		if (key) return key;
	}
	return undefined;
}

/** The service's own text beside the key: `message`, else `error_message`, else `error`. */
function serviceText(record: Record<string, unknown> | undefined): string | undefined {
	for (const field of ['message', 'error_message', 'error']) {
		const value = record?.[field];
		if (typeof value === 'string' && value.trim() !== '') return cut(value);
	}
	return undefined;
}

/** Turns an error answer of the service into a key and sentences a merchant understands. */
export function describeApiError(httpCode: number | undefined, body: unknown): DescribedError {
	const record = asRecord(body);
	const serviceMessage = serviceText(record);
	const rawErrors = asRecord(record?.errors);
	let fieldErrors: Record<string, string[]> | undefined;
	if (rawErrors) {
		// Own properties only (Object.fromEntries: a field named `__proto__` is a field), a bounded
		// number of them, each value as text without calling anything of its own.
		fieldErrors = Object.fromEntries(
			Object.entries(rawErrors)
				.slice(0, MAX_FIELD_ERRORS)
				.map(([field, value]) => [
					field.slice(0, MAX_FIELD_TEXT),
					(Array.isArray(value) ? value.slice(0, MAX_FIELD_ERRORS) : [value]).map(textOf),
				]),
		);
	}

	let key = apiErrorKeyOf(record ?? body);
	if (!key && httpCode === 401) key = UNAUTHENTICATED_KEY;
	if (!key && (fieldErrors || httpCode === 422)) key = VALIDATION_KEY;
	if (!key) key = httpCode ? `http_${httpCode}` : 'network_error';

	const entry = entryOf(key);
	const sentence =
		entry?.message ??
		(serviceMessage ||
			(httpCode ? `The service answered HTTP ${httpCode}` : 'The service could not be reached'));
	const parts: string[] = [];
	if (entry?.hint) parts.push(entry.hint + '.');
	if (serviceMessage && serviceMessage !== key && !serviceMessage.startsWith('api:error.'))
		parts.push(`Service said: ${serviceMessage}`);
	if (fieldErrors) {
		for (const [field, messages] of Object.entries(fieldErrors))
			parts.push(`${field}: ${messages.join(' ')}`);
	}
	if (httpCode) parts.push(`HTTP ${httpCode}.`);
	return {
		key,
		httpCode,
		message: `${key}: ${sentence}`,
		description: parts.join(' '),
		fieldErrors,
	};
}
