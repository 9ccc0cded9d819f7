// Where a postback's CPU goes: `npm run bench:profile` (prints figures, asserts nothing).
//
// For each store (SQLite, then PostgreSQL on a fresh database of BENCH_PG_URL), the compiled relay
// runs under `node --cpu-prof` with delivery on, receives PROFILE_RATE signed postbacks per second
// (default 1,000; 0: as fast as autocannon can) for PROFILE_DURATION seconds (default 15), and
// delivers them to the benchmark's fast target; once the target has every delivery, the relay
// stops and its profiles (one per thread) are summarised per request by part of the relay (see
// cpu-profile.ts). On PostgreSQL, pg_stat_statements (if preloaded: `shared_preload_libraries`)
// gives every statement's calls and execution time per request, pg_stat_wal the WAL records,
// bytes and flushes per request, and /proc the CPU time of the PostgreSQL processes.
// PROFILE_STORES=sqlite or postgres runs one; PROFILE_PAIR_LIMIT sets RELAY_PAIR_LIMIT (default:
// the relay's own default).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { printBreakdown, summariseDir } from './cpu-profile.ts';
import {
	PG_URL,
	ROOT,
	createDatabase,
	fixedLoad,
	postgresTicks,
	relayEnv,
	spawnServer,
	stopServer,
	TICK_MS,
	processTicks,
} from './common.ts';

const RATE = Number(process.env.PROFILE_RATE ?? 1000);
const DURATION = Number(process.env.PROFILE_DURATION ?? 15);
/** PROFILE_DELIVERY=paused: no forwarder (ingestion alone; nothing is delivered or waited for). */
const PAUSED = process.env.PROFILE_DELIVERY === 'paused';
const STORES = (process.env.PROFILE_STORES ?? 'sqlite,postgres').split(',');

async function statements(url: string): Promise<{
	rows: Array<{ query: string; calls: number; exec_ms: number; rows: number }>;
	wal: { wal_records: number; wal_bytes: number; wal_sync: number; wal_write: number };
}> {
	const client = new pg.Client({ connectionString: url });
	await client.connect();
	try {
		const { rows } = await client.query<{
			query: string;
			calls: number;
			exec_ms: number;
			rows: number;
		}>(
			`SELECT query, calls::float8 AS calls, total_exec_time AS exec_ms, rows::float8 AS rows
			 FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
			 ORDER BY total_exec_time DESC LIMIT 12`,
		);
		const wal = (
			await client.query<{
				wal_records: number;
				wal_bytes: number;
				wal_sync: number;
				wal_write: number;
			}>(
				'SELECT wal_records::float8 AS wal_records, wal_bytes::float8 AS wal_bytes, wal_sync::float8 AS wal_sync, wal_write::float8 AS wal_write FROM pg_stat_wal',
			)
		).rows[0];
		return { rows, wal };
	} finally {
		await client.end();
	}
}

async function resetStatements(url: string): Promise<boolean> {
	const client = new pg.Client({ connectionString: url });
	await client.connect();
	try {
		await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
		await client.query('SELECT pg_stat_statements_reset()');
		await client.query(`SELECT pg_stat_reset_shared('wal')`);
		return true;
	} catch (error) {
		console.log(
			`pg_stat_statements unavailable (${(error as Error).message}); add it to shared_preload_libraries for the statement figures`,
		);
		return false;
	} finally {
		await client.end();
	}
}

async function profileStore(
	store: 'sqlite' | 'postgres',
	targetUrl: string,
	count: () => Promise<number>,
) {
	const dir = mkdtempSync(join(tmpdir(), `relay-profile-${store}-`));
	const db = store === 'postgres' ? await createDatabase() : undefined;
	try {
		const env = relayEnv(dir, targetUrl, {
			...(db ? { RELAY_DATABASE: db.url } : {}),
			...(PAUSED ? { BENCH_DELIVERY: 'paused' } : {}),
			...(process.env.PROFILE_PAIR_LIMIT
				? { RELAY_PAIR_LIMIT: process.env.PROFILE_PAIR_LIMIT }
				: {}),
		});
		const relay = await spawnServer(
			join(ROOT, PAUSED ? 'relay/dist/relay/bench/relay-server.js' : 'relay/dist/relay/src/bin.js'),
			env,
			join(dir, 'relay.log'),
			['--cpu-prof', `--cpu-prof-dir=${join(dir, 'prof')}`],
		);
		const stats = db ? await resetStatements(db.url) : false;
		const before = await count();
		const p0 = db ? postgresTicks() : 0;
		const r0 = processTicks(relay.proc.pid);
		const from = Date.now();
		const result = await fixedLoad(relay.url, RATE, DURATION);
		const ok = result.requests.total - result.non2xx;
		const deadline = Date.now() + 60_000;
		while (!PAUSED && (await count()) - before < ok && Date.now() < deadline)
			await new Promise((r) => setTimeout(r, 50));
		const delivered = (await count()) - before;
		const to = Date.now();
		const p1 = db ? postgresTicks() : 0;
		const r1 = processTicks(relay.proc.pid);
		const sql = db && stats ? await statements(db.url) : undefined;
		await stopServer(relay.proc);
		const window = { from, to, exitAt: Date.now() };
		const perReq = (ticks: number) => (((ticks * TICK_MS) / Math.max(1, ok)) * 1000).toFixed(0);
		console.log(
			`\n## ${store}: ${ok} postbacks answered 200 (${RATE > 0 ? `${RATE}/s` : 'as fast as possible'}, ${DURATION} s), ${delivered} delivered; ` +
				`p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms; relay process ${perReq(r1 - r0)} µs/request (from /proc, profiler on)` +
				(db ? `, PostgreSQL processes ${perReq(p1 - p0)} µs/request` : ''),
		);
		printBreakdown(
			store,
			summariseDir(join(dir, 'prof'), window, Number(process.env.PROFILE_TOP ?? 12)),
			ok,
		);
		if (sql) {
			console.log(
				`\nPostgreSQL statements (pg_stat_statements), per request: WAL ${(sql.wal.wal_records / ok).toFixed(1)} records, ` +
					`${(sql.wal.wal_bytes / ok).toFixed(0)} bytes, ${(sql.wal.wal_write / ok).toFixed(2)} writes, ${(sql.wal.wal_sync / ok).toFixed(2)} flushes`,
			);
			console.log(
				'| statement | calls / request | exec µs / request | rows / call |\n| --- | ---: | ---: | ---: |',
			);
			for (const s of sql.rows) {
				const text = s.query.replace(/\s+/g, ' ').slice(0, 90);
				console.log(
					`| ${text} | ${(s.calls / ok).toFixed(3)} | ${((s.exec_ms * 1000) / ok).toFixed(1)} | ${(s.rows / Math.max(1, s.calls)).toFixed(1)} |`,
				);
			}
		}
	} finally {
		await db?.drop();
		rmSync(dir, { recursive: true, force: true });
	}
}

const target = await spawnServer(join(ROOT, 'relay/bench/fast-target.ts'), {});
const count = async () =>
	((await (await fetch(`${target.url}/count`)).json()) as { received: number }).received;
try {
	console.log(`relay profile, node ${process.version}, BENCH_PG_URL ${PG_URL}`);
	for (const store of STORES)
		await profileStore(store as 'sqlite' | 'postgres', `${target.url}/webhook/paypalych`, count);
} finally {
	await stopServer(target.proc);
}
