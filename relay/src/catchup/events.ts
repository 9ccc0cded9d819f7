import {
	PAYMENT_POSTBACK_STATUSES,
	PAYOUT_POSTBACK_STATUSES,
	canonicalStatus,
	expectedSignature,
	formatCents,
	toCents,
} from '../contract.ts';
import type { PostbackFields } from '../contract.ts';

/**
 * The postback the service would have sent for a payment or a payout, rebuilt from its own
 * records: the postback's fields (spec: payment and payout postback tables), amounts in the
 * service's postback spelling (two decimals) and SignatureValue computed with the API token over
 * `OutSum:InvId` (or `Amount:TrsId`), so the PayPalych Trigger verifies it and confirms it with the
 * service like any postback. Fields the API does not tell (`custom`, `IsAuto`, the account type)
 * are left out.
 */

type Json = Record<string, unknown>;

const text = (value: unknown): string =>
	typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';

/** An amount of a record in the postback spelling ("100.50"), or undefined when it is no decimal. */
function money(value: unknown): string | undefined {
	const cents = toCents(value);
	return cents === undefined ? undefined : formatCents(cents);
}

/** A bill in a final payment status: its payments may hold one no postback brought. */
export function isFinalBill(bill: Json): boolean {
	return (PAYMENT_POSTBACK_STATUSES as readonly string[]).includes(canonicalStatus(bill.status));
}

/** The payment postback of a final payment, or undefined when the payment is not final or unreadable. */
export function paymentPostback(
	payment: Json,
	invId: string,
	token: string,
): PostbackFields | undefined {
	const status = canonicalStatus(payment.status);
	if (!(PAYMENT_POSTBACK_STATUSES as readonly string[]).includes(status)) return undefined;
	const trsId = text(payment.id).trim();
	const outSum = money(payment.amount);
	if (trsId === '' || outSum === undefined) return undefined;
	const amount = toCents(payment.amount) ?? 0;
	const received = toCents(payment.amount_received);
	const commission =
		toCents(payment.commission) ??
		(status === 'FAIL' || received === undefined ? 0 : Math.max(0, amount - received));
	const fields: PostbackFields = {
		InvId: invId,
		OutSum: outSum,
		Commission: formatCents(commission),
		Currency: 'RUB',
		CurrencyIn: text(payment.currency_in) || 'RUB',
		TrsId: trsId,
		Status: status,
	};
	if (received !== undefined) fields.BalanceAmount = formatCents(received);
	if (text(payment.from_card) !== '') fields.AccountNumber = text(payment.from_card);
	fields.SignatureValue = expectedSignature('payment', fields, token);
	return fields;
}

/** The payout postback of a payout in a postback status (SUCCESS, DECLINED, FAIL), else undefined. */
export function payoutPostback(payout: Json, token: string): PostbackFields | undefined {
	const status = canonicalStatus(payout.status);
	if (!(PAYOUT_POSTBACK_STATUSES as readonly string[]).includes(status)) return undefined;
	const trsId = text(payout.id).trim();
	const amount = toCents(payout.amount);
	if (trsId === '' || amount === undefined) return undefined;
	const commission = toCents(payout.commission) ?? 0;
	// The payout postback's Amount includes the commission (docs/developer/service.md).
	const total = formatCents(amount + commission);
	const currency = text(payout.currency) || 'RUB';
	const fields: PostbackFields = {
		TrsId: trsId,
		Amount: total,
		Status: status,
		Currency: currency,
		Commission: formatCents(commission),
		BalanceAmount: total,
		BalanceCommission: formatCents(commission),
		BalanceCurrency: currency,
	};
	if (text(payout.account_identifier) !== '')
		fields.AccountNumber = text(payout.account_identifier);
	fields.SignatureValue = expectedSignature('payout', fields, token);
	return fields;
}
