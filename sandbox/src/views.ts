/**
 * The API's answer shapes: a bill, a payment and a payout as the interface document lists their
 * fields, plus the extras the live service is seen to add when the merchant emulates them
 * (Merchant.liveExtras), in the merchant's profile (Merchant.profile). Amounts of bills and
 * payments are JSON numbers.
 */
import { formatDateTime, zoneOffsetMs } from './dates.ts';
import { toNumber } from './money.ts';
import type { Bill, Payment, Payout, Profile } from './model.ts';

/** What decides a view's fields: the merchant's live extras and profile. */
export interface ViewOptions {
	liveExtras: boolean;
	profile: Profile;
}

const createdAt = (ms: number, view: ViewOptions) => formatDateTime(ms, zoneOffsetMs(view.profile));

/** A bill. `order_id` is a live extra, never shown in the `spec` profile (the document has none). */
export function billView(bill: Bill, view: ViewOptions): Record<string, unknown> {
	return {
		id: bill.id,
		status: bill.status,
		amount: toNumber(bill.amount),
		type: bill.type,
		currency_in: bill.currency,
		created_at: createdAt(bill.createdAt, view),
		...(view.liveExtras
			? { ...(view.profile === 'live' ? { order_id: bill.orderId } : {}), active: bill.active }
			: {}),
	};
}

/**
 * A payment. `amount` is what the payer paid (= OutSum) in `live`; in `spec` it leaves out the
 * commission the payer paid on top (OutSum = amount + Commission then).
 */
export function paymentView(payment: Payment, view: ViewOptions): Record<string, unknown> {
	const amount =
		view.profile === 'spec' ? payment.amount - payment.payerCommission : payment.amount;
	return {
		id: payment.id,
		bill_id: payment.billId,
		status: payment.status,
		amount: toNumber(amount),
		amount_received: toNumber(payment.received),
		from_card: payment.fromCard,
		currency_in: payment.currency,
		created_at: createdAt(payment.createdAt, view),
		...(view.liveExtras ? { commission: toNumber(payment.commission) } : {}),
	};
}

export function payoutView(payout: Payout, view: ViewOptions): Record<string, unknown> {
	return {
		id: payout.id,
		status: payout.status,
		amount: toNumber(payout.amount),
		commission: toNumber(payout.commission),
		account_identifier: payout.accountIdentifier,
		currency: payout.currency,
		created_at: createdAt(payout.createdAt, view),
		...(view.liveExtras ? { order_id: payout.orderId } : {}),
	};
}
