/** The control API under /_sandbox: JSON in and out, no auth (bind the sandbox to loopback). */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z, ZodError } from 'zod';
import type { ContextOptions, SandboxContext } from './context.ts';
import { moneyRoutes } from './control-money.ts';
import {
	accountFields,
	applyAccountPatch,
	applyMerchantPatch,
	applyShopPatch,
	balanceAdjustment,
	body,
	clockSchema,
	deliveriesQuery,
	faultSchema,
	merchantCreate,
	merchantPatch,
	notFound,
	owner,
	param,
	shopFields,
} from './control-schemas.ts';
import { accountView, merchantView, shopView } from './control-views.ts';
import { FACTS_ERRORS, statusOf, type Endpoint } from './errors.ts';
import { SandboxError, type Merchant, type Shop } from './model.ts';

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

/** The control API: its error shapes, then each group of calls. */
export async function controlRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	app.setErrorHandler(controlErrorHandler);
	merchantRoutes(app, ctx);
	shopRoutes(app, ctx);
	moneyRoutes(app, ctx);
	faultRoutes(app, ctx);
	logRoutes(app, ctx);
}

function merchantOf(ctx: SandboxContext, id: string): Merchant {
	const merchant = ctx.state.merchants.get(id);
	if (!merchant) throw notFound('merchant', id);
	return merchant;
}

/** The demo merchant, merchants: create, read, patch, rotate the token. */
function merchantRoutes(app: FastifyInstance, ctx: SandboxContext): void {
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

	app.get('/merchants/:id', async (request) => merchantView(ctx, merchantOf(ctx, param(request))));

	app.patch('/merchants/:id', async (request) => {
		const merchant = merchantOf(ctx, param(request));
		applyMerchantPatch(merchant, merchantPatch.parse(body(request)));
		return merchantView(ctx, merchant);
	});

	app.post('/merchants/:id/balance-adjustment', async (request) => {
		const merchant = merchantOf(ctx, param(request));
		const data = balanceAdjustment.parse(body(request));
		merchant.balances[data.currency][data.balance] += data.amount;
		return { id: merchant.id, balances: merchantView(ctx, merchant).balances };
	});

	app.post('/merchants/:id/rotate-token', async (request) => {
		const merchant = merchantOf(ctx, param(request));
		const data = z.object({ token: z.string().min(1).max(200).optional() }).parse(body(request));
		return { token: ctx.state.rotateToken(merchant, data.token) };
	});
}

/** Shops and payout accounts: create, read, patch. */
function shopRoutes(app: FastifyInstance, ctx: SandboxContext): void {
	const ownerOf = (request: FastifyRequest): Merchant =>
		merchantOf(ctx, owner.parse(body(request)).merchantId ?? ctx.demo.merchantId);

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
}

/** The fault queue of the API. */
function faultRoutes(app: FastifyInstance, ctx: SandboxContext): void {
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
}

/** What the sandbox saw and sent (calls, deliveries), its clock and its reset. */
function logRoutes(app: FastifyInstance, ctx: SandboxContext): void {
	app.get('/calls', async () => ({ calls: Object.fromEntries(ctx.calls) }));
	app.delete('/calls', async () => {
		ctx.calls.clear();
		return { calls: {} };
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
