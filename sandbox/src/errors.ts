/**
 * The sandbox's own error table: for every endpoint, the status code each error key carries
 * there (the same key has different codes on different endpoints, as the interface lists).
 * Entries marked "added" are not in the interface document; they are the sandbox's choice for
 * checks the document leaves unstated and are listed in the README.
 */

/** The endpoints of the interface document. */
export type DocumentEndpoint =
	| 'bill/create'
	| 'bill/toggle_activity'
	| 'bill/payments'
	| 'bill/status'
	| 'bill/search'
	| 'payment/status'
	| 'merchant/balance'
	| 'payout/personal/create'
	| 'payout/regular/create'
	| 'payout/status'
	| 'payout/search'
	| 'payout/dictionaries/sbp_banks';

/**
 * Endpoints the service's current reference lists beyond the document
 * (docs/developer/service.md).
 */
export type FactsEndpoint =
	| 'payment/search'
	| 'refund/full/create'
	| 'refund/partial/create'
	| 'refund/status'
	| 'refund/search';

export type Endpoint = DocumentEndpoint | FactsEndpoint;

const payoutCreate: Record<string, number> = {
	invalid_amount: 400,
	merchant_banned: 400,
	merchant_not_found: 400,
	merchant_subscription_inactive: 400,
	merchant_subscription_not_found: 400,
	payout_account_not_found: 400,
	payout_account_banned: 400,
	daily_payout_limit_exceeded: 400,
	monthly_payout_limit_exceeded: 400,
	balance_not_enough: 400,
	direction_not_available: 400,
	merchant_not_verified: 400,
	too_many_payouts: 400, // added (unconfirmed: docs/developer/service.md)
	general_error: 500,
};

/**
 * The interface document's error lists, with the sandbox's additions for checks it leaves
 * unstated (marked "added"; test/unit/oracle.test.ts holds them against the contract).
 */
export const ERROR_TABLE: Record<DocumentEndpoint, Record<string, number>> = {
	'bill/create': {
		invalid_amount: 403,
		merchant_banned: 403,
		merchant_not_found: 403,
		merchant_subscription_inactive: 403,
		merchant_subscription_not_found: 403,
		shop_not_found: 403,
		shop_not_enabled: 403,
		access_denied: 403,
		'rate-not-found': 403,
		general_error: 500,
	},
	'bill/toggle_activity': {
		merchant_banned: 403,
		bill_not_found: 422,
		merchant_subscription_inactive: 403,
		merchant_subscription_not_found: 403,
		merchant_not_found: 403,
		bill_is_finished: 403,
		general_error: 500,
	},
	'bill/payments': {
		too_many_payments: 400,
		merchant_not_found: 403,
		merchant_banned: 403,
		bill_not_found: 403,
		general_error: 500, // added
	},
	'bill/status': {
		merchant_banned: 403,
		bill_not_found: 422,
		merchant_not_found: 403, // added
		general_error: 500, // added
	},
	'bill/search': {
		merchant_banned: 403, // added
		merchant_not_found: 403, // added
		general_error: 500, // added
	},
	'payment/status': {
		merchant_banned: 403,
		payment_not_found: 422,
		merchant_not_found: 403, // added
		general_error: 500, // added
	},
	'merchant/balance': {
		merchant_banned: 403,
		bill_not_found: 422, // listed by the document; reachable only by fault injection
		merchant_subscription_inactive: 403,
		merchant_subscription_not_found: 403,
		merchant_not_found: 403,
		general_error: 500, // added
	},
	'payout/personal/create': { ...payoutCreate },
	'payout/regular/create': { ...payoutCreate },
	'payout/status': {
		merchant_banned: 403,
		merchant_subscription_inactive: 403,
		merchant_subscription_not_found: 403,
		merchant_not_found: 403,
		payout_not_found: 422,
		general_error: 500, // added
	},
	'payout/search': {
		merchant_banned: 403, // added
		merchant_subscription_inactive: 403, // added
		merchant_subscription_not_found: 403, // added
		merchant_not_found: 403, // added
		general_error: 500, // added
	},
	'payout/dictionaries/sbp_banks': {
		merchant_banned: 403,
		merchant_not_found: 403, // added
		general_error: 500, // added
	},
};

/** Every authenticated endpoint: the merchant's API IP allow-list (docs/developer/service.md). */
const ipKeys = { ip_access_denied: 403 };
const merchantKeys = {
	merchant_banned: 403,
	merchant_not_found: 403,
	general_error: 500,
	...ipKeys,
};
/** Refunds: the refund API off, the payment or refund unknown, more than the refundable amount. */
const refundCreate = {
	...merchantKeys,
	refunds_not_enabled: 403,
	payment_not_found: 422,
	invalid_amount: 400,
	refund_amount_exceeded: 400,
	refund_not_allowed: 400,
};

/**
 * Keys and endpoints beyond the document, from the service's current reference and its clients
 * (docs/developer/service.md): `ip_access_denied` everywhere, `transaction_rejected` on
 * bill/create, payment/search and the refund API. The refund keys other than the document's are the
 * sandbox's names (the reference publishes none); test/unit/oracle.test.ts lists them.
 */
export const FACTS_ERRORS: Record<Endpoint, Record<string, number>> = {
	...(Object.fromEntries(
		Object.keys(ERROR_TABLE).map((endpoint) => [endpoint, { ...ipKeys }]),
	) as unknown as Record<DocumentEndpoint, Record<string, number>>),
	'bill/create': { ...ipKeys, transaction_rejected: 400 },
	'payment/search': { ...merchantKeys },
	'refund/full/create': { ...refundCreate },
	'refund/partial/create': { ...refundCreate },
	'refund/status': { ...merchantKeys, refunds_not_enabled: 403, refund_not_found: 422 },
	'refund/search': { ...merchantKeys, refunds_not_enabled: 403, payment_not_found: 422 },
};

/** A human sentence for the `error_message` of the `error_code` form. */
const SENTENCES: Record<string, string> = {
	ip_access_denied: 'Access denied for this IP address.',
	transaction_rejected: 'The transaction was rejected.',
	refunds_not_enabled: 'Refunds are not enabled for this merchant.',
	refund_amount_exceeded: 'The refund amount exceeds the refundable amount of the payment.',
};

export function errorSentence(key: string): string {
	const sentence = SENTENCES[key];
	if (sentence) return sentence;
	const words = key.replace(/[_-]+/g, ' ');
	return `${words.charAt(0).toUpperCase()}${words.slice(1)}.`;
}

/** An answer that ends a request: status code and JSON body (and the `api:error` key, if any). */
export class ApiError extends Error {
	readonly status: number;
	readonly body: Record<string, unknown>;
	readonly headers: Record<string, string>;
	readonly key: string | null;
	constructor(
		status: number,
		body: Record<string, unknown>,
		headers: Record<string, string> = {},
		key: string | null = null,
	) {
		super(typeof body['message'] === 'string' ? body['message'] : `HTTP ${status}`);
		this.status = status;
		this.body = body;
		this.headers = headers;
		this.key = key;
	}
}

export function endpointOf(path: string): Endpoint | undefined {
	const bare = path
		.split('?')[0]
		?.replace(/^\/api\/v1\//, '')
		.replace(/\/+$/, '');
	return bare !== undefined && bare in FACTS_ERRORS ? (bare as Endpoint) : undefined;
}

/** The status `endpoint` gives `key` (the document's table, then the facts), or undefined. */
export function statusOf(endpoint: Endpoint, key: string): number | undefined {
	return (
		(ERROR_TABLE as Partial<Record<Endpoint, Record<string, number>>>)[endpoint]?.[key] ??
		FACTS_ERRORS[endpoint][key]
	);
}

/** `{"success": false, "message": "api:error.<key>"}` with the status the endpoint gives that key. */
export function keyError(endpoint: Endpoint, key: string, fallbackStatus = 400): ApiError {
	const status = statusOf(endpoint, key) ?? fallbackStatus;
	return new ApiError(status, { success: false, message: `api:error.${key}` }, {}, key);
}

/**
 * An error body in the merchant's form: `message` (the document), or `error_code` with the key
 * and `error_message` with a sentence (no `message`). Answers without an api:error key (401,
 * 403 unauthorized, 422 validation, 429) keep Laravel's shape.
 */
export function errorBody(
	error: ApiError,
	form: 'message' | 'error_code',
): Record<string, unknown> {
	if (form === 'message' || error.key === null) return error.body;
	return {
		success: false,
		error_code: `api:error.${error.key}`,
		error_message: errorSentence(error.key),
	};
}

export function unauthenticated(): ApiError {
	return new ApiError(401, { message: 'Unauthenticated.' });
}

export function unauthorizedAction(): ApiError {
	return new ApiError(403, { message: 'This action is unauthorized.' });
}

/** Laravel's 422: the first message (with "and N more errors") and the `errors` bag. */
export function validationError(errors: Record<string, string[]>): ApiError {
	const messages = Object.values(errors).flat();
	const first = messages[0] ?? 'The given data was invalid.';
	const more = messages.length - 1;
	const message = more > 0 ? `${first} (and ${more} more error${more > 1 ? 's' : ''})` : first;
	return new ApiError(422, { message, errors });
}
