/**
 * What the sandbox keeps: merchants, shops, payout accounts, bills, payments and payouts, with
 * the statuses and fees the service uses. All amounts are integer cents.
 */
import { createHash, randomBytes } from 'node:crypto';

export const CURRENCIES = ['RUB', 'USD', 'EUR'] as const;
export type Currency = (typeof CURRENCIES)[number];
/** Balances and payout currencies: the bill currencies and USDT (the `live` profile's crypto). */
export const BALANCE_CURRENCIES = [...CURRENCIES, 'USDT'] as const;
export type BalanceCurrency = (typeof BALANCE_CURRENCIES)[number];
export const BILL_STATUSES = [
	'NEW',
	'PROCESS',
	'UNDERPAID',
	'SUCCESS',
	'OVERPAID',
	'FAIL',
] as const;
export type BillStatus = (typeof BILL_STATUSES)[number];
export const PAYOUT_STATUSES = [
	'NEW',
	'MODERATING',
	'PROCESS',
	'SUCCESS',
	'FAIL',
	'ERROR',
	'DECLINED',
] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];
/** Statuses a payment postback carries (a payment still in PROCESS sends none). */
export const PAYMENT_POSTBACK_STATUSES: readonly BillStatus[] = [
	'SUCCESS',
	'UNDERPAID',
	'OVERPAID',
	'FAIL',
];
/** Statuses a payout postback carries (ERROR is final but sends none). */
export const PAYOUT_POSTBACK_STATUSES: readonly PayoutStatus[] = ['SUCCESS', 'FAIL', 'DECLINED'];
export const PAID_STATUSES: readonly BillStatus[] = ['SUCCESS', 'OVERPAID'];
export const FINAL_PAYOUT_STATUSES: readonly PayoutStatus[] = [
	'SUCCESS',
	'FAIL',
	'ERROR',
	'DECLINED',
];
export type Subscription = 'active' | 'inactive' | 'none';
/**
 * How the sandbox answers where the interface document leaves a choice open
 * (docs/developer/service.md): `live`, what public integrations see (the sandbox's behaviour
 * before profiles); `spec`, the other answer the document allows (see sandbox/README.md).
 */
export const PROFILES = ['live', 'spec'] as const;
export type Profile = (typeof PROFILES)[number];
/** Bill types as bill/create takes them (either case); answers give them upper case. */
export const BILL_TYPES = ['normal', 'multi'] as const;
export const PAYMENT_METHODS = ['BANK_CARD', 'SBP'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];
export type Outcome = 'full' | 'under' | 'over' | 'fail' | 'process';
/** payout/regular/create's `account_type`: the document's two, and crypto and steam (`live` only). */
export const REGULAR_DIRECTIONS = ['credit_card', 'sbp', 'crypto', 'steam'] as const;
export type RegularDirection = (typeof REGULAR_DIRECTIONS)[number];
/** What a payout goes to: a card, a phone number, a crypto wallet or a Steam login. */
export type AccountKind = 'BANK_CARD' | 'SBP' | 'CRYPTO' | 'STEAM';

export interface Balance {
	available: number;
	locked: number;
	hold: number;
}

/** What a payment postback's `TrsId` names: the payment (the reference's text) or its bill (its examples). */
export const TRS_ID_KINDS = ['payment', 'bill'] as const;
export type TrsIdKind = (typeof TRS_ID_KINDS)[number];
/**
 * Where an error answer carries its `api:error.*` key: `message` (the interface document) or
 * `error_code` with a human `error_message` beside it (seen on some answers:
 * docs/developer/service.md).
 */
export const ERROR_FORMS = ['message', 'error_code'] as const;
export type ErrorForm = (typeof ERROR_FORMS)[number];

/**
 * The switches for answers the live service is seen to give beyond the interface document
 * (docs/developer/service.md). Each works in either profile; new merchants take the instance's
 * value, the control API sets one.
 */
export interface MerchantSwitches {
	/** What `TrsId` in payment postbacks names (default `payment`). */
	trsId: TrsIdKind;
	/** Where error answers carry their key (default `message`). */
	errorForm: ErrorForm;
	/** bill/search refuses a request without `shop_id` (422), as one deployment does (default false). */
	requireShopId: boolean;
	/**
	 * Payment answers in their newer form: no `amount_received`; `commission`, `account_amount`,
	 * `account_currency_code` and `refunded_amount` instead (default false).
	 */
	newPaymentFields: boolean;
	/** `order_id` on bill answers in the `live` profile (default true; `spec` never shows it). */
	billOrderId: boolean;
	/** Rows per page of bill/payments when the request names no `per_page` (default 15). */
	paymentsPageSize: number;
	/** The refund API is switched on for this merchant (default false: the service's refusal). */
	refunds: boolean;
}

export const SWITCH_DEFAULTS: MerchantSwitches = {
	trsId: 'payment',
	errorForm: 'message',
	requireShopId: false,
	newPaymentFields: false,
	billOrderId: true,
	paymentsPageSize: 15,
	refunds: false,
};

export interface Merchant extends MerchantSwitches {
	id: string;
	token: string;
	exists: boolean;
	banned: boolean;
	verified: boolean;
	subscription: Subscription;
	regularPayoutsEnabled: boolean;
	regularDirections: RegularDirection[];
	balances: Record<BalanceCurrency, Balance>;
	dailyPayoutLimit: number | null;
	monthlyPayoutLimit: number | null;
	payoutSplitSize: number | null;
	payoutWebhookUrl: string | null;
	tooManyPaymentsThreshold: number;
	/**
	 * Emulate the fields the live service is seen to add beyond the interface document
	 * (docs/developer/service.md): `order_id` and `active` on bills, `commission` on payments,
	 * `order_id` on payouts, and AccountType, AccountNumber, BalanceAmount, BalanceCurrency in
	 * payment postbacks. Off: answers and postbacks carry exactly the document's fields.
	 */
	liveExtras: boolean;
	/** How this merchant's API answers and postbacks look where the document is silent (see PROFILES). */
	profile: Profile;
	/** Rows per page of bill/search and payout/search in the `spec` profile (it ignores `per_page`). */
	searchPageSize: number;
	/**
	 * Lose every postback of this merchant (payments and payouts): the service gives up on it
	 * without sending anything, as when the merchant's endpoint failed all its retries. The
	 * delivery log shows it as lost. The records (bills, payments, payouts) are unchanged.
	 */
	losePostbacks: boolean;
	/** The merchant's API IP allow-list: a request from another address answers `ip_access_denied` (null: any). */
	ipAllowList: string[] | null;
	/** How many of the next bill/create requests answer `transaction_rejected`. */
	rejectBills: number;
}

export interface Shop {
	id: string;
	merchantId: string;
	name: string;
	resultUrl: string | null;
	successUrl: string | null;
	failUrl: string | null;
	defaultCurrency: string;
	enabled: boolean;
	accessDenied: boolean;
	/** Where refund postbacks go (null: the Result URL). */
	refundUrl: string | null;
	/** Where chargeback postbacks go (null: the Result URL). */
	chargebackUrl: string | null;
	/** The shop's site (a host name): a bill's `return_url` must be on it or a subdomain (null: any). */
	domain: string | null;
}

export interface PayoutAccount {
	id: string;
	merchantId: string;
	accountType: AccountKind;
	accountNumber: string;
	banned: boolean;
	directionAvailable: boolean;
}

/** A line of a bill's `items` as bill/create took it: name, price, quantity and any further text fields. */
export interface BillItem {
	name: string;
	/** Cents. */
	price: number;
	/** As given (a positive decimal, e.g. `1` or `0.5`). */
	quantity: string;
	/** Other fields of the item (`vat`, `sku`, ...), kept as text. */
	more: Record<string, string>;
}

/** What bill/create takes beyond the document (docs/developer/service.md), each only if given. */
export interface BillExtras {
	/** Seconds the bill lives; it takes no payment after `createdAt + ttl`. */
	ttl?: number;
	locale?: 'ru' | 'en';
	payerEmail?: string;
	/** The bill's own Success / Fail URL (instead of the shop's) and its return link. */
	successUrl?: string;
	failUrl?: string;
	returnUrl?: string;
	/** Which payer fields the payment page asks for (`request_fields[email]=1`). */
	requestFields?: Record<string, boolean>;
	items?: BillItem[];
}

export interface Bill {
	id: string;
	merchantId: string;
	shopId: string;
	amount: number;
	type: 'NORMAL' | 'MULTI';
	currency: Currency;
	orderId: string | null;
	description: string | null;
	custom: string | null;
	name: string | null;
	payerPaysCommission: boolean;
	paymentMethod: PaymentMethod | null;
	status: BillStatus;
	active: boolean;
	createdAt: number;
	/** Lose the payment postbacks of this bill (see Merchant.losePostbacks). */
	losePostback: boolean;
	/** The fields beyond the document bill/create was given (absent: none). */
	extras?: BillExtras;
}

export interface Payment {
	id: string;
	billId: string;
	merchantId: string;
	status: BillStatus;
	/** The total the payer paid (OutSum). */
	amount: number;
	/** The part of `amount` that is the commission the payer paid on top (0 when the merchant pays it). */
	payerCommission: number;
	/** The net amount credited to the merchant (BalanceAmount). */
	received: number;
	commission: number;
	method: PaymentMethod;
	fromCard: string;
	currency: Currency;
	createdAt: number;
}

export interface Payout {
	id: string;
	merchantId: string;
	orderId: string | null;
	kind: 'personal' | 'regular';
	status: PayoutStatus;
	/** The payout's amount and fee, in `currency` (cents). */
	amount: number;
	commission: number;
	accountType: AccountKind;
	accountIdentifier: string;
	/** A crypto payout's network (`account_network`), else null. */
	network: 'TRX' | 'ETH' | null;
	currency: BalanceCurrency;
	/** The balance it is taken from, what it takes (amount, + commission unless the recipient pays) and the fee in it. */
	accountCurrency: BalanceCurrency;
	accountAmount: number;
	accountCommission: number;
	recipientPays: boolean;
	errorCode: number | null;
	errorMessage: string | null;
	createdAt: number;
}

/** Money a merchant sent back to the payer of a payment (refund/full/create, refund/partial/create). */
export interface Refund {
	id: string;
	merchantId: string;
	paymentId: string;
	billId: string;
	/** The merchant's own id for the refund (unique per merchant), or null. */
	orderId: string | null;
	kind: 'full' | 'partial';
	/** Cents. */
	amount: number;
	currency: Currency;
	/** Refunds are carried out at once in the sandbox. */
	status: 'SUCCESS';
	createdAt: number;
}

/** A payment the payer's bank took back (made by the control API). */
export interface Chargeback {
	id: string;
	merchantId: string;
	paymentId: string;
	billId: string;
	/** Cents. */
	amount: number;
	currency: Currency;
	status: 'SUCCESS';
	createdAt: number;
}

/** The signature of refund postbacks: MD5(Amount:Currency:BillId:PaymentId:Id:token), upper case. */
export function refundSignature(
	fields: { Amount: string; Currency: string; BillId: string; PaymentId: string; Id: string },
	token: string,
): string {
	return md5Upper(
		`${fields.Amount}:${fields.Currency}:${fields.BillId}:${fields.PaymentId}:${fields.Id}:${token}`,
	);
}

/** The signature of chargeback postbacks: MD5(BillId:PaymentId:Id:token), upper case. */
export function chargebackSignature(
	fields: { BillId: string; PaymentId: string; Id: string },
	token: string,
): string {
	return md5Upper(`${fields.BillId}:${fields.PaymentId}:${fields.Id}:${token}`);
}

export type Fields = Record<string, string>;

export interface Redirect {
	url: string | null;
	fields: Fields;
}

export interface PayResult {
	payment: Payment;
	postback: Fields | null;
	redirect: Redirect;
}

/** A refusal of a control or page action (not an API error). */
export class SandboxError extends Error {
	readonly status: number;
	readonly code: string;
	constructor(status: number, code: string, message: string) {
		super(message);
		this.status = status;
		this.code = code;
	}
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomId(length = 10): string {
	const bytes = randomBytes(length);
	let out = '';
	for (const byte of bytes) out += ALNUM[byte % ALNUM.length];
	return out;
}

export function md5Upper(text: string): string {
	return createHash('md5').update(text, 'utf8').digest('hex').toUpperCase();
}

/** The signature of payment postbacks and redirects: MD5(OutSum:InvId:token), upper case. */
export function paymentSignature(outSum: string, invId: string, token: string): string {
	return md5Upper(`${outSum}:${invId}:${token}`);
}

/** The signature of payout postbacks: MD5(Amount:TrsId:token), upper case. */
export function payoutSignature(amount: string, trsId: string, token: string): string {
	return md5Upper(`${amount}:${trsId}:${token}`);
}

/** 220070******1234: the first six and the last four digits. */
export function maskCard(number: string): string {
	const digits = number.replace(/\D/g, '');
	if (digits.length < 11) return digits;
	return `${digits.slice(0, 6)}${'*'.repeat(digits.length - 10)}${digits.slice(-4)}`;
}

export function isFinalPayout(status: PayoutStatus): boolean {
	return FINAL_PAYOUT_STATUSES.includes(status);
}

export function isPaidStatus(status: BillStatus): boolean {
	return PAID_STATUSES.includes(status);
}

export interface MerchantDefaults {
	rubBalance: number;
	payoutSplitSize: number | null;
}

export const DEFAULTS: MerchantDefaults = { rubBalance: 10_000_000, payoutSplitSize: 5_000_000 };
