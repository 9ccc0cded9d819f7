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
import { pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import type { Db as PgBossDb, Job } from 'pg-boss';
import { Logger, makeWorkerUtils, run, runMigrations } from 'graphile-worker';
import type { NewEvent } from '../src/store/types.ts';
import { signedBody } from './common.ts';
import { BENCH_MARK, createDatabase, measure } from './queue-measure.ts';
import type { PhaseFigures, StatementFigure } from './queue-measure.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (path: string) => pathToFileURL(join(ROOT, 'relay/dist/relay/src/store', path)).href;
// From the compiled relay (`npm run build`), like relay.bench.ts.
const { PostgresStore } = (await import(
	dist('postgres.js')
)) as typeof import('../src/store/postgres.ts');
const { uuidV7 } = (await import(dist('ids.js'))) as typeof import('../src/store/ids.ts');
const { ResultBatcher } = (await import(
	pathToFileURL(join(ROOT, 'relay/dist/relay/src/result-batcher.js')).href
)) as typeof import('../src/result-batcher.ts');
const { INSERTS_IN_FLIGHT, INSERT_BATCH } = (await import(
	dist('pg-statements.js')
)) as typeof import('../src/store/pg-statements.ts');
const { PG_MIGRATIONS } = (await import(
	dist('pg-schema.js')
)) as typeof import('../src/store/pg-schema.ts');

const N = Number(process.env.QUEUE_BENCH_N ?? 10_000);
const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Enqueue calls in flight at once (the HTTP connections of a loaded relay). */
const PRODUCERS = 50;
/** Deliveries in flight per instance (RELAY_CONCURRENCY's default) and the largest claim or fetch. */
const IN_FLIGHT = 16;
const TARGET = 'http://127.0.0.1:9/webhook/paypalych';
const BOOKKEEPING = '-c synchronous_commit=off';

interface Harness {
	/** Stores one event with one job per target; resolves after the commit that carried it. */
	enqueue(event: NewEvent): Promise<void>;
	/** Works until `n` jobs are done and their results committed. */
	drain(n: number): Promise<void>;
	/** What the database holds afterwards (a check that every job went through). */
	check(db: pg.Client): Promise<string>;
	close(): Promise<void>;
}

interface Candidate {
	name: string;
	open(url: string): Promise<Harness>;
}

/** N signed payment postbacks, each with its own TrsId, made before any phase starts. */
function makeEvents(tag: string): NewEvent[] {
	const now = Date.now();
	return Array.from({ length: N }, (_, i) => {
		const trsId = `Q-${tag}-${i}`;
		const invId = `order-${trsId}`;
		const body = signedBody(trsId);
		const { SignatureValue: _signature, ...fields } = Object.fromEntries(new URLSearchParams(body));
		return {
			kind: 'payment',
			dedupeKey: `payment:${trsId}:SUCCESS:10000:${invId}`,
			contentType: 'application/x-www-form-urlencoded',
			body,
			fields,
			receivedAt: now,
			targets: [TARGET],
		};
	});
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(done: () => boolean | Promise<boolean>, everyMs = 5): Promise<void> {
	while (!(await done())) await sleep(everyMs);
}

async function countOf(db: pg.Client | pg.Pool, sql: string, params: unknown[] = []) {
	const { rows } = await db.query<{ n: string }>(`${BENCH_MARK} ${sql}`, params);
	return Number(rows[0].n);
}

/**
 * The relay's group commit around a library: calls queue while up to INSERTS_IN_FLIGHT batches are
 * in flight and go together (up to INSERT_BATCH) in the next one; each resolves after its batch's
 * commit. The same constants as the relay's GroupInserter.
 */
class GroupCommit<T> {
	#run: (items: T[]) => Promise<void>;
	#queue: Array<{ item: T; resolve: () => void; reject: (e: Error) => void }> = [];
	#inFlight = 0;

	constructor(run: (items: T[]) => Promise<void>) {
		this.#run = run;
	}

	add(item: T): Promise<void> {
		return new Promise((resolve, reject) => {
			this.#queue.push({ item, resolve, reject });
			this.#pump();
		});
	}

	#pump(): void {
		while (this.#inFlight < INSERTS_IN_FLIGHT && this.#queue.length > 0) {
			const batch = this.#queue.splice(0, INSERT_BATCH);
			this.#inFlight += 1;
			this.#run(batch.map((q) => q.item))
				.then(
					() => batch.forEach((q) => q.resolve()),
					(error: Error) => batch.forEach((q) => q.reject(error)),
				)
				.finally(() => {
					this.#inFlight -= 1;
					this.#pump();
				});
		}
	}
}

// ---- the library candidates' own tables: the relay's events table, and the attempts history ----

const EVENTS_DDL = [...PG_MIGRATIONS[0].sql.matchAll(/CREATE (TABLE events|INDEX events_)[^;]*;/g)]
	.map((m) => m[0])
	.join('\n');
const LIBRARY_TABLES = `${EVENTS_DDL}
ALTER TABLE events ADD COLUMN source text NOT NULL DEFAULT 'postback' CHECK (source IN ('postback', 'catch-up'));
CREATE TABLE attempts (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	job_id text NOT NULL,
	target text NOT NULL,
	attempt integer NOT NULL,
	started_at bigint NOT NULL,
	duration_ms integer NOT NULL,
	http_status integer,
	error text,
	outcome text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'dead')),
	origin text NOT NULL DEFAULT 'scheduled' CHECK (origin IN ('scheduled', 'manual')),
	response text
);
CREATE INDEX attempts_job ON attempts (job_id, attempt);
CREATE INDEX attempts_started ON attempts (started_at);
CREATE INDEX attempts_target_error ON attempts (target, started_at) WHERE error IS NOT NULL;`;

interface Stored {
	id: string;
	event: NewEvent;
}

const EVENT_COLUMNS = `$1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::bigint[], $8::text[], $9::jsonb[]`;
const eventParams = (batch: Stored[]) => [
	batch.map((s) => s.id),
	batch.map((s) => s.event.kind),
	batch.map((s) => s.event.dedupeKey),
	batch.map((s) => s.event.contentType),
	batch.map((s) => s.event.body),
	batch.map((s) => JSON.stringify(s.event.fields)),
	batch.map((s) => s.event.receivedAt),
	batch.map((s) => s.event.source ?? 'postback'),
	batch.map((s) => JSON.stringify(s.event.targets)),
];

const INSERT_EVENTS = `INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at, source)
	SELECT id, kind, dedupe_key, content_type, body, fields_json, received_at, source
	FROM unnest(${EVENT_COLUMNS}) AS i (id, kind, dedupe_key, content_type, body, fields_json, received_at, source, targets)
	ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`;

/** One attempt row per job of a batch: ids ($1), targets ($2), attempt numbers ($3), start ($4). */
const INSERT_ATTEMPTS = `INSERT INTO attempts (job_id, target, attempt, started_at, duration_ms, http_status, outcome)
	SELECT j, t, a, $4, 0, 200, 'delivered' FROM unnest($1::text[], $2::text[], $3::int[]) AS x (j, t, a)`;

/** The job of one delivery when the event is a row of its own: what is sent, and where. */
interface DeliveryJob {
	eventId: string;
	target: string;
	kind: string;
	contentType: string;
	body: string;
}
const deliveryJobs = (batch: Stored[], inserted: Set<string>): DeliveryJob[] =>
	batch
		.filter((s) => inserted.has(s.id))
		.flatMap((s) =>
			s.event.targets.map((target) => ({
				eventId: s.id,
				target,
				kind: s.event.kind,
				contentType: s.event.contentType,
				body: s.event.body,
			})),
		);

/** The event as the job itself (the "job only" variants). */
const eventJob = (event: NewEvent) => ({
	kind: event.kind,
	dedupeKey: event.dedupeKey,
	contentType: event.contentType,
	body: event.body,
	fields: event.fields,
	receivedAt: event.receivedAt,
	target: event.targets[0],
});

function pools(url: string): { durable: pg.Pool; book: pg.Pool } {
	const base = { connectionString: url, max: 8, application_name: 'queue-bench' };
	const durable = new pg.Pool(base);
	const book = new pg.Pool({ ...base, max: 10, options: BOOKKEEPING });
	const onError = (error: Error) => console.error(`connection error: ${error.message}`);
	for (const pool of [durable, book]) {
		pool.on('error', onError);
		// graphile-worker asks for both (it warns otherwise): errors of idle and of checked-out clients.
		pool.on('connect', (client) => client.on('error', onError));
	}
	return { durable, book };
}

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

// ---- (b) pg-boss ----

const BOSS_QUEUE = 'deliver';
/** The retry and expiry settings of both pg-boss candidates' queue (like the relay's lease and backoff). */
const BOSS_QUEUE_OPTIONS = {
	notify: true,
	retryLimit: 20,
	retryBackoff: true,
	retryDelay: 1,
	retryDelayMax: 3600,
	expireInSeconds: 60,
};
const BOSS_SCHEMA = 'pgboss';

async function startBoss(url: string): Promise<PgBoss> {
	const boss = new PgBoss({
		connectionString: url,
		max: 10,
		options: BOOKKEEPING,
		application_name: 'queue-bench-pgboss',
		schema: BOSS_SCHEMA,
		schedule: false,
		useListenNotify: true,
	});
	boss.on('error', (error) => console.error(`pg-boss error: ${error.message}`));
	await boss.start();
	return boss;
}

/** Works the queue with pg-boss's own worker until `n` jobs are completed (committed). */
async function bossDrain(
	boss: PgBoss,
	db: pg.Pool,
	n: number,
	work: (handled: () => void) => Promise<string>,
): Promise<void> {
	let handled = 0;
	const id = await work(() => (handled += 1));
	await until(() => handled >= n);
	await until(
		async () =>
			(await countOf(
				db,
				`SELECT count(*) AS n FROM ${BOSS_SCHEMA}.job WHERE name = $1 AND state = 'completed'`,
				[BOSS_QUEUE],
			)) >= n,
	);
	await boss.offWork(BOSS_QUEUE, { id, wait: true });
}

const bossCheck = async (db: pg.Client, attempts: boolean) =>
	`${await countOf(db, `SELECT count(*) AS n FROM ${BOSS_SCHEMA}.job WHERE state = 'completed'`)} jobs completed` +
	(attempts ? `, ${await countOf(db, 'SELECT count(*) AS n FROM attempts')} attempt rows` : '');

const pgBossEvents: Candidate = {
	name: 'pg-boss, events + jobs',
	async open(url) {
		const { durable, book } = pools(url);
		await durable.query(LIBRARY_TABLES);
		const boss = await startBoss(url);
		await boss.createQueue(BOSS_QUEUE, BOSS_QUEUE_OPTIONS);
		const inserts = new GroupCommit<Stored>(async (batch) => {
			const client = await durable.connect();
			try {
				await client.query('BEGIN');
				const { rows } = await client.query<{ id: string }>(INSERT_EVENTS, eventParams(batch));
				const jobs = deliveryJobs(batch, new Set(rows.map((r) => r.id)));
				const tx: PgBossDb = { executeSql: (text, values) => client.query(text, values) };
				if (jobs.length > 0)
					await boss.insert(
						BOSS_QUEUE,
						jobs.map((data) => ({ data })),
						{ db: tx },
					);
				await client.query('COMMIT');
			} catch (error) {
				await client.query('ROLLBACK').catch(() => {});
				throw error;
			} finally {
				client.release();
			}
		});
		return {
			enqueue: (event) => inserts.add({ id: uuidV7(event.receivedAt), event }),
			drain: (n) =>
				bossDrain(boss, book, n, (handled) =>
					boss.work(
						BOSS_QUEUE,
						{ batchSize: IN_FLIGHT, burstWhenBatchFull: true, transactional: true },
						async (jobs: Job<DeliveryJob>[], tx: PgBossDb) => {
							await tx.executeSql(INSERT_ATTEMPTS, [
								jobs.map((j) => j.id),
								jobs.map((j) => j.data.target),
								jobs.map((j) => j.retryCount + 1),
								Date.now(),
							]);
							jobs.forEach(handled);
						},
					),
				),
			check: (db) => bossCheck(db, true),
			async close() {
				await boss.stop({ graceful: true, close: true });
				await Promise.all([durable.end(), book.end()]);
			},
		};
	},
};

const pgBossOnly: Candidate = {
	name: 'pg-boss, job only',
	async open(url) {
		const { durable, book } = pools(url);
		const boss = await startBoss(url);
		await boss.createQueue(BOSS_QUEUE, { ...BOSS_QUEUE_OPTIONS, policy: 'short' });
		// Durable inserts on a pool with synchronous_commit on; pg-boss's own pool does the bookkeeping.
		const onDurable: PgBossDb = { executeSql: (text, values) => durable.query(text, values) };
		const inserts = new GroupCommit<NewEvent>(async (batch) => {
			await boss.insert(
				BOSS_QUEUE,
				batch.map((event) => ({
					data: eventJob(event),
					singletonKey: event.dedupeKey ?? undefined,
				})),
				{ db: onDurable },
			);
		});
		return {
			enqueue: (event) => inserts.add(event),
			drain: (n) =>
				bossDrain(boss, book, n, (handled) =>
					boss.work(
						BOSS_QUEUE,
						{ batchSize: IN_FLIGHT, burstWhenBatchFull: true },
						async (jobs) => {
							jobs.forEach(handled);
						},
					),
				),
			check: (db) => bossCheck(db, false),
			async close() {
				await boss.stop({ graceful: true, close: true });
				await Promise.all([durable.end(), book.end()]);
			},
		};
	},
};

// ---- (c) graphile-worker ----

const silent = new Logger(() => () => {});

/** graphile-worker's runner until `n` tasks ran; stop() then settles the batched completions. */
async function graphileDrain(
	book: pg.Pool,
	n: number,
	body: (payload: unknown, job: { id: string; attempts: number }) => Promise<void>,
): Promise<void> {
	let handled = 0;
	let finished = () => {};
	const allRan = new Promise<void>((resolve) => (finished = resolve));
	const runner = await run({
		pgPool: book,
		concurrency: IN_FLIGHT,
		noHandleSignals: true,
		pollInterval: 2_000,
		logger: silent,
		taskList: {
			deliver: async (payload, helpers) => {
				await body(payload, helpers.job);
				handled += 1;
				if (handled === n) finished();
			},
		},
		preset: { worker: { localQueue: { size: 2 * IN_FLIGHT }, completeJobBatchDelay: 0 } },
	});
	await allRan;
	await runner.stop();
}

const graphileCheck = async (db: pg.Client, attempts: boolean) =>
	`${await countOf(db, 'SELECT count(*) AS n FROM graphile_worker._private_jobs')} jobs left` +
	(attempts ? `, ${await countOf(db, 'SELECT count(*) AS n FROM attempts')} attempt rows` : '');

/** The events of a batch and their jobs in one statement: graphile_worker.add_jobs in the CTE. */
const GRAPHILE_INSERT = `WITH input AS (
		SELECT * FROM unnest(${EVENT_COLUMNS})
			AS i (id, kind, dedupe_key, content_type, body, fields_json, received_at, source, targets)
	), e AS (
		INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at, source)
		SELECT id, kind, dedupe_key, content_type, body, fields_json, received_at, source FROM input
		ON CONFLICT (dedupe_key) DO NOTHING RETURNING id
	), j AS (
		SELECT count(*) AS jobs FROM graphile_worker.add_jobs(ARRAY(
			SELECT ROW('deliver', json_build_object('eventId', i.id, 'target', t.target, 'kind', i.kind,
				'contentType', i.content_type, 'body', i.body), NULL, NULL, NULL, NULL, NULL, NULL)::graphile_worker.job_spec
			FROM e JOIN input i ON i.id = e.id
			CROSS JOIN LATERAL jsonb_array_elements_text(i.targets) WITH ORDINALITY AS t (target, n)
			ORDER BY i.received_at, i.id, t.n))
	)
	SELECT e.id, (SELECT jobs FROM j) AS jobs FROM e`;

const graphileEvents: Candidate = {
	name: 'graphile-worker, events + jobs',
	async open(url) {
		const { durable, book } = pools(url);
		await runMigrations({ pgPool: durable, logger: silent });
		await durable.query(LIBRARY_TABLES);
		const inserts = new GroupCommit<Stored>(async (batch) => {
			await durable.query(GRAPHILE_INSERT, eventParams(batch));
		});
		return {
			enqueue: (event) => inserts.add({ id: uuidV7(event.receivedAt), event }),
			drain(n) {
				// Each task's attempt row, group-committed with the others finishing meanwhile (one
				// statement per batch); the task returns (and its job completes) after that commit.
				const attempts = new GroupCommit<{ job: string; target: string; attempt: number }>(
					async (batch) => {
						await book.query(INSERT_ATTEMPTS, [
							batch.map((a) => a.job),
							batch.map((a) => a.target),
							batch.map((a) => a.attempt),
							Date.now(),
						]);
					},
				);
				return graphileDrain(book, n, (payload, job) =>
					attempts.add({
						job: job.id,
						target: (payload as DeliveryJob).target,
						attempt: job.attempts,
					}),
				);
			},
			check: (db) => graphileCheck(db, true),
			close: () => Promise.all([durable.end(), book.end()]).then(() => {}),
		};
	},
};

const graphileOnly: Candidate = {
	name: 'graphile-worker, job only',
	async open(url) {
		const { durable, book } = pools(url);
		await runMigrations({ pgPool: durable, logger: silent });
		const utils = await makeWorkerUtils({ pgPool: durable, logger: silent });
		const inserts = new GroupCommit<NewEvent>(async (batch) => {
			await utils.addJobs(
				batch.map((event) => ({
					identifier: 'deliver',
					payload: eventJob(event),
					jobKey: event.dedupeKey ?? undefined,
				})),
			);
		});
		return {
			enqueue: (event) => inserts.add(event),
			drain: (n) => graphileDrain(book, n, async () => {}),
			check: (db) => graphileCheck(db, false),
			async close() {
				await utils.release();
				await Promise.all([durable.end(), book.end()]);
			},
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
