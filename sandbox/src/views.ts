/**
 * The API's answer shapes: a bill, a payment and a payout as the interface document lists their
 * fields, plus the extras the live service is seen to add when the merchant emulates them
 * (Merchant.liveExtras), in the merchant's profile (Merchant.profile). Amounts of bills and
 * payments are JSON numbers.
 */
import { formatDateTime, zoneOffsetMs } from './dates.ts';
import { toNumber } from './money.ts';
import type { Bill, BillExtras, Chargeback, Payment, Payout, Profile, Refund } from './model.ts';

/** What decides a view's fields: the merchant's live extras and profile. */
export interface ViewOptions {
	liveExtras: boolean;
	profile: Profile;
	/** Payment answers in their newer form (see MerchantSwitches.newPaymentFields). */
	newPaymentFields?: boolean;
	/** `order_id` on bills in the `live` profile (see MerchantSwitches.billOrderId). */
	billOrderId?: boolean;
	/** What the payment's refunds took back, in cents (refunded_amount of the newer form). */
	refundedOf?: (payment: Payment) => number;
}

const createdAt = (ms: number, view: ViewOptions) => formatDateTime(ms, zoneOffsetMs(view.profile));

/**
 * A bill. `order_id` is shown in the `live` profile (as the service's current reference shows it)
 * unless the merchant hides it (billOrderId false), never in `spec` (the document has none);
 * `active` is a live extra.
 */
export function billView(bill: Bill, view: ViewOptions): Record<string, unknown> {
	return {
		id: bill.id,
		status: bill.status,
		amount: toNumber(bill.amount),
		type: bill.type,
		currency_in: bill.currency,
		created_at: createdAt(bill.createdAt, view),
		...(view.profile === 'live' && view.billOrderId !== false ? { order_id: bill.orderId } : {}),
		...(view.liveExtras ? { active: bill.active } : {}),
		...(bill.extras ? extrasView(bill.extras) : {}),
	};
}

/** The fields beyond the document a bill was created with, under the names bill/create took. */
function extrasView(extras: BillExtras): Record<string, unknown> {
	return {
		...(extras.ttl !== undefined ? { ttl: extras.ttl } : {}),
		...(extras.locale !== undefined ? { locale: extras.locale } : {}),
		...(extras.payerEmail !== undefined ? { payer_email: extras.payerEmail } : {}),
		...(extras.successUrl !== undefined ? { success_url: extras.successUrl } : {}),
		...(extras.failUrl !== undefined ? { fail_url: extras.failUrl } : {}),
		...(extras.returnUrl !== undefined ? { return_url: extras.returnUrl } : {}),
		...(extras.requestFields !== undefined ? { request_fields: extras.requestFields } : {}),
		...(extras.items !== undefined
			? {
					items: extras.items.map((item) => ({
						name: item.name,
						price: toNumber(item.price),
						quantity: Number(item.quantity),
						...item.more,
					})),
				}
			: {}),
	};
}

/**
 * A payment. `amount` is what the payer paid (= OutSum) in `live`; in `spec` it leaves out the
 * commission the payer paid on top (OutSum = amount + Commission then). The newer form
 * (newPaymentFields) has no `amount_received`; it carries `commission`, `account_amount` (the net
 * credited, what `amount_received` was), `account_currency_code` and `refunded_amount`.
 */
export function paymentView(payment: Payment, view: ViewOptions): Record<string, unknown> {
	const amount =
		view.profile === 'spec' ? payment.amount - payment.payerCommission : payment.amount;
	return {
		id: payment.id,
		bill_id: payment.billId,
		status: payment.status,
		amount: toNumber(amount),
		...(view.newPaymentFields ? {} : { amount_received: toNumber(payment.received) }),
		from_card: payment.fromCard,
		currency_in: payment.currency,
		created_at: createdAt(payment.createdAt, view),
		...(view.liveExtras || view.newPaymentFields
			? { commission: toNumber(payment.commission) }
			: {}),
		...(view.newPaymentFields
			? {
					account_amount: toNumber(payment.received),
					account_currency_code: payment.currency,
					refunded_amount: toNumber(view.refundedOf?.(payment) ?? 0),
				}
			: {}),
	};
}

/**
 * A payout. `spec`: the interface document's fields (and `order_id` with live extras). `live`:
 * every field of the public record: the balance it is taken from (`account_currency`), what it
 * takes there (`account_amount`: the amount, plus the fee unless the recipient pays it) and the
 * fee in it (`account_commission`), `order_id`, `error_code` and `error_message`.
 */
export function payoutView(payout: Payout, view: ViewOptions): Record<string, unknown> {
	const document = {
		id: payout.id,
		status: payout.status,
		amount: toNumber(payout.amount),
		commission: toNumber(payout.commission),
		account_identifier: payout.accountIdentifier,
		currency: payout.currency,
		created_at: createdAt(payout.createdAt, view),
	};
	if (view.profile !== 'live')
		return { ...document, ...(view.liveExtras ? { order_id: payout.orderId } : {}) };
	return {
		id: payout.id,
		status: payout.status,
		order_id: payout.orderId,
		account_identifier: payout.accountIdentifier,
		amount: document.amount,
		account_amount: toNumber(payout.accountAmount),
		commission: document.commission,
		account_commission: toNumber(payout.accountCommission),
		currency: payout.currency,
		account_currency: payout.accountCurrency,
		created_at: document.created_at,
		error_code: payout.errorCode,
		error_message: payout.errorMessage,
	};
}

/**
 * A refund as the refund endpoints answer it. `live`: as the service's typed client models it,
 * `id, status, amount, currency, entity_type` (`payment`), `entity_id` (the payment), `created_at`,
 * and `order_id`, null: the refund endpoints take an order_id, but `live` keeps none (the
 * service's refund records are not seen to show one). `spec`: the sandbox's earlier guess,
 * `payment_id` and `bill_id` instead of the entity, and the order_id kept (the interface document
 * says nothing of refunds, so code is held to both spellings; docs/developer/service.md).
 */
export function refundView(refund: Refund, view: ViewOptions): Record<string, unknown> {
	const common = {
		status: refund.status,
		amount: toNumber(refund.amount),
		currency: refund.currency,
	};
	const created = createdAt(refund.createdAt, view);
	if (view.profile === 'live')
		return {
			id: refund.id,
			...common,
			entity_type: 'payment',
			entity_id: refund.paymentId,
			created_at: created,
			order_id: refund.orderId,
		};
	return {
		id: refund.id,
		payment_id: refund.paymentId,
		bill_id: refund.billId,
		order_id: refund.orderId,
		...common,
		created_at: created,
	};
}

/**
 * A chargeback as payment/status?chargeback=1 lists it. `live`: `id, payment_id, status,
 * created_at`, no amount and no currency (the typed client's model). `spec`: the sandbox's earlier
 * guess, with `bill_id`, `amount` and `currency`.
 */
export function chargebackView(item: Chargeback, view: ViewOptions): Record<string, unknown> {
	return {
		id: item.id,
		payment_id: item.paymentId,
		...(view.profile === 'live' ? {} : { bill_id: item.billId }),
		status: item.status,
		...(view.profile === 'live' ? {} : { amount: toNumber(item.amount), currency: item.currency }),
		created_at: createdAt(item.createdAt, view),
	};
}

/**
 * The key payment/status?chargeback=1 lists chargebacks under: `chargeback` (a list under a
 * singular key, as the reference's example ends) in `live`, `chargebacks` in `spec`.
 */
export function chargebackListName(view: Pick<ViewOptions, 'profile'>): string {
	return view.profile === 'live' ? 'chargeback' : 'chargebacks';
}
