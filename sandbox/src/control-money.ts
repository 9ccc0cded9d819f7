/**
 * The control API's calls on money (under /_sandbox): paying bills, refunds and chargebacks of
 * payments, moving payouts, and P2P deal postbacks.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { pay } from './billing.ts';
import type { SandboxContext } from './context.ts';
import {
	advanceSchema,
	billPatch,
	body,
	chargebackSchema,
	dealSchema,
	notFound,
	param,
	paySchema,
	refundSchema,
} from './control-schemas.ts';
import {
	billControlView,
	controlShape,
	paymentControlView,
	payoutControlView,
} from './control-views.ts';
import { dealId, sendDeal } from './deals.ts';
import { format2 } from './money.ts';
import type { Bill, Payment, Payout } from './model.ts';
import { advancePayout } from './payouts.ts';
import {
	chargebacksOf,
	makeChargeback,
	makeRefund,
	refundableOf,
	refundedOf,
	refundsOf,
} from './refunds.ts';
import { chargebackView, refundView } from './views.ts';

/** Each group of calls on money. */
export function moneyRoutes(app: FastifyInstance, ctx: SandboxContext): void {
	billRoutes(app, ctx);
	paymentRoutes(app, ctx);
	payoutRoutes(app, ctx);
	dealRoutes(app, ctx);
}

/** Bills: read, lose their postbacks, pay. */
function billRoutes(app: FastifyInstance, ctx: SandboxContext): void {
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
}

/** Payments: read with what went back, refund, charge back. */
function paymentRoutes(app: FastifyInstance, ctx: SandboxContext): void {
	const paymentOf = (id: string): Payment => {
		const payment = ctx.state.payments.get(id);
		if (!payment) throw notFound('payment', id);
		return payment;
	};
	const paymentWithMoney = (payment: Payment) => ({
		...paymentControlView(ctx, payment),
		refunded_amount: format2(refundedOf(ctx.state, payment.id)),
		refundable_amount: format2(refundableOf(ctx.state, payment)),
		// What chargebacks took, shown here even where the service's records show no amount.
		charged_back_amount: format2(
			chargebacksOf(ctx.state, payment.id).reduce((sum, item) => sum + item.amount, 0),
		),
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
}

/** Payouts: list, read, move. */
function payoutRoutes(app: FastifyInstance, ctx: SandboxContext): void {
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
}

/**
 * A P2P deal's postback to a shop's Result URL (the demo merchant's shop by default): `{postback,
 * url}`, url null when the shop has none (nothing sent).
 */
function dealRoutes(app: FastifyInstance, ctx: SandboxContext): void {
	app.post('/p2p-deals', async (request) => {
		const data = dealSchema.parse(body(request));
		const shopId = data.shopId ?? ctx.demo.shopId;
		const shop = ctx.state.shops.get(shopId);
		if (!shop) throw notFound('shop', shopId);
		return sendDeal(ctx.state, shop, {
			trsId: data.trsId ?? dealId(),
			invId: data.invId,
			status: data.status,
			amount: data.amount,
			currency: data.currency,
			balanceAmount: data.balanceAmount ?? data.amount,
			balanceCurrency: data.balanceCurrency ?? data.currency,
			payments: data.payments,
			payouts: data.payouts,
		});
	});
}
