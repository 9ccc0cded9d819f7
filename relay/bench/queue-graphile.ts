// The graphile-worker candidates of queue-libraries.ts (see there for what is measured and how).
import pg from 'pg';
import { Logger, makeWorkerUtils, run, runMigrations } from 'graphile-worker';
import type { NewEvent } from '../src/store/types.ts';
import {
	countOf,
	EVENT_COLUMNS,
	eventJob,
	eventParams,
	GroupCommit,
	IN_FLIGHT,
	INSERT_ATTEMPTS,
	LIBRARY_TABLES,
	pools,
	uuidV7,
} from './queue-harness.ts';
import type { Candidate, DeliveryJob, Stored } from './queue-harness.ts';

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

export const graphileEvents: Candidate = {
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

export const graphileOnly: Candidate = {
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
