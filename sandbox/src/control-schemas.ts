/** Request bodies of the control API under /_sandbox, and how a patch applies to the state. */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Fault } from './context.ts';
import { DEAL_CURRENCIES, DEAL_STATUSES } from './deals.ts';
import { parseControlAmount } from './money.ts';
import {
	SandboxError,
	BALANCE_CURRENCIES,
	ERROR_FORMS,
	PROFILES,
	TRS_ID_KINDS,
	REGULAR_DIRECTIONS,
	type Merchant,
	type PayoutAccount,
	type Shop,
} from './model.ts';

/** A control request's JSON body (none: no fields). */
export const body = (request: FastifyRequest): unknown => request.body ?? {};
/** The `:id` of a control path. */
export const param = (request: FastifyRequest): string => (request.params as { id: string }).id;

export function notFound(what: string, id: string): SandboxError {
	return new SandboxError(404, 'not_found', `no ${what} ${id}`);
}

const amount = z
	.union([z.string(), z.number()])
	.refine((value) => parseControlAmount(value) !== null, {
		error: 'must be a non-negative decimal amount with at most 2 decimals',
	})
	.transform((value) => parseControlAmount(value) as number);
const positiveAmount = amount.refine((value) => value > 0, { error: 'must be greater than zero' });
const url = z.union([z.url({ protocol: /^https?$/ }), z.null()]);

export const merchantPatch = z.object({
	banned: z.boolean().optional(),
	exists: z.boolean().optional(),
	verified: z.boolean().optional(),
	subscription: z.enum(['active', 'inactive', 'none']).optional(),
	regularPayoutsEnabled: z.boolean().optional(),
	regularDirections: z.array(z.enum(REGULAR_DIRECTIONS)).optional(),
	balances: z.partialRecord(z.enum(BALANCE_CURRENCIES), amount).optional(),
	dailyPayoutLimit: z.union([amount, z.null()]).optional(),
	monthlyPayoutLimit: z.union([amount, z.null()]).optional(),
	payoutSplitSize: z.union([positiveAmount, z.null()]).optional(),
	payoutWebhookUrl: url.optional(),
	tooManyPaymentsThreshold: z.int().min(0).optional(),
	liveExtras: z.boolean().optional(),
	profile: z.enum(PROFILES).optional(),
	searchPageSize: z.int().min(1).max(1000).optional(),
	losePostbacks: z.boolean().optional(),
	trsId: z.enum(TRS_ID_KINDS).optional(),
	errorForm: z.enum(ERROR_FORMS).optional(),
	requireShopId: z.boolean().optional(),
	newPaymentFields: z.boolean().optional(),
	billOrderId: z.boolean().optional(),
	paymentsPageSize: z.int().min(1).max(1000).optional(),
	refunds: z.boolean().optional(),
	ipAllowList: z.union([z.array(z.string().min(1).max(64)), z.null()]).optional(),
	rejectBills: z.int().min(0).max(1_000_000).optional(),
});

export const shopFields = z.object({
	name: z.string().max(255).optional(),
	resultUrl: url.optional(),
	successUrl: url.optional(),
	failUrl: url.optional(),
	defaultCurrency: z.string().min(1).max(16).optional(),
	enabled: z.boolean().optional(),
	accessDenied: z.boolean().optional(),
	refundUrl: url.optional(),
	chargebackUrl: url.optional(),
	domain: z
		.union([z.string().regex(/^[a-z0-9.-]+$/i, { error: 'must be a host name' }), z.null()])
		.optional(),
});

export const accountFields = z.object({
	banned: z.boolean().optional(),
	directionAvailable: z.boolean().optional(),
	accountType: z.enum(['BANK_CARD', 'SBP']).optional(),
	accountNumber: z
		.string()
		.regex(/^\+?\d{10,19}$/)
		.optional(),
});

export const merchantCreate = merchantPatch.extend({
	token: z.string().min(1).max(200).optional(),
	shop: shopFields.optional(),
});

export const owner = z.object({ merchantId: z.string().optional() });

export const paySchema = z.object({
	outcome: z.enum(['full', 'under', 'over', 'fail', 'process']).optional(),
	method: z.enum(['BANK_CARD', 'SBP']).optional(),
	amount: positiveAmount.optional(),
	losePostback: z.boolean().optional(),
});

export const refundSchema = z.object({
	amount: positiveAmount.optional(),
	orderId: z.string().min(1).max(255).optional(),
});

export const chargebackSchema = z.object({ amount: positiveAmount.optional() });

/** One payment or payout a P2P deal lists. */
const dealEntry = z.object({ id: z.string().min(1).max(255), amount: positiveAmount });

export const dealSchema = z.object({
	shopId: z.string().optional(),
	trsId: z.string().min(1).max(255).optional(),
	invId: z.string().max(255).default(''),
	status: z.enum(DEAL_STATUSES).default('SUCCESS'),
	amount: positiveAmount,
	currency: z.enum(DEAL_CURRENCIES).default('RUB'),
	balanceAmount: amount.optional(),
	balanceCurrency: z.enum(DEAL_CURRENCIES).optional(),
	payments: z.array(dealEntry).max(100).default([]),
	payouts: z.array(dealEntry).max(100).default([]),
});

export const billPatch = z.object({ losePostback: z.boolean().optional() });

export const advanceSchema = z.object({
	status: z.enum(['MODERATING', 'PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED']),
	/** Why a FAIL or ERROR payout failed (its error_code and error_message). */
	errorCode: z.int().min(0).max(2_147_483_647).optional(),
	errorMessage: z.string().min(1).max(255).optional(),
});

export const faultSchema = z
	.object({
		kind: z
			.union([
				z.enum(['500', '429', 'delay', 'drop', 'drop_after', 'error']),
				z.literal(500),
				z.literal(429),
			])
			.transform((kind) => String(kind) as Fault['kind']),
		count: z.int().min(1).max(1_000_000).default(1),
		delayMs: z.int().min(0).max(600_000).default(1000),
		path: z.string().startsWith('/').optional(),
		key: z.string().min(1).optional(),
	})
	.refine((fault) => fault.kind !== 'error' || fault.key !== undefined, {
		error: 'kind "error" needs a key',
		path: ['key'],
	});

export const deliveriesQuery = z.object({
	kind: z.enum(['payment', 'payout', 'refund', 'chargeback', 'p2pDeal']).optional(),
	trsId: z.string().optional(),
	id: z.string().optional(),
});

/**
 * POST /_sandbox/merchants/:id/balance-adjustment: a change of a balance that no payment, refund,
 * chargeback or payout explains (`amount`, signed, at most 2 decimals: "-12.34", 5).
 */
export const balanceAdjustment = z.object({
	currency: z.enum(BALANCE_CURRENCIES),
	amount: z
		.union([z.string(), z.number()])
		.transform((value) => String(value).trim())
		.refine((text) => /^[+-]?\d{1,8}(?:\.\d{1,2})?$/.test(text) && Number(text) !== 0, {
			error: 'must be a signed non-zero decimal amount with at most 2 decimals, such as -12.34',
		})
		.transform((text) => {
			const [whole, fraction = ''] = text.replace(/^[+-]/, '').split('.');
			const cents = Number(whole) * 100 + Number((fraction + '00').slice(0, 2));
			return text.startsWith('-') ? -cents : cents;
		}),
	balance: z.enum(['available', 'locked', 'hold']).default('available'),
});

export const clockSchema = z.object({
	now: z.union([z.iso.datetime({ offset: true }), z.null()]).optional(),
	offsetMs: z.int().optional(),
});
export function applyMerchantPatch(
	merchant: Merchant,
	patch: z.output<typeof merchantPatch>,
): void {
	if (patch.banned !== undefined) merchant.banned = patch.banned;
	if (patch.exists !== undefined) merchant.exists = patch.exists;
	if (patch.verified !== undefined) merchant.verified = patch.verified;
	if (patch.subscription !== undefined) merchant.subscription = patch.subscription;
	if (patch.regularPayoutsEnabled !== undefined)
		merchant.regularPayoutsEnabled = patch.regularPayoutsEnabled;
	if (patch.regularDirections !== undefined) merchant.regularDirections = patch.regularDirections;
	for (const [currency, value] of Object.entries(patch.balances ?? {})) {
		if (value !== undefined)
			merchant.balances[currency as keyof Merchant['balances']].available = value;
	}
	if (patch.dailyPayoutLimit !== undefined) merchant.dailyPayoutLimit = patch.dailyPayoutLimit;
	if (patch.monthlyPayoutLimit !== undefined)
		merchant.monthlyPayoutLimit = patch.monthlyPayoutLimit;
	if (patch.payoutSplitSize !== undefined) merchant.payoutSplitSize = patch.payoutSplitSize;
	if (patch.payoutWebhookUrl !== undefined) merchant.payoutWebhookUrl = patch.payoutWebhookUrl;
	if (patch.tooManyPaymentsThreshold !== undefined)
		merchant.tooManyPaymentsThreshold = patch.tooManyPaymentsThreshold;
	if (patch.liveExtras !== undefined) merchant.liveExtras = patch.liveExtras;
	if (patch.profile !== undefined) merchant.profile = patch.profile;
	if (patch.searchPageSize !== undefined) merchant.searchPageSize = patch.searchPageSize;
	if (patch.losePostbacks !== undefined) merchant.losePostbacks = patch.losePostbacks;
	if (patch.trsId !== undefined) merchant.trsId = patch.trsId;
	if (patch.errorForm !== undefined) merchant.errorForm = patch.errorForm;
	if (patch.requireShopId !== undefined) merchant.requireShopId = patch.requireShopId;
	if (patch.newPaymentFields !== undefined) merchant.newPaymentFields = patch.newPaymentFields;
	if (patch.billOrderId !== undefined) merchant.billOrderId = patch.billOrderId;
	if (patch.paymentsPageSize !== undefined) merchant.paymentsPageSize = patch.paymentsPageSize;
	if (patch.refunds !== undefined) merchant.refunds = patch.refunds;
	if (patch.ipAllowList !== undefined) merchant.ipAllowList = patch.ipAllowList;
	if (patch.rejectBills !== undefined) merchant.rejectBills = patch.rejectBills;
}

export function applyShopPatch(shop: Shop, patch: z.output<typeof shopFields>): void {
	if (patch.name !== undefined) shop.name = patch.name;
	if (patch.resultUrl !== undefined) shop.resultUrl = patch.resultUrl;
	if (patch.successUrl !== undefined) shop.successUrl = patch.successUrl;
	if (patch.failUrl !== undefined) shop.failUrl = patch.failUrl;
	if (patch.defaultCurrency !== undefined) shop.defaultCurrency = patch.defaultCurrency;
	if (patch.enabled !== undefined) shop.enabled = patch.enabled;
	if (patch.accessDenied !== undefined) shop.accessDenied = patch.accessDenied;
	if (patch.refundUrl !== undefined) shop.refundUrl = patch.refundUrl;
	if (patch.chargebackUrl !== undefined) shop.chargebackUrl = patch.chargebackUrl;
	if (patch.domain !== undefined) shop.domain = patch.domain?.toLowerCase() ?? null;
}

export function applyAccountPatch(
	account: PayoutAccount,
	patch: z.output<typeof accountFields>,
): void {
	if (patch.banned !== undefined) account.banned = patch.banned;
	if (patch.directionAvailable !== undefined) account.directionAvailable = patch.directionAvailable;
	if (patch.accountType !== undefined) account.accountType = patch.accountType;
	if (patch.accountNumber !== undefined) account.accountNumber = patch.accountNumber;
}
