import { STATUS_CODES } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { describeRejection, parsePostbackBody, postbackKey, verifyPostback } from '../contract.ts';
import type { PostbackEvent, PostbackFields } from '../contract.ts';
import { targetsFor } from '../context.ts';
import { noteRequest } from '../log-context.ts';
import type { ContextOptions, RelayContext } from '../context.ts';
import { clientFault } from '../errors.ts';
import type { ClientFault } from '../errors.ts';
import { PairLimiter, checkPayout } from './guards.ts';
import { pairKeyOf } from '../store/pair-key.ts';
import type { InsertResult, PairLimit } from '../store/types.ts';

type Verdict =
	| { ok: true; fields: PostbackFields; tokenIndex: number }
	| { ok: false; code: 400 | 401; reason: string; detail: string };

/** Parse, then verify with every configured token. Nothing is stored before this passes. */
function check(ctx: RelayContext, kind: PostbackEvent, request: FastifyRequest): Verdict {
	const contentType = request.headers['content-type'] ?? '';
	const raw = typeof request.body === 'string' ? request.body : undefined;
	const parsed = parsePostbackBody(raw, contentType);
	if (!parsed.ok)
		return { ok: false, code: 400, reason: parsed.reason, detail: describeRejection(parsed) };
	const verified = verifyPostback(kind, parsed.fields, ctx.config.apiTokens);
	if (!verified.ok) {
		// An unsigned call is treated like a forged one; a call missing a data field is garbage.
		const garbage = verified.reason === 'missing_field' && verified.field !== 'SignatureValue';
		return {
			ok: false,
			code: garbage ? 400 : 401,
			reason: verified.reason,
			detail: describeRejection(verified),
		};
	}
	return { ok: true, fields: parsed.fields, tokenIndex: verified.tokenIndex };
}

/**
 * Stores a verified call with one delivery per target; resolves after the commit. When the
 * forwarder has free slots, the deliveries are stored leased to it and sent at once (hand-off).
 */
async function persist(
	ctx: RelayContext,
	kind: PostbackEvent,
	request: FastifyRequest,
	fields: PostbackFields,
	pairLimit?: PairLimit,
) {
	const stored: Record<string, string> = { ...fields };
	delete stored.SignatureValue;
	const targets = targetsFor(ctx.config, kind);
	const lease = ctx.handOff?.lease(targets.length);
	let result: InsertResult | undefined;
	try {
		result = await ctx.store.insertEvent({
			kind,
			source: 'postback',
			dedupeKey: postbackKey(kind, fields) ?? null,
			contentType: request.headers['content-type'] ?? 'application/x-www-form-urlencoded',
			body: request.body as string,
			fields: stored,
			receivedAt: Date.now(),
			targets,
			...(pairLimit ? { pairLimit } : {}),
			...(lease ? { lease } : {}),
		});
	} finally {
		if (lease) ctx.handOff?.adopt(result?.claimed, targets.length);
	}
	if (result.limited) return result;
	ctx.metrics.received.inc({ kind });
	if (result.duplicate) ctx.metrics.duplicates.inc({ kind });
	else if (result.deliveries > (result.claimed?.length ?? 0)) ctx.kick();
	noteRequest(request, {
		msg: result.duplicate ? 'duplicate acknowledged' : 'stored',
		kind,
		eventId: result.eventId,
		duplicate: result.duplicate,
		deliveries: result.deliveries,
	});
	return result;
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

const page = (title: string, text: string) =>
	`<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p></body></html>`;

/**
 * The service's postbacks (payment Result URL, payout webhook) and the customer's success/fail
 * redirects. The bodies are kept as the raw string (form-encoded or JSON) so that the targets get
 * them unchanged and can verify the signature themselves.
 */
export async function postbackRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	app.removeAllContentTypeParsers();
	app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

	const reject = (
		kind: PostbackEvent,
		request: FastifyRequest,
		verdict: Extract<Verdict, { ok: false }>,
	) => {
		ctx.metrics.rejected.inc({ kind, reason: verdict.reason });
		noteRequest(request, {
			msg: 'rejected',
			level: 'warn',
			kind,
			reason: verdict.reason,
			detail: verdict.detail,
		});
	}; /** A value the store refuses before any SQL (a NUL byte, a text too long): 400, nothing stored. */
	const rejectBadInput = (kind: PostbackEvent, request: FastifyRequest, fault: ClientFault) =>
		reject(kind, request, { ok: false, code: 400, reason: 'bad_input', detail: fault.message });

	const pairs = new PairLimiter(ctx);
	// Look-ups of payout postbacks with the service, per signed pair: a refused pair cannot make the
	// relay call the API without end.
	const lookupKeys = new WeakMap<FastifyRequest, string>();
	const lookups = app.createRateLimit({
		max: Math.max(1, ctx.config.pairLimit.max || 10),
		timeWindow: 60_000,
		keyGenerator: (request) => lookupKeys.get(request) ?? '',
	});
	const text = (reply: FastifyReply, code: number, body: string) =>
		reply.code(code).type('text/plain; charset=utf-8').send(body);

	for (const kind of ['payment', 'payout'] as const) {
		app.post(`/postback/${kind}`, async (request: FastifyRequest, reply: FastifyReply) => {
			const verdict = check(ctx, kind, request);
			if (!verdict.ok) {
				reject(kind, request, verdict);
				return text(reply, verdict.code, verdict.code === 401 ? 'Unauthorized' : 'Bad Request');
			}
			const { fields } = verdict;
			const limited = (retryAfter: number, detail: string) => {
				reject(kind, request, { ok: false, code: 400, reason: 'pair_limit', detail });
				return text(reply.header('retry-after', String(retryAfter)), 429, 'Too Many Requests');
			};
			try {
				if (kind === 'payout' && ctx.config.payoutCheck === 'service') {
					lookupKeys.set(request, pairKeyOf(kind, fields) ?? '');
					const allowed = await lookups(request);
					if (!allowed.isAllowed && allowed.isExceeded) {
						return limited(
							Math.max(1, allowed.ttlInSeconds),
							'too many payout look-ups for one signed pair',
						);
					}
					const known = await checkPayout(ctx, fields, verdict.tokenIndex);
					if (!known.ok) {
						if (known.code === 503) {
							request.log.error(
								{ kind, reason: known.reason },
								'payout look-up failed; the service will retry',
							);
							return text(reply, 503, 'Service Unavailable');
						}
						reject(kind, request, {
							ok: false,
							code: 400,
							reason: 'unknown_payout',
							detail: known.reason,
						});
						return text(reply, 403, 'Forbidden: the service does not know this payout');
					}
				}
				const result = await pairs.run(kind, fields, (pairLimit) =>
					persist(ctx, kind, request, fields, pairLimit),
				);
				if ('limited' in result) {
					return limited(result.limited, 'more distinct events than the limit per signed pair');
				}
			} catch (error) {
				const fault = clientFault(error);
				if (fault) {
					rejectBadInput(kind, request, fault);
					return text(reply, fault.status, STATUS_CODES[fault.status] ?? 'Bad Request');
				}
				request.log.error(
					{ err: error, kind },
					'storing the postback failed; the service will retry',
				);
				return reply.code(503).type('text/plain; charset=utf-8').send('Service Unavailable');
			}
			return reply.code(200).type('text/plain; charset=utf-8').send('OK');
		});
	}

	const limits = redirectLimits(app, ctx.config.redirectLimit);
	const tooMany = (
		kind: PostbackEvent,
		request: FastifyRequest,
		reply: FastifyReply,
		retryAfter: number,
		per: string,
	) => {
		ctx.metrics.rejected.inc({ kind, reason: 'rate_limited' });
		noteRequest(request, {
			msg: 'rejected',
			level: 'warn',
			kind,
			reason: 'rate_limited',
			detail: `more than the limit per ${per}`,
		});
		return reply
			.code(429)
			.header('retry-after', String(retryAfter))
			.type('text/html; charset=utf-8')
			.send(
				page(
					'Too many requests',
					'This payment result was sent too often. Please try again in a minute.',
				),
			);
	};

	for (const kind of ['success', 'fail'] as const) {
		app.post(`/redirect/${kind}`, async (request: FastifyRequest, reply: FastifyReply) => {
			const perClient = await limits.client(request);
			if (perClient !== undefined) return tooMany(kind, request, reply, perClient, 'client');
			const verdict = check(ctx, kind, request);
			if (!verdict.ok) {
				reject(kind, request, verdict);
				return reply
					.code(verdict.code)
					.type('text/html; charset=utf-8')
					.send(
						verdict.code === 401
							? page('Payment result not confirmed', 'This payment result could not be verified.')
							: page('Bad request', 'This payment result is incomplete.'),
					);
			}
			const perPayment = await limits.payment(request, verdict.fields);
			if (perPayment !== undefined) return tooMany(kind, request, reply, perPayment, 'payment');
			try {
				await persist(ctx, kind, request, verdict.fields);
			} catch (error) {
				const fault = clientFault(error);
				if (fault) {
					rejectBadInput(kind, request, fault);
					return reply
						.code(fault.status)
						.type('text/html; charset=utf-8')
						.send(page('Bad request', 'This payment result is incomplete.'));
				}
				request.log.error({ err: error, kind }, 'storing the redirect failed');
				return reply
					.code(503)
					.type('text/html; charset=utf-8')
					.send(
						page(
							'Please try again',
							'The payment result could not be recorded right now. Please reload this page.',
						),
					);
			}
			const location = kind === 'success' ? ctx.config.successUrl : ctx.config.failUrl;
			if (location) return reply.code(303).header('location', location).send();
			return reply
				.code(200)
				.type('text/html; charset=utf-8')
				.send(
					kind === 'success'
						? page('Thank you', 'Your payment was received. You can close this page.')
						: page('Payment failed', 'Your payment did not go through. You can close this page.'),
				);
		});
	}
}
