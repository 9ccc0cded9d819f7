/** What every route plugin shares: the state, the postback deliverer, faults and options. */
import {
	ERROR_FORMS,
	PROFILES,
	SWITCH_DEFAULTS,
	TRS_ID_KINDS,
	type MerchantSwitches,
	type Profile,
} from './model.ts';
import { Deliverer } from './postbacks.ts';
import { State } from './state.ts';

export interface SandboxOptions {
	/** Port for startSandbox (0 picks a free one; the bin defaults to 8787). */
	port?: number;
	host?: string;
	/** Fixes the demo merchant's token. */
	token?: string;
	/** Multiplies postback retry delays and payout timers (default 1; tests use 0.001). */
	timeFactor?: number;
	/** The address written into link_url / link_page_url (default: the listening address). */
	publicUrl?: string;
	/** Payouts move MODERATING → PROCESS → SUCCESS by themselves, one step per this many ms
	 * (times the time factor). 0 (default) = only the control API moves them. */
	autoAdvanceMs?: number;
	/** How long a postback attempt waits for an answer (default 5000 ms, not scaled). */
	postbackTimeoutMs?: number;
	/** Largest accepted request body (default 64 KiB). */
	bodyLimit?: number;
	/**
	 * Whether merchants emulate the fields the live service is seen to add beyond the interface
	 * document (default false: answers and postbacks carry exactly the document's fields). Each
	 * merchant can switch it in the control API (`liveExtras`).
	 */
	liveExtras?: boolean;
	/**
	 * How merchants answer where the interface document leaves a choice open (default `live`,
	 * the sandbox's behaviour before profiles; `spec`: see sandbox/README.md). Each merchant can
	 * switch it in the control API (`profile`).
	 */
	profile?: Profile;
	/** What `TrsId` in payment postbacks names (default `payment`; see MerchantSwitches). */
	trsId?: MerchantSwitches['trsId'];
	/** Where error answers carry their key (default `message`). */
	errorForm?: MerchantSwitches['errorForm'];
	/** bill/search requires `shop_id` (default false). */
	requireShopId?: boolean;
	/** Payment answers in their newer form (default false). */
	newPaymentFields?: boolean;
	/** `order_id` on bill answers in the `live` profile (default true). */
	billOrderId?: boolean;
	/** Rows per page of bill/payments without `per_page` (default 15). */
	paymentsPageSize?: number;
	/** The refund API is switched on for new merchants (default false). */
	refunds?: boolean;
}

export interface ResolvedOptions {
	token: string | undefined;
	timeFactor: number;
	publicUrl: string | null;
	autoAdvanceMs: number;
	postbackTimeoutMs: number;
	bodyLimit: number;
	liveExtras: boolean;
	profile: Profile;
	switches: MerchantSwitches;
}

export interface Demo {
	merchantId: string;
	token: string;
	shopId: string;
	payoutAccountId: string;
}

export type FaultKind = '500' | '429' | 'delay' | 'drop' | 'drop_after' | 'error';

export interface Fault {
	id: number;
	kind: FaultKind;
	remaining: number;
	delayMs: number;
	path: string | null;
	/** For kind "error": the error key, answered with the status the endpoint gives it. */
	key: string | null;
}

/** The options every route plugin is registered with. */
export interface ContextOptions {
	ctx: SandboxContext;
}

export class SandboxContext {
	readonly options: ResolvedOptions;
	readonly deliverer: Deliverer;
	state: State;
	demo: Demo;
	faults: Fault[] = [];
	faultSeq = 0;
	/** API requests received, by endpoint (`payment/status`), whatever their answer (GET /_sandbox/calls). */
	calls = new Map<string, number>();
	/** Set once the server listens (when no publicUrl option was given). */
	listenUrl: string | null = null;

	constructor(options: SandboxOptions) {
		this.options = {
			token: options.token,
			timeFactor: options.timeFactor ?? 1,
			publicUrl: options.publicUrl ? options.publicUrl.replace(/\/+$/, '') : null,
			autoAdvanceMs: options.autoAdvanceMs ?? 0,
			postbackTimeoutMs: options.postbackTimeoutMs ?? 5000,
			bodyLimit: options.bodyLimit ?? 64 * 1024,
			liveExtras: options.liveExtras ?? false,
			profile: options.profile ?? 'live',
			switches: {
				trsId: options.trsId ?? SWITCH_DEFAULTS.trsId,
				errorForm: options.errorForm ?? SWITCH_DEFAULTS.errorForm,
				requireShopId: options.requireShopId ?? SWITCH_DEFAULTS.requireShopId,
				newPaymentFields: options.newPaymentFields ?? SWITCH_DEFAULTS.newPaymentFields,
				billOrderId: options.billOrderId ?? SWITCH_DEFAULTS.billOrderId,
				paymentsPageSize: options.paymentsPageSize ?? SWITCH_DEFAULTS.paymentsPageSize,
				refunds: options.refunds ?? SWITCH_DEFAULTS.refunds,
			},
		};
		if (!(TRS_ID_KINDS as readonly string[]).includes(this.options.switches.trsId)) {
			throw new Error(`trsId must be one of ${TRS_ID_KINDS.join(', ')}`);
		}
		if (!(ERROR_FORMS as readonly string[]).includes(this.options.switches.errorForm)) {
			throw new Error(`errorForm must be one of ${ERROR_FORMS.join(', ')}`);
		}
		const size = this.options.switches.paymentsPageSize;
		if (!Number.isSafeInteger(size) || size < 1 || size > 1000) {
			throw new Error('paymentsPageSize must be a whole number from 1 to 1000');
		}
		if (!(PROFILES as readonly string[]).includes(this.options.profile)) {
			throw new Error(`profile must be one of ${PROFILES.join(', ')}`);
		}
		if (!(this.options.timeFactor > 0) || !Number.isFinite(this.options.timeFactor)) {
			throw new Error('timeFactor must be a positive number');
		}
		this.deliverer = new Deliverer({
			timeFactor: this.options.timeFactor,
			timeoutMs: this.options.postbackTimeoutMs,
		});
		this.state = this.newState();
		const merchant = this.state.createMerchant({ token: this.options.token });
		const shop = this.state.createShop(merchant.id);
		const account = this.state.createAccount(merchant.id);
		this.demo = {
			merchantId: merchant.id,
			token: merchant.token,
			shopId: shop.id,
			payoutAccountId: account.id,
		};
	}

	private newState(): State {
		return new State({
			deliver: (kind, url, fields, trsId, how) => {
				this.deliverer.send(kind, url, fields, trsId, how);
			},
			autoAdvanceMs: this.options.autoAdvanceMs * this.options.timeFactor,
			liveExtras: this.options.liveExtras,
			profile: this.options.profile,
			switches: this.options.switches,
		});
	}

	/** Back to the single demo merchant with the same id, token, shop and payout account. */
	reset(): void {
		this.state.dispose();
		this.deliverer.cancelAll(true);
		this.faults = [];
		this.calls.clear();
		this.state = this.newState();
		const merchant = this.state.createMerchant({
			id: this.demo.merchantId,
			token: this.demo.token,
		});
		this.state.createShop(merchant.id, { id: this.demo.shopId });
		this.state.createAccount(merchant.id, { id: this.demo.payoutAccountId });
	}

	/** The base address for links: publicUrl, else the listening address, else the request's Host. */
	baseUrl(request: { protocol: string; host: string }): string {
		return this.options.publicUrl ?? this.listenUrl ?? `${request.protocol}://${request.host}`;
	}

	close(): void {
		this.state.dispose();
		this.deliverer.cancelAll(false);
	}
}
