import { createHash, timingSafeEqual } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, validatorCompiler } from 'fastify-type-provider-zod';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { POSTBACK_EVENTS } from '../contract.ts';
import type { PostbackEvent } from '../contract.ts';
import type { ContextOptions } from '../context.ts';
import { deliveryIdText } from '../operations.ts';
import type { Refusal } from '../operations.ts';
import { StoreInputError } from '../store/input.ts';
import { DELIVERY_STATUSES, EVENT_SOURCES } from '../store/types.ts';

/** A time as epoch milliseconds or an ISO 8601 string. */
const time = z.union([z.number(), z.string()]).transform((v, ctx) => {
	const n = typeof v === 'number' ? v : /^\d+$/.test(v) ? Number(v) : Date.parse(v);
	if (!Number.isFinite(n)) {
		ctx.addIssue({
			code: 'custom',
			message: 'must be epoch milliseconds or an ISO 8601 date-time',
		});
		return z.NEVER;
	}
	return n;
});
const kind = z.enum(POSTBACK_EVENTS as [PostbackEvent, ...PostbackEvent[]]);
const limit = z.coerce.number().int().min(1).max(1000).default(100);

const status = z.enum(DELIVERY_STATUSES as ['pending', 'delivering', 'delivered', 'dead']);
const eventQuery = z.object({
	kind: kind.optional(),
	source: z.enum(EVENT_SOURCES as ['postback', 'catch-up']).optional(),
	trsId: z.string().min(1).optional(),
	invId: z.string().min(1).optional(),
	status: status.optional(),
	from: time.optional(),
	to: time.optional(),
	before: time.optional(),
	limit,
});
/** POST /admin/catchup: `{"deep": true}` runs a deep run now; no body: the scheduled kind. */
const catchupBody = z.object({ deep: z.boolean().optional() }).strict().nullish();
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
const eventParams = z.object({ id: z.string() });
const deliveryParams = z.object({ id: deliveryIdText });

const digest = (s: string) => createHash('sha256').update(s).digest();

/** A refusal of an operation, as JSON: the same status and reason the console shows. */
function refused(reply: FastifyReply, r: Refusal) {
	const error = { 400: 'Bad Request', 404: 'Not Found', 409: 'Conflict' }[r.status];
	return reply.code(r.status).send({ error, message: r.reason });
}

/**
 * Errors under the admin API, as JSON: a schema's refusal with its issues, the store's refusal of a
 * value (StoreInputError) with its reason, Fastify's own 4xx with its message, and anything else as
 * a bare 500 (logged; no stack, no SQL text in the answer).
 */
export function adminErrorHandler(
	error: FastifyError,
	request: FastifyRequest,
	reply: FastifyReply,
) {
	if (hasZodFastifySchemaValidationErrors(error))
		return reply.code(400).send({
			error: 'Bad Request',
			issues: error.validation.map((i) => ({
				path: i.instancePath.split('/').filter(Boolean).join('.'),
				message: i.message,
			})),
		});
	if (error instanceof StoreInputError) {
		request.log.warn({ reason: error.message }, 'refused input');
		return reply.code(400).send({ error: 'Bad Request', message: error.message });
	}
	const status = error.statusCode ?? 500;
	if (status >= 400 && status < 500)
		return reply.code(status).send({ error: STATUS_CODES[status], message: error.message });
	request.log.error({ err: error }, 'admin API call failed');
	return reply.code(500).send({ error: 'Internal Server Error' });
}

/** Token-protected operations: list events and deliveries, replay, dead letters. */
export async function adminRoutes(plain: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	const expected = digest(ctx.config.adminToken);
	const ops = ctx.operations;
	plain.setValidatorCompiler(validatorCompiler);
	plain.setErrorHandler(adminErrorHandler);
	const app = plain.withTypeProvider<ZodTypeProvider>();

	app.addHook('onRequest', async (request, reply) => {
		const wait = ctx.authThrottle.retryAfter(request.ip);
		if (wait !== undefined) {
			request.log.warn({ reason: 'too many wrong tokens' }, 'admin API call refused');
			return reply
				.code(429)
				.header('retry-after', String(wait))
				.send({ error: 'Too Many Requests', retryAfter: wait });
		}
		const header = request.headers.authorization ?? '';
		const match = /^Bearer\s+(.+)$/i.exec(header);
		if (!match || !timingSafeEqual(digest(match[1].trim()), expected)) {
			ctx.authThrottle.fail(request.ip);
			return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'Unauthorized' });
		}
		ctx.authThrottle.clear(request.ip);
		return undefined;
	});

	// The catch-up: its last run, and one run now (an operator's "look again", and the e2e suite's
	// way not to wait RELAY_CATCHUP_INTERVAL_S). With the catch-up off (interval 0): 409.
	// Coverage: the last run and the last deep run (oldest bill date read, bills and payments read,
	// calls, what is still to read).
	app.get('/catchup', async () => ({
		enabled: ctx.catchup?.enabled ?? false,
		intervalS: ctx.config.catchup.intervalS,
		deepIntervalS: ctx.config.catchup.deepIntervalS,
		billDays: ctx.config.catchup.billDays,
		last: ctx.catchup?.last ?? null,
		lastDeep: ctx.catchup?.lastDeep ?? null,
	}));
	app.post('/catchup', { schema: { body: catchupBody } }, async (request, reply) => {
		if (!ctx.catchup?.enabled)
			return reply
				.code(409)
				.send({ error: 'Conflict', message: 'the catch-up is off (RELAY_CATCHUP_INTERVAL_S=0)' });
		const result = await ctx.catchup.run({ deep: request.body?.deep === true });
		return reply.code(result.outcome === 'skipped' ? 409 : 200).send(result);
	});
	app.get('/alerts', async () => ({ data: ctx.alerter?.recent ?? [] }));

	app.get('/events', { schema: { querystring: eventQuery } }, async (request) => ({
		data: await ctx.store.listEvents(request.query),
	}));

	app.get('/events/:id', { schema: { params: eventParams } }, async (request, reply) => {
		const event = await ctx.store.getEvent(request.params.id);
		if (!event) return reply.code(404).send({ error: 'Not Found' });
		const deliveries = await ctx.store.listDeliveries({ eventId: event.id, limit: 1000 });
		const attempts = await ctx.store.listAttempts(deliveries.map((d) => d.id));
		// `attempts` stays the delivery's attempt count; the attempts themselves are `attemptHistory`.
		const history = (id: number) => attempts.filter((a) => a.deliveryId === id);
		return { event, deliveries: deliveries.map((d) => ({ ...d, attemptHistory: history(d.id) })) };
	});

	app.post('/events/:id/replay', { schema: { params: eventParams } }, async (request, reply) => {
		const r = await ops.replayEvent(request.params.id);
		if (!r.ok) return refused(reply, r);
		request.log.info({ eventId: r.eventId, deliveries: r.deliveries }, 'event replayed');
		return { eventId: r.eventId, deliveries: r.deliveries };
	});

	app.post('/replay', { schema: { body: rangeBody } }, async (request, reply) => {
		const r = await ops.replayRange(request.body);
		if (!r.ok) return refused(reply, r);
		request.log.info({ events: r.events, deliveries: r.deliveries }, 'range replayed');
		return { events: r.events, deliveries: r.deliveries };
	});

	app.get('/deliveries', { schema: { querystring: deliveryQuery } }, async (request) => ({
		data: await ctx.store.listDeliveries(request.query),
	}));

	app.get('/dead', { schema: { querystring: deliveryQuery } }, async (request) => ({
		data: await ctx.store.listDeliveries({ ...request.query, status: 'dead' }),
	}));

	app.post('/dead/requeue', { schema: { body: requeueBody } }, async (request, reply) => {
		const r = await ops.requeueDead({ ids: request.body?.ids, target: request.body?.target });
		if (!r.ok) return refused(reply, r);
		request.log.info({ requeued: r.requeued }, 'dead deliveries requeued');
		return { requeued: r.requeued };
	});

	app.get(
		'/deliveries/:id/attempts',
		{ schema: { params: deliveryParams } },
		async (request, reply) => {
			const id = request.params.id;
			const [delivery] = await ctx.store.listDeliveries({ beforeId: id + 1, limit: 1 });
			if (!delivery || delivery.id !== id) return reply.code(404).send({ error: 'Not Found' });
			return { delivery, data: await ctx.store.listAttempts([id]) };
		},
	);

	app.post(
		'/deliveries/:id/requeue',
		{ schema: { params: deliveryParams } },
		async (request, reply) => {
			const r = await ops.requeueDelivery(request.params.id);
			if (!r.ok) return refused(reply, r);
			request.log.info({ deliveryId: request.params.id }, 'dead delivery requeued');
			return { requeued: r.requeued };
		},
	);
}
