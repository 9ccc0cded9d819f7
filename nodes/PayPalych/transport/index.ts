import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IWebhookFunctions,
	JsonObject,
} from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { describeApiError, normalizeBaseUrl, type Endpoint } from '../../shared';

export const CREDENTIAL_NAME = 'payPalychApi';

/** The contexts that call the service: the action node, its list searches and the trigger (confirmation). */
export type PayPalychContext = IExecuteFunctions | ILoadOptionsFunctions | IWebhookFunctions;

export interface ApiRequestOptions {
	/** POST parameters: sent as form fields. */
	body?: Record<string, string | undefined>;
	/** GET parameters: sent in the query string. */
	qs?: Record<string, string | number | undefined>;
	itemIndex?: number;
	/** Milliseconds before the request is given up (n8n's default otherwise). */
	timeoutMs?: number;
	/**
	 * An absolute URL to GET instead of the endpoint's (a next page the service named, already
	 * checked to be under the credential's API root); `qs` is not added to it.
	 */
	url?: string;
}

const EXTRA_HINTS: Record<string, string> = {
	http_429:
		'The service is rate-limiting this account. Wait a little, or turn on Retry On Fail in the node settings.',
	network_error:
		'Check the Base URL of the PayPalych credential and that the service is reachable from n8n.',
	http_404: `Set the credential's Base URL to your PayPalych site's address, such as https://pal24.pro, without /api/v1.`,
};

/**
 * The message of an answer without the service's own error key whose plain HTTP text says little
 * to a merchant: the service answers a missing bill or payout with its own key (422, 403), so a
 * bare 404 means the Base URL leads to a host that is not PayPalych's API.
 */
const EXTRA_MESSAGES: Record<string, string> = {
	http_404: 'http_404: The Base URL of the PayPalych credential does not lead to a PayPalych API',
};

function withoutEmpty<T>(values: Record<string, T | undefined> | undefined): Record<string, T> {
	const out: Record<string, T> = {};
	for (const [name, value] of Object.entries(values ?? {})) {
		if (value !== undefined && value !== '') out[name] = value;
	}
	return out;
}

function parseBody(body: unknown): unknown {
	if (typeof body === 'string' && body.trim() !== '') {
		try {
			return JSON.parse(body);
		} catch {
			return body;
		}
	}
	if (body instanceof Uint8Array) return parseBody(Buffer.from(body).toString('utf8'));
	return body;
}

/** Builds the NodeApiError a merchant reads: "<key>: <sentence>", hint and details, HTTP code. */
export function toNodeApiError(
	this: PayPalychContext,
	httpCode: number | undefined,
	body: unknown,
	itemIndex?: number,
	cause?: string,
): NodeApiError {
	const described = describeApiError(httpCode, body);
	const parts = [EXTRA_HINTS[described.key], described.description, cause].filter(
		(part): part is string => typeof part === 'string' && part !== '',
	);
	const response: JsonObject =
		typeof body === 'object' && body !== null && !Array.isArray(body)
			? (body as JsonObject)
			: { body: typeof body === 'string' ? body : null };
	const error = new NodeApiError(this.getNode(), response, {
		message: EXTRA_MESSAGES[described.key] ?? described.message,
		description: parts.join(' '),
		httpCode: httpCode !== undefined ? String(httpCode) : undefined,
		itemIndex,
	});
	// setDescriptiveErrorMessage may rewrite the message for some codes: keep ours.
	error.message = EXTRA_MESSAGES[described.key] ?? described.message;
	error.context.errorKey = described.key;
	if (described.fieldErrors)
		error.context.fieldErrors = described.fieldErrors as unknown as IDataObject;
	return error;
}

/** The error key apiRequest gave a failure ("api:error.payout_not_found", "http_502"…), if any. */
export function errorKeyOf(error: unknown): string | undefined {
	const context = (error as { context?: IDataObject } | undefined)?.context;
	return typeof context?.errorKey === 'string' ? context.errorKey : undefined;
}

/** The HTTP code of a failure (n8n keeps it as a string), or undefined when nothing answered. */
export function httpCodeOf(error: unknown): number | undefined {
	const code = (error as { httpCode?: unknown } | undefined)?.httpCode;
	return typeof code === 'string' && /^\d+$/.test(code) ? Number(code) : undefined;
}

/** The request n8n's HTTP helpers are given for an endpoint: form body for POST, query for GET. */
function requestFor(
	baseUrl: unknown,
	endpoint: Endpoint,
	options: ApiRequestOptions,
): IHttpRequestOptions {
	const request: IHttpRequestOptions = {
		method: endpoint.method,
		url: options.url ?? `${normalizeBaseUrl(baseUrl)}${endpoint.path}`,
		headers: { Accept: 'application/json' },
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		json: false,
	};
	if (options.timeoutMs !== undefined) request.timeout = options.timeoutMs;
	const qs = withoutEmpty(options.qs);
	if (Object.keys(qs).length > 0 && options.url === undefined) request.qs = qs;
	if (endpoint.method !== 'GET') {
		const form = new URLSearchParams(withoutEmpty(options.body)).toString();
		request.body = form;
		request.headers = { ...request.headers, 'Content-Type': 'application/x-www-form-urlencoded' };
	}
	return request;
}

type RawResponse = { statusCode?: number; body?: unknown };

/** The service's answer as a record, or the NodeApiError a merchant reads. */
async function recordFrom(
	this: PayPalychContext,
	send: () => Promise<unknown>,
	options: ApiRequestOptions,
): Promise<IDataObject> {
	let response: RawResponse;
	try {
		response = (await send()) as RawResponse;
	} catch (error) {
		throw toNodeApiError.call(
			this,
			httpCodeOf(error),
			error?.context?.data,
			options.itemIndex,
			error?.message,
		);
	}

	const statusCode = response.statusCode ?? 200;
	const body = parseBody(response.body);
	if (statusCode < 200 || statusCode >= 300) {
		throw toNodeApiError.call(this, statusCode, body, options.itemIndex);
	}
	if (typeof body !== 'object' || body === null || Array.isArray(body)) {
		throw toNodeApiError.call(
			this,
			statusCode,
			{ message: 'The service answered with something other than a JSON object' },
			options.itemIndex,
		);
	}
	const record = body as IDataObject;
	if (record.success === false || record.success === 'false') {
		throw toNodeApiError.call(this, statusCode, body, options.itemIndex);
	}
	return record;
}

/**
 * Calls the service through n8n's authenticated request helper. POST parameters go as an
 * `application/x-www-form-urlencoded` body, GET parameters in the query string. Any answer other
 * than 2xx becomes a NodeApiError carrying the error key, the HTTP code and a merchant sentence.
 */
export async function apiRequest(
	this: PayPalychContext,
	endpoint: Endpoint,
	options: ApiRequestOptions = {},
): Promise<IDataObject> {
	const credentials = await this.getCredentials(CREDENTIAL_NAME);
	const request = requestFor(credentials.baseUrl, endpoint, options);
	return await recordFrom.call(
		this,
		async () =>
			await this.helpers.httpRequestWithAuthentication.call(this, CREDENTIAL_NAME, request),
		options,
	);
}

/** The credential's fields a call to the service needs, read once by the caller. */
export interface ApiCredential {
	apiToken?: unknown;
	baseUrl?: unknown;
}

/**
 * `apiRequest` with a credential the caller has already read: the same request and errors, the
 * credential's authentication (`Authorization: Bearer <API token>`, as PayPalychApi.authenticate
 * sets it) applied here. For a caller that reads the credential anyway for each call (the trigger
 * checks a postback's signature with the token): n8n resolves a credential through its expression
 * sandbox, and the authenticated helper would read it again for every request.
 */
export async function apiRequestWithCredential(
	this: PayPalychContext,
	credential: ApiCredential,
	endpoint: Endpoint,
	options: ApiRequestOptions = {},
): Promise<IDataObject> {
	const request = requestFor(credential.baseUrl, endpoint, options);
	const token = typeof credential.apiToken === 'string' ? credential.apiToken : '';
	request.headers = { ...request.headers, Authorization: `Bearer ${token}` };
	return await recordFrom.call(
		this,
		async () => {
			try {
				return await this.helpers.httpRequest(request);
			} catch (error) {
				// What the authenticated helper throws for the same failure (apiRequest's errors).
				throw new NodeApiError(this.getNode(), error as JsonObject);
			}
		},
		options,
	);
}
