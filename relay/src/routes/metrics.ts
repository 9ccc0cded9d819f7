import type { FastifyInstance } from 'fastify';
import type { ContextOptions } from '../context.ts';
import type { DeliveryCounts } from '../store/types.ts';

/** Prometheus text: counters since start, the latency histogram, and delivery states in the store. */
export async function metricsRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	app.get('/metrics', async (request, reply) => {
		let counts: DeliveryCounts | undefined;
		try {
			counts = await ctx.store.counts();
		} catch (error) {
			request.log.error({ err: error }, 'reading delivery counts failed');
		}
		return reply.type('text/plain; version=0.0.4; charset=utf-8').send(ctx.metrics.render(counts));
	});
}
