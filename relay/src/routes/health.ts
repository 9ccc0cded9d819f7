import type { FastifyInstance } from 'fastify';

export interface HealthOptions {
	/** Resolves when the store answers (app.ts gives the store's ping, nothing else of it). */
	ping: () => Promise<unknown>;
}

/** Liveness (the process answers) and readiness (the store answers). */
export async function healthRoutes(app: FastifyInstance, { ping }: HealthOptions): Promise<void> {
	app.get('/healthz', async () => ({ status: 'ok' }));

	app.get('/readyz', async (request, reply) => {
		try {
			await ping();
			return { status: 'ready' };
		} catch (error) {
			request.log.error({ err: error }, 'store not reachable');
			return reply.code(503).send({ status: 'unavailable', reason: 'store not reachable' });
		}
	});
}
