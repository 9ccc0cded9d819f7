import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { AppDeps } from './app.ts';
import { StartupError, loadConfig } from './config.ts';
import { targetsByKind } from './targets.ts';
import { describeDatabase } from './store-open.ts';

/** Time a graceful close gets on top of RELAY_SHUTDOWN_GRACE_MS (leases released, store closed). */
export const CLOSE_MARGIN_MS = 5_000;

export interface RunningRelay {
	app: FastifyInstance;
	url: string;
	close: () => Promise<void>;
}

/**
 * Reads the configuration from `env` (throws a ConfigError naming every bad variable), opens the
 * store, listens, and with `handleSignals` closes gracefully on SIGINT/SIGTERM (close-with-grace):
 * stop accepting, finish or release in-flight deliveries, close the store, exit.
 */
export async function start(
	env: Record<string, string | undefined> = process.env,
	options: { handleSignals?: boolean; deps?: AppDeps } = {},
): Promise<RunningRelay> {
	const config = loadConfig(env);
	const app = await buildApp(config, options.deps);
	try {
		await app.listen({ port: config.port, host: config.host });
	} catch (error) {
		await app.close().catch(() => {});
		throw listenError(error, config.host, config.port);
	}
	const address = app.server.address();
	const port = typeof address === 'object' && address ? address.port : config.port;
	const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
	let closing: Promise<void> | undefined;
	const close = () => {
		closing ??= app.close();
		return closing;
	};
	if (options.handleSignals) {
		// SIGINT/SIGTERM, an uncaught exception or an unhandled rejection: close gracefully (stop
		// accepting, finish or release in-flight deliveries, close the store), then exit 0 (1 after
		// an error). A close that hangs (a store that no longer answers) still ends in exit 1 once
		// the grace time has passed; a second signal exits at once.
		const delay = config.shutdownGraceMs + CLOSE_MARGIN_MS;
		closeWithGrace(
			{
				delay,
				logger: {
					error: (message: unknown) =>
						app.log.error(typeof message === 'string' ? message : { err: message }, 'shutdown'),
				},
				onTimeout: () =>
					app.log.error(
						{ graceMs: delay },
						'shutdown did not finish within the grace time; exiting',
					),
			},
			async ({ signal, err }) => {
				if (err) app.log.error({ err }, 'uncaught error; shutting down');
				else app.log.info({ signal }, 'shutting down');
				await close();
			},
		);
	}
	app.log.info(
		{
			url,
			database: describeDatabase(config.database),
			targets: Object.fromEntries(
				Object.entries(targetsByKind(config)).map(([kind, list]) => [kind, list.length]),
			),
			requireReceipt: config.requireReceipt,
			tokens: config.apiTokens.length,
		},
		'relay listening',
	);
	return { app, url, close };
}

/** A failed listen as the variable at fault: a port in use or not allowed, an address not here. */
function listenError(error: unknown, host: string, port: number): Error {
	const code = (error as { code?: string }).code;
	const reason = error instanceof Error ? error.message : String(error);
	if (code === 'EADDRINUSE' || code === 'EACCES')
		return new StartupError('PORT', `cannot listen on port ${port}: ${reason}`, { cause: error });
	if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
		return new StartupError('HOST', `cannot listen on ${host}: ${reason}`, { cause: error });
	return error instanceof Error ? error : new Error(reason);
}
