/** The control API under /_sandbox: JSON in and out, no auth (bind the sandbox to loopback). */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z, ZodError } from 'zod';
import { pay, paymentsOf } from './billing.ts';
import type { ContextOptions, Fault, SandboxContext } from './context.ts';
import { ERROR_TABLE } from './errors.ts';
import { format2, parseControlAmount } from './money.ts';
import {
	CURRENCIES,
	REGULAR_DIRECTIONS,
	SandboxError,
	type Bill,
	type Merchant,
	type Payout,
	type PayoutAccount,
	type Shop,
} from './model.ts';
import { advancePayout } from './payouts.ts';
import { paymentView, payoutView } from './views.ts';

const amount = z
	.union([z.string(), z.number()])
	.refine((value) => parseControlAmount(value) !== null, {
		error: 'must be a non-negative decimal amount with at most 2 decimals',
	})
	.transform((value) => parseControlAmount(value) as number);
const positiveAmount = amount.refine((value) => value > 0, { error: 'must be greater than zero' });
const url = z.union([z.url({ protocol: /^https?$/ }), z.null()]);

const merchantPatch = z.object({
	banned: z.boolean().optional(),
	exists: z.boolean().optional(),
	verified: z.boolean().optional(),
	subscription: z.enum(['active', 'inactive', 'none']).optional(),
	regularPayoutsEnabled: z.boolean().optional(),
	regularDirections: z.array(z.enum(REGULAR_DIRECTIONS)).optional(),
	balances: z.partialRecord(z.enum(CURRENCIES), amount).optional(),
	dailyPayoutLimit: z.union([amount, z.null()]).optional(),
	monthlyPayoutLimit: z.union([amount, z.null()]).optional(),
	payoutSplitSize: z.union([positiveAmount, z.null()]).optional(),
	payoutWebhookUrl: url.optional(),
	tooManyPaymentsThreshold: z.int().min(0).optional(),
	liveExtras: z.boolean().optional(),
	losePostbacks: z.boolean().optional(),
});

const shopFields = z.object({
	name: z.string().max(255).optional(),
	resultUrl: url.optional(),
	successUrl: url.optional(),
	failUrl: url.optional(),
	defaultCurrency: z.string().min(1).max(16).optional(),
	enabled: z.boolean().optional(),
	accessDenied: z.boolean().optional(),
});

const accountFields = z.object({
	banned: z.boolean().optional(),
	directionAvailable: z.boolean().optional(),
	accountType: z.enum(['BANK_CARD', 'SBP']).optional(),
	accountNumber: z
		.string()
		.regex(/^\+?\d{10,19}$/)
		.optional(),
});

const merchantCreate = merchantPatch.extend({
	token: z.string().min(1).max(200).optional(),
	shop: shopFields.optional(),
});

const owner = z.object({ merchantId: z.string().optional() });

const paySchema = z.object({
	outcome: z.enum(['full', 'under', 'over', 'fail', 'process']).optional(),
	method: z.enum(['BANK_CARD', 'SBP']).optional(),
	amount: positiveAmount.optional(),
	losePostback: z.boolean().optional(),
});

const billPatch = z.object({ losePostback: z.boolean().optional() });

const advanceSchema = z.object({
	status: z.enum(['PROCESS', 'SUCCESS', 'FAIL', 'ERROR', 'DECLINED']),
});

const faultSchema = z
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

const deliveriesQuery = z.object({
	kind: z.enum(['payment', 'payout']).optional(),
	trsId: z.string().optional(),
	id: z.string().optional(),
});

const clockSchema = z.object({
	now: z.union([z.iso.datetime({ offset: true }), z.null()]).optional(),
	offsetMs: z.int().optional(),
});

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
			CURRENCIES.map((currency) => {
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
		losePostbacks: merchant.losePostbacks,
		shops: [...ctx.state.shops.values()]
			.filter((shop) => shop.merchantId === merchant.id)
			.map(shopView),
		payoutAccounts: [...ctx.state.accounts.values()]
			.filter((account) => account.merchantId === merchant.id)
			.map(accountView),
		payouts: [...ctx.state.payouts.values()]
			.filter((payout) => payout.merchantId === merchant.id)
			.map(payoutControlView),
	};
}

function billControlView(ctx: SandboxContext, bill: Bill, base: string): Record<string, unknown> {
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
		payments: paymentsOf(ctx.state, bill.id).map((payment) => paymentView(payment, true)),
	};
}

function payoutControlView(payout: Payout): Record<string, unknown> {
	return {
		...payoutView(payout, true),
		merchantId: payout.merchantId,
		kind: payout.kind,
		accountType: payout.accountType,
	};
}

function applyMerchantPatch(merchant: Merchant, patch: z.output<typeof merchantPatch>): void {
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
	if (patch.losePostbacks !== undefined) merchant.losePostbacks = patch.losePostbacks;
}

function applyShopPatch(shop: Shop, patch: z.output<typeof shopFields>): void {
	if (patch.name !== undefined) shop.name = patch.name;
	if (patch.resultUrl !== undefined) shop.resultUrl = patch.resultUrl;
	if (patch.successUrl !== undefined) shop.successUrl = patch.successUrl;
	if (patch.failUrl !== undefined) shop.failUrl = patch.failUrl;
	if (patch.defaultCurrency !== undefined) shop.defaultCurrency = patch.defaultCurrency;
	if (patch.enabled !== undefined) shop.enabled = patch.enabled;
	if (patch.accessDenied !== undefined) shop.accessDenied = patch.accessDenied;
}

function applyAccountPatch(account: PayoutAccount, patch: z.output<typeof accountFields>): void {
	if (patch.banned !== undefined) account.banned = patch.banned;
	if (patch.directionAvailable !== undefined) account.directionAvailable = patch.directionAvailable;
	if (patch.accountType !== undefined) account.accountType = patch.accountType;
	if (patch.accountNumber !== undefined) account.accountNumber = patch.accountNumber;
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
			payment: paymentView(result.payment, true),
			postback: result.postback,
			redirect: result.redirect,
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
		return { data: payouts.map(payoutControlView) };
	});
	app.get('/payouts/:id', async (request) => payoutControlView(payoutOf(param(request))));
	app.post('/payouts/:id/advance', async (request) => {
		const payout = payoutOf(param(request));
		const { status } = advanceSchema.parse(body(request));
		return payoutControlView(advancePayout(ctx.state, payout, status));
	});

	app.get('/faults', async () => ({ faults: ctx.faults }));
	app.post('/faults', async (request) => {
		const data = faultSchema.parse(body(request));
		if (data.kind === 'error' && data.key !== undefined) {
			const known = Object.values(ERROR_TABLE).some(
				(table) => data.key !== undefined && data.key in table,
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
