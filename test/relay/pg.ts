// A throwaway PostgreSQL database per test or suite on the machine's server (RELAY_TEST_PG_URL
// overrides the server: a URL of its maintenance database).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

export const PG_ADMIN_URL =
	process.env.RELAY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** `url` with another database name. */
export function withDatabase(url: string, database: string): string {
	const u = new URL(url);
	u.pathname = `/${database}`;
	return u.href;
}

export async function adminQuery(sql: string, url = PG_ADMIN_URL): Promise<pg.QueryResult> {
	const client = new pg.Client({ connectionString: url });
	await client.connect();
	try {
		return await client.query(sql);
	} finally {
		await client.end();
	}
}

export interface TestDatabase {
	name: string;
	url: string;
	drop: () => Promise<void>;
}

/** Creates an empty database named relay_test_<random>; `drop` removes it, closing its connections. */
export async function createTestDatabase(adminUrl = PG_ADMIN_URL): Promise<TestDatabase> {
	const name = `relay_test_${randomBytes(6).toString('hex')}`;
	await adminQuery(`CREATE DATABASE ${name}`, adminUrl);
	return {
		name,
		url: withDatabase(adminUrl, name),
		drop: async () => {
			await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`, adminUrl);
		},
	};
}

const PG_BIN = '/usr/lib/postgresql/15/bin';
const run = promisify(execFile);

export interface OwnPostgres {
	/** Maintenance-database URL of the server (127.0.0.1, its own port). */
	url: string;
	port: number;
	/** Stops the server the way `mode` says (`immediate`: like a crash, recovery at start) and starts it again. */
	restart: (mode?: 'fast' | 'immediate') => Promise<void>;
	/** Stops the server and deletes its files. */
	destroy: () => Promise<void>;
}

/**
 * A throwaway PostgreSQL 15 server of this test's own (initdb into a temporary folder owned by the
 * `postgres` user, which initdb requires when the tests run as root), so that a test may restart it
 * without touching the machine's shared server.
 */
export async function startOwnPostgres(port: number): Promise<OwnPostgres> {
	const dir = mkdtempSync(join(tmpdir(), 'relay-pg-server-'));
	const asPostgres = (cmd: string, args: string[]) =>
		process.getuid?.() === 0
			? run('runuser', ['-u', 'postgres', '--', `${PG_BIN}/${cmd}`, ...args])
			: run(`${PG_BIN}/${cmd}`, args);
	if (process.getuid?.() === 0) await run('chown', ['postgres', dir]);
	const data = join(dir, 'data');
	await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
	const ctl = (...args: string[]) =>
		asPostgres('pg_ctl', [
			'-D',
			data,
			'-l',
			join(dir, 'server.log'),
			'-o',
			`-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
			'-w',
			...args,
		]);
	await ctl('start');
	return {
		url: `postgres://postgres@127.0.0.1:${port}/postgres`,
		port,
		restart: async (mode = 'immediate') => {
			await ctl('-m', mode, 'stop');
			await ctl('start');
		},
		destroy: async () => {
			await ctl('-m', 'fast', 'stop').catch(() => {});
			rmSync(dir, { recursive: true, force: true });
		},
	};
}
