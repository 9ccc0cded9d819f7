import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { POSTBACK_EVENTS } from '../contract.ts';
import type { PostbackEvent } from '../contract.ts';
import { targetsByKind } from '../context.ts';
import type { ContextOptions } from '../context.ts';
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
	.object({ from: time, to: time, kind: kind.optional() })
	.refine((r) => r.from < r.to, 'from must be before to');
const requeueBody = z.object({ ids: z.array(z.number().int()).optional() }).optional();

/** A delivery id from the path, or undefined when it is not a positive integer. */
function deliveryId(text: string): number | undefined {
	if (!/^\d{1,15}$/.test(text)) return undefined;
	const id = Number(text);
	return id > 0 ? id : undefined;
}

const digest = (s: string) => createHash('sha256').update(s).digest();

function badRequest(reply: FastifyReply, error: z.ZodError) {
	return reply.code(400).send({
		error: 'Bad Request',
		issues: error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
	});
}

/** Token-protected operations: list events and deliveries, replay, dead letters. */
export async function adminRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	const expected = digest(ctx.config.adminToken);

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
	app.get('/catchup', async () => ({
		enabled: ctx.catchup?.enabled ?? false,
		intervalS: ctx.config.catchup.intervalS,
		last: ctx.catchup?.last ?? null,
	}));
	app.post('/catchup', async (_request, reply) => {
		if (!ctx.catchup?.enabled)
			return reply
				.code(409)
				.send({ error: 'Conflict', message: 'the catch-up is off (RELAY_CATCHUP_INTERVAL_S=0)' });
		const result = await ctx.catchup.run();
		return reply.code(result.outcome === 'skipped' ? 409 : 200).send(result);
	});
	app.get('/alerts', async () => ({ data: ctx.alerter?.recent ?? [] }));

	app.get('/events', async (request, reply) => {
		const q = eventQuery.safeParse(request.query);
		if (!q.success) return badRequest(reply, q.error);
		return { data: await ctx.store.listEvents(q.data) };
	});

	app.get<{ Params: { id: string } }>('/events/:id', async (request, reply) => {
		const event = await ctx.store.getEvent(request.params.id);
		if (!event) return reply.code(404).send({ error: 'Not Found' });
		const deliveries = await ctx.store.listDeliveries({ eventId: event.id, limit: 1000 });
		const attempts = await ctx.store.listAttempts(deliveries.map((d) => d.id));
		// `attempts` stays the delivery's attempt count; the attempts themselves are `attemptHistory`.
		const history = (id: number) => attempts.filter((a) => a.deliveryId === id);
		return { event, deliveries: deliveries.map((d) => ({ ...d, attemptHistory: history(d.id) })) };
	});

	app.post<{ Params: { id: string } }>('/events/:id/replay', async (request, reply) => {
		const event = await ctx.store.getEvent(request.params.id);
		if (!event) return reply.code(404).send({ error: 'Not Found' });
		const deliveries = await ctx.store.replayEvents(
			[event.id],
			targetsByKind(ctx.config),
			Date.now(),
		);
		ctx.kick();
		request.log.info({ eventId: event.id, deliveries }, 'event replayed');
		return { eventId: event.id, deliveries };
	});

	app.post('/replay', async (request, reply) => {
		const body = rangeBody.safeParse(request.body);
		if (!body.success) return badRequest(reply, body.error);
		const ids = await ctx.store.eventIdsInRange(body.data.from, body.data.to, body.data.kind);
		const deliveries = await ctx.store.replayEvents(ids, targetsByKind(ctx.config), Date.now());
		ctx.kick();
		request.log.info({ events: ids.length, deliveries }, 'range replayed');
		return { events: ids.length, deliveries };
	});

	app.get('/deliveries', async (request, reply) => {
		const q = deliveryQuery.safeParse(request.query);
		if (!q.success) return badRequest(reply, q.error);
		return { data: await ctx.store.listDeliveries(q.data) };
	});

	app.get('/dead', async (request, reply) => {
		const q = deliveryQuery.safeParse(request.query);
		if (!q.success) return badRequest(reply, q.error);
		return { data: await ctx.store.listDeliveries({ ...q.data, status: 'dead' }) };
	});

	app.post('/dead/requeue', async (request, reply) => {
		const body = requeueBody.safeParse(request.body ?? undefined);
		if (!body.success) return badRequest(reply, body.error);
		const requeued = await ctx.store.requeueDead(body.data?.ids, Date.now());
		ctx.kick();
		request.log.info({ requeued }, 'dead deliveries requeued');
		return { requeued };
	});

	app.get<{ Params: { id: string } }>('/deliveries/:id/attempts', async (request, reply) => {
		const id = deliveryId(request.params.id);
		if (id === undefined)
			return reply
				.code(400)
				.send({ error: 'Bad Request', message: 'the delivery id must be a positive integer' });
		const [delivery] = await ctx.store.listDeliveries({ beforeId: id + 1, limit: 1 });
		if (!delivery || delivery.id !== id) return reply.code(404).send({ error: 'Not Found' });
		return { delivery, data: await ctx.store.listAttempts([id]) };
	});

	app.post<{ Params: { id: string } }>('/deliveries/:id/requeue', async (request, reply) => {
		const id = Number(request.params.id);
		if (!Number.isInteger(id)) return reply.code(400).send({ error: 'Bad Request' });
		const requeued = await ctx.store.requeueDead([id], Date.now());
		if (requeued === 0) return reply.code(409).send({ error: 'Not a dead delivery' });
		ctx.kick();
		return { requeued };
	});
}
