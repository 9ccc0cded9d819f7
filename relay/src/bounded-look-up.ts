import type { PostbackEvent, PostbackFields } from './contract.ts';
import type { LookUpBudget } from './limits.ts';
import type { BillPayments, LookUpVerdict } from './look-ups.ts';
import type { Metrics } from './metrics.ts';
import type { ServiceApi } from './service-api.ts';
import { pairKeyOf } from './store/pair-key.ts';
import type { Admission, Candidate, LookUp, StoredBy } from './admission.ts';

export type Check = (api: ServiceApi, fields: PostbackFields) => Promise<LookUpVerdict>;

/** What claiming a bill's payment answers: the event stored (or its duplicate), or a failed verdict. */
export type BillClaim = StoredBy | Extract<LookUpVerdict, { ok: false }>;

export type ClaimBillPayment = (candidate: Candidate, found: BillPayments) => Promise<BillClaim>;

/**
 * A look-up of an incoming postback with the service (`check`: payout/status for every payout
 * postback when RELAY_PAYOUT_CHECK=service, payment/status for a payment over the pair limit or
 * one the store holds already, payment/status or payout/status for a postback whose TrsId and
 * status a stored postback with another signed pair holds, and refund/status or payment/status for
 * every refund or chargeback postback), within one budget for all (LookUpBudget): a refusal
 * remembered for a while is refused again without a call (403); over the signed pair's look-ups
 * this minute: 429; over the look-ups of all pairs this minute (RELAY_LOOKUP_GLOBAL_LIMIT): 503
 * with Retry-After, the service retries. A TrsId that names a bill: `claim` stores the postback as
 * one of its payments.
 */
export function boundedLookUp(
	budget: LookUpBudget,
	metrics: Metrics,
	apis: readonly ServiceApi[],
	claim: ClaimBillPayment,
) {
	return (kind: PostbackEvent, check: Check): LookUp =>
		async (candidate) => {
			const { kind: asked, fields, source } = candidate;
			if (asked !== kind || source.via !== 'postback') return undefined;
			const call = async (): Promise<LookUpVerdict | StoredBy> => {
				// All the calls of one look-up within one call's deadline (a bill's pages too).
				const api = (apis[source.tokenIndex] ?? apis[0]).startRun();
				const verdict = await check(api, fields);
				return verdict.ok && verdict.bill ? await claim(candidate, verdict.bill) : verdict;
			};
			return lookUpWithin(budget, metrics, kind, fields, source.network ?? '', call);
		};
}

async function lookUpWithin(
	budget: LookUpBudget,
	metrics: Metrics,
	kind: PostbackEvent,
	fields: PostbackFields,
	network: string,
	call: () => Promise<LookUpVerdict | StoredBy>,
): Promise<Exclude<Admission, { outcome: 'stored' }> | StoredBy | undefined> {
	const unknown = `unknown_${kind}`;
	const pairKey = pairKeyOf(kind, fields) ?? '';
	const over = budget.take(pairKey, fields, Date.now(), network);
	if (over?.over === 'remembered') {
		metrics.lookUps.inc({ kind, outcome: 'remembered' });
		return { outcome: 'refused', status: 403, reason: unknown, detail: over.reason };
	}
	if (over?.over === 'pair') {
		return {
			outcome: 'refused',
			status: 429,
			reason: 'pair_limit',
			detail: `too many ${kind} look-ups for one signed pair from this network`,
			retryAfter: over.retryAfter,
		};
	}
	if (over?.over === 'global') {
		metrics.lookUpsThrottled.inc({ kind });
		return {
			outcome: 'unavailable',
			reason: `the look-ups of this network, or of all networks, this minute are spent (RELAY_LOOKUP_GLOBAL_LIMIT)`,
			retryAfter: over.retryAfter,
		};
	}
	const verdict = await call();
	if (!('outcome' in verdict) && verdict.ok && verdict.noBill) {
		budget.rememberNoBill((fields.TrsId ?? '').trim());
	}
	if ('outcome' in verdict || verdict.ok) {
		metrics.lookUps.inc({ kind, outcome: 'known' });
		return 'outcome' in verdict ? verdict : undefined;
	}
	if (verdict.code === 503) {
		metrics.lookUps.inc({ kind, outcome: 'failed' });
		return { outcome: 'unavailable', reason: verdict.reason };
	}
	metrics.lookUps.inc({ kind, outcome: 'refused' });
	budget.refused(pairKey, fields, verdict.reason);
	return { outcome: 'refused', status: 403, reason: unknown, detail: verdict.reason };
}
