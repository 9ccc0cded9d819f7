/**
 * payment/status (with the refunds and chargebacks it lists on request) and payment/search (a
 * sandbox endpoint too: the service's current reference lists it).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { SandboxContext } from '../context.ts';
import { keyError } from '../errors.ts';
import { toNumber } from '../money.ts';
import type { Bill, Payment } from '../model.ts';
import { chargebacksOf, refundedOf as refundedCents, refundsOf } from '../refunds.ts';
import { rules, validate } from '../validate.ts';
import { chargebackListName, chargebackView, paymentView, refundView } from '../views.ts';
import { getInput, merchantFor } from './common.ts';
import { search } from './search.ts';

const paymentStatusSchema = z.object({
	id: rules.string(),
	refunds: rules.boolean().optional(),
	chargeback: rules.boolean().optional(),
});

/** What the refunds of a payment took back, in cents (the newer payment form's refunded_amount). */
export const refundedOf = (ctx: SandboxContext) => (payment: Payment) =>
	refundedCents(ctx.state, payment.id);

/** payment/status and payment/search. */
export function paymentRoutes(app: FastifyInstance, ctx: SandboxContext): void {
	// Payments in a date range (the reference lists it): dates and pages as bill/search in the
	// merchant's profile, filtered by the bill's shop and order.
	app.get('/payment/search', async (request) => {
		const merchant = merchantFor(ctx, request, 'payment/search');
		const payments = [...ctx.state.payments.values()].filter(
			(payment) => payment.merchantId === merchant.id,
		);
		const billOf = (payment: Payment) => ctx.state.bills.get(payment.billId) as Bill;
		return search(
			ctx,
			request,
			merchant,
			payments,
			(payment) => paymentView(payment, { ...merchant, refundedOf: refundedOf(ctx) }),
			{
				shopOf: (payment) => billOf(payment).shopId,
				orderOf: (payment) => billOf(payment).orderId,
				requireShopId: false,
			},
		);
	});

	app.get('/payment/status', async (request) => {
		const endpoint = 'payment/status';
		const merchant = merchantFor(ctx, request, endpoint);
		const data = validate(paymentStatusSchema, getInput(request));
		const payment = ctx.state.payments.get(data.id);
		if (!payment || payment.merchantId !== merchant.id)
			throw keyError(endpoint, 'payment_not_found');
		const refunded = refundedOf(ctx);
		// refunds=1 / chargeback=1: the payment's refunds (and what they took back) and chargebacks
		// listed beside it, the chargebacks under `chargeback` in `live` (the reference's key).
		return {
			success: true,
			...paymentView(payment, { ...merchant, refundedOf: refunded }),
			...(data.refunds
				? {
						refunded_amount: toNumber(refunded(payment)),
						refunds: refundsOf(ctx.state, payment.id).map((refund) => refundView(refund, merchant)),
					}
				: {}),
			...(data.chargeback
				? {
						[chargebackListName(merchant)]: chargebacksOf(ctx.state, payment.id).map((item) =>
							chargebackView(item, merchant),
						),
					}
				: {}),
		};
	});
}
