import type { IDataObject } from 'n8n-workflow';
import {
	canonicalStatus,
	parsePostbackBody,
	type ParseResult,
	type PostbackFields,
} from '../shared';

/**
 * The pieces of the trigger that need no n8n context: reading the body, the status filter, the
 * memory of seen postbacks and the customer page of the redirect events.
 */

/** Bodies above this size are refused (400) before anything is parsed or verified. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * How many recent postback keys each trigger node remembers. A confirmed postback leaves two (the
 * postback's key and the key of the service's record), so this is about 3000 postbacks.
 */
export const SEEN_KEYS_LIMIT = 6000;

/** Where the memory lives inside the node's workflow static data. */
export const SEEN_KEYS_FIELD = 'seenPostbacks';

/** The value of the Statuses parameter that lets statuses the service does not document through. */
export const OTHER_STATUSES = '__other';

export type ReadBodyResult = ParseResult | { ok: false; reason: 'too_large' };

/**
 * Turns the received body into postback fields. The raw bytes are preferred (n8n keeps them as
 * `rawBody`); an already parsed body is the fallback. Values are never re-formatted.
 */
export function readPostbackBody(
	raw: Buffer | undefined,
	parsedBody: unknown,
	contentType: string,
): ReadBodyResult {
	if (raw !== undefined) {
		if (raw.length > MAX_BODY_BYTES) return { ok: false, reason: 'too_large' };
		return parsePostbackBody(raw, contentType);
	}
	if (typeof parsedBody === 'string' && Buffer.byteLength(parsedBody, 'utf8') > MAX_BODY_BYTES) {
		return { ok: false, reason: 'too_large' };
	}
	if (typeof parsedBody === 'object' && parsedBody !== null) {
		let size = 0;
		try {
			size = Buffer.byteLength(JSON.stringify(parsedBody), 'utf8');
		} catch {
			return { ok: false, reason: 'not_an_object' };
		}
		if (size > MAX_BODY_BYTES) return { ok: false, reason: 'too_large' };
	}
	return parsePostbackBody(parsedBody, contentType);
}

/** Whether a status passes the Statuses parameter (an empty selection lets every status through). */
export function statusSelected(
	status: string | undefined,
	selected: readonly string[],
	known: readonly string[],
): boolean {
	if (selected.length === 0) return true;
	const value = canonicalStatus(status);
	if (known.includes(value)) return selected.includes(value);
	return selected.includes(OTHER_STATUSES);
}

/**
 * Keys this n8n process has remembered, per workflow and trigger node. n8n loads a workflow's
 * static data afresh for each webhook call and writes the whole object back after it, so two
 * postbacks arriving close together would each save only their own key and a later redelivery of
 * the other would start a second execution. Every call therefore merges what this process has
 * seen into what it loaded, and saves the union.
 */
const processMemory = new Map<string, string[]>();

/**
 * Keys of postbacks this process is confirming right now, per workflow and trigger node. They are
 * kept apart from the memory above: another call saves the static data it loaded together with
 * this process's memory, and a key that then failed confirmation must not be saved with it (a
 * forged call would otherwise make the genuine postback a "duplicate").
 */
const inFlight = new Map<string, Set<string>>();

/** Forgets what this process has seen: what a restarted n8n starts with (used by the tests). */
export function resetProcessMemory(): void {
	processMemory.clear();
	inFlight.clear();
}

/**
 * The bounded memory of postbacks that already started an execution, kept in the node's workflow
 * static data (n8n stores it with the workflow, so it survives restarts) and merged with this
 * process's memory of the same node. Oldest keys go first.
 */
export class SeenPostbacks {
	constructor(
		private readonly staticData: IDataObject,
		private readonly scope: string,
		private readonly limit = SEEN_KEYS_LIMIT,
	) {}

	private keys(): string[] {
		const stored = this.staticData[SEEN_KEYS_FIELD];
		const kept = Array.isArray(stored)
			? stored.filter((k): k is string => typeof k === 'string')
			: [];
		const recent = processMemory.get(this.scope) ?? [];
		const inRecent = new Set(recent);
		return [...kept.filter((k) => !inRecent.has(k)), ...recent];
	}

	has(key: string): boolean {
		return this.keys().includes(key);
	}

	/** Adds a key; assigning a new array marks the static data as changed so n8n saves it. */
	remember(key: string): void {
		const keys = this.keys().filter((k) => k !== key);
		keys.push(key);
		this.save(keys.slice(-this.limit));
	}

	/**
	 * Claims a key while its postback is confirmed: false when an overlapping call is confirming it.
	 * A claim is never saved; `release` ends it, after `remember` when the postback started an
	 * execution.
	 */
	claim(key: string): boolean {
		const claims = inFlight.get(this.scope) ?? new Set<string>();
		if (claims.has(key)) return false;
		claims.add(key);
		inFlight.set(this.scope, claims);
		return true;
	}

	release(key: string): void {
		const claims = inFlight.get(this.scope);
		claims?.delete(key);
		if (claims?.size === 0) inFlight.delete(this.scope);
	}

	private save(keys: string[]): void {
		this.staticData[SEEN_KEYS_FIELD] = keys;
		processMemory.set(this.scope, keys);
	}
}

/** An absolute http(s) URL the customer may be sent to, or undefined. */
export function safeRedirectUrl(value: unknown): string | undefined {
	if (typeof value !== 'string' || value.trim() === '') return undefined;
	let url: URL;
	try {
		url = new URL(value.trim());
	} catch {
		return undefined;
	}
	if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
	return url.toString();
}

function escapeHtml(text: string): string {
	return text
		.replace(/&/g, '&amp;')
		.replace(/</g, '&lt;')
		.replace(/>/g, '&gt;')
		.replace(/"/g, '&quot;')
		.replace(/'/g, '&#39;');
}

/** The plain page a customer's browser gets after a redirect when no page URL is set. */
export function customerPage(event: 'success' | 'fail', fields: PostbackFields): string {
	const title = event === 'success' ? 'Payment successful' : 'Payment failed';
	const message =
		event === 'success'
			? 'Thank you, your payment was received.'
			: 'The payment did not go through. No money was taken; you can try again.';
	const order = fields.InvId ? `<p>Order: ${escapeHtml(fields.InvId)}</p>` : '';
	const amount = fields.OutSum
		? `<p>Amount: ${escapeHtml(fields.OutSum)}${fields.CurrencyIn ? ' ' + escapeHtml(fields.CurrencyIn) : ''}</p>`
		: '';
	return (
		'<!doctype html><html lang="en"><head><meta charset="utf-8">' +
		'<meta name="viewport" content="width=device-width, initial-scale=1">' +
		`<title>${title}</title></head><body><h1>${title}</h1><p>${message}</p>${order}${amount}</body></html>`
	);
}
