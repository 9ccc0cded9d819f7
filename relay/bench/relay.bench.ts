// Benchmark of the relay (prints figures, asserts nothing, exits 0). `npm run bench:relay` builds
// the relay into relay/dist and runs this file against the compiled relay. The runs, in order
// (their names are those of BENCH_ONLY):
//
// bare           a bare Fastify route answering 200: the baseline every ratio is to.
// sqlite         the relay on SQLite, its forwarder delivering into a fast local target during
//                the load, as in production.
// sqlite-paused  the same with delivery paused (no forwarder; events and deliveries are stored all
//                the same): ingestion alone, without the forwarder and the target competing for
//                the two cores.
// drain          the time to drain a BENCH_BACKLOG-delivery backlog (committed while no relay runs)
//                into the target: SQLite, then PostgreSQL with one and with two instances.
// pg1, pg2       the relay on PostgreSQL (RELAY_DATABASE=postgres://…, a fresh database on
//                BENCH_PG_URL per run, dropped afterwards), one instance, then two sharing the
//                database (autocannon spreads its connections over both), delivering.
// pg2-paused     two PostgreSQL instances with delivery paused.
// rate-sqlite,   a fixed rate instead of as fast as the relay answers: BENCH_RATE postbacks/s for
// rate-pg        BENCH_RATE_DURATION s, delivering, on SQLite and on one PostgreSQL instance, from
//                an open loop (each request due at its time, latency counted from then).
// rate-bare      the same fixed rate against the bare route: what this machine gives any server
//                at that rate (on a VM a request at 1,000/s costs several times its CPU at
//                saturation, and its latency tail is the machine's).
// growth         the cost curve of a filling store: for each size of BENCH_GROWTH_SIZES
//                (default 0, 100,000 and 1,000,000 delivered events, pre-filled in one SQL statement
//                per table, see growth.ts), SQLite then PostgreSQL: the one-instance load with
//                delivery on (postbacks/s, the backlog's drain/s, CPU per postback over load +
//                backlog), then a standalone drain of BENCH_BACKLOG deliveries (drain/s, CPU per
//                delivery). Alone: BENCH_ONLY=growth (about 8 minutes).
//
// The load is autocannon (BENCH_CONNECTIONS connections, BENCH_DURATION s) posting a new signed
// postback per request (a new TrsId: every request is a durable commit), to the bare route too,
// so that the client's work per request (signing, in this process, on the same cores) is the same
// in every run. After each load run it prints where the CPU went, from /proc: how busy the
// machine was, and the CPU time per request of the servers under test and of PostgreSQL (when the
// server of BENCH_PG_URL runs on this machine, its background processes and the backends of the
// benchmark's own databases, not other people's; else every process called postgres). With
// delivery on it also prints the deliveries the target received during the load, then waits (at
// most 60 s) until the target has received every delivery of the run and prints the CPU per
// request over the load and the delivery of its backlog: the cost of a postback with delivery on.
// At the end: the drains, a markdown table of the figures from before the relay's performance
// work beside this run's, and the relay's performance targets with the figures measured.
//
// Environment:
//   BENCH_ONLY=<run>,<run>…  only these runs (default all); bare always runs, the ratios need it
//   BENCH_QUICK=1            bare, sqlite-paused, pg1 and growth on stores of 0 and 200,000 events
//                            (not 1,000,000: the growth line says so); about 4 minutes
//   BENCH_DURATION=10        seconds per load run; BENCH_CONNECTIONS=50
//   BENCH_RATE=1000          postbacks per second of the fixed-rate runs
//   BENCH_RATE_DURATION=20   seconds of each fixed-rate run
//   BENCH_BACKLOG=10000      deliveries per drain
//   BENCH_PG_URL             the PostgreSQL server (a URL of its maintenance database), default
//                            postgres://postgres@127.0.0.1:5432/postgres
//   BENCH_CPU_PROF=<dir>     start every relay with node --cpu-prof into <dir>/<run> (the drains:
//                            <dir>/drain-sqlite, drain-pg1, drain-pg2); node writes a .cpuprofile
//                            per thread when the relay exits
//   BENCH_ROOT=<checkout>    run that checkout's compiled relay (an older commit's, say; common.ts)
//   RELAY_CONCURRENCY, LOG_LEVEL (default info: the relay logs like production, into a file)
//
// autocannon runs in this process and takes most of one core by itself; on a 2-core machine the
// relay's HTTP thread, its writer thread, the forwarder and the target share what is left.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuPerRequest, sampleCpu, watchPostgresServer } from './cpu.ts';
import {
	PG_URL,
	ROOT,
	compiled,
	createDatabase,
	fixedLoad,
	relayEnv,
	spawnServer,
	stopServer,
} from './common.ts';
import {
	CPU_PROF,
	DATABASE_PREFIX,
	findPostgres,
	groupCommit,
	spawnRelay,
	startTarget,
} from './servers.ts';
import type { Server } from './servers.ts';
import {
	GROWTH_SIZES,
	growthFlatLine,
	growthTable,
	growthTargets,
	prefillPostgres,
	prefillSqlite,
} from './growth.ts';
import type { GrowthFigures } from './growth.ts';
import { drainBacklog } from './drain.ts';
import type { DrainName } from './drain.ts';
import { figures, printRun } from './measured.ts';
import type { Measured } from './measured.ts';
import { QUICK, runLabel, selectRuns, table, targets } from './table.ts';
import type { AllFigures, Figures, LoadRunName } from './table.ts';

// The stores that fill the drain backlogs come from the compiled relay (`npm run build`), like the
// servers: from source, Node cannot load the contract they import.
const { SqliteStore } = (await import(
	compiled('src/store-sqlite/store.js')
)) as typeof import('../src/store-sqlite/store.ts');
const { PostgresStore } = (await import(
	compiled('src/store-postgres/store.js')
)) as typeof import('../src/store-postgres/store.ts');

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 10_000);
const RATE = Number(process.env.BENCH_RATE ?? 1_000);
const RATE_DURATION = Number(process.env.BENCH_RATE_DURATION ?? 20);
const DELIVERY_WAIT_S = 60;

const selected = selectRuns(process.env.BENCH_ONLY);

const fmt = (x: number, digits = 0) =>
	x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir = '';
let target: Awaited<ReturnType<typeof startTarget>>;

const measured: Partial<Record<LoadRunName, Measured>> = {};

async function measure(
	run: LoadRunName,
	servers: Server[],
	delivering: boolean,
	rate?: number,
	keep = true,
): Promise<Measured> {
	const pids = servers.map((s) => s.proc.pid);
	const base = await target.received();
	const before = sampleCpu(pids);
	const result = await fixedLoad(
		servers.map((s) => s.url),
		rate ?? 0,
		rate ? RATE_DURATION : DURATION,
		CONNECTIONS,
	);
	const afterLoad = sampleCpu(pids);
	const m: Measured = {
		run,
		result,
		during: cpuPerRequest(before, afterLoad, result.requests.total),
	};
	if (delivering) {
		const duringLoad = (await target.received()) - base;
		const loadEnded = Date.now();
		const expected = result.requests.total - result.non2xx;
		let received = duringLoad;
		while (received < expected && Date.now() - loadEnded < DELIVERY_WAIT_S * 1000) {
			await sleep(20);
			received = (await target.received()) - base;
		}
		m.delivery = {
			duringLoad,
			expected,
			received,
			seconds: (Date.now() - loadEnded) / 1000,
			complete: received >= expected,
			cpu: cpuPerRequest(before, sampleCpu(pids), result.requests.total),
		};
	}
	if (keep) measured[run] = m;
	return m;
}

const report = (m: Measured, servers: string, extra: string[] = [], label?: string) =>
	printRun(m, servers, { extra, label, rate: RATE, waitS: DELIVERY_WAIT_S });

async function bareRun(run: 'bare' | 'rate-bare' = 'bare'): Promise<void> {
	const bare = await spawnServer(join(ROOT, 'relay/bench/bare-server.ts'), {});
	try {
		const rate = run === 'rate-bare' ? RATE : undefined;
		report(await measure(run, [bare], false, rate), runLabel(run, RATE));
	} finally {
		await stopServer(bare.proc);
	}
}

async function sqliteRun(run: 'sqlite' | 'sqlite-paused' | 'rate-sqlite'): Promise<void> {
	const runDir = join(dir, run);
	mkdirSync(runDir);
	const log = join(runDir, 'relay.log');
	const paused = run === 'sqlite-paused';
	const relay = await spawnRelay(run, relayEnv(runDir, target.webhook), { paused, logFile: log });
	let m: Measured;
	try {
		m = await measure(run, [relay], !paused, run === 'rate-sqlite' ? RATE : undefined);
	} finally {
		await stopServer(relay.proc);
	}
	report(m, 'relay', [groupCommit(log)]);
}

async function postgresRun(run: 'pg1' | 'pg2' | 'pg2-paused' | 'rate-pg'): Promise<void> {
	const instances = run === 'pg2' || run === 'pg2-paused' ? 2 : 1;
	const db = await createDatabase();
	try {
		const relays = await Promise.all(
			Array.from({ length: instances }, (_, i) =>
				spawnRelay(run, relayEnv(dir, target.webhook, { RELAY_DATABASE: db.url }), {
					paused: run === 'pg2-paused',
					logFile: join(dir, `${run}-${i}.log`),
				}),
			),
		);
		let m: Measured;
		try {
			m = await measure(run, relays, run !== 'pg2-paused', run === 'rate-pg' ? RATE : undefined);
		} finally {
			await Promise.all(relays.map((r) => stopServer(r.proc)));
		}
		report(m, instances > 1 ? 'relays (both)' : 'relay');
	} finally {
		await db.drop();
	}
}

/** A drain of BACKLOG deliveries (committed while no relay runs) into this run's target (drain.ts). */
const drain = (
	name: DrainName,
	instances: number,
	open: Parameters<typeof drainBacklog>[0]['open'],
	label?: string,
) => drainBacklog({ name, instances, open, label, backlog: BACKLOG, target });

const growth: GrowthFigures[] = [];

/**
 * One size of the growth run on one store: a store pre-filled with `size` delivered events, the
 * one-instance load with delivery on, then on the same store (its load delivered) the drain of
 * BACKLOG deliveries committed while no relay runs.
 */
async function growthRun(kind: 'sqlite' | 'pg', size: number): Promise<void> {
	const store = kind === 'sqlite' ? 'SQLite' : 'PostgreSQL';
	const label = `growth, ${store}, ${fmt(size)} events`;
	const name = `growth-${kind}-${size}` as const;
	const t = Date.now();
	let database: string;
	let drop = async () => {};
	if (kind === 'sqlite') {
		database = join(dir, name, 'relay.sqlite');
		await (await SqliteStore.open(database)).close();
		prefillSqlite(database, size, target.webhook);
	} else {
		const db = await createDatabase();
		({ url: database, drop } = db);
		await (await PostgresStore.open(database)).close();
		await prefillPostgres(database, size, target.webhook);
	}
	const prefillSeconds = (Date.now() - t) / 1000;
	try {
		const runDir = join(dir, `${name}-run`);
		mkdirSync(runDir);
		const relay = await spawnRelay(
			name,
			relayEnv(runDir, target.webhook, { RELAY_DATABASE: database }),
			{ logFile: join(runDir, 'relay.log') },
		);
		let m: Measured;
		try {
			m = await measure(kind === 'sqlite' ? 'sqlite' : 'pg1', [relay], true, undefined, false);
		} finally {
			await stopServer(relay.proc);
		}
		report(m, 'relay', [`pre-filled in ${fmt(prefillSeconds, 1)} s`], label);
		const drained = await drain(
			name,
			1,
			async () => ({
				database,
				drop: async () => {},
				store:
					kind === 'sqlite' ? await SqliteStore.open(database) : await PostgresStore.open(database),
			}),
			label,
		);
		const d = m.delivery;
		growth.push({
			store,
			size,
			prefillSeconds,
			postbacksPerSec: m.result.requests.average,
			backlogPerSec: d && d.seconds > 0 ? (d.received - d.duringLoad) / d.seconds : 0,
			drainPerSec: drained.perSec,
			postbackRelayUs: d?.cpu.serversUs ?? m.during.serversUs,
			postbackDbUs: d?.cpu.postgresUs ?? m.during.postgresUs,
			deliveryRelayUs: drained.cpu.serversUs,
			deliveryDbUs: drained.cpu.postgresUs,
			complete: d?.complete ?? false,
		});
	} finally {
		await drop();
	}
}

async function growthRuns(pgReachable: boolean): Promise<void> {
	for (const size of GROWTH_SIZES) {
		await growthRun('sqlite', size);
		if (pgReachable) await growthRun('pg', size);
	}
}

async function main(): Promise<void> {
	const started = performance.now();
	dir = mkdtempSync(join(tmpdir(), 'relay-bench-'));
	target = await startTarget();
	const drains: string[] = [];
	try {
		console.log(
			`relay benchmark: ${CONNECTIONS} connections x ${DURATION} s each, fixed rate ${fmt(RATE)}/s x ${RATE_DURATION} s, ` +
				`node ${process.version}, SQLite WAL synchronous=FULL, ${cpus().length} cores, ` +
				`load average ${loadavg()
					.map((x) => fmt(x, 2))
					.join(' ')}; runs: ${[...selected].join(',')}`,
		);
		if (CPU_PROF)
			console.log(
				`CPU profiles of the relays in ${CPU_PROF}/<run> (the figures include the profiler)`,
			);
		const pg = await findPostgres();
		watchPostgresServer(pg.postmaster, DATABASE_PREFIX);
		const counted = pg.postmaster
			? `the server of ${PG_URL} (postmaster ${pg.postmaster}): its background processes and ` +
				"the backends of the benchmark's databases"
			: 'every process called postgres (the server is not on this machine, or not found)';
		console.log(
			pg.reachable
				? `PostgreSQL CPU: ${counted}`
				: `PostgreSQL: not reachable at ${PG_URL} (set BENCH_PG_URL); its runs are left out`,
		);

		await bareRun();
		if (selected.has('sqlite')) await sqliteRun('sqlite');
		if (selected.has('sqlite-paused')) await sqliteRun('sqlite-paused');
		if (selected.has('drain')) {
			const d = await drain('sqlite', 1, async () => {
				const file = join(dir, 'drain', 'relay.sqlite');
				return { store: await SqliteStore.open(file), database: file, drop: async () => {} };
			});
			drains.push(d.text);
		}
		if (pg.reachable) {
			for (const run of ['pg1', 'pg2', 'pg2-paused'] as const)
				if (selected.has(run)) await postgresRun(run);
			if (selected.has('drain')) {
				for (const [name, instances] of [
					['pg1', 1],
					['pg2', 2],
				] as const) {
					const d = await drain(name, instances, async () => {
						const db = await createDatabase();
						return { store: await PostgresStore.open(db.url), database: db.url, drop: db.drop };
					});
					drains.push(d.text);
				}
			}
		}
		if (selected.has('growth')) await growthRuns(pg.reachable);
		if (selected.has('rate-bare')) await bareRun('rate-bare');
		if (selected.has('rate-sqlite')) await sqliteRun('rate-sqlite');
		if (pg.reachable && selected.has('rate-pg')) await postgresRun('rate-pg');
	} finally {
		await stopServer(target.server.proc);
		rmSync(dir, { recursive: true, force: true });
	}

	const bare = measured.bare;
	if (!bare) throw new Error('the bare run did not run');
	const all: AllFigures & { bare: Figures } = { bare: figures(bare, bare) };
	for (const m of Object.values(measured)) all[m.run] = figures(m, bare);
	if (drains.length) console.log(`\ndrains:\n${drains.map((d) => `  ${d}`).join('\n')}`);
	if (growth.length) {
		console.log(`\ngrowth (a store that fills):\n${growthTable(growth).join('\n')}`);
		console.log(
			`\ntargets (a store that fills):\n${growthTargets(growth)
				.map((t) => `  ${t}`)
				.join('\n')}`,
		);
	}
	console.log(`\n${table(all, RATE).join('\n')}`);
	const { scaling, cost } = targets(all, RATE);
	cost.push(growthFlatLine(growth));
	const list = (lines: string[]) => lines.map((t) => `  ${t}`).join('\n');
	console.log(
		`\n${fmt((performance.now() - started) / 1000)} s; load average at the end ` +
			loadavg()
				.map((x) => fmt(x, 2))
				.join(' '),
	);
	console.log(`\ntargets (two instances, latency at a fixed rate):\n${list(scaling)}`);
	const quick = QUICK ? '; quick mode, BENCH_QUICK=1' : '';
	console.log(`\ntargets (the relay's CPU per postback${quick}):\n${list(cost)}`); // last
}

await main();
