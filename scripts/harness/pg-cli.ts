/**
 * The machine's PostgreSQL and Redis through their command-line clients (psql, redis-cli), called
 * synchronously so that the same clean-up also runs from a process `exit` hook, where nothing
 * asynchronous can run any more. PAYPALYCH_PG_URL and PAYPALYCH_REDIS_URL override the servers.
 */
import { spawnSync } from 'node:child_process';

export const PG_URL = process.env.PAYPALYCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.PAYPALYCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** `PG_URL` with another database name. */
export function pgUrl(database: string): string {
	const url = new URL(PG_URL);
	url.pathname = `/${database}`;
	return url.href;
}

function check(what: string, result: ReturnType<typeof spawnSync>): string {
	if (result.error) throw new Error(`${what}: ${result.error.message}`);
	if (result.status !== 0)
		throw new Error(
			`${what} failed (exit ${result.status}): ${String(result.stderr).slice(0, 500)}`,
		);
	return String(result.stdout);
}

/** Runs SQL with psql; returns the rows as arrays of text fields (tab-separated, unaligned). */
export function psql(sql: string, database?: string): string[][] {
	const out = check(
		'psql',
		spawnSync(
			'psql',
			[
				database ? pgUrl(database) : PG_URL,
				'-X',
				'-A',
				'-t',
				'-F',
				'\t',
				'-v',
				'ON_ERROR_STOP=1',
				'-c',
				sql,
			],
			{ encoding: 'utf8', timeout: 30_000 },
		),
	);
	return out
		.split('\n')
		.filter((line) => line !== '')
		.map((line) => line.split('\t'));
}

/** Runs one redis-cli command; returns its output lines. */
export function redis(args: string[]): string[] {
	const out = check(
		'redis-cli',
		spawnSync('redis-cli', ['-u', REDIS_URL, ...args], { encoding: 'utf8', timeout: 30_000 }),
	);
	return out.split('\n').filter((line) => line !== '');
}

/** Deletes every Redis key that starts with `prefix`; returns how many there were. */
export function deleteRedisKeys(prefix: string): number {
	const keys = redis(['--scan', '--pattern', `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`]);
	for (let i = 0; i < keys.length; i += 200) redis(['DEL', ...keys.slice(i, i + 200)]);
	return keys.length;
}
