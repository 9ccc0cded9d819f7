import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ContextOptions, SandboxContext } from '../context.ts';
import { keyError } from '../errors.ts';
import { createBill, paymentsOf } from '../billing.ts';
import {
	BILL_TYPES,
	CURRENCIES,
	isPaidStatus,
	PAYMENT_METHODS,
	type Bill,
	type Currency,
	type Merchant,
} from '../model.ts';
import { billView, paymentView } from '../views.ts';
import { rules, validate } from '../validate.ts';
import { billExtras } from './bill-extras.ts';
import { amountOrFail, getInput, merchantFor, postInput } from './common.ts';
import { paymentRoutes, refundedOf } from './payment.ts';
import { cursorPage, search } from './search.ts';

const createSchema = z.object({
	amount: rules.numeric(),
	shop_id: rules.string(),
	order_id: rules.string().optional(),
	description: rules.string(1000).optional(),
	type: rules.oneOf([...BILL_TYPES, ...BILL_TYPES.map((type) => type.toUpperCase())]).optional(),
	currency_in: rules.string(16).optional(),
	custom: rules.string().optional(),
	payer_pays_commission: rules.oneOf(['0', '1'] as const).optional(),
	name: rules.string().optional(),
	payment_method: rules.oneOf(PAYMENT_METHODS).optional(),
});

const toggleSchema = z.object({ id: rules.string(), active: rules.boolean() });
const idSchema = z.object({ id: rules.string() });
const paymentsSchema = z.object({
	id: rules.string(),
	per_page: rules.integer().optional(),
	cursor: rules.string(1000).optional(),
});

function ownBill(ctx: SandboxContext, merchant: Merchant, id: string): Bill | undefined {
	const bill = ctx.state.bills.get(id);
	return bill && bill.merchantId === merchant.id ? bill : undefined;
}

/** The bill endpoints, and the payment endpoints beside them (api/payment.ts). */
export async function billRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	billWriteRoutes(app, ctx);
	billReadRoutes(app, ctx);
	paymentRoutes(app, ctx);
}

/** bill/create and bill/toggle_activity. */
function billWriteRoutes(app: FastifyInstance, ctx: SandboxContext): void {
	app.post('/bill/create', async (request) => {
		const endpoint = 'bill/create';
		const merchant = merchantFor(ctx, request, endpoint, { subscription: true });
		const input = postInput(request);
		const requestedShop =
			typeof input['shop_id'] === 'string' ? ctx.state.shops.get(input['shop_id']) : undefined;
		const more = billExtras(input, requestedShop);
		const data = validate(createSchema, input, () => more.errors);
		const amount = amountOrFail(endpoint, data.amount);
		const shop = ctx.state.shops.get(data.shop_id);
		if (!shop) throw keyError(endpoint, 'shop_not_found');
		if (shop.merchantId !== merchant.id || shop.accessDenied)
			throw keyError(endpoint, 'access_denied');
		if (!shop.enabled) throw keyError(endpoint, 'shop_not_enabled');
		const currency = (data.currency_in ?? shop.defaultCurrency).toUpperCase();
		if (!(CURRENCIES as readonly string[]).includes(currency))
			throw keyError(endpoint, 'rate-not-found');
		if (merchant.rejectBills > 0) {
			merchant.rejectBills -= 1;
			throw keyError(endpoint, 'transaction_rejected');
		}
		const bill = createBill(ctx.state, {
			merchantId: merchant.id,
			shopId: shop.id,
			amount,
			type: data.type?.toUpperCase() === 'MULTI' ? 'MULTI' : 'NORMAL',
			currency: currency as Currency,
			orderId: data.order_id ?? null,
			description: data.description ?? null,
			custom: data.custom ?? null,
			name: data.name ?? null,
			payerPaysCommission: data.payer_pays_commission === '1',
			paymentMethod: data.payment_method ?? null,
			...(Object.keys(more.extras).length > 0 ? { extras: more.extras } : {}),
		});
		const base = ctx.baseUrl(request);
		return {
			success: 'true',
			link_url: `${base}/link/${bill.id}`,
			link_page_url: `${base}/pay/${bill.id}`,
			bill_id: bill.id,
		};
	});

	app.post('/bill/toggle_activity', async (request) => {
		const endpoint = 'bill/toggle_activity';
		const merchant = merchantFor(ctx, request, endpoint, { subscription: true });
		const data = validate(toggleSchema, postInput(request));
		const bill = ownBill(ctx, merchant, data.id);
		if (!bill) throw keyError(endpoint, 'bill_not_found');
		if (bill.type === 'NORMAL' && isPaidStatus(bill.status))
			throw keyError(endpoint, 'bill_is_finished');
		bill.active = data.active;
		return {
			success: true,
			...billView(bill, merchant),
			active: bill.active,
			activity: bill.active,
		};
	});
}

/** bill/payments, bill/status and bill/search. */
function billReadRoutes(app: FastifyInstance, ctx: SandboxContext): void {
	app.get('/bill/payments', async (request) => {
		const endpoint = 'bill/payments';
		const merchant = merchantFor(ctx, request, endpoint);
		const data = validate(paymentsSchema, getInput(request));
		const bill = ownBill(ctx, merchant, data.id);
		if (!bill) throw keyError(endpoint, 'bill_not_found');
		const payments = paymentsOf(ctx.state, bill.id);
		if (payments.length > merchant.tooManyPaymentsThreshold)
			throw keyError(endpoint, 'too_many_payments');
		// Cursor-paged in both profiles: `per_page` rows, or the merchant's paymentsPageSize; the
		// rest through `links.next` / `meta.next_cursor`, one-element lists in `live`.
		return cursorPage(
			ctx,
			request,
			payments,
			(payment) => paymentView(payment, { ...merchant, refundedOf: refundedOf(ctx) }),
			data.per_page,
			data.cursor,
			merchant.paymentsPageSize,
			merchant.profile === 'live' ? 'list' : 'object',
		);
	});

	app.get('/bill/status', async (request) => {
		const endpoint = 'bill/status';
		const merchant = merchantFor(ctx, request, endpoint);
		const data = validate(idSchema, getInput(request));
		const bill = ownBill(ctx, merchant, data.id);
		if (!bill) throw keyError(endpoint, 'bill_not_found');
		return { success: true, ...billView(bill, merchant) };
	});

	app.get('/bill/search', async (request) => {
		const merchant = merchantFor(ctx, request, 'bill/search');
		const bills = [...ctx.state.bills.values()].filter((bill) => bill.merchantId === merchant.id);
		return search(ctx, request, merchant, bills, (bill) => billView(bill, merchant), {
			shopOf: (bill) => bill.shopId,
			orderOf: (bill) => bill.orderId,
			requireShopId: merchant.requireShopId,
		});
	});
}
