/** The control API under /_sandbox: JSON in and out, no auth (bind the sandbox to loopback). */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z, ZodError } from 'zod';
import { pay } from './billing.ts';
import type { ContextOptions } from './context.ts';
import {
	accountFields,
	advanceSchema,
	applyAccountPatch,
	applyMerchantPatch,
	applyShopPatch,
	billPatch,
	chargebackSchema,
	refundSchema,
	clockSchema,
	deliveriesQuery,
	faultSchema,
	merchantCreate,
	merchantPatch,
	owner,
	paySchema,
	shopFields,
} from './control-schemas.ts';
import {
	accountView,
	billControlView,
	controlShape,
	merchantView,
	paymentControlView,
	payoutControlView,
	shopView,
} from './control-views.ts';
import { FACTS_ERRORS, statusOf, type Endpoint } from './errors.ts';
import { format2 } from './money.ts';
import {
	SandboxError,
	type Bill,
	type Merchant,
	type Payment,
	type Payout,
	type Shop,
} from './model.ts';
import {
	chargebacksOf,
	makeChargeback,
	makeRefund,
	refundableOf,
	refundedOf,
	refundsOf,
} from './refunds.ts';
import { chargebackView, refundView } from './views.ts';
import { advancePayout } from './payouts.ts';

function notFound(what: string, id: string): SandboxError {
	return new SandboxError(404, 'not_found', `no ${what} ${id}`);
}

function controlErrorHandler(
	error: FastifyError | Error,
	_request: FastifyRequest,
	reply: FastifyReply,
): void {
	if (error instanceof ZodError) {
		void reply.code(400).send({
			error: 'invalid_request',
			message: error.issues
				.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`)
				.join('; '),
			issues: error.issues,
		});
		return;
	}
	if (error instanceof SandboxError) {
		void reply.code(error.status).send({ error: error.code, message: error.message });
		return;
	}
	const status = (error as FastifyError).statusCode;
	if (typeof status === 'number' && status >= 400 && status < 500) {
		void reply.code(status).send({ error: 'invalid_request', message: error.message });
		return;
	}
	void reply.code(500).send({ error: 'internal', message: error.message });
}
const body = (request: FastifyRequest): unknown => request.body ?? {};
const param = (request: FastifyRequest): string => (request.params as { id: string }).id;

export async function controlRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	app.setErrorHandler(controlErrorHandler);

	const merchantOf = (id: string): Merchant => {
		const merchant = ctx.state.merchants.get(id);
		if (!merchant) throw notFound('merchant', id);
		return merchant;
	};
	const ownerOf = (request: FastifyRequest): Merchant =>
		merchantOf(owner.parse(body(request)).merchantId ?? ctx.demo.merchantId);

	app.get('/demo', async () => ({
		...ctx.demo,
		token: ctx.state.merchants.get(ctx.demo.merchantId)?.token ?? ctx.demo.token,
	}));

	app.post('/merchants', async (request, reply) => {
		const data = merchantCreate.parse(body(request));
		const merchant = ctx.state.createMerchant({ token: data.token });
		const shop = ctx.state.createShop(merchant.id);
		if (data.shop) applyShopPatch(shop, data.shop);
		const account = ctx.state.createAccount(merchant.id);
		applyMerchantPatch(merchant, data);
		void reply.code(201);
		return {
			merchantId: merchant.id,
			token: merchant.token,
			shopId: shop.id,
			payoutAccountId: account.id,
		};
	});

	app.get('/merchants/:id', async (request) => merchantView(ctx, merchantOf(param(request))));

	app.patch('/merchants/:id', async (request) => {
		const merchant = merchantOf(param(request));
		applyMerchantPatch(merchant, merchantPatch.parse(body(request)));
		return merchantView(ctx, merchant);
	});

	app.post('/merchants/:id/rotate-token', async (request) => {
		const merchant = merchantOf(param(request));
		const data = z.object({ token: z.string().min(1).max(200).optional() }).parse(body(request));
		return { token: ctx.state.rotateToken(merchant, data.token) };
	});

	app.post('/shops', async (request, reply) => {
		const merchant = ownerOf(request);
		const data = shopFields.parse(body(request));
		const shop = ctx.state.createShop(merchant.id);
		applyShopPatch(shop, data);
		void reply.code(201);
		return { shopId: shop.id, shop: shopView(shop) };
	});

	const shopOf = (id: string): Shop => {
		const shop = ctx.state.shops.get(id);
		if (!shop) throw notFound('shop', id);
		return shop;
	};
	app.get('/shops/:id', async (request) => shopView(shopOf(param(request))));
	app.patch('/shops/:id', async (request) => {
		const shop = shopOf(param(request));
		applyShopPatch(shop, shopFields.parse(body(request)));
		return shopView(shop);
	});

	app.post('/payout-accounts', async (request, reply) => {
		const merchant = ownerOf(request);
		const data = accountFields.parse(body(request));
		const account = ctx.state.createAccount(merchant.id);
		applyAccountPatch(account, data);
		void reply.code(201);
		return { payoutAccountId: account.id, payoutAccount: accountView(account) };
	});
	app.patch('/payout-accounts/:id', async (request) => {
		const account = ctx.state.accounts.get(param(request));
		if (!account) throw notFound('payout account', param(request));
		applyAccountPatch(account, accountFields.parse(body(request)));
		return accountView(account);
	});

	const billOf = (id: string): Bill => {
		const bill = ctx.state.bills.get(id);
		if (!bill) throw notFound('bill', id);
		return bill;
	};
	app.get('/bills/:id', async (request) =>
		billControlView(ctx, billOf(param(request)), ctx.baseUrl(request)),
	);
	app.patch('/bills/:id', async (request) => {
		const bill = billOf(param(request));
		const patch = billPatch.parse(body(request));
		if (patch.losePostback !== undefined) bill.losePostback = patch.losePostback;
		return billControlView(ctx, bill, ctx.baseUrl(request));
	});
	app.post('/bills/:id/pay', async (request) => {
		const bill = billOf(param(request));
		const data = paySchema.parse(body(request));
		const result = pay(ctx.state, bill, data);
		return {
			payment: paymentControlView(ctx, result.payment),
			postback: result.postback,
			redirect: result.redirect,
		};
	});

	const paymentOf = (id: string): Payment => {
		const payment = ctx.state.payments.get(id);
		if (!payment) throw notFound('payment', id);
		return payment;
	};
	const paymentWithMoney = (payment: Payment) => ({
		...paymentControlView(ctx, payment),
		refunded_amount: format2(refundedOf(ctx.state, payment.id)),
		refundable_amount: format2(refundableOf(ctx.state, payment)),
		refunds: refundsOf(ctx.state, payment.id).map((refund) =>
			refundView(refund, controlShape(ctx, payment.merchantId)),
		),
		chargebacks: chargebacksOf(ctx.state, payment.id).map((item) =>
			chargebackView(item, controlShape(ctx, payment.merchantId)),
		),
	});
	app.get('/payments/:id', async (request) => paymentWithMoney(paymentOf(param(request))));
	// A refund made from the merchant's account (works whether the refund API is on or not).
	app.post('/payments/:id/refund', async (request) => {
		const payment = paymentOf(param(request));
		const data = refundSchema.parse(body(request));
		const { refund, postback } = makeRefund(
			ctx.state,
			payment,
			data.amount ?? null,
			data.orderId ?? null,
		);
		return {
			refund: refundView(refund, controlShape(ctx, payment.merchantId)),
			postback,
			payment: paymentWithMoney(payment),
		};
	});
	// The payer's bank takes the payment back.
	app.post('/payments/:id/chargeback', async (request) => {
		const payment = paymentOf(param(request));
		const data = chargebackSchema.parse(body(request));
		const { chargeback, postback } = makeChargeback(ctx.state, payment, data.amount ?? null);
		return {
			chargeback: chargebackView(chargeback, controlShape(ctx, payment.merchantId)),
			postback,
			payment: paymentWithMoney(payment),
		};
	});

	const payoutOf = (id: string): Payout => {
		const payout = ctx.state.payouts.get(id);
		if (!payout) throw notFound('payout', id);
		return payout;
	};
	app.get('/payouts', async (request) => {
		const { merchantId } = z.object({ merchantId: z.string().optional() }).parse(request.query);
		const payouts = [...ctx.state.payouts.values()].filter(
			(payout) => merchantId === undefined || payout.merchantId === merchantId,
		);
		return { data: payouts.map((payout) => payoutControlView(ctx, payout)) };
	});
	app.get('/payouts/:id', async (request) => payoutControlView(ctx, payoutOf(param(request))));
	app.post('/payouts/:id/advance', async (request) => {
		const payout = payoutOf(param(request));
		const { status, ...error } = advanceSchema.parse(body(request));
		return payoutControlView(ctx, advancePayout(ctx.state, payout, status, error));
	});

	app.get('/calls', async () => ({ calls: Object.fromEntries(ctx.calls) }));
	app.delete('/calls', async () => {
		ctx.calls.clear();
		return { calls: {} };
	});

	app.get('/faults', async () => ({ faults: ctx.faults }));
	app.post('/faults', async (request) => {
		const data = faultSchema.parse(body(request));
		if (data.kind === 'error' && data.key !== undefined) {
			const known = Object.keys(FACTS_ERRORS).some(
				(endpoint) =>
					data.key !== undefined && statusOf(endpoint as Endpoint, data.key) !== undefined,
			);
			if (!known) throw new SandboxError(400, 'invalid_request', `unknown error key ${data.key}`);
		}
		ctx.faultSeq += 1;
		ctx.faults.push({
			id: ctx.faultSeq,
			kind: data.kind,
			remaining: data.count,
			delayMs: data.delayMs,
			path: data.path ?? null,
			key: data.key ?? null,
		});
		return { faults: ctx.faults };
	});
	app.delete('/faults', async () => {
		ctx.faults = [];
		return { faults: ctx.faults };
	});

	app.get('/deliveries', async (request) => {
		const query = deliveriesQuery.parse(request.query);
		const data = ctx.deliverer.log.filter(
			(entry) =>
				(query.kind === undefined || entry.kind === query.kind) &&
				(query.trsId === undefined || entry.trsId === query.trsId) &&
				(query.id === undefined || entry.id === query.id),
		);
		return { data, pending: ctx.deliverer.pending };
	});

	app.post('/clock', async (request) => {
		const data = clockSchema.parse(body(request));
		if (data.now !== undefined)
			ctx.state.clockOffsetMs = data.now === null ? 0 : Date.parse(data.now) - Date.now();
		if (data.offsetMs !== undefined) ctx.state.clockOffsetMs = data.offsetMs;
		return { now: new Date(ctx.state.now()).toISOString(), offsetMs: ctx.state.clockOffsetMs };
	});

	app.post('/reset', async () => {
		ctx.reset();
		return { ...ctx.demo };
	});
}
