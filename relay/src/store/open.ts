import type { Logger } from 'pino';
import { StartupError } from '../config.ts';
import { isPostgresUrl } from '../config-fields.ts';
import { PostgresStore } from './postgres.ts';
import { SqliteStore } from './sqlite.ts';
import type { Store } from './types.ts';

/**
 * The store RELAY_DATABASE names: a postgres:// URL opens the PostgreSQL store (migrated at
 * open), anything else is the SQLite file.
 */
export async function openStore(database: string, logger?: Logger): Promise<Store> {
	try {
		return await openNamedStore(database, logger);
	} catch (error) {
		// Start-up fails on this one variable: say so, with the store and the reason (never a password).
		const reason = error instanceof Error ? error.message : String(error);
		throw new StartupError(
			'RELAY_DATABASE',
			isPostgresUrl(database)
				? `cannot open the PostgreSQL store ${describeDatabase(database)}: ${reason}`
				: `cannot open the SQLite file ${database}: ${reason}`,
			{ cause: error },
		);
	}
}

async function openNamedStore(database: string, logger?: Logger): Promise<Store> {
	if (!isPostgresUrl(database)) return SqliteStore.open(database);
	return await PostgresStore.open(database, {
		// The message and code only: pg's error objects carry the whole client with them.
		onError: (error, where) =>
			logger?.warn(
				{ where, error: error.message, code: (error as { code?: string }).code },
				'PostgreSQL connection lost (it reconnects by itself)',
			),
	});
}

/** RELAY_DATABASE for the log: a PostgreSQL URL without its password. */
export function describeDatabase(database: string): string {
	if (!isPostgresUrl(database)) return database;
	try {
		const u = new URL(database);
		if (u.password) u.password = '***';
		return u.href;
	} catch {
		return 'postgres://(unreadable URL)';
	}
}
