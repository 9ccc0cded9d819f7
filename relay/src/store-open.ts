import { closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { StartupError } from './config.ts';
import { isPostgresUrl } from './config-fields.ts';
import { PostgresStore } from './store-postgres/store.ts';
import { SqliteStore } from './store-sqlite/store.ts';
import type { Store } from './store/types.ts';

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

/**
 * The SQLite file's folder and the file itself, private when the relay makes them: the folder
 * 0700, the file 0600 (SQLite gives the -wal and -shm files beside it the file's mode). Existing
 * ones are left as they are; a file other users can read is logged.
 */
export function prepareSqliteFile(path: string, logger?: Logger): void {
	if (path === ':memory:') return;
	const folder = dirname(path);
	if (!existsSync(folder)) {
		mkdirSync(folder, { recursive: true, mode: 0o700 });
		logger?.info({ folder, mode: '0700' }, 'made the folder of the SQLite store');
	}
	if (!existsSync(path)) {
		closeSync(openSync(path, 'wx', 0o600));
		logger?.info({ database: path, mode: '0600' }, 'made the SQLite store');
	} else {
		const mode = statSync(path).mode & 0o777;
		if ((mode & 0o077) !== 0)
			logger?.warn(
				{ database: path, mode: mode.toString(8) },
				'other users can read the SQLite store (it holds the postbacks): chmod 600 it',
			);
	}
}

async function openNamedStore(database: string, logger?: Logger): Promise<Store> {
	if (!isPostgresUrl(database)) {
		prepareSqliteFile(database, logger);
		return SqliteStore.open(database);
	}
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
