import type { RelayConfig } from './config.ts';
import { postbackKey } from './contract.ts';
import type { PostbackEvent, PostbackFields } from './contract.ts';
import { onePaymentOneEvent } from './fidelity.ts';
import type { Forwarder } from './forwarder.ts';
import { PairLimiter, WindowCounter, checkPayout } from './guards.ts';
import type { Metrics } from './metrics.ts';
import { pairKeyOf } from './store/pair-key.ts';
import type { InsertResult, NewEvent, PairLimit, Store } from './store/types.ts';
import type { Targets } from './targets.ts';

/**
 * Where a verified event comes from. A postback (or redirect) carries the body exactly as received
 * and the index of the token that verified it; a catch-up event is rebuilt from the service's own
 * records (`orderUnknown`: the service did not tell the bill's order ID, so InvId is '').
 */
export type Source =
	| { via: 'postback'; body: string; contentType: string; tokenIndex: number }
	| { via: 'catch-up'; orderUnknown: boolean };

/** An event asking to be admitted: what a look-up reads. */
export interface Candidate {
	kind: PostbackEvent;
	fields: PostbackFields;
	source: Source;
}

/** Refused, nothing stored: the HTTP status the sender is answered with and why. */
export interface Refusal {
	outcome: 'refused';
	status: 403 | 429;
	reason: string;
	detail: string;
	/** Seconds until the sender may try again (429). */
	retryAfter?: number;
}

export type Admission =
	| { outcome: 'stored'; eventId: string; duplicate: boolean; deliveries: number }
	/** The store holds this event already under another InvId (catch-up only): nothing stored. */
	| { outcome: 'known' }
	/** A look-up could not be made (the service or the network failed): the sender retries later. */
	| { outcome: 'unavailable'; reason: string }
	| Refusal;

/**
 * A look-up run before the insert, in order: undefined lets the event go on, anything else is the
 * answer and nothing is stored. A look-up decides itself which kinds and sources it applies to.
 * Later checks (fidelity, hardening) are added to `Intake`'s list, nowhere else.
 */
export type LookUp = (
	candidate: Candidate,
) => Promise<Exclude<Admission, { outcome: 'stored' }> | DuplicateOf | undefined>;

/** A look-up's answer that the event is one the store holds (see fidelity.ts). */
export type DuplicateOf = { outcome: 'stored'; eventId: string; duplicate: true; deliveries: 0 };

export interface IntakeOptions {
	config: Pick<
		RelayConfig,
		'pairLimit' | 'payoutCheck' | 'apiBaseUrl' | 'apiTokens' | 'deliveryTimeoutMs'
	>;
	store: Store;
	metrics: Metrics;
	targets: Targets;
	/** Absent without a forwarder: the events are only stored. */
	forwarder?: Pick<Forwarder, 'lease' | 'adopt' | 'kick'>;
	now?: () => number;
}

const FORM = 'application/x-www-form-urlencoded';

/** A catch-up event's body: the form the service sends its postbacks as. */
const formBody = (fields: PostbackFields) => new URLSearchParams(fields).toString();

/**
 * The one door into the store for incoming events, used by the postback routes and the catch-up
 * alike: builds the stored event, runs the look-ups, applies the per-signed-pair limit to
 * postbacks, stores the event with one delivery per target (handed off to the forwarder when it
 * has free slots), counts the metrics and wakes the forwarder for what it was not handed.
 */
export class Intake {
	readonly #o: IntakeOptions;
	readonly #pairs: PairLimiter;
	readonly #lookUps: readonly LookUp[];

	constructor(options: IntakeOptions) {
		this.#o = options;
		this.#pairs = new PairLimiter(options.config.pairLimit);
		this.#lookUps = [payoutKnown(options.config), onePaymentOneEvent(options.store)];
	}

	/** Admits one verified event; resolves after the commit. Store errors are thrown. */
	async admit(kind: PostbackEvent, fields: PostbackFields, source: Source): Promise<Admission> {
		const candidate: Candidate = { kind, fields, source };
		for (const lookUp of this.#lookUps) {
			const answer = await lookUp(candidate);
			if (answer?.outcome === 'stored') return this.#stored(candidate, answer);
			if (answer) return this.#counted(kind, answer);
		}
		const limited = source.via === 'postback' && (kind === 'payment' || kind === 'payout');
		if (!limited) return this.#stored(candidate, await this.#insert(candidate));
		const result = await this.#pairs.run(kind, fields, (pairLimit) =>
			this.#insert(candidate, pairLimit),
		);
		if ('limited' in result) {
			return this.#counted(kind, {
				outcome: 'refused',
				status: 429,
				reason: 'pair_limit',
				detail: 'more distinct events than the limit per signed pair',
				retryAfter: result.limited,
			});
		}
		return this.#stored(candidate, result.value);
	}

	/**
	 * The insert, with the hand-off: every lease() is followed by exactly one adopt() with the same
	 * count, whatever the insert's outcome (here and nowhere else).
	 */
	async #insert(candidate: Candidate, pairLimit?: PairLimit): Promise<InsertResult> {
		const targets = this.#o.targets[candidate.kind];
		const forwarder = this.#o.forwarder;
		const lease = forwarder?.lease(targets.length);
		let result: InsertResult | undefined;
		try {
			result = await this.#o.store.insertEvent({
				...this.#event(candidate),
				targets,
				...(pairLimit ? { pairLimit } : {}),
				...(lease ? { lease } : {}),
			});
		} finally {
			if (lease) forwarder?.adopt(result?.claimed, targets.length);
		}
		return result;
	}

	#event({ kind, fields, source }: Candidate): Omit<NewEvent, 'targets'> {
		const stored: Record<string, string> = { ...fields };
		delete stored.SignatureValue;
		const common = {
			kind,
			dedupeKey: postbackKey(kind, fields) ?? null,
			fields: stored,
			receivedAt: (this.#o.now ?? Date.now)(),
		};
		return source.via === 'postback'
			? { ...common, source: 'postback', contentType: source.contentType, body: source.body }
			: { ...common, source: 'catch-up', contentType: FORM, body: formBody(fields) };
	}

	#stored({ kind, source }: Candidate, result: InsertResult): Admission {
		const { metrics } = this.#o;
		if (source.via === 'postback') {
			metrics.received.inc({ kind });
			if (result.duplicate) metrics.duplicates.inc({ kind });
		} else if (!result.duplicate) {
			metrics.catchupEvents.inc({ kind });
		}
		if (!result.duplicate && result.deliveries > (result.claimed?.length ?? 0)) {
			this.#o.forwarder?.kick();
		}
		return {
			outcome: 'stored',
			eventId: result.eventId,
			duplicate: result.duplicate,
			deliveries: result.deliveries,
		};
	}

	#counted(kind: PostbackEvent, answer: Exclude<Admission, { outcome: 'stored' }>): Admission {
		if (answer.outcome === 'refused') this.#o.metrics.rejected.inc({ kind, reason: answer.reason });
		return answer;
	}
}

/**
 * A payout postback is stored only when the service knows its TrsId as a payout (RELAY_PAYOUT_CHECK
 * =service; see guards.ts), with at most `pairLimit.max` (10 when off) look-ups per signed pair a
 * minute: a refused pair cannot make the relay call the API without end.
 */
function payoutKnown(config: IntakeOptions['config']): LookUp {
	const perPair = new WindowCounter(Math.max(1, config.pairLimit.max || 10), 60_000);
	return async ({ kind, fields, source }) => {
		if (kind !== 'payout' || source.via !== 'postback' || config.payoutCheck !== 'service') {
			return undefined;
		}
		const retryAfter = perPair.take(pairKeyOf(kind, fields) ?? '');
		if (retryAfter !== undefined) {
			return {
				outcome: 'refused',
				status: 429,
				reason: 'pair_limit',
				detail: 'too many payout look-ups for one signed pair',
				retryAfter,
			};
		}
		const known = await checkPayout(config, fields, source.tokenIndex);
		if (known.ok) return undefined;
		if (known.code === 503) return { outcome: 'unavailable', reason: known.reason };
		return { outcome: 'refused', status: 403, reason: 'unknown_payout', detail: known.reason };
	};
}
