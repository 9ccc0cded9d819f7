/**
 * The sandbox's in-memory state and the money that moves in it. All amounts are integer cents.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { formatDateTime, startOfUtcDay, startOfUtcMonth } from './dates.ts';
import { format2, share, toNumber } from './money.ts';

export const CURRENCIES = ['RUB', 'USD', 'EUR'] as const;
export type Currency = (typeof CURRENCIES)[number];
export type BillStatus = 'NEW' | 'PROCESS' | 'UNDERPAID' | 'SUCCESS' | 'OVERPAID' | 'FAIL';
export type PayoutStatus = 'NEW' | 'MODERATING' | 'PROCESS' | 'SUCCESS' | 'FAIL' | 'ERROR' | 'DECLINED';
export type Subscription = 'active' | 'inactive' | 'none';
export type PaymentMethod = 'BANK_CARD' | 'SBP';
export type Outcome = 'full' | 'under' | 'over' | 'fail' | 'process';
export type RegularDirection = 'credit_card' | 'sbp';

/** Incoming payments: 3 % of the amount paid towards the bill. */
export const INCOMING_COMMISSION_BP = 300;
/** Payouts: 2 % of each payout plus 10.00 RUB per payout, paid by the sender (the merchant). */
export const PAYOUT_COMMISSION_BP = 200;
export const PAYOUT_FIXED_COMMISSION = 1000;
export const MAX_PAYOUT_PARTS = 1000;

export interface Balance {
	available: number;
	locked: number;
	hold: number;
}

export interface Merchant {
	id: string;
	token: string;
	exists: boolean;
	banned: boolean;
	verified: boolean;
	subscription: Subscription;
	regularPayoutsEnabled: boolean;
	regularDirections: RegularDirection[];
	balances: Record<Currency, Balance>;
	dailyPayoutLimit: number | null;
	monthlyPayoutLimit: number | null;
	payoutSplitSize: number | null;
	payoutWebhookUrl: string | null;
	tooManyPaymentsThreshold: number;
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
}

export interface PayoutAccount {
	id: string;
	merchantId: string;
	accountType: 'BANK_CARD' | 'SBP';
	accountNumber: string;
	banned: boolean;
	directionAvailable: boolean;
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
}

export interface Payment {
	id: string;
	billId: string;
	merchantId: string;
	status: BillStatus;
	/** The total the payer paid (OutSum). */
	amount: number;
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
	amount: number;
	commission: number;
	accountType: 'BANK_CARD' | 'SBP';
	accountIdentifier: string;
	currency: 'RUB';
	createdAt: number;
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

/** 220070******1234: the first six and the last four digits. */
export function maskCard(number: string): string {
	const digits = number.replace(/\D/g, '');
	if (digits.length < 11) return digits;
	return `${digits.slice(0, 6)}${'*'.repeat(digits.length - 10)}${digits.slice(-4)}`;
}

export function isFinalPayout(status: PayoutStatus): boolean {
	return status === 'SUCCESS' || status === 'FAIL' || status === 'ERROR' || status === 'DECLINED';
}

export function isPaidStatus(status: BillStatus): boolean {
	return status === 'SUCCESS' || status === 'OVERPAID';
}

export interface MerchantDefaults {
	rubBalance: number;
	payoutSplitSize: number | null;
}

export const DEFAULTS: MerchantDefaults = { rubBalance: 10_000_000, payoutSplitSize: 5_000_000 };

export interface StateOptions {
	/** Delivers a postback (kind, url, fields, trsId). */
	deliver: (kind: 'payment' | 'payout', url: string, fields: Fields, trsId: string) => void;
	/** Payout auto-advance step in ms (already scaled), 0 = off. */
	autoAdvanceMs: number;
}

export class State {
	merchants = new Map<string, Merchant>();
	tokens = new Map<string, string>();
	shops = new Map<string, Shop>();
	accounts = new Map<string, PayoutAccount>();
	bills = new Map<string, Bill>();
	payments = new Map<string, Payment>();
	payouts = new Map<string, Payout>();
	clockOffsetMs = 0;
	private tokenSeq = 71;
	private timers = new Set<NodeJS.Timeout>();
	private readonly options: StateOptions;

	constructor(options: StateOptions) {
		this.options = options;
	}

	now(): number {
		return Date.now() + this.clockOffsetMs;
	}

	newToken(): string {
		this.tokenSeq += 1;
		return `${this.tokenSeq}|${randomId(40)}`;
	}

	// ---------------------------------------------------------------- merchants, shops, accounts

	createMerchant(init: { id?: string; token?: string } = {}): Merchant {
		const id = init.id ?? `M${randomId(9)}`;
		const token = init.token ?? this.newToken();
		if (this.tokens.has(token)) throw new SandboxError(409, 'token_taken', 'that token belongs to another merchant');
		const merchant: Merchant = {
			id,
			token,
			exists: true,
			banned: false,
			verified: true,
			subscription: 'active',
			regularPayoutsEnabled: true,
			regularDirections: ['credit_card', 'sbp'],
			balances: {
				RUB: { available: DEFAULTS.rubBalance, locked: 0, hold: 0 },
				USD: { available: 0, locked: 0, hold: 0 },
				EUR: { available: 0, locked: 0, hold: 0 },
			},
			dailyPayoutLimit: null,
			monthlyPayoutLimit: null,
			payoutSplitSize: DEFAULTS.payoutSplitSize,
			payoutWebhookUrl: null,
			tooManyPaymentsThreshold: 1000,
		};
		this.merchants.set(id, merchant);
		this.tokens.set(token, id);
		return merchant;
	}

	merchantByToken(token: string): Merchant | undefined {
		const id = this.tokens.get(token);
		return id === undefined ? undefined : this.merchants.get(id);
	}

	rotateToken(merchant: Merchant, token?: string): string {
		const next = token ?? this.newToken();
		if (this.tokens.has(next)) throw new SandboxError(409, 'token_taken', 'that token belongs to a merchant');
		this.tokens.delete(merchant.token);
		merchant.token = next;
		this.tokens.set(next, merchant.id);
		return next;
	}

	createShop(merchantId: string, init: Partial<Omit<Shop, 'merchantId'>> = {}): Shop {
		const shop: Shop = {
			id: init.id ?? randomId(10),
			merchantId,
			name: init.name ?? 'Demo shop',
			resultUrl: init.resultUrl ?? null,
			successUrl: init.successUrl ?? null,
			failUrl: init.failUrl ?? null,
			defaultCurrency: init.defaultCurrency ?? 'RUB',
			enabled: init.enabled ?? true,
			accessDenied: init.accessDenied ?? false,
		};
		this.shops.set(shop.id, shop);
		return shop;
	}

	createAccount(merchantId: string, init: Partial<Omit<PayoutAccount, 'merchantId'>> = {}): PayoutAccount {
		const account: PayoutAccount = {
			id: init.id ?? randomId(10),
			merchantId,
			accountType: init.accountType ?? 'BANK_CARD',
			accountNumber: init.accountNumber ?? '2200700012345678',
			banned: init.banned ?? false,
			directionAvailable: init.directionAvailable ?? true,
		};
		this.accounts.set(account.id, account);
		return account;
	}

	// ---------------------------------------------------------------- bills and payments

	createBill(init: Omit<Bill, 'id' | 'status' | 'active' | 'createdAt'>): Bill {
		const bill: Bill = { ...init, id: randomId(10), status: 'NEW', active: true, createdAt: this.now() };
		this.bills.set(bill.id, bill);
		return bill;
	}

	paymentsOf(billId: string): Payment[] {
		return [...this.payments.values()].filter((payment) => payment.billId === billId);
	}

	/** Why a bill cannot take a payment now, or null. */
	payRefusal(bill: Bill): SandboxError | null {
		if (bill.type === 'NORMAL' && isPaidStatus(bill.status)) {
			return new SandboxError(409, 'bill_is_finished', 'this bill is already paid');
		}
		if (!bill.active) return new SandboxError(409, 'bill_inactive', 'this bill is switched off');
		const merchant = this.merchants.get(bill.merchantId);
		const shop = this.shops.get(bill.shopId);
		if (!merchant || !merchant.exists || merchant.banned) {
			return new SandboxError(409, 'merchant_unavailable', 'the merchant cannot accept payments');
		}
		if (!shop || !shop.enabled) return new SandboxError(409, 'shop_not_enabled', 'the shop is switched off');
		return null;
	}

	/**
	 * One payment on a bill. `amount` (cents paid towards the bill, before a payer commission)
	 * decides the status when given; otherwise the outcome does: full = the bill amount,
	 * under = half of it, over = one and a half times it, fail = the bill amount, not charged;
	 * process = a payment still in PROCESS (no credit, no postback, no redirect).
	 */
	pay(bill: Bill, request: { outcome?: Outcome; method?: PaymentMethod; amount?: number }): PayResult {
		const refusal = this.payRefusal(bill);
		if (refusal) throw refusal;
		const merchant = this.merchants.get(bill.merchantId) as Merchant;
		const shop = this.shops.get(bill.shopId) as Shop;
		const outcome = request.outcome ?? 'full';
		const method: PaymentMethod = bill.paymentMethod ?? request.method ?? 'BANK_CARD';
		let base: number;
		let status: BillStatus;
		if (outcome === 'process') {
			base = request.amount ?? bill.amount;
			status = 'PROCESS';
		} else if (request.amount !== undefined) {
			base = request.amount;
			status =
				outcome === 'fail' ? 'FAIL' : base < bill.amount ? 'UNDERPAID' : base > bill.amount ? 'OVERPAID' : 'SUCCESS';
		} else if (outcome === 'under') {
			base = Math.max(1, Math.floor(bill.amount / 2));
			status = base < bill.amount ? 'UNDERPAID' : 'SUCCESS';
		} else if (outcome === 'over') {
			base = bill.amount + Math.max(1, Math.floor(bill.amount / 2));
			status = 'OVERPAID';
		} else {
			base = bill.amount;
			status = outcome === 'fail' ? 'FAIL' : 'SUCCESS';
		}
		const fee = share(base, INCOMING_COMMISSION_BP);
		const outSum = bill.payerPaysCommission ? base + fee : base;
		const failed = status === 'FAIL' || status === 'PROCESS';
		const commission = failed ? 0 : fee;
		const received = failed ? 0 : bill.payerPaysCommission ? base : base - fee;
		const payment: Payment = {
			id: randomId(12),
			billId: bill.id,
			merchantId: merchant.id,
			status,
			amount: outSum,
			received,
			commission,
			method,
			fromCard:
				method === 'SBP'
					? `+79*****${String(randomInt(0, 10_000)).padStart(4, '0')}`
					: `${['220070', '427601', '553691'][randomInt(0, 3)]}******${String(randomInt(0, 10_000)).padStart(4, '0')}`,
			currency: bill.currency,
			createdAt: this.now(),
		};
		this.payments.set(payment.id, payment);
		merchant.balances[bill.currency].available += received;
		bill.status = status;

		const invId = bill.orderId ?? '';
		const outSumText = format2(outSum);
		const signature = md5Upper(`${outSumText}:${invId}:${merchant.token}`);
		let postback: Fields | null = null;
		if (shop.resultUrl && status !== 'PROCESS') {
			postback = {
				InvId: invId,
				OutSum: outSumText,
				Commission: format2(commission),
				Currency: bill.currency,
				CurrencyIn: bill.currency,
				TrsId: payment.id,
				Status: status,
				...(bill.custom !== null ? { custom: bill.custom } : {}),
				AccountType: method,
				AccountNumber: payment.fromCard,
				BalanceAmount: format2(received),
				BalanceCurrency: bill.currency,
				SignatureValue: signature,
			};
			this.options.deliver('payment', shop.resultUrl, postback, payment.id);
		}
		const redirect: Redirect = {
			url: status === 'PROCESS' ? null : isPaidStatus(status) ? shop.successUrl : shop.failUrl,
			fields: { InvId: invId, OutSum: outSumText, CurrencyIn: bill.currency, custom: bill.custom ?? '', SignatureValue: signature },
		};
		return { payment, postback, redirect };
	}

	// ---------------------------------------------------------------- payouts

	static payoutCommission(amount: number): number {
		return share(amount, PAYOUT_COMMISSION_BP) + PAYOUT_FIXED_COMMISSION;
	}

	/** The parts a payout is split into (each at most the merchant's split size). */
	static splitParts(total: number, splitSize: number | null): number[] | null {
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
	payoutVolumeSince(merchantId: string, from: number): number {
		let total = 0;
		for (const payout of this.payouts.values()) {
			if (payout.merchantId !== merchantId || payout.createdAt < from) continue;
			if (payout.status === 'FAIL' || payout.status === 'ERROR' || payout.status === 'DECLINED') continue;
			total += payout.amount;
		}
		return total;
	}

	/** The limit that a new payout volume would break, or null. */
	limitBroken(merchant: Merchant, amount: number): 'daily_payout_limit_exceeded' | 'monthly_payout_limit_exceeded' | null {
		const now = this.now();
		if (merchant.dailyPayoutLimit !== null) {
			if (this.payoutVolumeSince(merchant.id, startOfUtcDay(now)) + amount > merchant.dailyPayoutLimit) {
				return 'daily_payout_limit_exceeded';
			}
		}
		if (merchant.monthlyPayoutLimit !== null) {
			if (this.payoutVolumeSince(merchant.id, startOfUtcMonth(now)) + amount > merchant.monthlyPayoutLimit) {
				return 'monthly_payout_limit_exceeded';
			}
		}
		return null;
	}

	orderIdTaken(merchantId: string, orderId: string): boolean {
		for (const payout of this.payouts.values()) {
			if (payout.merchantId === merchantId && payout.orderId === orderId) return true;
		}
		return false;
	}

	/** Creates the payouts of one request (already checked) and locks their money. */
	createPayouts(
		merchant: Merchant,
		parts: number[],
		request: { orderId: string | null; kind: 'personal' | 'regular'; accountType: 'BANK_CARD' | 'SBP'; accountIdentifier: string },
	): Payout[] {
		const createdAt = this.now();
		const created = parts.map((amount): Payout => {
			const payout: Payout = {
				id: randomId(12),
				merchantId: merchant.id,
				orderId: request.orderId,
				kind: request.kind,
				status: 'MODERATING',
				amount,
				commission: State.payoutCommission(amount),
				accountType: request.accountType,
				accountIdentifier: request.accountIdentifier,
				currency: 'RUB',
				createdAt,
			};
			const balance = merchant.balances.RUB;
			balance.available -= payout.amount + payout.commission;
			balance.locked += payout.amount + payout.commission;
			this.payouts.set(payout.id, payout);
			return payout;
		});
		if (this.options.autoAdvanceMs > 0) {
			for (const payout of created) this.scheduleAdvance(payout.id, ['PROCESS', 'SUCCESS']);
		}
		return created;
	}

	private scheduleAdvance(payoutId: string, steps: PayoutStatus[]): void {
		const [next, ...rest] = steps;
		if (next === undefined) return;
		const timer = setTimeout(() => {
			this.timers.delete(timer);
			const payout = this.payouts.get(payoutId);
			if (!payout || isFinalPayout(payout.status)) return;
			this.advancePayout(payout, next);
			this.scheduleAdvance(payoutId, rest);
		}, this.options.autoAdvanceMs);
		this.timers.add(timer);
	}

	/** Moves a payout on; a final status settles the locked money and sends the payout postback. */
	advancePayout(payout: Payout, status: PayoutStatus): Payout {
		if (isFinalPayout(payout.status)) {
			throw new SandboxError(409, 'payout_is_final', `the payout is already ${payout.status}`);
		}
		if (status === 'NEW' || status === 'MODERATING' || status === payout.status) {
			throw new SandboxError(409, 'bad_transition', `cannot move a ${payout.status} payout to ${status}`);
		}
		const merchant = this.merchants.get(payout.merchantId) as Merchant;
		const total = payout.amount + payout.commission;
		const balance = merchant.balances.RUB;
		payout.status = status;
		if (status === 'SUCCESS') {
			balance.locked -= total;
		} else if (status === 'FAIL' || status === 'ERROR' || status === 'DECLINED') {
			balance.locked -= total;
			balance.available += total;
		}
		if ((status === 'SUCCESS' || status === 'FAIL' || status === 'DECLINED') && merchant.payoutWebhookUrl) {
			this.options.deliver('payout', merchant.payoutWebhookUrl, this.payoutPostback(payout, merchant), payout.id);
		}
		return payout;
	}

	payoutPostback(payout: Payout, merchant: Merchant): Fields {
		const amount = format2(payout.amount + payout.commission);
		return {
			TrsId: payout.id,
			Amount: amount,
			IsAuto: 'false',
			Status: payout.status,
			Currency: payout.currency,
			Commission: format2(payout.commission),
			AccountType: payout.accountType,
			AccountNumber: payout.accountIdentifier,
			BalanceAmount: amount,
			BalanceCommission: format2(payout.commission),
			BalanceCurrency: payout.currency,
			CommissionApplyType: 'sender',
			SignatureValue: md5Upper(`${amount}:${payout.id}:${merchant.token}`),
		};
	}

	dispose(): void {
		for (const timer of this.timers) clearTimeout(timer);
		this.timers.clear();
	}
}

// -------------------------------------------------------------------- wire shapes

export function billView(bill: Bill): Record<string, unknown> {
	return {
		id: bill.id,
		status: bill.status,
		amount: toNumber(bill.amount),
		type: bill.type,
		currency_in: bill.currency,
		created_at: formatDateTime(bill.createdAt),
		order_id: bill.orderId,
		active: bill.active,
	};
}

export function paymentView(payment: Payment): Record<string, unknown> {
	return {
		id: payment.id,
		bill_id: payment.billId,
		status: payment.status,
		amount: toNumber(payment.amount),
		amount_received: toNumber(payment.received),
		commission: toNumber(payment.commission),
		from_card: payment.fromCard,
		currency_in: payment.currency,
		created_at: formatDateTime(payment.createdAt),
	};
}

export function payoutView(payout: Payout): Record<string, unknown> {
	return {
		id: payout.id,
		status: payout.status,
		amount: toNumber(payout.amount),
		commission: toNumber(payout.commission),
		account_identifier: payout.accountIdentifier,
		currency: payout.currency,
		created_at: formatDateTime(payout.createdAt),
		order_id: payout.orderId,
	};
}
