/**
 * The sandbox's in-memory state: the records (see model.ts), the clock, merchant tokens, and the
 * timers and postback deliveries the money rules (billing.ts, payouts.ts) start.
 */
import {
	DEFAULTS,
	randomId,
	REGULAR_DIRECTIONS,
	SandboxError,
	type Bill,
	type Chargeback,
	type Refund,
	type Fields,
	type Merchant,
	type MerchantSwitches,
	SWITCH_DEFAULTS,
	type Payment,
	type Payout,
	type PayoutAccount,
	type Profile,
	type Shop,
} from './model.ts';
import type { PostbackEncoding, PostbackKind } from './postbacks.ts';

export interface StateOptions {
	/** Delivers a postback (kind, url, fields, trsId). */
	deliver: (
		kind: PostbackKind,
		url: string,
		fields: Fields,
		trsId: string,
		how: { lost: boolean; encoding: PostbackEncoding },
	) => void;
	/** Payout auto-advance step in ms (already scaled), 0 = off. */
	autoAdvanceMs: number;
	/** Whether new merchants emulate the live service's extra fields (see Merchant.liveExtras). */
	liveExtras: boolean;
	/** The profile of new merchants (see Merchant.profile; default `live`). */
	profile?: Profile;
	/** The switches new merchants start with (see MerchantSwitches; unset ones take SWITCH_DEFAULTS). */
	switches?: Partial<MerchantSwitches>;
}

/** Rows per page of the `spec` profile's searches: Laravel's default. */
export const SPEC_PAGE_SIZE = 15;

export class State {
	merchants = new Map<string, Merchant>();
	tokens = new Map<string, string>();
	shops = new Map<string, Shop>();
	accounts = new Map<string, PayoutAccount>();
	bills = new Map<string, Bill>();
	payments = new Map<string, Payment>();
	payouts = new Map<string, Payout>();
	refunds = new Map<string, Refund>();
	chargebacks = new Map<string, Chargeback>();
	clockOffsetMs = 0;
	readonly options: StateOptions;
	private tokenSeq = 71;
	private timers = new Set<NodeJS.Timeout>();

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

	/** Runs `run` after `ms`; cancelled by dispose(). */
	later(ms: number, run: () => void): void {
		const timer = setTimeout(() => {
			this.timers.delete(timer);
			run();
		}, ms);
		this.timers.add(timer);
	}

	createMerchant(init: { id?: string; token?: string } = {}): Merchant {
		const id = init.id ?? `M${randomId(9)}`;
		const token = init.token ?? this.newToken();
		if (this.tokens.has(token))
			throw new SandboxError(409, 'token_taken', 'that token belongs to another merchant');
		const merchant: Merchant = {
			id,
			token,
			exists: true,
			banned: false,
			verified: true,
			subscription: 'active',
			regularPayoutsEnabled: true,
			regularDirections: [...REGULAR_DIRECTIONS],
			balances: {
				RUB: { available: DEFAULTS.rubBalance, locked: 0, hold: 0 },
				USD: { available: 0, locked: 0, hold: 0 },
				EUR: { available: 0, locked: 0, hold: 0 },
				USDT: { available: 0, locked: 0, hold: 0 },
			},
			dailyPayoutLimit: null,
			monthlyPayoutLimit: null,
			payoutSplitSize: DEFAULTS.payoutSplitSize,
			payoutWebhookUrl: null,
			tooManyPaymentsThreshold: 1000,
			liveExtras: this.options.liveExtras,
			profile: this.options.profile ?? 'live',
			searchPageSize: SPEC_PAGE_SIZE,
			losePostbacks: false,
			ipAllowList: null,
			rejectBills: 0,
			...SWITCH_DEFAULTS,
			...this.options.switches,
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
		if (this.tokens.has(next))
			throw new SandboxError(409, 'token_taken', 'that token belongs to a merchant');
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
			refundUrl: init.refundUrl ?? null,
			chargebackUrl: init.chargebackUrl ?? null,
			domain: init.domain ?? null,
		};
		this.shops.set(shop.id, shop);
		return shop;
	}

	createAccount(
		merchantId: string,
		init: Partial<Omit<PayoutAccount, 'merchantId'>> = {},
	): PayoutAccount {
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

	dispose(): void {
		for (const timer of this.timers) clearTimeout(timer);
		this.timers.clear();
	}
}
