import type { FastifyInstance } from 'fastify';
import type { ContextOptions } from '../context.ts';

/** Liveness (the process answers) and readiness (the store answers). */
export async function healthRoutes(app: FastifyInstance, { ctx }: ContextOptions): Promise<void> {
	app.get('/healthz', async () => ({ status: 'ok' }));

	app.get('/readyz', async (request, reply) => {
		try {
			await ctx.store.ping();
			return { status: 'ready' };
		} catch (error) {
			request.log.error({ err: error }, 'store not reachable');
			return reply.code(503).send({ status: 'unavailable', reason: 'store not reachable' });
		}
	});
}
