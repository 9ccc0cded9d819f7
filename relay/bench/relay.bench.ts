// Benchmark of the relay (prints figures, asserts nothing). `npm run bench:relay`.
//
// 1. autocannon against the relay's payment route with signed postbacks, each with a new TrsId
//    (so every request is a durable commit, never a duplicate short-cut), then against a bare
//    Fastify route answering 200, same connections, duration and request generator. Both servers and the local
//    target run as child processes; the relay's forwarder delivers during the load as it would
//    in production, and the relay logs at LOG_LEVEL (default info) like production, into a file.
// 2. the same load on a relay whose delivery is paused (no forwarder; events and deliveries are
//    stored all the same), a second, clearly labelled figure: ingestion alone, without the
//    forwarder and the target competing for the two cores. Delivery is measured by step 3.
// 3. the time to drain a 10,000-delivery backlog into a fast local target.
// 4. the PostgreSQL store (RELAY_DATABASE=postgres://…, a fresh database on BENCH_PG_URL, dropped
//    afterwards): the same load on one relay instance, then on two instances sharing the database
//    (autocannon spreads its connections over both), each delivering, then two with delivery
//    paused; and the backlog drain with one and with two instances. Ratios are to the same bare
//    Fastify figure. Each load line is followed by where the CPU went (from /proc): how busy the
//    machine was, and the CPU time per request of the servers and of the PostgreSQL processes.
//
// autocannon runs in this process and takes most of one core by itself; on a 2-core machine the
// relay's HTTP thread, its writer thread, the forwarder and the target share what is left.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
	closeSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readFileSync,
	readdirSync,
	rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import type { NewEvent, Store } from '../src/store/types.ts';
import getPort from 'get-port';

interface Histogram {
	average: number;
	p50: number;
	p99: number;
}
interface AutocannonResult {
	requests: Histogram & { total: number };
	latency: Histogram;
	non2xx: number;
	errors: number;
	timeouts: number;
}
interface AutocannonRequest {
	method: string;
	path: string;
	headers: Record<string, string>;
	body?: string;
	setupRequest?: (req: AutocannonRequest) => AutocannonRequest;
}
type Autocannon = (opts: {
	/** Several URLs: the connections are spread over them round-robin. */
	url: string | string[];
	connections: number;
	duration: number;
	requests: AutocannonRequest[];
}) => Promise<AutocannonResult>;

const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as Autocannon;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// The stores that fill the drain backlogs come from the compiled relay (`npm run build`), like the
// servers: from source, Node cannot load the contract they import.
const { SqliteStore } = (await import(
	pathToFileURL(join(ROOT, 'relay/dist/relay/src/store/sqlite.js')).href
)) as typeof import('../src/store/sqlite.ts');
const { PostgresStore } = (await import(
	pathToFileURL(join(ROOT, 'relay/dist/relay/src/store/postgres.js')).href
)) as typeof import('../src/store/postgres.ts');
const NODE = process.execPath;
const TOKEN = 'bench|token-0123456789abcdefghijklmnopqrstuvwxyz';
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 10_000);
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const md5 = (s: string) => createHash('md5').update(s).digest('hex').toUpperCase();
const signedBody = (trsId: string) => {
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
};

const freePort = () => getPort({ host: '127.0.0.1' });

/** Starts a server script as a child on a free port and waits until it answers /healthz. */
async function spawnServer(
	script: string,
	env: Record<string, string>,
	logFile?: string,
): Promise<{ proc: ChildProcess; url: string }> {
	const port = await freePort();
	const url = `http://127.0.0.1:${port}`;
	const out = logFile ? openSync(logFile, 'a') : 'ignore';
	const proc = spawn(NODE, [script], {
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
			const res = await fetch(`${url}/healthz`, { method: 'GET' });
			await res.arrayBuffer();
			if (res.ok) return { proc, url };
		} catch {
			// not listening yet
		}
		await new Promise((r) => setTimeout(r, 50));
	}
}

async function stopServer(proc: ChildProcess): Promise<void> {
	if (proc.exitCode !== null) return;
	const exited = new Promise((resolve) => proc.once('exit', resolve));
	proc.kill('SIGTERM');
	await exited;
}

function relayEnv(
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

/**
 * Every request carries a new signed postback (a new TrsId), for the bare route too: the client's
 * work per request (signing in this process, on the same two cores) is then the same in every run,
 * and only the servers differ. (A fixed body for the bare route made its client cheaper.)
 */
async function load(url: string | string[]): Promise<AutocannonResult> {
	let n = 0;
	const run = `${process.pid}-${Date.now()}`;
	const request: AutocannonRequest = {
		method: 'POST',
		path: '/postback/payment',
		headers: { 'content-type': 'application/x-www-form-urlencoded' },
		body: signedBody(`B-${run}-0`),
		setupRequest: (req) => ({ ...req, body: signedBody(`B-${run}-${n++}`) }),
	};
	return autocannon({ url, connections: CONNECTIONS, duration: DURATION, requests: [request] });
}

const fmt = (x: number, digits = 1) => x.toFixed(digits);

/** CPU time from /proc (Linux), in clock ticks of 10 ms: the machine's busy and total, a process's own. */
const TICK_MS = 10;
function machineTicks(): { busy: number; total: number } {
	const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
	const n = fields.map(Number);
	const idle = n[3] + (n[4] ?? 0);
	const total = n.reduce((a, b) => a + b, 0);
	return { busy: total - idle, total };
}
function processTicks(pid: number | undefined): number {
	if (!pid) return 0;
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
		const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return Number(after[11]) + Number(after[12]);
	} catch {
		return 0;
	}
}
/** Every PostgreSQL server process on the machine (its backends serve the relay during the PostgreSQL runs). */
function postgresTicks(): number {
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

/**
 * Runs the load and says where the CPU went: how busy the machine was, and the CPU time per
 * request of the servers under test and of PostgreSQL.
 */
async function measuredLoad(
	url: string | string[],
	servers: ChildProcess[],
): Promise<{ result: AutocannonResult; cpu: string }> {
	const m0 = machineTicks();
	const s0 = servers.reduce((a, p) => a + processTicks(p.pid), 0);
	const p0 = postgresTicks();
	const result = await load(url);
	const m1 = machineTicks();
	const s1 = servers.reduce((a, p) => a + processTicks(p.pid), 0);
	const p1 = postgresTicks();
	const perRequest = (ticks: number) =>
		fmt(((ticks * TICK_MS) / Math.max(1, result.requests.total)) * 1000, 0);
	const cpu =
		`CPU: machine ${fmt((100 * (m1.busy - m0.busy)) / Math.max(1, m1.total - m0.total), 0)}% busy (${cpus().length} cores); ` +
		`server${servers.length > 1 ? 's' : ''} ${perRequest(s1 - s0)} µs/request; PostgreSQL processes ${perRequest(p1 - p0)} µs/request`;
	return { result, cpu };
}

/** The relay's last words ("store closing"): commits, store calls and fsynced commits since start. */
function groupCommit(logFile: string): string {
	const line = readFileSync(logFile, 'utf8')
		.split('\n')
		.filter((l) => l.includes('"store closing"'))
		.pop();
	if (!line) return 'group commit: no "store closing" line in the log';
	const { commits, calls, syncedCommits } = (
		JSON.parse(line) as { store: { commits: number; calls: number; syncedCommits: number } }
	).store;
	return `group commit: ${calls} store calls in ${commits} commits (${fmt(calls / commits, 1)} per commit), ${syncedCommits} of them fsynced`;
}

async function pgReachable(): Promise<boolean> {
	const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2_000 });
	try {
		await client.connect();
		await client.end();
		return true;
	} catch {
		return false;
	}
}

/** A fresh database on the PostgreSQL server of BENCH_PG_URL, and how to drop it. */
async function createDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
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

let targetUrl = '';
let received: () => Promise<number> = async () => 0;

/**
 * Backlog: BACKLOG deliveries committed while no relay runs, then `instances` relays on that store
 * drain them into the fast target. Returns the printed figure.
 */
async function drain(
	label: string,
	instances: number,
	open: () => Promise<{ store: Store; database: string; drop: () => Promise<void> }>,
): Promise<string> {
	const { store, database, drop } = await open();
	try {
		const fill = Date.now();
		for (let i = 0; i < BACKLOG; i += 500) {
			await Promise.all(
				Array.from({ length: Math.min(500, BACKLOG - i) }, (_, j) => {
					const body = signedBody(`D-${fill}-${i + j}`);
					const event: NewEvent = {
						kind: 'payment',
						dedupeKey: `payment:D-${fill}-${i + j}:SUCCESS`,
						contentType: 'application/x-www-form-urlencoded',
						body,
						fields: Object.fromEntries(new URLSearchParams(body)),
						receivedAt: fill,
						targets: [targetUrl],
					};
					return store.insertEvent(event);
				}),
			);
		}
		await store.close();
		const dir = mkdtempSync(join(tmpdir(), 'relay-bench-drain-'));
		const base = await received();
		const started = Date.now();
		const drainers = await Promise.all(
			Array.from({ length: instances }, () =>
				spawnServer(
					join(ROOT, 'relay/dist/relay/src/bin.js'),
					relayEnv(dir, targetUrl, { RELAY_DATABASE: database }),
				),
			),
		);
		const listening = Date.now();
		while ((await received()) - base < BACKLOG) await new Promise((r) => setTimeout(r, 20));
		const drained = Date.now();
		await Promise.all(drainers.map((d) => stopServer(d.proc)));
		rmSync(dir, { recursive: true, force: true });
		const secs = (drained - listening) / 1000;
		const text =
			`${label}: ${BACKLOG} deliveries in ${fmt(secs, 2)} s after listening (${fmt(BACKLOG / secs, 0)} deliveries/s; ` +
			`${fmt((drained - started) / 1000, 2)} s including start-up; RELAY_CONCURRENCY ${process.env.RELAY_CONCURRENCY ?? '16 (default)'} per instance)`;
		console.log(`drain ${text}`);
		return text;
	} finally {
		await drop();
	}
}

async function main(): Promise<void> {
	const dir = mkdtempSync(join(tmpdir(), 'relay-bench-'));
	const target = await spawnServer(join(ROOT, 'relay/bench/fast-target.ts'), {});
	targetUrl = `${target.url}/webhook/paypalych`;
	received = async () =>
		((await (await fetch(`${target.url}/count`)).json()) as { received: number }).received;
	try {
		console.log(
			`relay benchmark: ${CONNECTIONS} connections x ${DURATION} s each, node ${process.version}, SQLite WAL synchronous=FULL, ` +
				`${cpus().length} cores, load average ${loadavg()
					.map((x) => fmt(x, 2))
					.join(' ')}`,
		);

		const relay = await spawnServer(
			join(ROOT, 'relay/dist/relay/src/bin.js'),
			relayEnv(dir, targetUrl),
			join(dir, 'relay.log'),
		);
		const { result: relayResult, cpu: relayCpu } = await measuredLoad(relay.url, [relay.proc]);
		await stopServer(relay.proc);
		const deliveredDuringLoad = await received();

		const bare = await spawnServer(join(ROOT, 'relay/bench/bare-server.ts'), {});
		const { result: bareResult, cpu: bareCpu } = await measuredLoad(bare.url, [bare.proc]);
		await stopServer(bare.proc);

		mkdirSync(join(dir, 'paused'));
		const paused = await spawnServer(
			join(ROOT, 'relay/dist/relay/bench/relay-server.js'),
			{ ...relayEnv(join(dir, 'paused'), targetUrl), BENCH_DELIVERY: 'paused' },
			join(dir, 'paused', 'relay.log'),
		);
		const { result: pausedResult, cpu: pausedCpu } = await measuredLoad(paused.url, [paused.proc]);
		await stopServer(paused.proc);

		const line = (name: string, r: AutocannonResult) =>
			`${name.padEnd(44)} ${fmt(r.requests.average, 0).padStart(7)} req/s   p50 ${fmt(r.latency.p50)} ms   p99 ${fmt(r.latency.p99)} ms   ` +
			`(${r.requests.total} requests, non-2xx ${r.non2xx}, errors ${r.errors})`;
		const ratio = (r: AutocannonResult) => fmt(r.requests.average / bareResult.requests.average, 2);
		console.log(line('relay POST /postback/payment', relayResult));
		console.log(`  ${groupCommit(join(dir, 'relay.log'))}`);
		console.log(`  ${relayCpu}`);
		console.log(line('bare Fastify POST (answers 200)', bareResult));
		console.log(`  ${bareCpu}`);
		console.log(
			`ratio relay/bare: ${ratio(relayResult)} (forwarder delivering during the load, as in production)`,
		);
		console.log(
			`delivered to the target during the load: ${deliveredDuringLoad} (the rest stays queued and is delivered later)`,
		);
		console.log(line('relay, delivery paused (ingestion only)', pausedResult));
		console.log(`  ${groupCommit(join(dir, 'paused', 'relay.log'))}`);
		console.log(`  ${pausedCpu}`);
		console.log(
			`ratio relay/bare, delivery paused: ${ratio(pausedResult)} (second figure: no forwarder, no target traffic)`,
		);

		const sqliteDrain = await drain('SQLite', 1, async () => {
			const store = await SqliteStore.open(join(dir, 'drain', 'relay.sqlite'));
			return { store, database: join(dir, 'drain', 'relay.sqlite'), drop: async () => {} };
		});

		const rows: Array<[string, AutocannonResult]> = [
			['bare Fastify', bareResult],
			['SQLite store', relayResult],
			['SQLite store, delivery paused', pausedResult],
		];
		const drains = [sqliteDrain];
		const pgUp = await pgReachable();
		if (!pgUp) {
			console.log(
				`PostgreSQL: not reachable at ${PG_URL} (set BENCH_PG_URL); its figures are left out`,
			);
		} else {
			for (const [instances, paused] of [
				[1, false],
				[2, false],
				[2, true],
			] as const) {
				const db = await createDatabase();
				try {
					const relays = await Promise.all(
						Array.from({ length: instances }, (_, i) =>
							spawnServer(
								join(
									ROOT,
									paused ? 'relay/dist/relay/bench/relay-server.js' : 'relay/dist/relay/src/bin.js',
								),
								relayEnv(dir, targetUrl, {
									RELAY_DATABASE: db.url,
									...(paused ? { BENCH_DELIVERY: 'paused' } : {}),
								}),
								join(dir, `pg${instances}-${i}.log`),
							),
						),
					);
					const before = await received();
					const { result, cpu } = await measuredLoad(
						relays.map((r) => r.url),
						relays.map((r) => r.proc),
					);
					await Promise.all(relays.map((r) => stopServer(r.proc)));
					const name = `PostgreSQL store, ${instances} instance${instances > 1 ? 's' : ''}${paused ? ', delivery paused' : ''}`;
					console.log(line(name, result));
					console.log(`  ${cpu}`);
					if (!paused)
						console.log(
							`  delivered to the target during the load: ${(await received()) - before}`,
						);
					rows.push([name, result]);
				} finally {
					await db.drop();
				}
				if (paused) continue;
				drains.push(
					await drain(
						`PostgreSQL, ${instances} instance${instances > 1 ? 's' : ''}`,
						instances,
						async () => {
							const d = await createDatabase();
							return { store: await PostgresStore.open(d.url), database: d.url, drop: d.drop };
						},
					),
				);
			}
		}

		console.log(
			'\nsummary (ratios to bare Fastify in this run; issue target for PostgreSQL with two instances: >= 0.50 with p99 < 25 ms)',
		);
		for (const [name, r] of rows) {
			console.log(
				`  ${name.padEnd(34)} ${fmt(r.requests.average, 0).padStart(7)} req/s  ratio ${ratio(r)}  p99 ${fmt(r.latency.p99).padStart(5)} ms`,
			);
		}
		for (const d of drains) console.log(`  drain, ${d}`);
	} finally {
		await stopServer(target.proc);
		rmSync(dir, { recursive: true, force: true });
	}
}

await main();
