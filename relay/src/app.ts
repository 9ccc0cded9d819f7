import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream, Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { AuthThrottle, operatorMemoryIn } from './auth-throttle.ts';
import { AlertMonitor, Alerter } from './alerts.ts';
import type { RelayConfig } from './config.ts';
import { isPostgresUrl } from './config-fields.ts';
import { CatchupRunner } from './catchup/runner.ts';
import { consoleRoutes } from './console/index.ts';
import type { SessionRevocations } from './console/index.ts';
import type { RelayContext } from './context.ts';
import { Forwarder } from './forwarder.ts';
import { Intake } from './intake.ts';
import { RelayLogController, bufferedStdoutLogger, createLogger } from './logging.ts';
import { Metrics } from './metrics.ts';
import { adminRoutes } from './routes/admin.ts';
import { jsonErrorHandler } from './routes/errors.ts';
import { healthRoutes } from './routes/health.ts';
import { homeRoutes } from './routes/home.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { Operations } from './operations.ts';
import { Reads } from './reads.ts';
import { postbackRoutes } from './routes/postbacks.ts';
import { logSchema, schemaVersionOf } from './schema-log.ts';
import { openStore } from './store-open.ts';
import { Pruner } from './store/retention.ts';
import { Statements } from './statement/statements.ts';
import { SqliteStore } from './store-sqlite/store.ts';
import type { Store } from './store/types.ts';
import { targetsByKind } from './targets.ts';

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
	/** How often the alert monitor looks at the store (default 15 s). */
	alertCheckMs?: number;
	/** Back-off of the catch-up's API client (tests shorten it). */
	catchupBackoffMs?: number;
	/** The catch-up's clock (tests move it on). */
	catchupNow?: () => number;
	/** The statement's and the balance snapshots' clock (tests move it on). */
	statementNow?: () => number;
	/** How often the balance keeper looks at the day boundary (tests shorten RELAY_STATEMENT_CHECK_S). */
	statementCheckMs?: number;
}

/** The forwarder of one app (none with `deps.forwarder === false`: events are only stored). */
function forwarderOf(
	config: RelayConfig,
	deps: AppDeps,
	store: Store,
	metrics: Metrics,
	logger: Logger,
): Forwarder | undefined {
	if (deps.forwarder === false) return undefined;
	return new Forwarder({
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
}

/** The Fastify instance with the relay's limits and timeouts, no routes yet. */
function fastifyOf(config: RelayConfig, logger: Logger): FastifyInstance {
	const { timeouts } = config;
	return Fastify({
		loggerInstance: logger,
		bodyLimit: config.bodyLimit,
		// A hop count or a list of proxy addresses; never `true` (the client writes the left-most
		// X-Forwarded-For entry). Fastify refuses a bare number (it cannot tell a proxy from a
		// direct client), so a hop count is a function: the socket peer and the next hops-1 entries
		// are proxies. Only safe when the relay is reachable through its proxies alone (README).
		trustProxy: trustProxyOption(config.trustProxy),
		logController: new RelayLogController(),
		// A client that trickles its headers or body, or leaves a connection idle, is cut off.
		requestTimeout: timeouts.request,
		connectionTimeout: timeouts.connection,
		keepAliveTimeout: timeouts.keepAlive,
		http: {
			headersTimeout: timeouts.headers,
			// Node checks the request and headers timeouts this often (30 s by default).
			connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(timeouts.headers / 2))),
		},
	} as Parameters<typeof Fastify>[0]) as unknown as FastifyInstance;
}

/**
 * The catch-up's baseline, written at the first start on a store (catchup/baseline.ts): what the
 * service recorded before it is not forwarded unless an operator asks for a back-fill. A store that
 * cannot write now (read-only for a while) does not stop the start: the catch-up's first run
 * writes it instead, before it reads anything.
 */
async function keepBaseline(store: Store, now: number, logger: Logger): Promise<void> {
	try {
		const baseline = await store.catchupBaseline(now);
		logger.info(
			{
				firstStart: new Date(baseline.firstStart).toISOString(),
				since: new Date(baseline.since).toISOString(),
			},
			'catch-up baseline: what the service recorded before it is not forwarded unless back-filled',
		);
	} catch (error) {
		logger.warn(
			{ error: error instanceof Error ? error.message : String(error) },
			'catch-up baseline not written at start; the first catch-up run writes it',
		);
	}
}

interface Parts {
	config: RelayConfig;
	deps: AppDeps;
	store: Store;
	metrics: Metrics;
	logger: Logger;
	forwarder: Forwarder | undefined;
}

/**
 * The services the routes share (the context), and the background jobs beside them: the intake
 * holds the forwarder's hand-off and wake-up, the catch-up admits through the intake.
 */
function servicesOf({ config, deps, store, metrics, logger, forwarder }: Parts) {
	const kick = () => forwarder?.kick();
	const targets = targetsByKind(config);
	const intake = new Intake({ config, store, metrics, targets, forwarder });
	const alerter = new Alerter({
		targets: config.alerts.targets,
		logger: logger.child({ component: 'alerts' }),
		metrics,
		dispatcher: deps.dispatcher,
	});
	const monitor = new AlertMonitor({
		store,
		alerter,
		backlogS: config.alerts.backlogS,
		intervalMs: deps.alertCheckMs,
		logger: logger.child({ component: 'alerts' }),
	});
	const catchup = new CatchupRunner({
		config,
		store,
		metrics,
		alerter,
		intake,
		targets,
		logger: logger.child({ component: 'catchup' }),
		dispatcher: deps.dispatcher,
		backoffMs: deps.catchupBackoffMs,
		maxBackoffMs: deps.catchupBackoffMs,
		now: deps.catchupNow,
	});
	const statements = new Statements({
		config,
		store,
		metrics,
		alerter,
		targets,
		logger: logger.child({ component: 'statement' }),
		dispatcher: deps.dispatcher,
		now: deps.statementNow,
		checkMs: deps.statementCheckMs,
		backoffMs: deps.catchupBackoffMs,
	});
	const shared = new Reads(store);
	const ctx: RelayContext = {
		config,
		metrics,
		intake,
		catchup,
		statements,
		alerter,
		authThrottle: new AuthThrottle({ ...config.authLimit, memory: operatorMemoryIn(store) }),
		reads: shared,
		operations: new Operations({
			targets: () => targetsByKind(config),
			reads: shared,
			store,
			kick,
		}),
	};
	return { ctx, monitor, catchup, statements };
}

/**
 * The relay as a Fastify instance, not listening: encapsulated route plugins for postbacks,
 * health, metrics and the admin API, sharing one context of services. The forwarder starts when
 * the app is ready and stops (finishing or releasing in-flight deliveries) when it closes.
 */
export async function buildApp(config: RelayConfig, deps: AppDeps = {}): Promise<FastifyInstance> {
	const buffered =
		deps.logger || deps.logStream ? undefined : bufferedStdoutLogger(config.logLevel);
	const logger = deps.logger ?? buffered?.logger ?? createLogger(config.logLevel, deps.logStream);
	const ownStore = deps.store === undefined;
	const store = deps.store ?? (await openOwnStore(config.database, logger));
	await keepBaseline(store, (deps.catchupNow ?? Date.now)(), logger);
	const metrics = deps.metrics ?? new Metrics({ store: storeKind(config.database) });
	const pruner =
		config.retentionDays > 0
			? new Pruner({
					store,
					retentionDays: config.retentionDays,
					logger: logger.child({ component: 'pruner' }),
				})
			: undefined;
	const forwarder = forwarderOf(config, deps, store, metrics, logger);
	const app = fastifyOf(config, logger);
	const { ctx, monitor, catchup, statements } = servicesOf({
		config,
		deps,
		store,
		metrics,
		logger,
		forwarder,
	});
	// Errors as JSON, set once here for every plugin (routes/errors.ts): a client's fault with its
	// status and reason, anything else a bare 500 with the cause in the log. The console answers
	// its own as pages.
	app.setErrorHandler(jsonErrorHandler);
	// Nothing under /admin may be kept by a browser or a proxy: the API's lists, its refusals
	// (401, 429, a schema's 400, an unknown path's 404) and the console's pages alike. Set before
	// routing, so every answer has it; a route may still say otherwise (the console's style sheet).
	// A callback hook, not an async one: it runs for every postback too, and an async hook costs a
	// promise and a turn of the microtask queue per request.
	app.addHook('onRequest', (request, reply, done) => {
		if (isAdminPath(request.url)) reply.header('cache-control', 'no-store');
		done();
	});

	// Limits only where a route asks for one (the redirect routes); postbacks are never limited.
	await app.register(rateLimit, { global: false });

	// Beside the context, each plugin that needs one more thing of the store gets that alone.
	app.register(postbackRoutes, { ctx });
	app.register(homeRoutes);
	app.register(healthRoutes, { ping: () => store.ping() });
	app.register(metricsRoutes, { metrics, deliveryCounts: () => store.counts() });
	app.register(adminRoutes, { ctx, prefix: '/admin' });
	app.register(consoleRoutes, { ctx, sessions: sessionsOf(store), prefix: '/admin' });

	app.addHook('onReady', async () => {
		forwarder?.start();
		pruner?.start();
		// Off the request path: timers of their own, never awaited by a route.
		catchup.start();
		statements.keeper.start();
		monitor.start();
	});
	app.addHook('onClose', async () => {
		await catchup.stop();
		await statements.keeper.stop();
		await monitor.stop();
		await forwarder?.stop(config.shutdownGraceMs);
		await pruner?.stop();
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

/** `/admin` and everything under it (the admin API and the console). */
export function isAdminPath(url: string): boolean {
	return url === '/admin' || url.startsWith('/admin/') || url.startsWith('/admin?');
}

/** The store RELAY_DATABASE names, opened (and migrated), with the migrations it ran logged. */
async function openOwnStore(database: string, logger: Logger): Promise<Store> {
	const storeLogger = logger.child({ component: 'store' });
	const before = await schemaVersionOf(database);
	const store = await openStore(database, storeLogger);
	logSchema(storeLogger, database, before);
	return store;
}

/** The console's logouts, kept in the store for every instance and restart: that port alone. */
function sessionsOf(store: Store): SessionRevocations {
	return {
		revokeSession: (id, expiresAt, now) => store.revokeSession(id, expiresAt, now),
		sessionRevoked: (id) => store.sessionRevoked(id),
	};
}

function trustProxyOption(
	trust: RelayConfig['trustProxy'],
): boolean | string[] | ((address: string, hop: number) => boolean) {
	if (typeof trust === 'number') return (_address, hop) => hop < trust;
	return trust;
}

/** The store a database setting selects, as the build-info gauge names it. */
export function storeKind(database: string): string {
	return isPostgresUrl(database) ? 'postgresql' : 'sqlite';
}
