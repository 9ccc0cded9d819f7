import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics.ts';
import type { DeliveryCounts } from '../store/types.ts';

export interface MetricsOptions {
	metrics: Metrics;
	/** The delivery states in the store now (app.ts gives the store's counts, nothing else of it). */
	deliveryCounts: () => Promise<DeliveryCounts>;
}

/**
 * Prometheus text: counters since start, the latency histogram, the delivery states in the store
 * (read at each scrape), the build information and the process metrics.
 */
export async function metricsRoutes(
	app: FastifyInstance,
	{ metrics, deliveryCounts }: MetricsOptions,
): Promise<void> {
	metrics.readDeliveriesFrom(deliveryCounts, (error) =>
		app.log.error({ err: error }, 'reading delivery counts failed'),
	);
	app.get('/metrics', async (_request, reply) =>
		reply.type(metrics.contentType).send(await metrics.render()),
	);
}
