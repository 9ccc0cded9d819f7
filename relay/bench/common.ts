// What the profiler (profile.ts) needs to run a relay under load: servers as child processes,
// signed postbacks, CPU time from /proc, a fresh PostgreSQL database.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import getPort from 'get-port';
import pg from 'pg';
import { Pool } from 'undici';

/**
 * The checkout whose compiled relay runs (BENCH_ROOT: another one, e.g. an older commit's, for a
 * before/after). The one place that says where the relay under measure is: every bench module
 * (relay/bench, scripts/bench) loads or starts compiled relay code through ROOT or `compiled`,
 * never through a path of its own (test/unit/bench-root.test.ts checks it).
 */
export const ROOT = resolve(
	process.env.BENCH_ROOT ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..'),
);
/** A module of ROOT's compiled relay (`relay/dist/relay/…`, e.g. `src/store-sqlite/store.js`), for import(). */
export const compiled = (path: string): string =>
	pathToFileURL(join(ROOT, 'relay/dist/relay', path)).href;
export const TOKEN = 'bench|token-0123456789abcdefghijklmnopqrstuvwxyz';
export const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Histogram {
	average: number;
	p50: number;
	p99: number;
	max: number;
}
export interface LoadResult {
	requests: Histogram & { total: number };
	latency: Histogram;
	non2xx: number;
	errors: number;
}
interface LoadRequest {
	method: string;
	path: string;
	headers: Record<string, string>;
	body?: string;
	setupRequest?: (req: LoadRequest) => LoadRequest;
}
type Autocannon = (opts: {
	url: string | string[];
	connections: number;
	duration: number;
	overallRate?: number;
	requests: LoadRequest[];
}) => Promise<LoadResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const md5 = (s: string) => createHash('md5').update(s).digest('hex').toUpperCase();

/** A payment postback signed with TOKEN, with its own TrsId. */
export function signedBody(trsId: string): string {
	const invId = `order-${trsId}`;
	return new URLSearchParams({
		InvId: invId,
		OutSum: '100.00',
		Commission: '3.00',
		CurrencyIn: 'RUB',
		TrsId: trsId,
		Status: 'SUCCESS',
		SignatureValue: md5(`100.00:${invId}:${TOKEN}`),
	}).toString();
}

/**
 * Signed postbacks, a new TrsId each, at `rate` per second (0: as fast as the servers answer, with
 * `connections` requests in flight: autocannon). A rate is an open loop of our own: autocannon's
 * `overallRate` sends each second's requests in a burst at the start of the second and then waits,
 * so its latencies are a saturated run's (measured: p99 16–44 ms against a bare route at 1,000/s).
 */
export function fixedLoad(
	url: string | string[],
	rate: number,
	duration: number,
	connections = 50,
): Promise<LoadResult> {
	let n = 0;
	const run = `${process.pid}-${Date.now()}`;
	const body = () => signedBody(`P-${run}-${n++}`);
	if (rate > 0)
		return openLoop(Array.isArray(url) ? url : [url], rate, duration, connections, body);
	return autocannon({
		url,
		connections,
		duration,
		requests: [
			{
				method: 'POST',
				path: '/postback/payment',
				headers: { 'content-type': 'application/x-www-form-urlencoded' },
				setupRequest: (req) => ({ ...req, body: body() }),
			},
		],
	});
}

/**
 * Open loop: request i is due at start + i/rate, whatever the answers before it; its latency is
 * measured from that due time (a server that stalls is charged for the requests that waited behind
 * the stall, not only for the one it held). Up to `connections` keep-alive connections per URL.
 * Also used by the trigger's benchmark (scripts/bench), which posts to n8n's webhook `path`, and
 * the end-to-end one, whose `path` is a function called as each request is sent (one bill each).
 */
export async function openLoop(
	urls: readonly string[],
	rate: number,
	duration: number,
	connections: number,
	body: () => string,
	path: string | (() => string) = '/postback/payment',
): Promise<LoadResult> {
	const pools = urls.map(
		(u) => new Pool(u, { connections: Math.max(1, Math.ceil(connections / urls.length)) }),
	);
	const latencies: number[] = [];
	let non2xx = 0;
	let errors = 0;
	const total = Math.round(rate * duration);
	const start = performance.now();
	const inflight: Array<Promise<void>> = [];
	const send = (i: number) => {
		const due = start + (i * 1000) / rate;
		return pools[i % pools.length]
			.request({
				method: 'POST',
				path: typeof path === 'string' ? path : path(),
				headers: { 'content-type': 'application/x-www-form-urlencoded' },
				body: body(),
			})
			.then(async (res) => {
				await res.body.dump();
				if (res.statusCode < 200 || res.statusCode >= 300) non2xx += 1;
				latencies.push(performance.now() - due);
			})
			.catch(() => {
				errors += 1;
			});
	};
	let sent = 0;
	while (sent < total) {
		const dueNow = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000) + 1);
		while (sent < dueNow) inflight.push(send(sent++));
		await new Promise((r) => setTimeout(r, 1));
	}
	await Promise.all(inflight);
	await Promise.all(pools.map((p) => p.close()));
	latencies.sort((a, b) => a - b);
	const at = (q: number) =>
		Math.round((latencies[Math.floor(q * (latencies.length - 1))] ?? 0) * 10) / 10;
	const average = latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length);
	const seconds = (performance.now() - start) / 1000;
	return {
		requests: { average: total / seconds, p50: rate, p99: rate, max: rate, total },
		latency: { average, p50: at(0.5), p99: at(0.99), max: at(1) },
		non2xx,
		errors,
	};
}

/** Starts a server script as a child on a free port and waits until it answers /healthz. */
export async function spawnServer(
	script: string,
	env: Record<string, string>,
	logFile?: string,
	nodeArgs: string[] = [],
): Promise<{ proc: ChildProcess; url: string }> {
	const port = await getPort({ host: '127.0.0.1' });
	const url = `http://127.0.0.1:${port}`;
	const out = logFile ? openSync(logFile, 'a') : 'ignore';
	const proc = spawn(process.execPath, [...nodeArgs, script], {
		cwd: ROOT,
		env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
		stdio: ['ignore', out, 'inherit'],
	});
	if (typeof out === 'number') closeSync(out);
	let exited = false;
	proc.once('exit', () => (exited = true));
	for (;;) {
		if (exited) throw new Error(`${script} exited before listening`);
		try {
			const res = await fetch(`${url}/healthz`);
			await res.arrayBuffer();
			if (res.ok) return { proc, url };
		} catch {
			// not listening yet
		}
		await new Promise((r) => setTimeout(r, 50));
	}
}

export async function stopServer(proc: ChildProcess): Promise<void> {
	if (proc.exitCode !== null) return;
	const exited = new Promise((resolve) => proc.once('exit', resolve));
	proc.kill('SIGTERM');
	await exited;
}

/** The relay's environment for a benchmark: SQLite in `dir` unless `extra` names a database. */
export function relayEnv(
	dir: string,
	target: string,
	extra: Record<string, string> = {},
): Record<string, string> {
	return {
		HOST: '127.0.0.1',
		PAYPALYCH_API_TOKEN: TOKEN,
		RELAY_PAYMENT_TARGETS: target,
		RELAY_DATABASE: join(dir, 'relay.sqlite'),
		RELAY_ADMIN_TOKEN: 'bench-admin-token-0123456789',
		...(process.env.RELAY_CONCURRENCY ? { RELAY_CONCURRENCY: process.env.RELAY_CONCURRENCY } : {}),
		LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
		...extra,
	};
}

/** CPU time from /proc (Linux), in clock ticks of 10 ms. */
export const TICK_MS = 10;

export function processTicks(pid: number | undefined): number {
	if (!pid) return 0;
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
		const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return Number(after[11]) + Number(after[12]);
	} catch {
		return 0;
	}
}

/** Every PostgreSQL server process on the machine. */
export function postgresTicks(): number {
	let sum = 0;
	for (const entry of readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres')
				sum += processTicks(Number(entry));
		} catch {
			// gone
		}
	}
	return sum;
}

/** A fresh database on the PostgreSQL server of BENCH_PG_URL, and how to drop it. */
export async function createDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
	const name = `relay_bench_${process.pid}_${Date.now()}`;
	const admin = async (sql: string) => {
		const client = new pg.Client({ connectionString: PG_URL });
		await client.connect();
		try {
			await client.query(sql);
		} finally {
			await client.end();
		}
	};
	await admin(`CREATE DATABASE ${name}`);
	const url = new URL(PG_URL);
	url.pathname = `/${name}`;
	return { url: url.href, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
