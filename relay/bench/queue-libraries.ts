// The relay's hand-written PostgreSQL queue against two well-kept job libraries, pg-boss and
// graphile-worker, on one workload (prints figures, asserts nothing). `npm run bench:queues`.
//
// Each candidate gets a fresh database on BENCH_PG_URL (dropped afterwards). Two phases, measured
// apart: enqueue N events (QUEUE_BENCH_N, default 10,000) from 50 concurrent producers, each call
// resolving after its commit; then drain them: claim or fetch, a no-op "delivery", record the
// result. There is no HTTP: the queue itself is measured. For each phase: throughput, this
// process's CPU per job (process.cpuUsage: the candidate's client code, node-postgres, the
// benchmark's own driver), the PostgreSQL processes' CPU per job (all of them, as relay.bench.ts
// counts them but per process, so one that ends during the phase subtracts nothing; and the
// backends of the candidate's database alone, which other load on the server cannot inflate), and
// the statements the database ran (pg_stat_statements of that database).
//
// The candidates (the same events, the same one target per event):
// - relay: the relay's PostgresStore (compiled, relay/dist): insertEvent (group commit of the event
//   and its delivery in one statement); drain like the forwarder: 16 deliveries in flight,
//   claimDue when a quarter of the slots is free, each result handed to the forwarder's
//   ResultBatcher (results that finish together share one statement that updates the deliveries
//   and writes their attempt rows).
// - pg-boss, events + jobs: what replacing the queue with pg-boss would take. The relay must keep
//   the postback and acknowledge a duplicate of it at any time within retention, and neither
//   library keeps a key once its job is done (pg-boss's singleton indexes cover queued/active jobs
//   only; graphile-worker deletes a finished job and its key), so the event stays a row of an
//   `events` table (the relay's, with its indexes) deduplicated by its key, and each target gets a
//   job in the same transaction (boss.insert with { db }: BEGIN, INSERT events, insert jobs,
//   COMMIT), batched like the relay's group commit. The job carries the body (no read at
//   delivery). Drain: boss.work, batches of 16, transactional: the attempt rows (the console's
//   history, pg-boss keeps only the last output) are written in the transaction that completes
//   the batch.
// - graphile-worker, events + jobs: the same tables; one statement per batch, the event insert
//   and graphile_worker.add_jobs in one CTE (the documented SQL way to add jobs in a
//   transaction). Drain: the runner, concurrency 16, a local queue of 32 jobs and batched
//   completions (completeJobBatchDelay 0); each task's attempt row is group-committed with those
//   of the tasks finishing meanwhile, before the task returns (graphile-worker then completes the
//   job on its own, so the attempt and the completion are two commits).
// - pg-boss / graphile-worker, job only: the library alone, the event as the job's payload,
//   deduplicated by the library's key while it is queued (pg-boss: a `short` queue with
//   singletonKey; graphile-worker: job_key, which replaces a queued job's payload). NOT a
//   replacement (no events table, no attempts, a duplicate after delivery would be delivered
//   again); it shows what the library costs by itself.
//
// Bookkeeping (claims, completions, attempts) commits with synchronous_commit=off for every
// candidate, as the relay's bookkeeping pool does; enqueues commit with the server's default (on).
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { createDatabase, measure } from './queue-measure.ts';
import type { PhaseFigures, StatementFigure } from './queue-measure.ts';
import {
	countOf,
	IN_FLIGHT,
	makeEvents,
	N,
	PG_URL,
	PostgresStore,
	PRODUCERS,
	ResultBatcher,
	sleep,
} from './queue-harness.ts';
import type { Candidate } from './queue-harness.ts';
import { pgBossEvents, pgBossOnly } from './queue-pgboss.ts';
import { graphileEvents, graphileOnly } from './queue-graphile.ts';

// ---- (a) the relay ----

const relay: Candidate = {
	name: 'relay PostgresStore',
	async open(url) {
		const store = await PostgresStore.open(url);
		return {
			enqueue: async (event) => {
				await store.insertEvent(event);
			},
			/** The forwarder's loop without HTTP (src/forwarder.ts). */
			async drain(n) {
				// Results recorded as the forwarder records them: batched (src/result-batcher.ts).
				const results = new ResultBatcher((batch) => store.recordResults(batch));
				const inflight = new Set<Promise<void>>();
				let done = 0;
				while (done < n) {
					const free = IN_FLIGHT - inflight.size;
					if (inflight.size === 0 || free >= IN_FLIGHT / 4) {
						const now = Date.now();
						const claimed = await store.claimDue(now, free, 60_000, 'bench');
						for (const d of claimed) {
							const p: Promise<void> = results
								.record({
									id: d.id,
									outcome: 'delivered',
									now: Date.now(),
									httpStatus: 200,
									timing: { attempt: d.attempts, startedAt: now, durationMs: 0 },
								})
								.then(() => {
									done += 1;
									inflight.delete(p);
								});
							inflight.add(p);
						}
						if (claimed.length === free) continue;
						if (claimed.length === 0 && inflight.size === 0 && done < n) {
							throw new Error(`nothing to claim after ${done} of ${n} deliveries`);
						}
					}
					if (inflight.size > 0) await Promise.race(inflight);
				}
				await Promise.all(inflight);
			},
			check: async (db) =>
				`${await countOf(db, `SELECT count(*) AS n FROM deliveries WHERE status = 'delivered'`)} delivered, ` +
				`${await countOf(db, 'SELECT count(*) AS n FROM attempts')} attempt rows`,
			close: () => store.close(),
		};
	},
};

const CANDIDATES: Record<string, Candidate> = {
	relay,
	'pgboss-events': pgBossEvents,
	'graphile-events': graphileEvents,
	'pgboss-only': pgBossOnly,
	'graphile-only': graphileOnly,
};

// ---- running and printing ----

interface Result {
	name: string;
	enqueue: PhaseFigures;
	drain: PhaseFigures;
	check: string;
}

async function runCandidate(key: string, candidate: Candidate): Promise<Result> {
	const { url, name: database, drop } = await createDatabase(PG_URL, key.replace(/\W/g, '_'));
	const stats = new pg.Client({ connectionString: url, application_name: 'queue-bench-stats' });
	await stats.connect();
	try {
		const harness = await candidate.open(url);
		try {
			const events = makeEvents(`${key}-${Date.now()}`);
			await sleep(500); // start-up work (migrations, maintenance at start) settles first
			let next = 0;
			const enqueue = await measure(stats, database, N, async () => {
				await Promise.all(
					Array.from({ length: PRODUCERS }, async () => {
						while (next < events.length) await harness.enqueue(events[next++]);
					}),
				);
			});
			await sleep(500);
			const drain = await measure(stats, database, N, () => harness.drain(N));
			return { name: candidate.name, enqueue, drain, check: await harness.check(stats) };
		} finally {
			await harness.close();
		}
	} finally {
		await stats.end();
		await drop();
	}
}

const fmt = (x: number, digits = 0) => x.toFixed(digits);
const perSec = (f: PhaseFigures) => fmt(f.jobs / (f.ms / 1000));
/** Ticks of 10 ms as µs per job. */
const ticksPerJob = (ticks: number, f: PhaseFigures) => fmt((ticks * 10_000) / f.jobs);
const callsPerJob = (rows: StatementFigure[], f: PhaseFigures) =>
	fmt(rows.reduce((a, r) => a + r.calls, 0) / f.jobs, 3);
/**
 * A deferred foreign key (pg-boss's job → queue) is checked at COMMIT, outside any statement, so
 * pg_stat_statements counts its check as a statement of its own; the client never sent it.
 */
const isDeferredCheck = (r: StatementFigure) => /FOR KEY SHARE OF x$/.test(r.query.trim());
const sentPerJob = (rows: StatementFigure[], f: PhaseFigures) =>
	callsPerJob(
		rows.filter((r) => !isDeferredCheck(r)),
		f,
	);
const execPerJob = (rows: StatementFigure[], f: PhaseFigures) =>
	fmt((rows.reduce((a, r) => a + r.execMs, 0) * 1000) / f.jobs, 1);

function phaseCells(f: PhaseFigures): string[] {
	return [
		perSec(f),
		fmt(f.clientUs / f.jobs),
		`${ticksPerJob(f.pgTicks, f)} / ${ticksPerJob(f.dbTicks, f)}`,
		sentPerJob(f.statements, f),
		callsPerJob(f.statements, f),
		execPerJob(f.statements, f),
		`${fmt(f.busy)}%`,
	];
}

const oneLine = (sql: string, max = 110) => {
	const s = sql.replace(/\s+/g, ' ').trim();
	return s.length > max ? `${s.slice(0, max - 1)}…` : s;
};

function printStatements(label: string, f: PhaseFigures, top = 6): void {
	console.log(
		`\n${label}: ${sentPerJob(f.statements, f)} statements sent/job (${callsPerJob(f.statements, f)} run), ` +
			`${execPerJob(f.statements, f)} µs exec/job`,
	);
	console.log('| calls/job | exec µs/job | statement |');
	console.log('| ---: | ---: | --- |');
	for (const r of f.statements.slice(0, top)) {
		console.log(
			`| ${fmt(r.calls / f.jobs, 3)} | ${fmt((r.execMs * 1000) / f.jobs, 1)} | \`${oneLine(r.query).replaceAll('|', '\\|')}\` |`,
		);
	}
	const rest = f.statements.slice(top);
	if (rest.length > 0) {
		console.log(
			`| ${fmt(rest.reduce((a, r) => a + r.calls, 0) / f.jobs, 3)} | ${fmt((rest.reduce((a, r) => a + r.execMs, 0) * 1000) / f.jobs, 1)} | (${rest.length} other statements) |`,
		);
	}
}

async function main(): Promise<void> {
	const only = process.env.QUEUE_BENCH_ONLY?.split(',').filter(Boolean);
	const chosen = Object.entries(CANDIDATES).filter(([key]) => !only || only.includes(key));
	console.log(
		`queue benchmark: ${N} events, one target each, ${PRODUCERS} producers, ${IN_FLIGHT} in flight at drain; ` +
			`node ${process.version}, ${cpus().length} cores, load average ${loadavg()
				.map((x) => fmt(x, 2))
				.join(' ')}`,
	);
	const results: Result[] = [];
	for (const [key, candidate] of chosen) {
		const result = await runCandidate(key, candidate);
		console.log(`${candidate.name}: done (${result.check})`);
		results.push(result);
	}
	const head = [
		'jobs/s',
		'client µs/job',
		'PG µs/job (all / this db)',
		'stmts sent/job',
		'stmts run/job',
		'exec µs/job',
		'machine busy',
	];
	console.log('\n| candidate | phase | ' + head.join(' | ') + ' |');
	console.log('| --- | --- | ' + head.map(() => '---:').join(' | ') + ' |');
	for (const r of results) {
		console.log(`| ${r.name} | enqueue | ${phaseCells(r.enqueue).join(' | ')} |`);
		console.log(`| ${r.name} | drain | ${phaseCells(r.drain).join(' | ')} |`);
	}
	console.log(
		'\nclient: this process (process.cpuUsage); PG: CPU of every postgres process on the machine / of the ' +
			"candidate database's backends (/proc); stmts and exec: pg_stat_statements of the candidate database " +
			'(top-level statements, BEGIN/COMMIT included; run = sent + deferred foreign-key checks at COMMIT; ' +
			'exec time without planning, waits included).',
	);
	for (const r of results) {
		printStatements(`${r.name}, enqueue`, r.enqueue);
		printStatements(`${r.name}, drain`, r.drain);
	}
}

await main();
