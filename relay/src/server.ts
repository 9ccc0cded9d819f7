import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import type { AppDeps } from './app.ts';
import { loadConfig } from './config.ts';
import { targetsByKind } from './context.ts';
import { describeDatabase } from './store/open.ts';

export interface RunningRelay {
	app: FastifyInstance;
	url: string;
	close: () => Promise<void>;
}

/**
 * Reads the configuration from `env` (throws a ConfigError naming every bad variable), opens the
 * store, listens, and with `handleSignals` closes gracefully on SIGINT/SIGTERM: stop accepting,
 * finish or release in-flight deliveries, close the store.
 */
export async function start(
	env: Record<string, string | undefined> = process.env,
	options: { handleSignals?: boolean; deps?: AppDeps } = {},
): Promise<RunningRelay> {
	const config = loadConfig(env);
	const app = await buildApp(config, options.deps);
	await app.listen({ port: config.port, host: config.host });
	const address = app.server.address();
	const port = typeof address === 'object' && address ? address.port : config.port;
	const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
	let closing: Promise<void> | undefined;
	const close = () => {
		closing ??= app.close();
		return closing;
	};
	if (options.handleSignals) {
		const onSignal = (signal: NodeJS.Signals) => {
			app.log.info({ signal }, 'shutting down');
			close().then(
				() => process.exit(0),
				(error: unknown) => {
					app.log.error({ err: error }, 'shutdown failed');
					process.exit(1);
				},
			);
		};
		process.once('SIGINT', onSignal);
		process.once('SIGTERM', onSignal);
	}
	app.log.info(
		{
			url,
			database: describeDatabase(config.database),
			targets: Object.fromEntries(Object.entries(targetsByKind(config)).map(([kind, list]) => [kind, list.length])),
			requireReceipt: config.requireReceipt,
			tokens: config.apiTokens.length,
		},
		'relay listening',
	);
	return { app, url, close };
}
