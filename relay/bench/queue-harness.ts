// What every candidate of queue-libraries.ts shares: the compiled relay's store modules, the
// workload, the group commit around a library, the library candidates' own tables and pools.
import pg from 'pg';
import type { NewEvent } from '../src/store/types.ts';
import { compiled, signedBody } from './common.ts';
import { BENCH_MARK } from './queue-measure.ts';

// From the compiled relay of common.ts's ROOT (`npm run build`; BENCH_ROOT), like relay.bench.ts.
const dist = (path: string) => compiled(`src/${path}`);
export const { PostgresStore } = (await import(
	dist('store-postgres/store.js')
)) as typeof import('../src/store-postgres/store.ts');
export const { uuidV7 } = (await import(
	dist('store/ids.js')
)) as typeof import('../src/store/ids.ts');
export const { ResultBatcher } = (await import(
	dist('result-batcher.js')
)) as typeof import('../src/result-batcher.ts');
export const { INSERTS_IN_FLIGHT, INSERT_BATCH } = (await import(
	dist('store-postgres/statements.js')
)) as typeof import('../src/store-postgres/statements.ts');
export const { PG_MIGRATIONS } = (await import(
	dist('store-postgres/schema.js')
)) as typeof import('../src/store-postgres/schema.ts');

export const N = Number(process.env.QUEUE_BENCH_N ?? 10_000);
export const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Enqueue calls in flight at once (the HTTP connections of a loaded relay). */
export const PRODUCERS = 50;
/** Deliveries in flight per instance (RELAY_CONCURRENCY's default) and the largest claim or fetch. */
export const IN_FLIGHT = 16;
export const TARGET = 'http://127.0.0.1:9/webhook/paypalych';
export const BOOKKEEPING = '-c synchronous_commit=off';

export interface Harness {
	/** Stores one event with one job per target; resolves after the commit that carried it. */
	enqueue(event: NewEvent): Promise<void>;
	/** Works until `n` jobs are done and their results committed. */
	drain(n: number): Promise<void>;
	/** What the database holds afterwards (a check that every job went through). */
	check(db: pg.Client): Promise<string>;
	close(): Promise<void>;
}

export interface Candidate {
	name: string;
	open(url: string): Promise<Harness>;
}

/** N signed payment postbacks, each with its own TrsId, made before any phase starts. */
export function makeEvents(tag: string): NewEvent[] {
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

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function until(done: () => boolean | Promise<boolean>, everyMs = 5): Promise<void> {
	while (!(await done())) await sleep(everyMs);
}

export async function countOf(db: pg.Client | pg.Pool, sql: string, params: unknown[] = []) {
	const { rows } = await db.query<{ n: string }>(`${BENCH_MARK} ${sql}`, params);
	return Number(rows[0].n);
}

/**
 * The relay's group commit around a library: calls queue while up to INSERTS_IN_FLIGHT batches are
 * in flight and go together (up to INSERT_BATCH) in the next one; each resolves after its batch's
 * commit. The same constants as the relay's GroupInserter.
 */
export class GroupCommit<T> {
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

export const EVENTS_DDL = [
	...PG_MIGRATIONS[0].sql.matchAll(/CREATE (TABLE events|INDEX events_)[^;]*;/g),
]
	.map((m) => m[0])
	.join('\n');
export const LIBRARY_TABLES = `${EVENTS_DDL}
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

export interface Stored {
	id: string;
	event: NewEvent;
}

export const EVENT_COLUMNS = `$1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::jsonb[], $7::bigint[], $8::text[], $9::jsonb[]`;
export const eventParams = (batch: Stored[]) => [
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

export const INSERT_EVENTS = `INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at, source)
	SELECT id, kind, dedupe_key, content_type, body, fields_json, received_at, source
	FROM unnest(${EVENT_COLUMNS}) AS i (id, kind, dedupe_key, content_type, body, fields_json, received_at, source, targets)
	ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`;

/** One attempt row per job of a batch: ids ($1), targets ($2), attempt numbers ($3), start ($4). */
export const INSERT_ATTEMPTS = `INSERT INTO attempts (job_id, target, attempt, started_at, duration_ms, http_status, outcome)
	SELECT j, t, a, $4, 0, 200, 'delivered' FROM unnest($1::text[], $2::text[], $3::int[]) AS x (j, t, a)`;

/** The job of one delivery when the event is a row of its own: what is sent, and where. */
export interface DeliveryJob {
	eventId: string;
	target: string;
	kind: string;
	contentType: string;
	body: string;
}
export const deliveryJobs = (batch: Stored[], inserted: Set<string>): DeliveryJob[] =>
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
export const eventJob = (event: NewEvent) => ({
	kind: event.kind,
	dedupeKey: event.dedupeKey,
	contentType: event.contentType,
	body: event.body,
	fields: event.fields,
	receivedAt: event.receivedAt,
	target: event.targets[0],
});

export function pools(url: string): { durable: pg.Pool; book: pg.Pool } {
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
