/**
 * Bills and payments: creating a bill, paying it (the money credited, the signed payment
 * postback, the customer's redirect) and why a bill cannot be paid.
 */
import { randomInt } from 'node:crypto';
import { format2, share } from './money.ts';
import {
	isPaidStatus,
	paymentSignature,
	randomId,
	SandboxError,
	type Bill,
	type BillStatus,
	type Fields,
	type Merchant,
	type Outcome,
	type Payment,
	type PaymentMethod,
	type PayResult,
	type Redirect,
	type Shop,
} from './model.ts';
import { postbackEncoding } from './postbacks.ts';
import type { State } from './state.ts';

/** Incoming payments: 3 % of the amount paid towards the bill. */
export const INCOMING_COMMISSION_BP = 300;

/** The currency the payment postback's `Currency` field names: the interface document lists RUB only. */
export const PAYMENT_POSTBACK_CURRENCY = 'RUB';

export function createBill(
	state: State,
	init: Omit<Bill, 'id' | 'status' | 'active' | 'createdAt' | 'losePostback'>,
): Bill {
	const bill: Bill = {
		...init,
		id: randomId(10),
		status: 'NEW',
		active: true,
		createdAt: state.now(),
		losePostback: false,
	};
	state.bills.set(bill.id, bill);
	return bill;
}

export function paymentsOf(state: State, billId: string): Payment[] {
	return [...state.payments.values()].filter((payment) => payment.billId === billId);
}

/** Why a bill cannot take a payment now, or null. */
export function payRefusal(state: State, bill: Bill): SandboxError | null {
	if (bill.type === 'NORMAL' && isPaidStatus(bill.status)) {
		return new SandboxError(409, 'bill_is_finished', 'this bill is already paid');
	}
	if (!bill.active) return new SandboxError(409, 'bill_inactive', 'this bill is switched off');
	const ttl = bill.extras?.ttl;
	if (ttl !== undefined && state.now() >= bill.createdAt + ttl * 1000)
		return new SandboxError(409, 'bill_expired', 'this bill has expired (its ttl has passed)');
	const merchant = state.merchants.get(bill.merchantId);
	const shop = state.shops.get(bill.shopId);
	if (!merchant || !merchant.exists || merchant.banned) {
		return new SandboxError(409, 'merchant_unavailable', 'the merchant cannot accept payments');
	}
	if (!shop || !shop.enabled)
		return new SandboxError(409, 'shop_not_enabled', 'the shop is switched off');
	return null;
}

/** The amount paid towards the bill (before a payer commission) and the status it gives. */
function outcomeOf(
	bill: Bill,
	outcome: Outcome,
	amount: number | undefined,
): { base: number; status: BillStatus } {
	if (outcome === 'process') return { base: amount ?? bill.amount, status: 'PROCESS' };
	if (amount !== undefined) {
		const status =
			outcome === 'fail'
				? 'FAIL'
				: amount < bill.amount
					? 'UNDERPAID'
					: amount > bill.amount
						? 'OVERPAID'
						: 'SUCCESS';
		return { base: amount, status };
	}
	if (outcome === 'under') {
		const base = Math.max(1, Math.floor(bill.amount / 2));
		return { base, status: base < bill.amount ? 'UNDERPAID' : 'SUCCESS' };
	}
	if (outcome === 'over')
		return { base: bill.amount + Math.max(1, Math.floor(bill.amount / 2)), status: 'OVERPAID' };
	return { base: bill.amount, status: outcome === 'fail' ? 'FAIL' : 'SUCCESS' };
}

function randomFromCard(method: PaymentMethod): string {
	const last4 = String(randomInt(0, 10_000)).padStart(4, '0');
	return method === 'SBP'
		? `+79*****${last4}`
		: `${['220070', '427601', '553691'][randomInt(0, 3)]}******${last4}`;
}

/**
 * The payment postback: the interface document's fields, plus the ones live postbacks are seen to
 * carry when the merchant emulates them (liveExtras). `TrsId` is the payment id, or the bill id
 * when the merchant's `trsId` switch says so (then two payments of a MULTI bill with the same
 * amount and status post identical fields).
 */
export function paymentPostback(bill: Bill, payment: Payment, merchant: Merchant): Fields {
	const invId = bill.orderId ?? '';
	const outSum = format2(payment.amount);
	return {
		InvId: invId,
		OutSum: outSum,
		Commission: format2(payment.commission),
		Currency: PAYMENT_POSTBACK_CURRENCY,
		CurrencyIn: bill.currency,
		TrsId: merchant.trsId === 'bill' ? bill.id : payment.id,
		Status: payment.status,
		...(bill.custom !== null ? { custom: bill.custom } : {}),
		...(merchant.liveExtras
			? {
					AccountType: payment.method,
					AccountNumber: payment.fromCard,
					BalanceAmount: format2(payment.received),
					BalanceCurrency: bill.currency,
				}
			: {}),
		SignatureValue: paymentSignature(outSum, invId, merchant.token),
	};
}

/** Where the customer's browser goes after paying: the shop's Success or Fail URL, with signed fields. */
function redirectOf(bill: Bill, payment: Payment, merchant: Merchant, shop: Shop): Redirect {
	const invId = bill.orderId ?? '';
	const outSum = format2(payment.amount);
	return {
		url:
			payment.status === 'PROCESS'
				? null
				: isPaidStatus(payment.status)
					? (bill.extras?.successUrl ?? shop.successUrl)
					: (bill.extras?.failUrl ?? shop.failUrl),
		fields: {
			InvId: invId,
			OutSum: outSum,
			CurrencyIn: bill.currency,
			custom: bill.custom ?? '',
			SignatureValue: paymentSignature(outSum, invId, merchant.token),
		},
	};
}

/**
 * One payment on a bill. `amount` (cents paid towards the bill, before a payer commission)
 * decides the status when given; otherwise the outcome does: full = the bill amount,
 * under = half of it, over = one and a half times it, fail = the bill amount, not charged;
 * process = a payment still in PROCESS (no credit, no postback, no redirect).
 */
export function pay(
	state: State,
	bill: Bill,
	request: { outcome?: Outcome; method?: PaymentMethod; amount?: number; losePostback?: boolean },
): PayResult {
	const refusal = payRefusal(state, bill);
	if (refusal) throw refusal;
	const merchant = state.merchants.get(bill.merchantId) as Merchant;
	const shop = state.shops.get(bill.shopId) as Shop;
	const method: PaymentMethod = bill.paymentMethod ?? request.method ?? 'BANK_CARD';
	const { base, status } = outcomeOf(bill, request.outcome ?? 'full', request.amount);
	const fee = share(base, INCOMING_COMMISSION_BP);
	const failed = status === 'FAIL' || status === 'PROCESS';
	const payment: Payment = {
		id: randomId(12),
		billId: bill.id,
		merchantId: merchant.id,
		status,
		amount: bill.payerPaysCommission ? base + fee : base,
		payerCommission: bill.payerPaysCommission ? fee : 0,
		received: failed ? 0 : bill.payerPaysCommission ? base : base - fee,
		commission: failed ? 0 : fee,
		method,
		fromCard: randomFromCard(method),
		currency: bill.currency,
		createdAt: state.now(),
	};
	state.payments.set(payment.id, payment);
	merchant.balances[bill.currency].available += payment.received;
	bill.status = status;

	let postback: Fields | null = null;
	if (shop.resultUrl && status !== 'PROCESS') {
		postback = paymentPostback(bill, payment, merchant);
		const lost = merchant.losePostbacks || bill.losePostback || request.losePostback === true;
		state.options.deliver('payment', shop.resultUrl, postback, postback['TrsId'] ?? payment.id, {
			lost,
			encoding: postbackEncoding(merchant),
		});
	}
	return { payment, postback, redirect: redirectOf(bill, payment, merchant, shop) };
}
