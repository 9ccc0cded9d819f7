/**
 * The API's answer shapes: a bill, a payment and a payout as the interface document lists their
 * fields, plus the extras the live service is seen to add when the merchant emulates them
 * (Merchant.liveExtras). Amounts of bills and payments are JSON numbers.
 */
import { formatDateTime } from './dates.ts';
import { toNumber } from './money.ts';
import type { Bill, Payment, Payout } from './model.ts';

export function billView(bill: Bill, liveExtras: boolean): Record<string, unknown> {
	return {
		id: bill.id,
		status: bill.status,
		amount: toNumber(bill.amount),
		type: bill.type,
		currency_in: bill.currency,
		created_at: formatDateTime(bill.createdAt),
		...(liveExtras ? { order_id: bill.orderId, active: bill.active } : {}),
	};
}

export function paymentView(payment: Payment, liveExtras: boolean): Record<string, unknown> {
	return {
		id: payment.id,
		bill_id: payment.billId,
		status: payment.status,
		amount: toNumber(payment.amount),
		amount_received: toNumber(payment.received),
		from_card: payment.fromCard,
		currency_in: payment.currency,
		created_at: formatDateTime(payment.createdAt),
		...(liveExtras ? { commission: toNumber(payment.commission) } : {}),
	};
}

export function payoutView(payout: Payout, liveExtras: boolean): Record<string, unknown> {
	return {
		id: payout.id,
		status: payout.status,
		amount: toNumber(payout.amount),
		commission: toNumber(payout.commission),
		account_identifier: payout.accountIdentifier,
		currency: payout.currency,
		created_at: formatDateTime(payout.createdAt),
		...(liveExtras ? { order_id: payout.orderId } : {}),
	};
}
