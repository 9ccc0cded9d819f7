/**
 * Refunds and chargebacks (docs/developer/service.md: the reference's refund API and the refund
 * and chargeback postbacks): what a payment can still give back, making a refund or a chargeback,
 * the money moved, and the signed postback to the shop's Refund or Chargeback URL (the Result URL
 * when the shop has none).
 */
import { format2 } from './money.ts';
import {
	chargebackSignature,
	randomId,
	refundSignature,
	SandboxError,
	type Bill,
	type Chargeback,
	type Fields,
	type Merchant,
	type Payment,
	type Refund,
	type Shop,
} from './model.ts';
import { postbackEncoding } from './postbacks.ts';
import type { State } from './state.ts';

/** Payments that took money (a FAIL or PROCESS payment has nothing to give back). */
const TOOK_MONEY = new Set(['SUCCESS', 'OVERPAID', 'UNDERPAID']);

export function refundsOf(state: State, paymentId: string): Refund[] {
	return [...state.refunds.values()].filter((refund) => refund.paymentId === paymentId);
}

export function chargebacksOf(state: State, paymentId: string): Chargeback[] {
	return [...state.chargebacks.values()].filter((item) => item.paymentId === paymentId);
}

/** Cents refunded from a payment so far. */
export function refundedOf(state: State, paymentId: string): number {
	return refundsOf(state, paymentId).reduce((sum, refund) => sum + refund.amount, 0);
}

/** What can still go back: the amount paid minus refunds and chargebacks (0 when none was taken). */
export function refundableOf(state: State, payment: Payment): number {
	if (!TOOK_MONEY.has(payment.status)) return 0;
	const charged = chargebacksOf(state, payment.id).reduce((sum, item) => sum + item.amount, 0);
	return Math.max(0, payment.amount - refundedOf(state, payment.id) - charged);
}

/** Why a refund cannot be made, as an error key of the refund endpoints, or null. */
export function refundRefusal(
	state: State,
	payment: Payment,
	amount: number | null,
): 'refund_not_allowed' | 'refund_amount_exceeded' | null {
	if (!TOOK_MONEY.has(payment.status)) return 'refund_not_allowed';
	const refundable = refundableOf(state, payment);
	if (refundable <= 0) return 'refund_amount_exceeded';
	if (amount !== null && amount > refundable) return 'refund_amount_exceeded';
	return null;
}

function parts(state: State, payment: Payment): { bill: Bill; merchant: Merchant; shop: Shop } {
	const bill = state.bills.get(payment.billId) as Bill;
	return {
		bill,
		merchant: state.merchants.get(payment.merchantId) as Merchant,
		shop: state.shops.get(bill.shopId) as Shop,
	};
}

export function refundPostback(refund: Refund, bill: Bill, merchant: Merchant): Fields {
	const fields = {
		Id: refund.id,
		Amount: format2(refund.amount),
		Currency: refund.currency,
		Status: refund.status,
		InvId: bill.orderId ?? '',
		BillId: refund.billId,
		PaymentId: refund.paymentId,
	};
	return { ...fields, SignatureValue: refundSignature(fields, merchant.token) };
}

/**
 * A chargeback postback. `live`: `Id, Status, InvId, BillId, PaymentId, SignatureValue`, no
 * Amount and no Currency (the typed client's model); `spec`: the sandbox's earlier guess, with
 * the chargeback's `Amount` and `Currency`. Signed `MD5(BillId:PaymentId:Id:token)` in both.
 */
export function chargebackPostback(item: Chargeback, bill: Bill, merchant: Merchant): Fields {
	const money: Fields =
		merchant.profile === 'live' ? {} : { Amount: format2(item.amount), Currency: item.currency };
	const fields = {
		Id: item.id,
		...money,
		Status: item.status,
		InvId: bill.orderId ?? '',
		BillId: item.billId,
		PaymentId: item.paymentId,
	};
	return { ...fields, SignatureValue: chargebackSignature(fields, merchant.token) };
}

/**
 * Refunds `amount` cents of a payment (null: everything refundable), after refundRefusal said
 * yes. The money leaves the merchant's available balance in the bill's currency; the refund
 * postback goes to the shop's Refund URL (else its Result URL).
 */
export function makeRefund(
	state: State,
	payment: Payment,
	amount: number | null,
	orderId: string | null,
): { refund: Refund; postback: Fields | null } {
	const refusal = refundRefusal(state, payment, amount);
	if (refusal) throw new SandboxError(409, refusal, `this refund cannot be made: ${refusal}`);
	const { bill, merchant, shop } = parts(state, payment);
	const refundable = refundableOf(state, payment);
	const refund: Refund = {
		id: `R${randomId(11)}`,
		merchantId: merchant.id,
		paymentId: payment.id,
		billId: bill.id,
		orderId,
		kind: amount === null || amount === refundable ? 'full' : 'partial',
		amount: amount ?? refundable,
		currency: payment.currency,
		status: 'SUCCESS',
		createdAt: state.now(),
	};
	state.refunds.set(refund.id, refund);
	merchant.balances[payment.currency].available -= refund.amount;
	const url = shop.refundUrl ?? shop.resultUrl;
	let postback: Fields | null = null;
	if (url) {
		postback = refundPostback(refund, bill, merchant);
		state.options.deliver('refund', url, postback, refund.id, {
			lost: merchant.losePostbacks,
			encoding: postbackEncoding(merchant),
		});
	}
	return { refund, postback };
}

/**
 * Charges a payment back (the payer's bank took `amount` cents, default everything refundable).
 * The money leaves the merchant's available balance; the chargeback postback goes to the shop's
 * Chargeback URL (else its Result URL).
 */
export function makeChargeback(
	state: State,
	payment: Payment,
	amount: number | null,
): { chargeback: Chargeback; postback: Fields | null } {
	const refundable = refundableOf(state, payment);
	if (refundable <= 0 || (amount !== null && amount > refundable))
		throw new SandboxError(
			409,
			'chargeback_not_allowed',
			'this payment has nothing (or less than that) left to charge back',
		);
	const { bill, merchant, shop } = parts(state, payment);
	const chargeback: Chargeback = {
		id: `C${randomId(11)}`,
		merchantId: merchant.id,
		paymentId: payment.id,
		billId: bill.id,
		amount: amount ?? refundable,
		currency: payment.currency,
		status: 'SUCCESS',
		createdAt: state.now(),
	};
	state.chargebacks.set(chargeback.id, chargeback);
	merchant.balances[payment.currency].available -= chargeback.amount;
	const url = shop.chargebackUrl ?? shop.resultUrl;
	let postback: Fields | null = null;
	if (url) {
		postback = chargebackPostback(chargeback, bill, merchant);
		state.options.deliver('chargeback', url, postback, chargeback.id, {
			lost: merchant.losePostbacks,
			encoding: postbackEncoding(merchant),
		});
	}
	return { chargeback, postback };
}
