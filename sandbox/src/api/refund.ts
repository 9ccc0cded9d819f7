/**
 * The refund API the service's current reference lists (docs/developer/service.md):
 * refund/full/create, refund/partial/create, refund/status and refund/search. Switched on per
 * merchant (`refunds`); off, every call answers 403 `refunds_not_enabled` after the merchant
 * checks.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { ContextOptions, SandboxContext } from '../context.ts';
import { inWindow, parseSearchDate, searchWindow, zoneOffsetMs, type Window } from '../dates.ts';
import { keyError, validationError, type Endpoint } from '../errors.ts';
import type { Merchant, Payment, Profile } from '../model.ts';
import { makeRefund, refundRefusal } from '../refunds.ts';
import { rules, validate, type Input } from '../validate.ts';
import { refundView } from '../views.ts';
import { amountOrFail, getInput, merchantFor, postInput } from './common.ts';
import { cursorPage } from './search.ts';

const fullSchema = z.object({ payment_id: rules.string(), order_id: rules.string().optional() });
const partialSchema = z.object({
	payment_id: rules.string(),
	amount: rules.numeric(),
	order_id: rules.string().optional(),
});
const statusSchema = z.object({ id: rules.string() });
const searchSchema = z.object({
	payment_id: rules.string().optional(),
	start_date: rules.date().optional(),
	finish_date: rules.date().optional(),
	per_page: rules.integer().optional(),
	cursor: rules.string(1000).optional(),
});

/**
 * Dates are required without a payment_id (Laravel's required_without), and in order (on the
 * profile's clock).
 */
const searchRules =
	(profile: Profile) =>
	(input: Input): Record<string, string> => {
		const errors: Record<string, string> = {};
		if (input['payment_id'] === undefined) {
			for (const field of ['start_date', 'finish_date'])
				if (input[field] === undefined)
					errors[field] = 'The :attribute field is required when payment id is not present.';
		}
		const date = (field: string) =>
			typeof input[field] === 'string'
				? parseSearchDate(input[field], zoneOffsetMs(profile))
				: null;
		const [start, finish] = [date('start_date'), date('finish_date')];
		if (start !== null && finish !== null && finish.ms < start.ms)
			errors['finish_date'] = 'The :attribute field must be a date after or equal to start date.';
		return errors;
	};

/**
 * What refund/search's dates take: from `start_date`, to the end of `finish_date` (its day, or its
 * second for a date-time), on the profile's clock (UTC, Moscow in `spec`); either may be absent.
 */
function refundWindow(merchant: Merchant, startText?: string, finishText?: string): Window {
	const offset = zoneOffsetMs(merchant.profile);
	const start = startText === undefined ? null : parseSearchDate(startText, offset);
	const finish = finishText === undefined ? null : parseSearchDate(finishText, offset);
	const { until } =
		finish === null ? { until: Number.POSITIVE_INFINITY } : searchWindow(finish, finish, true);
	return { from: start?.ms ?? Number.NEGATIVE_INFINITY, until };
}

function refundMerchant(
	ctx: SandboxContext,
	request: FastifyRequest,
	endpoint: Endpoint,
): Merchant {
	const merchant = merchantFor(ctx, request, endpoint);
	if (!merchant.refunds) throw keyError(endpoint, 'refunds_not_enabled');
	return merchant;
}

function ownPayment(
	ctx: SandboxContext,
	merchant: Merchant,
	endpoint: Endpoint,
	id: string,
): Payment {
	const payment = ctx.state.payments.get(id);
	if (!payment || payment.merchantId !== merchant.id) throw keyError(endpoint, 'payment_not_found');
	return payment;
}

/**
 * The order_id a refund keeps. `spec` keeps it (shown on the refund, unique per merchant: a second
 * refund under it is refused as taken). `live` accepts it and keeps nothing: the service's refund
 * records show no order_id, and nothing shows that it refuses or looks up a refund by one.
 */
function keptOrderId(
	ctx: SandboxContext,
	merchant: Merchant,
	orderId: string | undefined,
): string | null {
	if (orderId === undefined || merchant.profile === 'live') return null;
	const taken = [...ctx.state.refunds.values()].some(
		(refund) => refund.merchantId === merchant.id && refund.orderId === orderId,
	);
	if (taken) throw validationError({ order_id: ['The order id has already been taken.'] });
	return orderId;
}

export async function refundRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	const create = (
		endpoint: Endpoint,
		merchant: Merchant,
		paymentId: string,
		amount: number | null,
		orderId: string | null,
	) => {
		const payment = ownPayment(ctx, merchant, endpoint, paymentId);
		const refusal = refundRefusal(ctx.state, payment, amount);
		if (refusal) throw keyError(endpoint, refusal);
		const { refund } = makeRefund(ctx.state, payment, amount, orderId);
		return { success: true, ...refundView(refund, merchant) };
	};

	app.post('/refund/full/create', async (request) => {
		const endpoint = 'refund/full/create';
		const merchant = refundMerchant(ctx, request, endpoint);
		const data = validate(fullSchema, postInput(request));
		const orderId = keptOrderId(ctx, merchant, data.order_id);
		return create(endpoint, merchant, data.payment_id, null, orderId);
	});

	app.post('/refund/partial/create', async (request) => {
		const endpoint = 'refund/partial/create';
		const merchant = refundMerchant(ctx, request, endpoint);
		const data = validate(partialSchema, postInput(request));
		const orderId = keptOrderId(ctx, merchant, data.order_id);
		const amount = amountOrFail(endpoint, data.amount);
		return create(endpoint, merchant, data.payment_id, amount, orderId);
	});

	app.get('/refund/status', async (request) => {
		const endpoint = 'refund/status';
		const merchant = refundMerchant(ctx, request, endpoint);
		const data = validate(statusSchema, getInput(request));
		const refund = ctx.state.refunds.get(data.id);
		if (!refund || refund.merchantId !== merchant.id) throw keyError(endpoint, 'refund_not_found');
		return { success: true, ...refundView(refund, merchant) };
	});

	app.get('/refund/search', async (request) => {
		const endpoint = 'refund/search';
		const merchant = refundMerchant(ctx, request, endpoint);
		const data = validate(searchSchema, getInput(request), searchRules(merchant.profile));
		if (data.payment_id !== undefined) ownPayment(ctx, merchant, endpoint, data.payment_id);
		const window = refundWindow(merchant, data.start_date, data.finish_date);
		const refunds = [...ctx.state.refunds.values()].filter(
			(refund) =>
				refund.merchantId === merchant.id &&
				(data.payment_id === undefined || refund.paymentId === data.payment_id) &&
				inWindow(refund.createdAt, window),
		);
		return cursorPage(
			ctx,
			request,
			refunds,
			(refund) => refundView(refund, merchant),
			data.per_page,
			data.cursor,
			15,
		);
	});
}
