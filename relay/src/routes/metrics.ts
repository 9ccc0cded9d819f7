import type { FastifyInstance } from 'fastify';
import type { ContextOptions } from '../context.ts';

/**
 * Prometheus text: counters since start, the latency histogram, the delivery states in the store
 * (read at each scrape), the build information and the process metrics.
 */
export async function metricsRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	ctx.metrics.readDeliveriesFrom(
		() => ctx.store.counts(),
		(error) => app.log.error({ err: error }, 'reading delivery counts failed'),
	);
	app.get('/metrics', async (_request, reply) =>
		reply.type(ctx.metrics.contentType).send(await ctx.metrics.render()),
	);
}
