/** What the control API under /_sandbox answers for merchants, shops, accounts, bills and payouts. */
import { paymentsOf } from './billing.ts';
import type { SandboxContext } from './context.ts';
import { format2 } from './money.ts';
import {
	BALANCE_CURRENCIES,
	type Bill,
	type Merchant,
	type Payment,
	type Payout,
	type PayoutAccount,
	type Shop,
} from './model.ts';
import { paymentView, payoutView, type ViewOptions } from './views.ts';

export function shopView(shop: Shop): Record<string, unknown> {
	return { ...shop };
}

export function accountView(account: PayoutAccount): Record<string, unknown> {
	return { ...account };
}

export function merchantView(ctx: SandboxContext, merchant: Merchant): Record<string, unknown> {
	const cents = (value: number | null) => (value === null ? null : format2(value));
	return {
		id: merchant.id,
		token: merchant.token,
		exists: merchant.exists,
		banned: merchant.banned,
		verified: merchant.verified,
		subscription: merchant.subscription,
		regularPayoutsEnabled: merchant.regularPayoutsEnabled,
		regularDirections: merchant.regularDirections,
		balances: Object.fromEntries(
			BALANCE_CURRENCIES.map((currency) => {
				const balance = merchant.balances[currency];
				return [
					currency,
					{
						available: format2(balance.available),
						locked: format2(balance.locked),
						hold: format2(balance.hold),
					},
				];
			}),
		),
		dailyPayoutLimit: cents(merchant.dailyPayoutLimit),
		monthlyPayoutLimit: cents(merchant.monthlyPayoutLimit),
		payoutSplitSize: cents(merchant.payoutSplitSize),
		payoutWebhookUrl: merchant.payoutWebhookUrl,
		tooManyPaymentsThreshold: merchant.tooManyPaymentsThreshold,
		liveExtras: merchant.liveExtras,
		profile: merchant.profile,
		searchPageSize: merchant.searchPageSize,
		losePostbacks: merchant.losePostbacks,
		trsId: merchant.trsId,
		errorForm: merchant.errorForm,
		requireShopId: merchant.requireShopId,
		newPaymentFields: merchant.newPaymentFields,
		billOrderId: merchant.billOrderId,
		paymentsPageSize: merchant.paymentsPageSize,
		refunds: merchant.refunds,
		ipAllowList: merchant.ipAllowList,
		rejectBills: merchant.rejectBills,
		shops: [...ctx.state.shops.values()]
			.filter((shop) => shop.merchantId === merchant.id)
			.map(shopView),
		payoutAccounts: [...ctx.state.accounts.values()]
			.filter((account) => account.merchantId === merchant.id)
			.map(accountView),
		payouts: [...ctx.state.payouts.values()]
			.filter((payout) => payout.merchantId === merchant.id)
			.map((payout) => payoutControlView(ctx, payout)),
	};
}

/**
 * The control views show every field (live extras on), in the merchant's profile: a payment's
 * `amount` and every `created_at` are the ones its API answers show.
 */
export function controlShape(ctx: SandboxContext, merchantId: string): ViewOptions {
	return { liveExtras: true, profile: ctx.state.merchants.get(merchantId)?.profile ?? 'live' };
}

/** A payment as the control API shows it (see controlShape). */
export function paymentControlView(ctx: SandboxContext, payment: Payment): Record<string, unknown> {
	return paymentView(payment, controlShape(ctx, payment.merchantId));
}

export function billControlView(
	ctx: SandboxContext,
	bill: Bill,
	base: string,
): Record<string, unknown> {
	return {
		id: bill.id,
		merchantId: bill.merchantId,
		shopId: bill.shopId,
		status: bill.status,
		amount: format2(bill.amount),
		type: bill.type,
		currency: bill.currency,
		orderId: bill.orderId,
		description: bill.description,
		custom: bill.custom,
		name: bill.name,
		payerPaysCommission: bill.payerPaysCommission,
		paymentMethod: bill.paymentMethod,
		active: bill.active,
		losePostback: bill.losePostback,
		linkUrl: `${base}/link/${bill.id}`,
		linkPageUrl: `${base}/pay/${bill.id}`,
		payments: paymentsOf(ctx.state, bill.id).map((payment) => paymentControlView(ctx, payment)),
	};
}

export function payoutControlView(ctx: SandboxContext, payout: Payout): Record<string, unknown> {
	return {
		...payoutView(payout, controlShape(ctx, payout.merchantId)),
		merchantId: payout.merchantId,
		kind: payout.kind,
		accountType: payout.accountType,
		network: payout.network,
		recipientPaysCommission: payout.recipientPays,
		accountCurrency: payout.accountCurrency,
	};
}
