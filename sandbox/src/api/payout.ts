import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { findBank, SBP_BANKS } from '../banks.ts';
import type { ContextOptions, SandboxContext } from '../context.ts';
import { keyError, unauthorizedAction, validationError, type Endpoint } from '../errors.ts';
import { format8 } from '../money.ts';
import {
	BALANCE_CURRENCIES,
	CURRENCIES,
	maskCard,
	REGULAR_DIRECTIONS,
	type AccountKind,
	type Merchant,
} from '../model.ts';
import {
	createPayouts,
	DEFAULT_TERMS,
	limitBroken,
	orderIdTaken,
	payoutCost,
	splitParts,
	type PayoutTerms,
} from '../payouts.ts';
import { payoutView } from '../views.ts';
import { fieldError, rules, validate, type Input } from '../validate.ts';
import { amountOrFail, getInput, merchantFor, postInput } from './common.ts';
import { search } from './search.ts';

/**
 * What the public record adds to both payout creates (`live` only; `spec` ignores them, as
 * Laravel ignores fields it does not know): the balance to take the payout from and who pays the fee.
 */
const liveTerms = {
	account_currency: rules.oneOf(BALANCE_CURRENCIES).optional(),
	recipient_pays_commission: rules.boolean().optional(),
};

const personalSchema = z.object({
	amount: rules.numeric(),
	payout_account_id: rules.string(),
	order_id: rules.string().optional(),
});
const personalLiveSchema = personalSchema.extend(liveTerms);

/** The interface document's regular payout: RUB, to a card or over SBP. */
const regularSchema = z.object({
	amount: rules.numeric(),
	currency: rules.oneOf(['RUB'] as const),
	account_type: rules.oneOf(['credit_card', 'sbp'] as const),
	account_identifier: rules.string(64),
	account_bank: rules.integer().optional(),
	card_holder: rules.string().optional(),
	order_id: rules.string().optional(),
});
/** The public record's: any balance currency, crypto wallets (with their network) and Steam logins too. */
const regularLiveSchema = regularSchema.extend({
	currency: rules.oneOf(BALANCE_CURRENCIES),
	account_type: rules.oneOf(REGULAR_DIRECTIONS),
	account_network: rules.oneOf(['TRX', 'ETH'] as const).optional(),
	...liveTerms,
});

/** The shape of a wallet address on its network (the sandbox checks no checksum). */
const WALLET_SHAPES: Record<string, RegExp> = {
	TRX: /^T[1-9A-HJ-NP-Za-km-z]{33}$/,
	ETH: /^0x[0-9a-fA-F]{40}$/,
};

/** Rules that depend on account_type: card number and holder for cards, phone and bank for SBP. */
function regularConditional(input: Input): Record<string, string> {
	const errors: Record<string, string> = {};
	const identifier =
		typeof input['account_identifier'] === 'string' ? input['account_identifier'] : null;
	const type = input['account_type'];
	if (type === 'credit_card') {
		if (identifier !== null && !/^\d{13,19}$/.test(identifier.replace(/[\s-]/g, ''))) {
			errors['account_identifier'] = 'The :attribute field must be a valid card number.';
		}
		if (input['card_holder'] === undefined)
			errors['card_holder'] = 'The :attribute field is required when account type is credit_card.';
	} else if (type === 'sbp') {
		if (identifier !== null && !/^\+?\d{10,15}$/.test(identifier.replace(/[\s()-]/g, ''))) {
			errors['account_identifier'] = 'The :attribute field must be a valid phone number.';
		}
		if (input['account_bank'] === undefined)
			errors['account_bank'] = 'The :attribute field is required when account type is sbp.';
	}
	return errors;
}

/** The `live` rules of crypto and Steam payouts: a network and a wallet of its shape, a login; USDT for crypto only. */
function regularLiveConditional(input: Input): Record<string, string> {
	const errors = regularConditional(input);
	const identifier =
		typeof input['account_identifier'] === 'string' ? input['account_identifier'] : null;
	const type = input['account_type'];
	if (type === 'crypto') {
		const shape = WALLET_SHAPES[String(input['account_network'])];
		if (input['account_network'] === undefined)
			errors['account_network'] = 'The :attribute field is required when account type is crypto.';
		else if (shape && identifier !== null && !shape.test(identifier))
			errors['account_identifier'] = 'The :attribute field must be a valid wallet address.';
	} else if (type === 'steam') {
		if (identifier !== null && !/^[A-Za-z0-9_]{3,64}$/.test(identifier))
			errors['account_identifier'] = 'The :attribute field must be a valid Steam login.';
	}
	if (type !== 'crypto' && input['currency'] === 'USDT')
		errors['currency'] = 'The selected :attribute is invalid.';
	return errors;
}

const statusSchema = z.object({
	id: rules.string().optional(),
	order_id: rules.string().optional(),
});

function orderIdTakenError(): never {
	const message = 'The order id has already been taken.';
	throw validationError({ order_id: [message] });
}

/** The terms of a `live` request (a `spec` request has none: RUB, from RUB, the sender pays). */
function termsOf(data: object, currency: PayoutTerms['currency'] = 'RUB'): PayoutTerms {
	const live = data as {
		account_currency?: PayoutTerms['accountCurrency'];
		recipient_pays_commission?: boolean;
	};
	return {
		currency,
		accountCurrency: live.account_currency ?? DEFAULT_TERMS.accountCurrency,
		recipientPays: live.recipient_pays_commission ?? false,
	};
}

/** Split → fee not above the part (the recipient pays) → too_many_payouts → limits → balance. */
function checkMoney(
	ctx: SandboxContext,
	endpoint: Endpoint,
	merchant: Merchant,
	amount: number,
	terms: PayoutTerms,
): number[] {
	const parts = splitParts(amount, merchant.payoutSplitSize);
	if (!parts) throw keyError(endpoint, 'too_many_payouts');
	const costs = parts.map((part) => ({ part, ...payoutCost(part, terms) }));
	if (terms.recipientPays && costs.some((cost) => cost.commission >= cost.part))
		throw keyError(endpoint, 'invalid_amount');
	const limit = limitBroken(ctx.state, merchant, amount, terms.currency);
	if (limit) throw keyError(endpoint, limit);
	const needed = costs.reduce((sum, cost) => sum + cost.accountAmount, 0);
	if (needed > merchant.balances[terms.accountCurrency].available)
		throw keyError(endpoint, 'balance_not_enough');
	return parts;
}

/** What a regular payout goes to, as the payout keeps it (a card masked, a phone without spaces). */
function regularAccount(type: string, identifier: string): [AccountKind, string] {
	if (type === 'credit_card') return ['BANK_CARD', maskCard(identifier.replace(/[\s-]/g, ''))];
	if (type === 'sbp') return ['SBP', identifier.replace(/[\s()-]/g, '')];
	return [type === 'crypto' ? 'CRYPTO' : 'STEAM', identifier];
}

/** The payout endpoints and merchant/balance: the reads (payoutReadRoutes) and the two creates. */
export async function payoutRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	payoutReadRoutes(app, ctx);

	app.post('/payout/personal/create', async (request) => {
		const endpoint = 'payout/personal/create';
		const merchant = merchantFor(ctx, request, endpoint, { subscription: true, verified: true });
		const live = merchant.profile === 'live';
		const data = validate(live ? personalLiveSchema : personalSchema, postInput(request));
		if (data.order_id !== undefined && orderIdTaken(ctx.state, merchant.id, data.order_id))
			orderIdTakenError();
		const amount = amountOrFail(endpoint, data.amount);
		const account = ctx.state.accounts.get(data.payout_account_id);
		if (!account || account.merchantId !== merchant.id)
			throw keyError(endpoint, 'payout_account_not_found');
		if (account.banned) throw keyError(endpoint, 'payout_account_banned');
		if (!account.directionAvailable) throw keyError(endpoint, 'direction_not_available');
		const terms = termsOf(data);
		const parts = checkMoney(ctx, endpoint, merchant, amount, terms);
		const payouts = createPayouts(ctx.state, merchant, parts, {
			orderId: data.order_id ?? null,
			kind: 'personal',
			accountType: account.accountType,
			accountIdentifier:
				account.accountType === 'BANK_CARD'
					? maskCard(account.accountNumber)
					: account.accountNumber,
			terms,
		});
		return {
			success: true,
			data: payouts.map((payout) => payoutView(payout, merchant)),
		};
	});

	app.post('/payout/regular/create', async (request) => {
		const endpoint = 'payout/regular/create';
		const merchant = merchantFor(ctx, request, endpoint, { subscription: true, verified: true });
		if (!merchant.regularPayoutsEnabled) throw unauthorizedAction();
		const live = merchant.profile === 'live';
		const data = validate(
			live ? regularLiveSchema : regularSchema,
			postInput(request),
			live ? regularLiveConditional : regularConditional,
		);
		if (data.order_id !== undefined && orderIdTaken(ctx.state, merchant.id, data.order_id))
			orderIdTakenError();
		if (data.account_type === 'sbp' && !findBank(data.account_bank as number)) {
			throw fieldError('account_bank', 'The selected :attribute is invalid.');
		}
		const amount = amountOrFail(endpoint, data.amount);
		if (!merchant.regularDirections.includes(data.account_type))
			throw keyError(endpoint, 'direction_not_available');
		const terms = termsOf(data, data.currency);
		const parts = checkMoney(ctx, endpoint, merchant, amount, terms);
		const [accountType, accountIdentifier] = regularAccount(
			data.account_type,
			data.account_identifier,
		);
		const payouts = createPayouts(ctx.state, merchant, parts, {
			orderId: data.order_id ?? null,
			kind: 'regular',
			accountType,
			accountIdentifier,
			network: 'account_network' in data ? data.account_network : undefined,
			terms,
		});
		return {
			success: true,
			data: payouts.map((payout) => payoutView(payout, merchant)),
		};
	});
}

/** merchant/balance, payout/status, payout/search and the SBP bank list. */
function payoutReadRoutes(app: FastifyInstance, ctx: SandboxContext): void {
	app.get('/merchant/balance', async (request) => {
		const merchant = merchantFor(ctx, request, 'merchant/balance', { subscription: true });
		const currencies = merchant.profile === 'live' ? BALANCE_CURRENCIES : CURRENCIES;
		return {
			success: 'true',
			balances: currencies.map((currency) => ({
				currency,
				balance_available: format8(merchant.balances[currency].available),
				balance_locked: format8(merchant.balances[currency].locked),
				balance_hold: format8(merchant.balances[currency].hold),
			})),
		};
	});

	app.get('/payout/status', async (request) => {
		const endpoint = 'payout/status';
		const merchant = merchantFor(ctx, request, endpoint, { subscription: true });
		const data = validate(statusSchema, getInput(request));
		if (data.id === undefined && data.order_id === undefined) {
			throw validationError({
				id: ['The id field is required when order id is not present.'],
				order_id: ['The order id field is required when id is not present.'],
			});
		}
		const own = [...ctx.state.payouts.values()].filter(
			(payout) => payout.merchantId === merchant.id,
		);
		const payout =
			data.id !== undefined
				? own.find((candidate) => candidate.id === data.id)
				: own.find((candidate) => candidate.orderId === data.order_id);
		if (!payout) throw keyError(endpoint, 'payout_not_found');
		return { success: true, ...payoutView(payout, merchant) };
	});

	app.get('/payout/search', async (request) => {
		const merchant = merchantFor(ctx, request, 'payout/search', { subscription: true });
		const payouts = [...ctx.state.payouts.values()].filter(
			(payout) => payout.merchantId === merchant.id,
		);
		return search(ctx, request, merchant, payouts, (payout) => payoutView(payout, merchant));
	});

	app.get('/payout/dictionaries/sbp_banks', async (request) => {
		merchantFor(ctx, request, 'payout/dictionaries/sbp_banks');
		return { success: true, data: SBP_BANKS };
	});
}
