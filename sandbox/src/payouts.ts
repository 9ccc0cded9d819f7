/**
 * Payouts: the fee, the split of a large payout, the daily and monthly limits, creating the
 * payouts of one request (locking their money), moving them on (settling it) and the signed
 * payout postback.
 */
import { startOfDay, startOfMonth, zoneOffsetMs } from './dates.ts';
import { format2, share } from './money.ts';
import {
	isFinalPayout,
	payoutSignature,
	PAYOUT_POSTBACK_STATUSES,
	randomId,
	SandboxError,
	type AccountKind,
	type BalanceCurrency,
	type Fields,
	type Merchant,
	type Payout,
	type PayoutStatus,
	type Profile,
} from './model.ts';
import { postbackEncoding } from './postbacks.ts';
import type { State } from './state.ts';

/** Payouts: 2 % of each payout plus 10.00 RUB per payout, paid by the sender (the merchant). */
export const PAYOUT_COMMISSION_BP = 200;
export const PAYOUT_FIXED_COMMISSION = 1000;
/**
 * At most this many payouts per request (api:error.too_many_payouts; unconfirmed:
 * docs/developer/service.md).
 */
export const MAX_PAYOUT_PARTS = 1000;

/**
 * The payout postback's AccountType. `spec`: the interface document's enum is QIWI, BANK_CARD,
 * with a phone number as the AccountNumber of QIWI, so payouts to a phone number (SBP) say QIWI.
 * `live`: the public record's BANK_CARD, SBP, CRYPTO; it names no Steam value (STEAM is a guess).
 */
export const POSTBACK_ACCOUNT_TYPES: Readonly<
	Record<Profile, Readonly<Record<AccountKind, string>>>
> = {
	spec: { BANK_CARD: 'BANK_CARD', SBP: 'QIWI', CRYPTO: 'CRYPTO', STEAM: 'STEAM' },
	live: { BANK_CARD: 'BANK_CARD', SBP: 'SBP', CRYPTO: 'CRYPTO', STEAM: 'STEAM' },
};

/** The sandbox's fixed exchange rates, in RUB per unit (the service publishes none). */
export const RUB_PER_UNIT: Readonly<Record<BalanceCurrency, number>> = {
	RUB: 1,
	USD: 90,
	EUR: 100,
	USDT: 90,
};

/** Cents of `from` in `to` at the sandbox's rates, rounded to the cent. */
export function convert(cents: number, from: BalanceCurrency, to: BalanceCurrency): number {
	if (from === to) return cents;
	return Math.round((cents * RUB_PER_UNIT[from]) / RUB_PER_UNIT[to]);
}

/** The fee of a payout of `amount` cents in `currency`: 2 % plus 10.00 RUB in that currency. */
export function payoutCommission(amount: number, currency: BalanceCurrency = 'RUB'): number {
	return share(amount, PAYOUT_COMMISSION_BP) + convert(PAYOUT_FIXED_COMMISSION, 'RUB', currency);
}

/** What a payout request asks beyond its amount: its currency, the balance and who pays the fee. */
export interface PayoutTerms {
	currency: BalanceCurrency;
	accountCurrency: BalanceCurrency;
	recipientPays: boolean;
}

export const DEFAULT_TERMS: PayoutTerms = {
	currency: 'RUB',
	accountCurrency: 'RUB',
	recipientPays: false,
};

/**
 * The money of one payout of `amount`: its fee, and what the balance gives (in the balance's
 * currency): the amount when the recipient pays the fee (it comes out of the amount), else the
 * amount plus the fee.
 */
export function payoutCost(
	amount: number,
	terms: PayoutTerms,
): { commission: number; accountAmount: number; accountCommission: number } {
	const commission = payoutCommission(amount, terms.currency);
	const debit = terms.recipientPays ? amount : amount + commission;
	return {
		commission,
		accountAmount: convert(debit, terms.currency, terms.accountCurrency),
		accountCommission: convert(commission, terms.currency, terms.accountCurrency),
	};
}

/** The parts a payout is split into (each at most the merchant's split size), or null when too many. */
export function splitParts(total: number, splitSize: number | null): number[] | null {
	if (splitSize === null || splitSize <= 0 || total <= splitSize) return [total];
	const count = Math.ceil(total / splitSize);
	if (count > MAX_PAYOUT_PARTS) return null;
	const parts: number[] = [];
	let left = total;
	while (left > 0) {
		const part = Math.min(splitSize, left);
		parts.push(part);
		left -= part;
	}
	return parts;
}

/** Sum of payout amounts (without commission, in RUB) that count against the limits since `from`. */
export function payoutVolumeSince(state: State, merchantId: string, from: number): number {
	let total = 0;
	for (const payout of state.payouts.values()) {
		if (payout.merchantId !== merchantId || payout.createdAt < from) continue;
		if (payout.status === 'FAIL' || payout.status === 'ERROR' || payout.status === 'DECLINED')
			continue;
		total += convert(payout.amount, payout.currency, 'RUB');
	}
	return total;
}

/** The limit (counted in RUB) that a new payout volume would break, or null. */
export function limitBroken(
	state: State,
	merchant: Merchant,
	requested: number,
	currency: BalanceCurrency = 'RUB',
): 'daily_payout_limit_exceeded' | 'monthly_payout_limit_exceeded' | null {
	const amount = convert(requested, currency, 'RUB');
	const now = state.now();
	const offset = zoneOffsetMs(merchant.profile);
	if (
		merchant.dailyPayoutLimit !== null &&
		payoutVolumeSince(state, merchant.id, startOfDay(now, offset)) + amount >
			merchant.dailyPayoutLimit
	) {
		return 'daily_payout_limit_exceeded';
	}
	if (
		merchant.monthlyPayoutLimit !== null &&
		payoutVolumeSince(state, merchant.id, startOfMonth(now, offset)) + amount >
			merchant.monthlyPayoutLimit
	) {
		return 'monthly_payout_limit_exceeded';
	}
	return null;
}

export function orderIdTaken(state: State, merchantId: string, orderId: string): boolean {
	for (const payout of state.payouts.values()) {
		if (payout.merchantId === merchantId && payout.orderId === orderId) return true;
	}
	return false;
}

/** Creates the payouts of one request (already checked) and locks their money. */
export function createPayouts(
	state: State,
	merchant: Merchant,
	parts: number[],
	request: {
		orderId: string | null;
		kind: 'personal' | 'regular';
		accountType: AccountKind;
		accountIdentifier: string;
		network?: 'TRX' | 'ETH';
		terms?: PayoutTerms;
	},
): Payout[] {
	const createdAt = state.now();
	const terms = request.terms ?? DEFAULT_TERMS;
	const created = parts.map((amount): Payout => {
		const payout: Payout = {
			id: randomId(12),
			merchantId: merchant.id,
			orderId: request.orderId,
			kind: request.kind,
			status: 'MODERATING',
			amount,
			...payoutCost(amount, terms),
			accountType: request.accountType,
			accountIdentifier: request.accountIdentifier,
			network: request.network ?? null,
			currency: terms.currency,
			accountCurrency: terms.accountCurrency,
			recipientPays: terms.recipientPays,
			errorCode: null,
			errorMessage: null,
			createdAt,
		};
		const balance = merchant.balances[payout.accountCurrency];
		balance.available -= payout.accountAmount;
		balance.locked += payout.accountAmount;
		state.payouts.set(payout.id, payout);
		return payout;
	});
	if (state.options.autoAdvanceMs > 0) {
		for (const payout of created) scheduleAdvance(state, payout.id, ['PROCESS', 'SUCCESS']);
	}
	return created;
}

function scheduleAdvance(state: State, payoutId: string, steps: PayoutStatus[]): void {
	const [next, ...rest] = steps;
	if (next === undefined) return;
	state.later(state.options.autoAdvanceMs, () => {
		const payout = state.payouts.get(payoutId);
		if (!payout || isFinalPayout(payout.status)) return;
		advancePayout(state, payout, next);
		scheduleAdvance(state, payoutId, rest);
	});
}

/** A FAIL or ERROR move may say why (error_code, error_message on the payout). */
export interface PayoutError {
	errorCode?: number;
	errorMessage?: string;
}

/**
 * Moves a payout on. MODERATING is reachable again from PROCESS (sent back to moderation). A final
 * status settles the locked money and sends the payout postback; ERROR sends a FAIL postback in
 * `live` (the public record's postbacks carry FAIL for both failures) and none in `spec`.
 */
export function advancePayout(
	state: State,
	payout: Payout,
	status: PayoutStatus,
	error: PayoutError = {},
): Payout {
	if (isFinalPayout(payout.status)) {
		throw new SandboxError(409, 'payout_is_final', `the payout is already ${payout.status}`);
	}
	if (
		status === 'NEW' ||
		(status === 'MODERATING' && payout.status !== 'PROCESS') ||
		status === payout.status
	) {
		throw new SandboxError(
			409,
			'bad_transition',
			`cannot move a ${payout.status} payout to ${status}`,
		);
	}
	const merchant = state.merchants.get(payout.merchantId) as Merchant;
	const total = payout.accountAmount;
	const balance = merchant.balances[payout.accountCurrency];
	payout.status = status;
	if (status === 'FAIL' || status === 'ERROR') {
		payout.errorCode = error.errorCode ?? null;
		payout.errorMessage = error.errorMessage ?? null;
	}
	if (status === 'SUCCESS') {
		balance.locked -= total;
	} else if (isFinalPayout(status)) {
		balance.locked -= total;
		balance.available += total;
	}
	const postbackStatus = status === 'ERROR' && merchant.profile === 'live' ? 'FAIL' : status;
	if (PAYOUT_POSTBACK_STATUSES.includes(postbackStatus) && merchant.payoutWebhookUrl) {
		state.options.deliver(
			'payout',
			merchant.payoutWebhookUrl,
			payoutPostback(payout, merchant, postbackStatus),
			payout.id,
			{ lost: merchant.losePostbacks, encoding: postbackEncoding(merchant) },
		);
	}
	return payout;
}

/**
 * The payout postback: `Amount` with the commission (the amount itself when the recipient pays
 * it, the fee being inside), `Balance*` what the balance gave in its currency, who paid the fee.
 */
export function payoutPostback(
	payout: Payout,
	merchant: Merchant,
	status: PayoutStatus = payout.status,
): Fields {
	const amount = format2(payout.recipientPays ? payout.amount : payout.amount + payout.commission);
	return {
		TrsId: payout.id,
		Amount: amount,
		IsAuto: 'false',
		Status: status,
		Currency: payout.currency,
		Commission: format2(payout.commission),
		AccountType: POSTBACK_ACCOUNT_TYPES[merchant.profile][payout.accountType],
		AccountNumber: payout.accountIdentifier,
		BalanceAmount: format2(payout.accountAmount),
		BalanceCommission: format2(payout.accountCommission),
		BalanceCurrency: payout.accountCurrency,
		CommissionApplyType: payout.recipientPays ? 'recipient' : 'sender',
		SignatureValue: payoutSignature(amount, payout.id, merchant.token),
	};
}
