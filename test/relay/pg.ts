// A throwaway PostgreSQL database per test or suite on the machine's server. PGURL (or
// RELAY_TEST_PG_URL) names another server: a URL of its maintenance database. A test that starts a
// server of its own finds PostgreSQL's programs by asking the system (`pg_config --bindir`, then
// PATH). Where no PostgreSQL exists at all, the PostgreSQL suites are skipped with PG_MISSING said
// once; a server that PGURL names and that does not answer is a failure, not a skip.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const CHOSEN_URL = process.env.PGURL ?? process.env.RELAY_TEST_PG_URL;
export const PG_ADMIN_URL = CHOSEN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The folder holding initdb and pg_ctl: `pg_config --bindir`, else the first initdb on PATH. */
export function findPostgresBin(): string | undefined {
	try {
		const dir = execFileSync('pg_config', ['--bindir'], {
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'ignore'],
		}).trim();
		if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
	} catch {
		// no pg_config: look on PATH
	}
	for (const dir of (process.env.PATH ?? '').split(delimiter)) {
		if (dir !== '' && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')))
			return dir;
	}
	return undefined;
}

async function reachable(url: string): Promise<string | undefined> {
	const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
	try {
		await client.connect();
		return undefined;
	} catch (error) {
		return error instanceof Error ? error.message : String(error);
	} finally {
		await client.end().catch(() => {});
	}
}

/**
 * Why the PostgreSQL suites cannot run here, or undefined when they can: no server answers at the
 * default address and no PostgreSQL is installed, and PGURL names none. A server PGURL names that
 * does not answer, or an installed PostgreSQL whose server is down, fails the suites instead.
 */
export const PG_MISSING: string | undefined = await (async () => {
	const problem = await reachable(PG_ADMIN_URL);
	if (problem === undefined || CHOSEN_URL !== undefined || findPostgresBin() !== undefined)
		return undefined;
	return `no PostgreSQL here (nothing answers at ${PG_ADMIN_URL}: ${problem}; no pg_config or initdb on PATH); set PGURL to a server's maintenance database to run them`;
})();
if (PG_MISSING) console.warn(`PostgreSQL tests skipped: ${PG_MISSING}`);

/** Own-server tests need PostgreSQL's programs as well as a server. */
export const PG_BIN_MISSING: string | undefined =
	PG_MISSING ??
	(findPostgresBin() === undefined
		? 'no initdb and pg_ctl (neither `pg_config --bindir` nor PATH has them)'
		: undefined);
if (PG_BIN_MISSING && !PG_MISSING)
	console.warn(`PostgreSQL tests with a server of their own skipped: ${PG_BIN_MISSING}`);

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
 * A throwaway PostgreSQL server of this test's own (initdb into a temporary folder owned by the
 * `postgres` user, which initdb requires when the tests run as root), so that a test may restart it
 * without touching the machine's shared server.
 */
export async function startOwnPostgres(port: number): Promise<OwnPostgres> {
	const PG_BIN = findPostgresBin();
	if (PG_BIN === undefined) throw new Error(`cannot start a PostgreSQL server: ${PG_BIN_MISSING}`);
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
