/**
 * Postback delivery: POSTs (form fields, or a JSON object in the `spec` profile), retried on
 * anything but HTTP 200 after 10 s, 100 s, 1000 s, 10000 s, 100000 s (times the time factor),
 * each attempt logged.
 */
import type { Fields, Merchant } from './model.ts';

/** What a postback tells of: a payment, a payout, a refund, a chargeback or a P2P deal. */
export type PostbackKind = 'payment' | 'payout' | 'refund' | 'chargeback' | 'p2pDeal';

/** How a postback's fields are sent. */
export type PostbackEncoding = 'form' | 'json';

/**
 * How a merchant's postbacks are sent: form fields in `live` (what public integrations see), a
 * JSON object in `spec` (the interface document: "Payloads are JSON objects").
 */
export function postbackEncoding(merchant: Pick<Merchant, 'profile'>): PostbackEncoding {
	return merchant.profile === 'spec' ? 'json' : 'form';
}

/** Fields the document types as decimals: JSON numbers written exactly as signed (`18.50`). */
const DECIMAL_FIELDS = new Set([
	'OutSum',
	'Commission',
	'Amount',
	'BalanceAmount',
	'BalanceCommission',
]);
/** Fields the document types as booleans. */
const BOOLEAN_FIELDS = new Set(['IsAuto']);

/** A P2P deal's list field as a form names it: `Payment[0][id]`. */
const LIST_FIELD = /^(Payment|Payout)\[(\d{1,4})\]\[([A-Za-z_]+)\]$/;

/** A field's value as a JSON literal (see postbackJson). */
function jsonLiteral(name: string, value: string): string {
	if ((DECIMAL_FIELDS.has(name) || name === 'amount') && /^-?\d+(?:\.\d+)?$/.test(value))
		return value;
	if (BOOLEAN_FIELDS.has(name) && (value === 'true' || value === 'false')) return value;
	return JSON.stringify(value);
}

/**
 * A postback as a JSON object: decimals as JSON numbers in the exact text that was signed
 * (`"OutSum":18.50`: a receiver that re-formats the number breaks the signature), booleans as
 * JSON booleans, everything else as strings. A P2P deal's list fields (`Payment[0][id]`) become
 * JSON lists of objects (`"Payment":[{"id":"...","amount":10.00}]`).
 */
export function postbackJson(fields: Fields): string {
	const members: string[] = [];
	const lists = new Map<string, Map<number, string[]>>();
	for (const [name, value] of Object.entries(fields)) {
		const list = LIST_FIELD.exec(name);
		if (!list) {
			members.push(`${JSON.stringify(name)}:${jsonLiteral(name, value)}`);
			continue;
		}
		const [, listName = '', index = '0', key = ''] = list;
		if (!lists.has(listName)) {
			lists.set(listName, new Map());
			members.push(listName);
		}
		const entries = lists.get(listName) as Map<number, string[]>;
		const entry = entries.get(Number(index)) ?? [];
		entry.push(`${JSON.stringify(key)}:${jsonLiteral(key, value)}`);
		entries.set(Number(index), entry);
	}
	const json = members.map((member) => {
		const entries = lists.get(member);
		if (!entries) return member;
		const items = [...entries.entries()].sort(([a], [b]) => a - b);
		return `${JSON.stringify(member)}:[${items.map(([, entry]) => `{${entry.join(',')}}`).join(',')}]`;
	});
	return `{${json.join(',')}}`;
}

const CONTENT_TYPES: Record<PostbackEncoding, string> = {
	form: 'application/x-www-form-urlencoded',
	json: 'application/json',
};

export const MAX_ATTEMPTS = 6;

export interface DeliveryAttempt {
	/** The delivery: the same for every attempt of one postback. */
	id: string;
	kind: PostbackKind;
	trsId: string;
	url: string;
	body: Fields;
	/** The Content-Type it was sent with (form fields or a JSON object). */
	contentType: string;
	attempt: number;
	/** HTTP status of the answer, or null when there was none (timeout, connection error). */
	status: number | null;
	error: string | null;
	/** The first 1000 characters of the answer. */
	response: string | null;
	delivered: boolean;
	/** Given up without a request by the lose-postbacks switch. */
	lost?: boolean;
	/** Delay before the next attempt in ms (already scaled), or null when none follows. */
	nextAttemptInMs: number | null;
	at: string;
}

export interface DelivererOptions {
	timeFactor: number;
	timeoutMs: number;
}

interface Delivery {
	id: string;
	kind: PostbackKind;
	trsId: string;
	url: string;
	body: Fields;
	contentType: string;
	/** The body as sent. */
	raw: string;
}

export class Deliverer {
	readonly log: DeliveryAttempt[] = [];
	private readonly options: DelivererOptions;
	private readonly timers = new Set<NodeJS.Timeout>();
	private readonly inFlight = new Set<AbortController>();
	private seq = 0;
	private generation = 0;

	constructor(options: DelivererOptions) {
		this.options = options;
	}

	/** Delay after failed attempt n (1-based): 10^n seconds times the time factor. */
	retryDelayMs(attempt: number): number {
		return 10 ** attempt * 1000 * this.options.timeFactor;
	}

	/**
	 * Sends a postback, retried on failure. `lost`: the postback is given up at once without a
	 * request (the lose-postbacks switch), logged as one attempt with `lost: true`. `encoding`:
	 * form fields (default) or a JSON object.
	 */
	send(
		kind: PostbackKind,
		url: string,
		body: Fields,
		trsId: string,
		how: { lost?: boolean; encoding?: PostbackEncoding } = {},
	): string {
		this.seq += 1;
		const encoding = how.encoding ?? 'form';
		const delivery: Delivery = {
			id: `D${this.seq}`,
			kind,
			trsId,
			url,
			body,
			contentType: CONTENT_TYPES[encoding],
			raw: encoding === 'json' ? postbackJson(body) : new URLSearchParams(body).toString(),
		};
		if (how.lost === true) {
			this.log.push({
				id: delivery.id,
				kind,
				trsId,
				url,
				body,
				contentType: delivery.contentType,
				attempt: 1,
				status: null,
				error:
					'lost: the sandbox gave up on this postback without sending it (losePostback switch)',
				response: null,
				delivered: false,
				lost: true,
				nextAttemptInMs: null,
				at: new Date().toISOString(),
			});
			return delivery.id;
		}
		this.schedule(delivery, 1, 0);
		return delivery.id;
	}

	/** Number of deliveries with an attempt still to come. */
	get pending(): number {
		return this.timers.size + this.inFlight.size;
	}

	private schedule(delivery: Delivery, attempt: number, delayMs: number): void {
		const generation = this.generation;
		const timer = setTimeout(() => {
			this.timers.delete(timer);
			if (generation !== this.generation) return;
			void this.attempt(delivery, attempt, generation);
		}, delayMs);
		this.timers.add(timer);
	}

	private async attempt(delivery: Delivery, attempt: number, generation: number): Promise<void> {
		const controller = new AbortController();
		this.inFlight.add(controller);
		const timeout = setTimeout(
			() => controller.abort(new Error('timeout')),
			this.options.timeoutMs,
		);
		let status: number | null = null;
		let error: string | null = null;
		let response: string | null = null;
		try {
			const answer = await fetch(delivery.url, {
				method: 'POST',
				headers: {
					'content-type': delivery.contentType,
					'user-agent': 'paypalych-sandbox',
				},
				body: delivery.raw,
				signal: controller.signal,
				redirect: 'manual',
			});
			status = answer.status;
			response = (await answer.text()).slice(0, 1000);
		} catch (caught) {
			const reason = controller.signal.aborted ? controller.signal.reason : caught;
			const cause = (caught as { cause?: { code?: string } })?.cause?.code;
			error = reason instanceof Error ? reason.message : String(reason);
			if (cause && !error.includes(cause)) error = `${error} (${cause})`;
		} finally {
			clearTimeout(timeout);
			this.inFlight.delete(controller);
		}
		if (generation !== this.generation) return;
		const delivered = status === 200;
		const retry = !delivered && attempt < MAX_ATTEMPTS;
		const nextAttemptInMs = retry ? this.retryDelayMs(attempt) : null;
		this.log.push({
			id: delivery.id,
			kind: delivery.kind,
			trsId: delivery.trsId,
			url: delivery.url,
			body: delivery.body,
			contentType: delivery.contentType,
			attempt,
			status,
			error,
			response,
			delivered,
			nextAttemptInMs,
			at: new Date().toISOString(),
		});
		if (retry && nextAttemptInMs !== null) this.schedule(delivery, attempt + 1, nextAttemptInMs);
	}

	/** Cancels every pending attempt (and aborts those in flight); keeps or clears the log. */
	cancelAll(clearLog: boolean): void {
		this.generation += 1;
		for (const timer of this.timers) clearTimeout(timer);
		this.timers.clear();
		for (const controller of this.inFlight) controller.abort(new Error('sandbox closed'));
		this.inFlight.clear();
		if (clearLog) this.log.length = 0;
	}
}
