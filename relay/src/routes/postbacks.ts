import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
	describeRejection,
	identifyMoneyBack,
	isMoneyBackEvent,
	parsePostbackBody,
	postbackKindOf,
	verifyPostback,
} from '../contract.ts';
import type { PostbackEvent, PostbackFields } from '../contract.ts';
import type { ContextOptions, RelayContext } from '../context.ts';
import type { Admission, Source } from '../admission.ts';
import { noteRequest } from '../log-context.ts';
import { networkOf } from '../limits.ts';
import { clientFault } from './errors.ts';
import type { ClientFault } from './errors.ts';
import { page } from './page.ts';

type Verdict =
	| { ok: true; kind: PostbackEvent; fields: PostbackFields; tokenIndex: number }
	| { ok: 'p2p deal'; fields: PostbackFields }
	| { ok: false; code: 400 | 401; reason: string; detail: string };

/**
 * Parse, then verify with every configured token. Nothing is stored before this passes. At the
 * refund and chargeback routes, and at the payment route for a body with a refund's fields
 * (postbackKindOf: merchants paste one URL into the Result, Refund and Chargeback URL fields),
 * the signature tells which of the two it is (identifyMoneyBack), and it is that kind. A P2P deal
 * (postbackKindOf: signed like a payout, posted to the Result URL) is neither a payment nor a
 * payout of the shop: verified, it is answered OK and never stored (`p2p deal`).
 */
function check(ctx: RelayContext, route: PostbackEvent, request: FastifyRequest): Verdict {
	const contentType = request.headers['content-type'] ?? '';
	const raw = typeof request.body === 'string' ? request.body : undefined;
	const parsed = parsePostbackBody(raw, contentType);
	if (!parsed.ok)
		return { ok: false, code: 400, reason: parsed.reason, detail: describeRejection(parsed) };
	const bodyKind = postbackKindOf(parsed.fields);
	const moneyBack = isMoneyBackEvent(route) || (route === 'payment' && bodyKind === 'moneyBack');
	const deal = (route === 'payment' || route === 'payout') && bodyKind === 'p2pDeal';
	const verified = moneyBack
		? identifyMoneyBack(parsed.fields, ctx.config.apiTokens)
		: {
				...verifyPostback(deal ? 'payout' : route, parsed.fields, ctx.config.apiTokens),
				event: route,
			};
	if (!verified.ok) {
		// An unsigned call is treated like a forged one; a call missing a data field is garbage.
		const garbage = 'field' in verified && verified.field !== 'SignatureValue';
		return {
			ok: false,
			code: garbage ? 400 : 401,
			reason: verified.reason,
			detail: describeRejection(verified),
		};
	}
	if (deal) return { ok: 'p2p deal', fields: parsed.fields };
	return { ok: true, kind: verified.event, fields: parsed.fields, tokenIndex: verified.tokenIndex };
}

/** A verified P2P deal: counted, noted at info with its deal id, answered OK so it is not retried. */
function p2pDeal(
	ctx: RelayContext,
	route: PostbackEvent,
	request: FastifyRequest,
	fields: PostbackFields,
) {
	ctx.metrics.p2pDeals.inc({ route });
	noteRequest(request, {
		msg: 'P2P deal: neither a payment nor a payout of the shop; answered OK, not stored or forwarded',
		level: 'info',
		kind: route,
		deal: (fields.TrsId ?? '').trim().slice(0, 64),
		status: 200,
	});
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

/**
 * Redirect events are never deduplicated: the customer's browser carries a valid signature that
 * anyone can send again and again, each time a stored row and a workflow execution. Each client
 * IP, and each verified InvId+OutSum pair, may send `perClient` / `perPayment` redirects per
 * window (0: no limit). Returns the seconds until the caller may try again, or undefined.
 */
function redirectLimits(
	app: FastifyInstance,
	{ perClient, perPayment, windowMs }: RelayContext['config']['redirectLimit'],
) {
	const pairs = new WeakMap<FastifyRequest, string>();
	const byClient =
		perClient > 0 ? app.createRateLimit({ max: perClient, timeWindow: windowMs }) : undefined;
	const byPayment =
		perPayment > 0
			? app.createRateLimit({
					max: perPayment,
					timeWindow: windowMs,
					keyGenerator: (request) => pairs.get(request) ?? '',
				})
			: undefined;
	const exceeded = async (limiter: Limiter | undefined, request: FastifyRequest) => {
		const result = limiter ? await limiter(request) : undefined;
		return result && !result.isAllowed && result.isExceeded
			? Math.max(1, result.ttlInSeconds)
			: undefined;
	};
	return {
		client: (request: FastifyRequest) => exceeded(byClient, request),
		payment: (request: FastifyRequest, fields: PostbackFields) => {
			pairs.set(request, `${fields.InvId}\n${fields.OutSum}`);
			return exceeded(byPayment, request);
		},
	};
}

const text = (reply: FastifyReply, code: number, body: string) =>
	reply.code(code).type('text/plain; charset=utf-8').send(body);

const html = (reply: FastifyReply, code: number, body: string) =>
	reply.code(code).type('text/html; charset=utf-8').send(body);

/** The source of a verified call: its body exactly as received, and the token that verified it. */
const sourceOf = (request: FastifyRequest, tokenIndex: number): Source => ({
	via: 'postback',
	body: request.body as string,
	contentType: request.headers['content-type'] ?? 'application/x-www-form-urlencoded',
	tokenIndex,
	network: networkOf(request.ip),
});

/** A refused call in the request's log line, with the status it was really answered with. */
function noteRefusal(
	request: FastifyRequest,
	kind: PostbackEvent,
	refusal: { status: number; reason: string; detail: string },
) {
	noteRequest(request, {
		msg: 'rejected',
		level: 'warn',
		kind,
		status: refusal.status,
		reason: refusal.reason,
		detail: refusal.detail,
	});
}

/** A call the route refuses itself (before the intake): counted, then noted. */
function reject(
	ctx: RelayContext,
	request: FastifyRequest,
	kind: PostbackEvent,
	refusal: { status: number; reason: string; detail: string },
) {
	ctx.metrics.rejected.inc({ kind, reason: refusal.reason });
	noteRefusal(request, kind, refusal);
}

/** What the intake did with a call, in the request's log line (its refusals it counted itself). */
function noteAdmission(request: FastifyRequest, kind: PostbackEvent, admission: Admission) {
	if (admission.outcome === 'refused') return noteRefusal(request, kind, admission);
	if (admission.outcome === 'unavailable') {
		request.log.error(
			{ kind, reason: admission.reason },
			'a look-up failed; the sender will retry',
		);
		return;
	}
	if (admission.outcome !== 'stored') return;
	noteRequest(request, {
		msg: admission.duplicate ? 'duplicate acknowledged' : 'stored',
		// A new event with deliveries is logged at info once delivered (the forwarder's `delivered`
		// line, with its event id) or failed (warn, error); its `stored` line is at debug: a log line
		// is about a tenth of an ingested postback's CPU (docs/developer/relay-performance.md).
		level: admission.duplicate || admission.deliveries === 0 ? 'info' : 'debug',
		kind,
		eventId: admission.eventId,
		duplicate: admission.duplicate,
		deliveries: admission.deliveries,
	});
}

/** A store value refused before any SQL (a NUL byte, a text too long): 400, nothing stored. */
const badInput = (
	ctx: RelayContext,
	request: FastifyRequest,
	kind: PostbackEvent,
	fault: ClientFault,
) =>
	reject(ctx, request, kind, { status: fault.status, reason: 'bad_input', detail: fault.message });

/**
 * Hands a verified call to the intake and notes what it did; a store error comes back as `failed`
 * for the route to answer (a value the store refuses is counted and noted here as bad_input).
 */
async function admitCall(
	ctx: RelayContext,
	request: FastifyRequest,
	verdict: Extract<Verdict, { ok: true }>,
): Promise<Admission | { outcome: 'failed'; error: unknown; fault?: ClientFault }> {
	const kind = verdict.kind;
	try {
		const source = sourceOf(request, verdict.tokenIndex);
		const admission = await ctx.intake.admit(kind, verdict.fields, source);
		noteAdmission(request, kind, admission);
		return admission;
	} catch (error) {
		const fault = clientFault(error);
		if (fault) badInput(ctx, request, kind, fault);
		return { outcome: 'failed', error, fault };
	}
}

/**
 * The service's postbacks: plain-text answers it reads as acknowledged (200) or to retry. `route`:
 * the kind of the URL; a refund or chargeback at the payment route is stored as what it is.
 */
async function postback(
	ctx: RelayContext,
	route: 'payment' | 'payout' | 'refund' | 'chargeback',
	request: FastifyRequest,
	reply: FastifyReply,
) {
	const verdict = check(ctx, route, request);
	if (verdict.ok === 'p2p deal') {
		p2pDeal(ctx, route, request, verdict.fields);
		return text(reply, 200, 'OK');
	}
	if (!verdict.ok) {
		reject(ctx, request, route, { status: verdict.code, ...verdict });
		return text(reply, verdict.code, verdict.code === 401 ? 'Unauthorized' : 'Bad Request');
	}
	const kind = verdict.kind;
	const admission = await admitCall(ctx, request, verdict);
	if (admission.outcome === 'failed') {
		if (admission.fault) return text(reply, admission.fault.status, 'Bad Request');
		request.log.error(
			{ err: admission.error, kind },
			'storing the postback failed; the service will retry',
		);
		return text(reply, 503, 'Service Unavailable');
	}
	if (admission.outcome === 'unavailable') {
		if (admission.retryAfter !== undefined)
			reply.header('retry-after', String(admission.retryAfter));
		return text(reply, 503, 'Service Unavailable');
	}
	if (admission.outcome !== 'refused') return text(reply, 200, 'OK');
	if (admission.retryAfter !== undefined) reply.header('retry-after', String(admission.retryAfter));
	return admission.status === 403
		? text(reply, 403, `Forbidden: the service does not know this ${kind}`)
		: text(reply, admission.status, 'Too Many Requests');
}

const PAGES = {
	unverified: page('Payment result not confirmed', 'This payment result could not be verified.'),
	incomplete: page('Bad request', 'This payment result is incomplete.'),
	tooMany: page(
		'Too many requests',
		'This payment result was sent too often. Please try again in a minute.',
	),
	later: page(
		'Please try again',
		'The payment result could not be recorded right now. Please reload this page.',
	),
	success: page('Thank you', 'Your payment was received. You can close this page.'),
	fail: page('Payment failed', 'Your payment did not go through. You can close this page.'),
};

type RedirectLimits = ReturnType<typeof redirectLimits>;

/** The customer's success/fail redirects: HTML pages, or a 303 to RELAY_SUCCESS_URL/FAIL_URL. */
async function redirect(
	ctx: RelayContext,
	limits: RedirectLimits,
	kind: 'success' | 'fail',
	request: FastifyRequest,
	reply: FastifyReply,
) {
	const tooMany = (retryAfter: number, per: string) => {
		reject(ctx, request, kind, {
			status: 429,
			reason: 'rate_limited',
			detail: `more than the limit per ${per}`,
		});
		return html(reply.header('retry-after', String(retryAfter)), 429, PAGES.tooMany);
	};
	const perClient = await limits.client(request);
	if (perClient !== undefined) return tooMany(perClient, 'client');
	const verdict = check(ctx, kind, request);
	if (verdict.ok === 'p2p deal') return html(reply, 400, PAGES.incomplete); // never at a redirect route
	if (!verdict.ok) {
		reject(ctx, request, kind, { status: verdict.code, ...verdict });
		return html(reply, verdict.code, verdict.code === 401 ? PAGES.unverified : PAGES.incomplete);
	}
	const perPayment = await limits.payment(request, verdict.fields);
	if (perPayment !== undefined) return tooMany(perPayment, 'payment');
	const admission = await admitCall(ctx, request, verdict);
	if (admission.outcome === 'failed') {
		if (admission.fault) return html(reply, admission.fault.status, PAGES.incomplete);
		request.log.error({ err: admission.error, kind }, 'storing the redirect failed');
		return html(reply, 503, PAGES.later);
	}
	if (admission.outcome === 'unavailable') return html(reply, 503, PAGES.later);
	// Over the daily ceiling of its signed pair nothing was stored, but the customer who paid
	// still gets the page (the postback, not the redirect, carries the payment).
	if (admission.outcome === 'refused' && admission.reason !== 'redirect_daily_limit')
		return html(reply, admission.status, PAGES.unverified);
	const location = kind === 'success' ? ctx.config.successUrl : ctx.config.failUrl;
	if (location) return reply.code(303).header('location', location).send();
	return html(reply, 200, PAGES[kind]);
}

/**
 * The service's postbacks (payment Result URL, payout webhook, Refund URL, Chargeback URL) and the customer's success/fail
 * redirects: parse, authenticate, hand the verified call to the intake and answer. The bodies are
 * kept as the raw string (form-encoded or JSON) so that the targets get them unchanged and can
 * verify the signature themselves.
 */
export async function postbackRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	app.removeAllContentTypeParsers();
	app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
	for (const kind of ['payment', 'payout', 'refund', 'chargeback'] as const) {
		app.post(`/postback/${kind}`, (request, reply) => postback(ctx, kind, request, reply));
	}
	const limits = redirectLimits(app, ctx.config.redirectLimit);
	for (const kind of ['success', 'fail'] as const) {
		app.post(`/redirect/${kind}`, (request, reply) => redirect(ctx, limits, kind, request, reply));
	}
}
