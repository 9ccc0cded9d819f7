// A throwaway PostgreSQL database per test or suite on the machine's server (RELAY_TEST_PG_URL
// overrides the server: a URL of its maintenance database).
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const PG_ADMIN_URL = process.env.RELAY_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

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
