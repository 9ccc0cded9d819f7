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
	type Fields,
	type Merchant,
	type Payout,
	type PayoutStatus,
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
 * The payout postback's AccountType: the interface document's enum is QIWI, BANK_CARD, with a
 * phone number as the AccountNumber of QIWI; so payouts to a phone number (SBP) say QIWI.
 */
export const POSTBACK_ACCOUNT_TYPES: Readonly<Record<AccountKind, string>> = {
	BANK_CARD: 'BANK_CARD',
	SBP: 'QIWI',
};

export function payoutCommission(amount: number): number {
	return share(amount, PAYOUT_COMMISSION_BP) + PAYOUT_FIXED_COMMISSION;
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

/** Sum of payout amounts (without commission) that count against the limits since `from`. */
export function payoutVolumeSince(state: State, merchantId: string, from: number): number {
	let total = 0;
	for (const payout of state.payouts.values()) {
		if (payout.merchantId !== merchantId || payout.createdAt < from) continue;
		if (payout.status === 'FAIL' || payout.status === 'ERROR' || payout.status === 'DECLINED')
			continue;
		total += payout.amount;
	}
	return total;
}

/** The limit that a new payout volume would break, or null. */
export function limitBroken(
	state: State,
	merchant: Merchant,
	amount: number,
): 'daily_payout_limit_exceeded' | 'monthly_payout_limit_exceeded' | null {
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
	},
): Payout[] {
	const createdAt = state.now();
	const created = parts.map((amount): Payout => {
		const payout: Payout = {
			id: randomId(12),
			merchantId: merchant.id,
			orderId: request.orderId,
			kind: request.kind,
			status: 'MODERATING',
			amount,
			commission: payoutCommission(amount),
			accountType: request.accountType,
			accountIdentifier: request.accountIdentifier,
			currency: 'RUB',
			createdAt,
		};
		const balance = merchant.balances.RUB;
		balance.available -= payout.amount + payout.commission;
		balance.locked += payout.amount + payout.commission;
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

/** Moves a payout on; a final status settles the locked money and sends the payout postback. */
export function advancePayout(state: State, payout: Payout, status: PayoutStatus): Payout {
	if (isFinalPayout(payout.status)) {
		throw new SandboxError(409, 'payout_is_final', `the payout is already ${payout.status}`);
	}
	if (status === 'NEW' || status === 'MODERATING' || status === payout.status) {
		throw new SandboxError(
			409,
			'bad_transition',
			`cannot move a ${payout.status} payout to ${status}`,
		);
	}
	const merchant = state.merchants.get(payout.merchantId) as Merchant;
	const total = payout.amount + payout.commission;
	const balance = merchant.balances.RUB;
	payout.status = status;
	if (status === 'SUCCESS') {
		balance.locked -= total;
	} else if (isFinalPayout(status)) {
		balance.locked -= total;
		balance.available += total;
	}
	if (PAYOUT_POSTBACK_STATUSES.includes(status) && merchant.payoutWebhookUrl) {
		state.options.deliver(
			'payout',
			merchant.payoutWebhookUrl,
			payoutPostback(payout, merchant),
			payout.id,
			{ lost: merchant.losePostbacks, encoding: postbackEncoding(merchant) },
		);
	}
	return payout;
}

export function payoutPostback(payout: Payout, merchant: Merchant): Fields {
	const amount = format2(payout.amount + payout.commission);
	return {
		TrsId: payout.id,
		Amount: amount,
		IsAuto: 'false',
		Status: payout.status,
		Currency: payout.currency,
		Commission: format2(payout.commission),
		AccountType: POSTBACK_ACCOUNT_TYPES[payout.accountType],
		AccountNumber: payout.accountIdentifier,
		BalanceAmount: amount,
		BalanceCommission: format2(payout.commission),
		BalanceCurrency: payout.currency,
		CommissionApplyType: 'sender',
		SignatureValue: payoutSignature(amount, payout.id, merchant.token),
	};
}
