import type { RelayConfig } from './config.ts';
import { POSTBACK_EVENTS, moneyBackKeyOf, postbackKey } from './contract.ts';
import type { MoneyBackEvent, PostbackEvent, PostbackFields } from './contract.ts';
import { chooseStoredBillPayment, onePaymentOneEvent } from './fidelity.ts';
import type { Forwarder } from './forwarder.ts';
import { boundedLookUp } from './bounded-look-up.ts';
import type { BillClaim, Check } from './bounded-look-up.ts';
import { LookUpBudget, PairLimiter } from './limits.ts';
import {
	checkPayment,
	checkPaymentOrder,
	checkPayout,
	checkPayoutRecord,
	checkRepeatedPayment,
} from './look-ups.ts';
import type { Metrics } from './metrics.ts';
import type { BillPayments } from './look-ups.ts';
import { checkMoneyBack } from './money-back.ts';
import { lookUpApi } from './service-api.ts';
import type { InsertResult, NewEvent, PairLimit, QueueStore, ReadStore } from './store/types.ts';
import type { Targets } from './targets.ts';

import type { Admission, Candidate, LookUp, Source } from './admission.ts';

export type {
	Admission,
	Candidate,
	DuplicateOf,
	LookUp,
	Refusal,
	Source,
	StoredBy,
} from './admission.ts';

export interface IntakeOptions {
	config: Pick<
		RelayConfig,
		'pairLimit' | 'payoutCheck' | 'apiBaseUrl' | 'apiTokens' | 'deliveryTimeoutMs'
	> &
		Partial<Pick<RelayConfig, 'lookUpLimit'>> & {
			redirectLimit?: Pick<RelayConfig['redirectLimit'], 'perPaymentDay'>;
		};
	/** The queue it stores into, and the one read a twin needs (see onePaymentOneEvent). */
	store: Pick<QueueStore, 'insertEvent'> & Pick<ReadStore, 'listEvents'>;
	metrics: Metrics;
	targets: Targets;
	/** Absent without a forwarder: the events are only stored. */
	forwarder?: Pick<Forwarder, 'lease' | 'adopt' | 'kick'>;
	now?: () => number;
}

const FORM = 'application/x-www-form-urlencoded';

/**
 * The fields as the relay compares and stores them: `TrsId` trimmed, as the trigger reads it. A
 * copy of a postback whose TrsId differs only by white space is the same payment's (its twin), so
 * it is looked up like any other copy under another signed pair, never stored beside it unseen.
 * The body forwarded is the one received, untouched (the trigger trims the same way).
 */
export function canonicalFields(fields: PostbackFields): PostbackFields {
	if (fields.TrsId === undefined) return fields;
	const trsId = canonicalTrsId(fields.TrsId);
	return trsId === fields.TrsId ? fields : { ...fields, TrsId: trsId };
}

/** A TrsId as the relay compares it: white space around it removed. */
export const canonicalTrsId = (trsId: string): string => trsId.trim();

/** A catch-up event's body: the form the service sends its postbacks as. */
const formBody = (fields: PostbackFields) => new URLSearchParams(fields).toString();

/**
 * What differs between the kinds of event, in one table; everything else (the look-up budget,
 * the pair limit, the store, dead letters, metrics, the console) is one path for all of them.
 * `key`: the dedupe key (null: never deduplicated, the redirects); `twins`: a postback the store
 * takes only when it holds no twin (same kind and TrsId, another key: fidelity.ts);
 * `confirm`: every postback of the kind is looked up with the service before it is stored.
 */
interface KindRule {
	key: (fields: PostbackFields) => string | null;
	twins: boolean;
	confirm?: Check;
}

const callRule = (kind: 'payment' | 'payout' | 'success' | 'fail', twins: boolean): KindRule => ({
	key: (fields) => postbackKey(kind, fields) ?? null,
	twins,
});

/**
 * A refund or chargeback: its signature covers its Id, payment and bill, but not its Status, and
 * a valid one for an Id the service does not know (or for another bill) must start nothing: each
 * postback is looked up (money-back.ts), within the same budget as every look-up.
 */
const moneyBackRule = (kind: MoneyBackEvent): KindRule => ({
	key: (fields) => moneyBackKeyOf(kind, fields),
	twins: false,
	confirm: (api, fields) => checkMoneyBack(kind, api, fields),
});

export const KINDS: Readonly<Record<PostbackEvent, KindRule>> = {
	payment: callRule('payment', true),
	payout: callRule('payout', true),
	success: callRule('success', false),
	fail: callRule('fail', false),
	refund: moneyBackRule('refund'),
	chargeback: moneyBackRule('chargeback'),
};

/**
 * The one door into the store for incoming events, used by the postback routes and the catch-up
 * alike: builds the stored event, runs the look-ups, applies the per-signed-pair limit to
 * postbacks, stores the event with one delivery per target (handed off to the forwarder when it
 * has free slots), counts the metrics and wakes the forwarder for what it was not handed.
 */
export class Intake {
	readonly #o: IntakeOptions;
	readonly #pairs: PairLimiter;
	/** The daily ceiling of redirect events per signed pair (success and fail together). */
	readonly #redirectPairs: PairLimiter;
	readonly #lookUps: readonly LookUp[];
	readonly #paymentKnown: LookUp;
	readonly #paymentRepeated: LookUp;
	readonly #onePaymentOneEvent: LookUp;
	readonly #budget: LookUpBudget;

	constructor(options: IntakeOptions) {
		this.#o = options;
		const { config } = options;
		this.#pairs = new PairLimiter(config.pairLimit);
		this.#redirectPairs = new PairLimiter({
			max: config.redirectLimit?.perPaymentDay ?? 0,
			windowMs: 24 * 3_600_000,
		});
		const budget = (this.#budget = new LookUpBudget({
			perPair: Math.max(1, config.pairLimit.max || 10),
			global: config.lookUpLimit?.globalPerMinute ?? 60,
			refusalMemoryMs: config.lookUpLimit?.refusalMemoryMs ?? 15 * 60_000,
		}));
		// One client per token: a look-up asks with the token that verified the postback's signature.
		const apis = config.apiTokens.map((token) => lookUpApi(config, token));
		const bounded = boundedLookUp(budget, options.metrics, apis, (candidate, bill) =>
			this.#claimBillPayment(candidate, bill),
		);
		// A postback under a stored postback's TrsId and status with another signed pair: one of the
		// two is forged, the service tells which (fidelity.ts), within the same budget.
		const confirm = {
			payment: bounded('payment', checkPaymentOrder),
			payout: bounded('payout', checkPayoutRecord),
		};
		this.#onePaymentOneEvent = onePaymentOneEvent(options.store, confirm);
		const confirmed = POSTBACK_EVENTS.flatMap((kind) => {
			const confirm = KINDS[kind].confirm;
			return confirm ? [bounded(kind, confirm)] : [];
		});
		this.#lookUps = [
			...(config.payoutCheck === 'service' ? [bounded('payout', checkPayout)] : []),
			...confirmed,
			this.#onePaymentOneEvent,
		];
		this.#paymentKnown = bounded('payment', checkPayment);
		this.#paymentRepeated = bounded('payment', checkRepeatedPayment);
	}

	/**
	 * Admits one verified event; resolves after the commit. Store errors are thrown. Its TrsId is
	 * made canonical here, once (canonicalFields): every comparison after this point, the store's
	 * twin check and dedupe included, sees the one spelling the trigger compares.
	 */
	async admit(kind: PostbackEvent, sent: PostbackFields, source: Source): Promise<Admission> {
		const fields = canonicalFields(sent);
		const candidate: Candidate = { kind, fields, source };
		for (const lookUp of this.#lookUps) {
			const answer = await lookUp(candidate);
			if (answer) return this.#answered(candidate, answer);
		}
		if (source.via !== 'postback') return this.#stored(candidate, await this.#insert(candidate));
		if (kind === 'success' || kind === 'fail') return this.#redirect(candidate);
		return await this.#postback(candidate, KINDS[kind].twins && (fields.TrsId ?? '') !== '');
	}

	/**
	 * A payment or payout postback: stored within the pair limit. `twinCheck`: the store takes it
	 * only when it holds no twin (NewEvent.twinCheck); with a twin, fidelity.ts reads the twins and
	 * answers, or lets it go on, and it is stored without the check.
	 */
	async #postback(candidate: Candidate, twinCheck: boolean): Promise<Admission> {
		const { kind, fields } = candidate;
		const result = await this.#pairs.run(kind, fields, (pairLimit) =>
			this.#insert(candidate, pairLimit, twinCheck),
		);
		if (!('limited' in result) && result.value.twins) {
			const answer = await this.#onePaymentOneEvent({ ...candidate, twins: true });
			if (answer) return this.#answered(candidate, answer);
			return await this.#postback(candidate, false);
		}
		if (!('limited' in result)) {
			if (
				kind === 'payment' &&
				result.value.duplicate &&
				!this.#budget.namesNoBill(fields.TrsId ?? '')
			) {
				// Identical postbacks are one payment's retries, unless TrsId names a bill (a MULTI
				// link's payments post the very same fields): the service tells which, once per TrsId.
				// Only a payment of the bill stored for it changes the answer: a look-up that cannot be
				// made (the service down, the minute's look-ups spent) or says no leaves the duplicate
				// acknowledged as before (a payment missed so is the catch-up's to find).
				const answer = await this.#paymentRepeated(candidate);
				if (answer?.outcome === 'stored') return this.#answered(candidate, answer);
			}
			return this.#stored(candidate, result.value);
		}
		if (kind === 'payment') {
			// A popular link (a MULTI bill: one InvId and amount for every sale) is not refused for
			// it: the service is asked whether it knows this payment, within the look-up budget.
			const answer = await this.#paymentKnown(candidate);
			if (answer) return this.#answered(candidate, answer);
			return this.#stored(candidate, await this.#insert(candidate));
		}
		return this.#counted(kind, {
			outcome: 'refused',
			status: 429,
			reason: 'pair_limit',
			detail: 'more distinct events than the limit per signed pair',
			retryAfter: result.limited,
		});
	}

	/**
	 * A redirect within the daily ceiling of its signed pair is stored; over it nothing is stored
	 * and the refusal says so (`redirect_daily_limit`: the route still shows the customer the page).
	 */
	async #redirect(candidate: Candidate): Promise<Admission> {
		const result = await this.#redirectPairs.run(candidate.kind, candidate.fields, (pairLimit) =>
			this.#insert(candidate, pairLimit),
		);
		if (!('limited' in result)) return this.#stored(candidate, result.value);
		return this.#counted(candidate.kind, {
			outcome: 'refused',
			status: 429,
			reason: 'redirect_daily_limit',
			detail: 'more redirect events than the daily limit per signed pair',
			retryAfter: result.limited,
		});
	}

	/**
	 * The insert, with the hand-off: every lease() is followed by exactly one adopt() with the same
	 * count, whatever the insert's outcome (here and nowhere else).
	 */
	async #insert(
		candidate: Candidate,
		pairLimit?: PairLimit,
		twinCheck = false,
		dedupeKey?: string,
	): Promise<InsertResult> {
		const targets = this.#o.targets[candidate.kind];
		const forwarder = this.#o.forwarder;
		const lease = forwarder?.lease(targets.length);
		let result: InsertResult | undefined;
		try {
			result = await this.#o.store.insertEvent({
				...this.#event(candidate),
				...(dedupeKey ? { dedupeKey } : {}),
				targets,
				...(pairLimit ? { pairLimit } : {}),
				...(lease ? { lease } : {}),
				...(twinCheck ? { twinCheck: candidate.fields.TrsId } : {}),
			});
		} finally {
			if (lease) forwarder?.adopt(result?.claimed, targets.length);
		}
		return result;
	}

	#event({ kind, fields, source }: Candidate): Omit<NewEvent, 'targets'> {
		// Copied without SignatureValue rather than copied and deleted from: an object a property was
		// deleted from is a dictionary, slower to check and to clone to the store's writer thread.
		const stored: Record<string, string> = {};
		for (const name of Object.keys(fields))
			if (name !== 'SignatureValue') stored[name] = fields[name];
		const common = {
			kind,
			dedupeKey: KINDS[kind].key(fields),
			fields: stored,
			receivedAt: (this.#o.now ?? Date.now)(),
		};
		return source.via === 'postback'
			? { ...common, source: 'postback', contentType: source.contentType, body: source.body }
			: { ...common, source: 'catch-up', contentType: FORM, body: formBody(fields) };
	}

	/**
	 * A payment postback whose TrsId names a bill (a look-up found the bill and its payments): stored
	 * as the one event of a payment of that bill not stored yet (chooseStoredBillPayment), under that
	 * payment's key, so each payment of a MULTI link is one event however identical its postback is;
	 * every payment stored already: a duplicate. The body forwarded is the one received: the trigger
	 * behind the relay confirms it again and chooses its payment the same way. Two calls that chose
	 * the same payment at once: the second insert is a duplicate, and it chooses again.
	 */
	async #claimBillPayment(candidate: Candidate, found: BillPayments): Promise<BillClaim> {
		for (let round = 0; round <= found.payments.length; round++) {
			const choice = await chooseStoredBillPayment(this.#o.store, candidate.fields, found);
			if (!choice.ok) {
				if ('delivered' in choice && choice.eventId !== undefined) {
					return { outcome: 'stored', eventId: choice.eventId, duplicate: true, deliveries: 0 };
				}
				return { ok: false, code: choice.retry ? 503 : 403, reason: choice.reason };
			}
			const result = await this.#insert(candidate, undefined, false, choice.key);
			if (!result.duplicate) return { outcome: 'stored', ...result };
		}
		return { ok: false, code: 503, reason: 'the payments of the bill were claimed meanwhile' };
	}

	#stored(
		{ kind, source }: Candidate,
		result: Pick<InsertResult, 'eventId' | 'duplicate' | 'deliveries'> & {
			claimed?: readonly unknown[];
		},
	): Admission {
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

	/** A look-up's answer: the duplicate it found, counted as stored; anything else, as answered. */
	#answered(candidate: Candidate, answer: NonNullable<Awaited<ReturnType<LookUp>>>): Admission {
		return answer.outcome === 'stored'
			? this.#stored(candidate, answer)
			: this.#counted(candidate.kind, answer);
	}

	#counted(kind: PostbackEvent, answer: Exclude<Admission, { outcome: 'stored' }>): Admission {
		if (answer.outcome === 'refused') this.#o.metrics.rejected.inc({ kind, reason: answer.reason });
		return answer;
	}
}
