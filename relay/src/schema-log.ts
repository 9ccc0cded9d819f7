import { existsSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import type { Logger } from 'pino';
import { isPostgresUrl } from './config-fields.ts';
import { PG_MIGRATIONS } from './store-postgres/schema.ts';
import { SCHEMA_VERSION as PG_SCHEMA_VERSION } from './store-postgres/statements.ts';
import { SQLITE_MIGRATIONS } from './store-sqlite/schema.ts';
import { SCHEMA_VERSION as SQLITE_SCHEMA_VERSION } from './store-sqlite/statements.ts';

/**
 * The start-up log's line about the store's schema: which migrations this start ran, or "schema
 * up to date". The stores migrate when they open and do not say what they ran, so the version is
 * read once before the store opens (`schemaVersionOf`, read-only), and what the relay's code has
 * beyond it is what opening ran. Two instances starting at the same moment on one PostgreSQL
 * database may both name the migrations one of them ran.
 */

/** The store's schema version before it opens: 0 for a new store; undefined when unreadable. */
export async function schemaVersionOf(database: string): Promise<number | undefined> {
	try {
		return isPostgresUrl(database) ? await pgVersion(database) : sqliteVersion(database);
	} catch {
		// The store's own opening reports what is wrong (StartupError naming RELAY_DATABASE).
		return undefined;
	}
}

function sqliteVersion(path: string): number {
	if (path === ':memory:' || !existsSync(path)) return 0;
	const db = new DatabaseSync(path, { readOnly: true });
	try {
		return Number(
			(db.prepare(SQLITE_SCHEMA_VERSION).get() as { user_version: number }).user_version,
		);
	} finally {
		db.close();
	}
}

async function pgVersion(url: string): Promise<number> {
	const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
	await client.connect();
	try {
		const { rows } = await client.query<{ v: number | null }>(PG_SCHEMA_VERSION);
		return Number(rows[0]?.v ?? 0);
	} catch (error) {
		// 42P01: no such table, a database the relay has not migrated yet.
		if ((error as { code?: string }).code === '42P01') return 0;
		throw error;
	} finally {
		await client.end().catch(() => {});
	}
}

/** The migrations the relay's code has for this store: version and name. */
export function migrationsOf(database: string): Array<{ version: number; name: string }> {
	return isPostgresUrl(database)
		? PG_MIGRATIONS.map((m) => ({ version: m.version, name: m.name }))
		: SQLITE_MIGRATIONS.map((_, i) => ({ version: i + 1, name: `SQLite schema ${i + 1}` }));
}

/** Logs, once the store is open, the migrations it ran since `before`, or that none were due. */
export function logSchema(logger: Logger, database: string, before: number | undefined): void {
	const all = migrationsOf(database);
	const version = all.at(-1)?.version ?? 0;
	if (before === undefined) {
		logger.info({ schema: { version } }, `store schema at version ${version}`);
		return;
	}
	const ran = all.filter((m) => m.version > before);
	if (ran.length === 0) {
		logger.info({ schema: { version } }, `store schema up to date (version ${version})`);
		return;
	}
	const names = ran.map((m) => `${m.version} (${m.name})`);
	logger.info(
		{ schema: { from: before, to: version, migrations: ran } },
		`store schema migrated from version ${before} to ${version}: ${names.join(', ')}`,
	);
}
