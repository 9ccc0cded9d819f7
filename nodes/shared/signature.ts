import * as crypto from 'crypto';

/**
 * Signature rules of the service's notifications.
 *
 * Payment postback and success/fail redirects: upper-case MD5 of `OutSum:InvId:token`.
 * Payout postback: upper-case MD5 of `Amount:TrsId:token`.
 * Refund and chargeback postbacks: see signRefund and signChargeback.
 * The values are hashed exactly as received (the string "18.50", never a re-formatted number).
 */

/**
 * crypto.hash, the one-shot digest (Node 21.7 and 20.12 on): no Hash object per signature, about
 * half the cost of createHash for a postback's few bytes. Where it is missing, createHash.
 */
const oneShotHash: typeof crypto.hash | undefined = crypto.hash;

export function md5Upper(input: string): string {
	const hex = oneShotHash
		? oneShotHash('md5', input, 'hex')
		: crypto.createHash('md5').update(input, 'utf8').digest('hex');
	return hex.toUpperCase();
}

export function signPayment(outSum: string, invId: string, token: string): string {
	return md5Upper(`${outSum}:${invId}:${token}`);
}

export function signPayout(amount: string, trsId: string, token: string): string {
	return md5Upper(`${amount}:${trsId}:${token}`);
}

const MD5_HEX = /^[0-9a-fA-F]{32}$/;

export function isWellFormedSignature(value: unknown): value is string {
	return typeof value === 'string' && MD5_HEX.test(value);
}

/**
 * Compares an expected signature with a received one: case-insensitive and in constant time
 * for well-formed input (both are 32 hex characters once the shape is checked).
 */
export function signaturesMatch(expected: string, received: string): boolean {
	if (!isWellFormedSignature(expected) || !isWellFormedSignature(received)) return false;
	const a = Buffer.from(expected.toUpperCase(), 'ascii');
	const b = Buffer.from(received.toUpperCase(), 'ascii');
	return crypto.timingSafeEqual(a, b);
}

/**
 * Refund postback (docs/developer/service.md): upper-case MD5 of
 * `Amount:Currency:BillId:PaymentId:Id:token`.
 */
export function signRefund(
	fields: { Amount: string; Currency: string; BillId: string; PaymentId: string; Id: string },
	token: string,
): string {
	return md5Upper(
		`${fields.Amount}:${fields.Currency}:${fields.BillId}:${fields.PaymentId}:${fields.Id}:${token}`,
	);
}

/**
 * Chargeback postback (docs/developer/service.md): upper-case MD5 of
 * `BillId:PaymentId:Id:token`.
 */
export function signChargeback(
	fields: { BillId: string; PaymentId: string; Id: string },
	token: string,
): string {
	return md5Upper(`${fields.BillId}:${fields.PaymentId}:${fields.Id}:${token}`);
}
