import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { POSTBACK_EVENTS } from '../contract.ts';
import type { PostbackEvent } from '../contract.ts';
import { isBreakGlass, refusalSentence } from '../auth-throttle.ts';
import type { ContextOptions, RelayContext } from '../context.ts';
import { DELIVERY_STATUSES, EVENT_SOURCES } from '../store/types.ts';
import { ApiError, BudgetSpent } from '../service-api.ts';
import { statementCsv } from '../statement/csv.ts';
import { statementJson } from '../statement/report.ts';
import { deliveryIdText, timeField as time } from './input.ts';

const kind = z.enum(POSTBACK_EVENTS as [PostbackEvent, ...PostbackEvent[]]);
const limit = z.coerce.number().int().min(1).max(1000).default(100);

const status = z.enum(DELIVERY_STATUSES as ['pending', 'delivering', 'delivered', 'dead']);
const eventQuery = z.object({
	kind: kind.optional(),
	source: z.enum(EVENT_SOURCES as ['postback', 'catch-up']).optional(),
	// Trimmed, as the relay stores and compares a TrsId (intake.ts, canonicalFields).
	trsId: z.string().trim().min(1).optional(),
	invId: z.string().min(1).optional(),
	status: status.optional(),
	from: time.optional(),
	to: time.optional(),
	before: time.optional(),
	limit,
});
/** POST /admin/catchup: `{"deep": true}` runs a deep run now; no body: the scheduled kind. */
const catchupBody = z.object({ deep: z.boolean().optional() }).strict().nullish();
/** POST /admin/catchup/backfill: `{"since": "2026-11-24T00:00:00Z"}` (or epoch ms). */
const backfillBody = z.object({ since: time }).strict();
const deliveryQuery = z.object({
	status: status.optional(),
	target: z.string().optional(),
	eventId: z.string().optional(),
	from: time.optional(),
	to: time.optional(),
	beforeId: z.coerce.number().int().optional(),
	limit,
});
const rangeBody = z
	.object({ from: time, to: time, kind: kind.optional(), target: z.string().min(1).optional() })
	.refine((r) => r.from < r.to, 'from must be before to');
const requeueBody = z
	.object({
		ids: z.array(z.number().int().positive()).optional(),
		target: z.string().min(1).optional(),
	})
	.optional()
	.nullable();
/** GET /admin/statement: `day` (YYYY-MM-DD, checked by the statement for a clear refusal), `format`. */
const statementQuery = z.object({
	day: z.string().max(32),
	format: z.enum(['json', 'csv']).default('json'),
});
const eventParams = z.object({ id: z.string() });
const deliveryParams = z.object({ id: deliveryIdText });

const digest = (s: string) => createHash('sha256').update(s).digest();

const withZod = (app: FastifyInstance) => app.withTypeProvider<ZodTypeProvider>();
type AdminApp = ReturnType<typeof withZod>;

/** Token-protected operations: list events and deliveries, replay, dead letters. */
export async function adminRoutes(plain: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	// A schema's refusal, a refused operation or a value the store refuses is answered by the app's
	// one JSON error handler (errors.ts beside this file) with its issues or its reason.
	plain.setValidatorCompiler(validatorCompiler);
	const app = withZod(plain);
	app.addHook('onRequest', bearerGuard(ctx));
	catchupRoutes(app, ctx);
	statementRoutes(app, ctx);
	readRoutes(app, ctx);
	operationRoutes(app, ctx);
}

/** Every call needs the admin token; too many wrong ones from one address: 429 for a while. */
function bearerGuard(ctx: RelayContext) {
	const expected = digest(ctx.config.adminToken);
	return async (request: FastifyRequest, reply: FastifyReply) => {
		const refused = await ctx.authThrottle.refusal(request.ip, {
			breakGlass: isBreakGlass(request),
		});
		if (refused !== undefined) {
			request.log.warn(
				{ reason: 'too many wrong tokens', scope: refused.scope },
				'admin API call refused',
			);
			return reply
				.code(429)
				.header('retry-after', String(refused.retryAfter))
				.send({
					error: 'Too Many Requests',
					retryAfter: refused.retryAfter,
					scope: refused.scope,
					message: refusalSentence(refused),
				});
		}
		const header = request.headers.authorization ?? '';
		const match = /^Bearer\s+(.+)$/i.exec(header);
		if (!match || !timingSafeEqual(digest(match[1].trim()), expected)) {
			ctx.authThrottle.fail(request.ip);
			return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'Unauthorized' });
		}
		ctx.authThrottle.clear(request.ip);
		return undefined;
	};
}

/**
 * The day's statement (docs/operator/statement.md): JSON, or its movements as CSV
 * (`format=csv`, or `/statement.csv`). The service not answering is a 502 with the reason.
 */
function statementRoutes(app: AdminApp, ctx: RelayContext): void {
	const answer = async (day: string, csv: boolean, reply: FastifyReply) => {
		if (!ctx.statements)
			return reply.code(409).send({ error: 'Conflict', message: 'no statement' });
		try {
			const statement = await ctx.statements.statement(day);
			if (!csv) return statementJson(statement);
			return reply
				.header('content-type', 'text/csv; charset=utf-8')
				.header('content-disposition', `attachment; filename="statement-${day}.csv"`)
				.send(statementCsv(statement));
		} catch (error) {
			if (!(error instanceof ApiError || error instanceof BudgetSpent)) throw error;
			return reply.code(502).send({
				error: 'Bad Gateway',
				message: `the service could not be read for the statement: ${error.message}`,
			});
		}
	};
	app.get('/statement', { schema: { querystring: statementQuery } }, async (request, reply) =>
		answer(request.query.day, request.query.format === 'csv', reply),
	);
	app.get('/statement.csv', { schema: { querystring: statementQuery } }, async (request, reply) =>
		answer(request.query.day, true, reply),
	);
}

/**
 * The catch-up: its last run, and one run now (an operator's "look again", and the e2e suite's
 * way not to wait RELAY_CATCHUP_INTERVAL_S). With the catch-up off (interval 0): 409. And the
 * alerts raised. GET shows the coverage: the last run and the last deep run (oldest bill date
 * read, bills and payments read, calls, what is still to read); POST `{"deep": true}` runs a deep one.
 */
function catchupRoutes(app: AdminApp, ctx: RelayContext): void {
	app.get('/catchup', async () => ({
		enabled: ctx.catchup?.enabled ?? false,
		intervalS: ctx.config.catchup.intervalS,
		deepIntervalS: ctx.config.catchup.deepIntervalS,
		billDays: ctx.config.catchup.billDays,
		chargebackDays: ctx.config.catchup.chargebackDays,
		last: ctx.catchup?.last ?? null,
		lastDeep: ctx.catchup?.lastDeep ?? null,
		// null when the store cannot write it now (read-only): the next run writes it first.
		baseline: (await ctx.catchup?.baseline().then(isoBaseline, () => null)) ?? null,
	}));
	app.post('/catchup', { schema: { body: catchupBody } }, async (request, reply) => {
		if (!ctx.catchup?.enabled)
			return reply
				.code(409)
				.send({ error: 'Conflict', message: 'the catch-up is off (RELAY_CATCHUP_INTERVAL_S=0)' });
		const result = await ctx.catchup.run({ deep: request.body?.deep === true });
		return reply.code(result.outcome === 'skipped' ? 409 : 200).send(result);
	});
	// A back-fill: the baseline moved back, so the next run forwards what is missing since then.
	app.post('/catchup/backfill', { schema: { body: backfillBody } }, async (request, reply) => {
		if (!ctx.catchup?.enabled)
			return reply
				.code(409)
				.send({ error: 'Conflict', message: 'the catch-up is off (RELAY_CATCHUP_INTERVAL_S=0)' });
		const baseline = await ctx.catchup.backfill(request.body.since);
		return {
			baseline: isoBaseline(baseline),
			message: `the next catch-up run forwards what the service recorded since ${new Date(baseline.since).toISOString()} and the relay does not hold (POST /admin/catchup runs one now)`,
		};
	});
	app.get('/alerts', async () => ({ data: ctx.alerter?.recent ?? [] }));
}

/** The baseline's times as ISO 8601 (UTC). */
const isoBaseline = (b: { firstStart: number; since: number }) => ({
	firstStart: new Date(b.firstStart).toISOString(),
	since: new Date(b.since).toISOString(),
});

/** The lists, an event with its deliveries and attempts, a delivery with its attempts. */
function readRoutes(app: AdminApp, { reads }: RelayContext): void {
	app.get('/events', { schema: { querystring: eventQuery } }, async (request) => ({
		data: await reads.events(request.query),
	}));

	app.get('/events/:id', { schema: { params: eventParams } }, async (request, reply) => {
		const detail = await reads.eventDetail(request.params.id);
		if (!detail) return reply.code(404).send({ error: 'Not Found' });
		const { event, deliveries, attempts } = detail;
		// `attempts` stays the delivery's attempt count; the attempts themselves are `attemptHistory`.
		const history = (id: number) => attempts.filter((a) => a.deliveryId === id);
		return { event, deliveries: deliveries.map((d) => ({ ...d, attemptHistory: history(d.id) })) };
	});

	app.get('/deliveries', { schema: { querystring: deliveryQuery } }, async (request) => ({
		data: await reads.deliveries(request.query),
	}));

	app.get('/dead', { schema: { querystring: deliveryQuery } }, async (request) => ({
		data: await reads.deliveries({ ...request.query, status: 'dead' }),
	}));

	app.get(
		'/deliveries/:id/attempts',
		{ schema: { params: deliveryParams } },
		async (request, reply) => {
			const found = await reads.deliveryAttempts(request.params.id);
			if (!found) return reply.code(404).send({ error: 'Not Found' });
			return { delivery: found.delivery, data: found.attempts };
		},
	);
}

/** Replay and requeue (operations.ts); a refusal is thrown and answered by the error handler. */
function operationRoutes(app: AdminApp, { operations: ops }: RelayContext): void {
	app.post('/events/:id/replay', { schema: { params: eventParams } }, async (request) => {
		const r = await ops.replayEvent(request.params.id);
		request.log.info({ eventId: r.eventId, deliveries: r.deliveries }, 'event replayed');
		return { eventId: r.eventId, deliveries: r.deliveries };
	});

	app.post('/replay', { schema: { body: rangeBody } }, async (request) => {
		const r = await ops.replayRange(request.body);
		request.log.info({ events: r.events, deliveries: r.deliveries }, 'range replayed');
		return { events: r.events, deliveries: r.deliveries };
	});

	app.post('/dead/requeue', { schema: { body: requeueBody } }, async (request) => {
		const r = await ops.requeueDead({ ids: request.body?.ids, target: request.body?.target });
		request.log.info({ requeued: r.requeued }, 'dead deliveries requeued');
		return { requeued: r.requeued };
	});

	app.post('/deliveries/:id/requeue', { schema: { params: deliveryParams } }, async (request) => {
		const r = await ops.requeueDelivery(request.params.id);
		request.log.info({ deliveryId: request.params.id }, 'dead delivery requeued');
		return { requeued: r.requeued };
	});
}
