import Fastify, { LogController } from 'fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pino } from 'pino';
import type { DestinationStream, Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { RelayConfig } from './config.ts';
import { consoleRoutes } from './console/index.ts';
import type { RelayContext } from './context.ts';
import { Forwarder } from './forwarder.ts';
import { takeNote } from './log-context.ts';
import { Metrics } from './metrics.ts';
import { adminRoutes } from './routes/admin.ts';
import { healthRoutes } from './routes/health.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { postbackRoutes } from './routes/postbacks.ts';
import { SqliteStore } from './store/sqlite.ts';
import type { Store } from './store/types.ts';

export interface AppDeps {
	/** Defaults to a SqliteStore on `config.database`, closed with the app. */
	store?: Store;
	metrics?: Metrics;
	/**
	 * A ready logger; otherwise pino JSON at `config.logLevel` written to `logStream`, or without
	 * one to stdout, buffered (see bufferedStdoutLogger).
	 */
	logger?: Logger;
	logStream?: DestinationStream;
	/** false: no forwarder (the events are only stored). */
	forwarder?: boolean;
	dispatcher?: Dispatcher;
	random?: () => number;
}

export interface RelayRuntime {
	config: RelayConfig;
	store: Store;
	metrics: Metrics;
	forwarder: Forwarder | undefined;
}

declare module 'fastify' {
	interface FastifyInstance {
		relay: RelayRuntime;
	}
}

/**
 * No token, signature or authorization header may reach the log. The relay never logs bodies,
 * fields, headers or its configuration; these paths are a second line of defence (few and without
 * wildcards: redaction runs on every line).
 */
export const REDACT_PATHS = ['req.headers.authorization', 'headers.authorization', 'SignatureValue', 'fields.SignatureValue'];

/**
 * One line per request: arrival at debug, completion at info with what the route noted (event id,
 * duplicate, rejection reason); none for health and metrics scrapes.
 */
class RelayLogController extends LogController {
	constructor() {
		super({ disableRequestLogging: (request) => QUIET_URLS.has(request.url) });
	}
	override incomingRequest(request: FastifyRequest): void {
		request.log.debug({ req: request }, 'incoming request');
	}
	override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
		if (this.isLogDisabled(request)) return;
		const note = takeNote(request);
		if (error) {
			reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
			return;
		}
		const { msg = 'request completed', level = 'info', ...details } = note ?? {};
		reply.log[level]({ req: request, res: reply, responseTime: reply.elapsedTime, ...details }, msg);
	}
}
const QUIET_URLS = new Set(['/healthz', '/readyz', '/metrics']);

/** pino JSON at `level`, written to `stream` (stdout by default, synchronously). */
export function createLogger(level: string, stream?: DestinationStream): Logger {
	const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
	return stream ? pino(options, stream) : pino(options);
}

/** How long a log line may wait in the stdout buffer at most. */
export const LOG_FLUSH_MS = 200;

/**
 * The production logger: stdout written asynchronously in chunks of up to 4 KiB, flushed every
 * LOG_FLUSH_MS and when the process exits. A line costs no write system call of its own (a
 * synchronous destination makes one per request). Only a SIGKILL can lose the last lines; the
 * event itself is committed before its 200 either way.
 */
function bufferedStdoutLogger(level: string): { logger: Logger; stop: () => void } {
	const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
	const logger = createLogger(level, destination);
	// The destination's own flush, without a callback: logger.flush() hands it one, and each such
	// call adds a 'drain' listener, which piles up while writes are always in flight under load.
	const timer = setInterval(() => destination.flush(), LOG_FLUSH_MS);
	timer.unref();
	return {
		logger,
		stop: () => {
			clearInterval(timer);
			logger.flush();
		},
	};
}

/**
 * The relay as a Fastify instance, not listening: encapsulated route plugins for postbacks,
 * health, metrics and the admin API, sharing one store, one metrics registry and one forwarder.
 * The forwarder starts when the app is ready and stops (finishing or releasing in-flight
 * deliveries) when it closes.
 */
export async function buildApp(config: RelayConfig, deps: AppDeps = {}): Promise<FastifyInstance> {
	const buffered = deps.logger || deps.logStream ? undefined : bufferedStdoutLogger(config.logLevel);
	const logger = deps.logger ?? buffered?.logger ?? createLogger(config.logLevel, deps.logStream);
	const ownStore = deps.store === undefined;
	const store = deps.store ?? (await SqliteStore.open(config.database));
	const metrics = deps.metrics ?? new Metrics();
	const forwarder =
		deps.forwarder === false
			? undefined
			: new Forwarder({
					store,
					metrics,
					logger: logger.child({ component: 'forwarder' }),
					concurrency: config.concurrency,
					leaseMs: config.leaseMs,
					deliveryTimeoutMs: config.deliveryTimeoutMs,
					retryBudgetMs: config.retryBudgetMs,
					baseDelayMs: config.baseDelayMs,
					maxDelayMs: config.maxDelayMs,
					pollIntervalMs: config.pollIntervalMs,
					requireReceipt: config.requireReceipt,
					dispatcher: deps.dispatcher,
					random: deps.random,
				});

	const app = Fastify({
		loggerInstance: logger,
		bodyLimit: config.bodyLimit,
		trustProxy: config.trustProxy,
		logController: new RelayLogController(),
	}) as unknown as FastifyInstance;

	const ctx: RelayContext = { config, store, metrics, kick: () => forwarder?.kick() };
	app.decorate('relay', { config, store, metrics, forwarder });

	app.register(postbackRoutes, { ctx });
	app.register(healthRoutes, { ctx });
	app.register(metricsRoutes, { ctx });
	app.register(adminRoutes, { ctx, prefix: '/admin' });
	app.register(consoleRoutes, { ctx, prefix: '/admin' });

	app.addHook('onReady', async () => {
		forwarder?.start();
	});
	app.addHook('onClose', async () => {
		await forwarder?.stop(config.shutdownGraceMs);
		if (ownStore) {
			if (store instanceof SqliteStore) {
				// Group-commit figures since start: calls per commit, and how many commits were fsynced.
				const stats = await store.stats().catch(() => undefined);
				if (stats) app.log.info({ store: stats }, 'store closing');
			}
			await store.close();
		}
		buffered?.stop();
	});
	return app;
}
