/** Status values of the service, as the interface document lists them. */

export const BILL_STATUSES = [
	'NEW',
	'PROCESS',
	'UNDERPAID',
	'SUCCESS',
	'OVERPAID',
	'FAIL',
] as const;
export const PAYMENT_STATUSES = BILL_STATUSES;
export const PAYOUT_STATUSES = [
	'NEW',
	'MODERATING',
	'PROCESS',
	'SUCCESS',
	'FAIL',
	'ERROR',
	'DECLINED',
] as const;

/** Statuses the payment postback (Result URL) carries. */
export const PAYMENT_POSTBACK_STATUSES = ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL'] as const;
/** Statuses the payout postback (payout webhook) carries. */
export const PAYOUT_POSTBACK_STATUSES = ['SUCCESS', 'DECLINED', 'FAIL'] as const;

/**
 * The payout records that confirm a payout postback's Status. The document lists FAIL and ERROR as
 * payout statuses but only FAIL in postbacks: a FAIL postback reports either failure. DECLINED is
 * confirmed only by DECLINED, SUCCESS only by SUCCESS. A status not listed here is confirmed only
 * by the same status.
 */
export const PAYOUT_POSTBACK_CONFIRMED_BY: Readonly<Record<string, readonly string[]>> = {
	SUCCESS: ['SUCCESS'],
	FAIL: ['FAIL', 'ERROR'],
	DECLINED: ['DECLINED'],
};

export type BillStatus = (typeof BILL_STATUSES)[number];
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** OVERPAID counts as paid; UNDERPAID does not. */
export const PAID_STATUSES: readonly string[] = ['SUCCESS', 'OVERPAID'];

/**
 * The one canonical form of a status: trimmed and upper case (`" success"` is `SUCCESS`). Used
 * for dedupe keys, the trigger's status filter and `paid`, so that no spelling of a status is
 * treated differently by one of them.
 */
export function canonicalStatus(status: unknown): string {
	return typeof status === 'string' ? status.trim().toUpperCase() : '';
}

export function isPaidStatus(status: unknown): boolean {
	return PAID_STATUSES.includes(canonicalStatus(status));
}

export const CURRENCIES_IN = ['RUB', 'USD', 'EUR'] as const;
export const BILL_TYPES = ['normal', 'multi'] as const;
export const PAYMENT_METHODS = ['BANK_CARD', 'SBP'] as const;
/**
 * Where payout/regular/create pays: the interface document lists credit_card and sbp; the
 * service's current reference adds a crypto wallet (with its network) and a Steam login.
 */
export const PAYOUT_ACCOUNT_TYPES = ['credit_card', 'sbp', 'crypto', 'steam'] as const;
/** The networks of a crypto payout (`account_network`): Tron and Ethereum. */
export const PAYOUT_NETWORKS = ['TRX', 'ETH'] as const;
/**
 * The currencies of payouts: the bill currencies and USDT, as a payout postback's `Currency` (and
 * a refund postback's) lists them. A crypto payout's Currency and the balance a payout is taken
 * from (Account Currency, `account_currency`) are one of them; cards, SBP and Steam are paid in RUB.
 */
export const PAYOUT_CURRENCIES = ['RUB', 'USD', 'EUR', 'USDT'] as const;
