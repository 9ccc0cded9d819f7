// The pg-boss candidates of queue-libraries.ts (see there for what is measured and how).
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import type { Db as PgBossDb, Job } from 'pg-boss';
import type { NewEvent } from '../src/store/types.ts';
import {
	BOOKKEEPING,
	countOf,
	deliveryJobs,
	eventJob,
	eventParams,
	GroupCommit,
	IN_FLIGHT,
	INSERT_ATTEMPTS,
	INSERT_EVENTS,
	LIBRARY_TABLES,
	pools,
	until,
	uuidV7,
} from './queue-harness.ts';
import type { Candidate, DeliveryJob, Stored } from './queue-harness.ts';

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

export const pgBossEvents: Candidate = {
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

export const pgBossOnly: Candidate = {
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
