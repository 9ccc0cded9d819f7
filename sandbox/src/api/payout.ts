import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { findBank, SBP_BANKS } from '../banks.ts';
import type { ContextOptions, SandboxContext } from '../context.ts';
import { keyError, unauthorizedAction, validationError, type Endpoint } from '../errors.ts';
import { format8 } from '../money.ts';
import {
	CURRENCIES,
	maskCard,
	PAYOUT_CURRENCIES,
	REGULAR_DIRECTIONS,
	type Merchant,
} from '../model.ts';
import {
	createPayouts,
	limitBroken,
	orderIdTaken,
	payoutCommission,
	splitParts,
} from '../payouts.ts';
import { payoutView } from '../views.ts';
import { fieldError, rules, validate, type Input } from '../validate.ts';
import { amountOrFail, getInput, merchantFor, postInput } from './common.ts';
import { search } from './search.ts';

const personalSchema = z.object({
	amount: rules.numeric(),
	payout_account_id: rules.string(),
	order_id: rules.string().optional(),
});

const regularSchema = z.object({
	amount: rules.numeric(),
	currency: rules.oneOf(PAYOUT_CURRENCIES),
	account_type: rules.oneOf(REGULAR_DIRECTIONS),
	account_identifier: rules.string(64),
	account_bank: rules.integer().optional(),
	card_holder: rules.string().optional(),
	order_id: rules.string().optional(),
});

/** Rules that depend on account_type: card number and holder for cards, phone and bank for SBP. */
function regularConditional(input: Input): Record<string, string> {
	const errors: Record<string, string> = {};
	const identifier =
		typeof input['account_identifier'] === 'string' ? input['account_identifier'] : null;
	if (input['account_type'] === 'credit_card') {
		if (identifier !== null && !/^\d{13,19}$/.test(identifier.replace(/[\s-]/g, ''))) {
			errors['account_identifier'] = 'The :attribute field must be a valid card number.';
		}
		if (input['card_holder'] === undefined)
			errors['card_holder'] = 'The :attribute field is required when account type is credit_card.';
	} else if (input['account_type'] === 'sbp') {
		if (identifier !== null && !/^\+?\d{10,15}$/.test(identifier.replace(/[\s()-]/g, ''))) {
			errors['account_identifier'] = 'The :attribute field must be a valid phone number.';
		}
		if (input['account_bank'] === undefined)
			errors['account_bank'] = 'The :attribute field is required when account type is sbp.';
	}
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

/** Split → too_many_payouts → daily limit → monthly limit → balance. */
function checkMoney(
	ctx: SandboxContext,
	endpoint: Endpoint,
	merchant: Merchant,
	amount: number,
): number[] {
	const parts = splitParts(amount, merchant.payoutSplitSize);
	if (!parts) throw keyError(endpoint, 'too_many_payouts');
	const limit = limitBroken(ctx.state, merchant, amount);
	if (limit) throw keyError(endpoint, limit);
	const needed = parts.reduce((sum, part) => sum + part + payoutCommission(part), 0);
	if (needed > merchant.balances.RUB.available) throw keyError(endpoint, 'balance_not_enough');
	return parts;
}

/** The payout endpoints and merchant/balance: the reads (payoutReadRoutes) and the two creates. */
export async function payoutRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	payoutReadRoutes(app, ctx);

	app.post('/payout/personal/create', async (request) => {
		const endpoint = 'payout/personal/create';
		const merchant = merchantFor(ctx, request, endpoint, { subscription: true, verified: true });
		const data = validate(personalSchema, postInput(request));
		if (data.order_id !== undefined && orderIdTaken(ctx.state, merchant.id, data.order_id))
			orderIdTakenError();
		const amount = amountOrFail(endpoint, data.amount);
		const account = ctx.state.accounts.get(data.payout_account_id);
		if (!account || account.merchantId !== merchant.id)
			throw keyError(endpoint, 'payout_account_not_found');
		if (account.banned) throw keyError(endpoint, 'payout_account_banned');
		if (!account.directionAvailable) throw keyError(endpoint, 'direction_not_available');
		const parts = checkMoney(ctx, endpoint, merchant, amount);
		const payouts = createPayouts(ctx.state, merchant, parts, {
			orderId: data.order_id ?? null,
			kind: 'personal',
			accountType: account.accountType,
			accountIdentifier:
				account.accountType === 'BANK_CARD'
					? maskCard(account.accountNumber)
					: account.accountNumber,
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
		const data = validate(regularSchema, postInput(request), regularConditional);
		if (data.order_id !== undefined && orderIdTaken(ctx.state, merchant.id, data.order_id))
			orderIdTakenError();
		if (data.account_type === 'sbp' && !findBank(data.account_bank as number)) {
			throw fieldError('account_bank', 'The selected :attribute is invalid.');
		}
		const amount = amountOrFail(endpoint, data.amount);
		if (!merchant.regularDirections.includes(data.account_type))
			throw keyError(endpoint, 'direction_not_available');
		const parts = checkMoney(ctx, endpoint, merchant, amount);
		const identifier = data.account_identifier.replace(/[\s()-]/g, '');
		const payouts = createPayouts(ctx.state, merchant, parts, {
			orderId: data.order_id ?? null,
			kind: 'regular',
			accountType: data.account_type === 'credit_card' ? 'BANK_CARD' : 'SBP',
			accountIdentifier: data.account_type === 'credit_card' ? maskCard(identifier) : identifier,
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
		return {
			success: 'true',
			balances: CURRENCIES.map((currency) => ({
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
