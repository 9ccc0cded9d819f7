// Versioned schema migrations of the PostgreSQL store: plain SQL, one entry per version, applied at
// start in one transaction under an advisory lock, and recorded in relay_schema_migrations.
// Why not a migration tool: short migrations do not need a dependency, the SQL ships inside the
// relay (no files to find at run time), and the lock lets several instances start at once. A
// version may also rewrite rows with the relay's own code (`rewrite`), in the same transaction.
import type { PoolClient } from 'pg';
import { rewriteMoneyBackKeys } from './rewrites.ts';

export interface Migration {
	version: number;
	name: string;
	sql: string;
	/** Rows rewritten with the relay's own code after `sql`, in the same transaction. */
	rewrite?: (client: PoolClient) => Promise<void>;
}

export const PG_MIGRATIONS: readonly Migration[] = [
	{
		version: 1,
		name: 'events, deliveries, attempts',
		sql: `
CREATE TABLE events (
	id text PRIMARY KEY,
	kind text NOT NULL,
	dedupe_key text UNIQUE,
	content_type text NOT NULL,
	body text NOT NULL,
	fields_json jsonb NOT NULL,
	received_at bigint NOT NULL
);
CREATE INDEX events_received ON events (received_at);
CREATE INDEX events_trs_id ON events ((fields_json ->> 'TrsId'));
CREATE INDEX events_inv_id ON events ((fields_json ->> 'InvId'));
CREATE TABLE deliveries (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	event_id text NOT NULL REFERENCES events (id),
	target text NOT NULL,
	status text NOT NULL CHECK (status IN ('pending', 'delivering', 'delivered', 'dead')),
	attempts integer NOT NULL DEFAULT 0,
	created_at bigint NOT NULL,
	budget_start bigint NOT NULL,
	next_attempt_at bigint NOT NULL,
	lease_until bigint,
	lease_owner text,
	last_status integer,
	last_error text,
	delivered_at bigint
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('pending', 'delivering');
CREATE INDEX deliveries_event ON deliveries (event_id);
CREATE INDEX deliveries_status ON deliveries (status, created_at);
CREATE INDEX deliveries_target ON deliveries (target, status);
CREATE INDEX deliveries_delivered ON deliveries (delivered_at) WHERE delivered_at IS NOT NULL;
CREATE TABLE attempts (
	id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	delivery_id bigint NOT NULL REFERENCES deliveries (id),
	target text NOT NULL,
	attempt integer NOT NULL,
	started_at bigint NOT NULL,
	duration_ms integer NOT NULL,
	http_status integer,
	error text,
	outcome text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'dead'))
);
CREATE INDEX attempts_delivery ON attempts (delivery_id, attempt);
CREATE INDEX attempts_started ON attempts (started_at);
CREATE INDEX attempts_target_error ON attempts (target, started_at) WHERE error IS NOT NULL;
CREATE TABLE heartbeat (id integer PRIMARY KEY, at bigint NOT NULL);
`,
	},
	{
		version: 2,
		name: 'console revocations',
		sql: `
CREATE TABLE console_revocations (
	session_id text PRIMARY KEY,
	expires_at bigint NOT NULL
);
CREATE INDEX console_revocations_expiry ON console_revocations (expires_at);
`,
	},
	{
		version: 3,
		name: 'event source, catch-up marks',
		sql: `
ALTER TABLE events ADD COLUMN source text NOT NULL DEFAULT 'postback' CHECK (source IN ('postback', 'catch-up'));
CREATE TABLE catchup_marks (mark text PRIMARY KEY, at bigint NOT NULL);
CREATE INDEX catchup_marks_at ON catchup_marks (at);
`,
	},
	{
		version: 4,
		name: 'target answers, manual attempts, attempt numbers across requeues',
		sql: `
ALTER TABLE deliveries ADD COLUMN attempt_base integer NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN manual integer NOT NULL DEFAULT 0 CHECK (manual IN (0, 1));
ALTER TABLE deliveries ADD COLUMN last_response text;
ALTER TABLE attempts ADD COLUMN origin text NOT NULL DEFAULT 'scheduled' CHECK (origin IN ('scheduled', 'manual'));
ALTER TABLE attempts ADD COLUMN response text;
`,
	},
	{
		version: 5,
		name: 'signed pair of each event, for the pair limit inside the insert',
		sql: `
ALTER TABLE events ADD COLUMN pair_key text;
CREATE INDEX events_pair ON events (pair_key, received_at) WHERE pair_key IS NOT NULL;
`,
	},
	{
		// Every delivery is updated twice (claim, result), each a new row version in every index of
		// the table. PostgreSQL's defaults vacuum and analyze a table once 20% / 10% of its rows
		// changed: 200,000 dead versions in a store of 1,000,000 deliveries before a vacuum, and
		// statistics that still say "no pending delivery" long after a backlog formed. Here a fixed
		// number of changed rows, whatever the size of the store.
		version: 6,
		name: 'deliveries vacuumed and analyzed after a fixed number of changes',
		sql: `
ALTER TABLE deliveries SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
	autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 5000);
`,
	},
	{
		// The catch-up reads them in rotation, least recently read first.
		version: 7,
		name: 'MULTI links the catch-up has seen pay, and when each was last read',
		sql: `
CREATE TABLE catchup_links (bill_id text PRIMARY KEY, read_at bigint NOT NULL);
CREATE INDEX catchup_links_read ON catchup_links (read_at, bill_id);
`,
	},
	{
		// What the workflow did with each attempt (accepted, duplicate, ...); the store checks the
		// words (store/input.ts), so that a new one needs no migration.
		version: 8,
		name: "the PayPalych Trigger's receipt of each attempt and of each delivery's latest",
		sql: `
ALTER TABLE deliveries ADD COLUMN last_receipt text;
ALTER TABLE attempts ADD COLUMN receipt text;
`,
	},
	{
		// Chargeback events keyed by kind, Id and status, and the catch-up's refund and chargeback
		// marks under the same keys (store/money-back-keys.ts): computed with the wire contract.
		version: 9,
		name: 'the one money-back identity: chargeback keys with their status, refund and chargeback marks under their keys',
		sql: '',
		rewrite: rewriteMoneyBackKeys,
	},
	{
		// The statement (store/balances.ts): merchant/balance read at each day boundary and at the
		// first start; the first one kept for a zone, day and kind stays.
		version: 10,
		name: "the merchant's balances at each day boundary and at the first start",
		sql: `
CREATE TABLE balance_snapshots (
	time_zone text NOT NULL,
	day text NOT NULL,
	kind text NOT NULL CHECK (kind IN ('boundary', 'first-start')),
	taken_at bigint NOT NULL,
	balances_json jsonb NOT NULL,
	PRIMARY KEY (time_zone, day, kind)
);
`,
	},
	{
		// Indexes and checks only for what the relay runs. Self-contained (it needs nothing of a
		// version after 9: renumbering it is changing this number alone).
		// - deliveries_status and deliveries_target took an entry per delivery stored and a new one
		//   at every change of its status; what read them was the dead list (of every target, of
		//   one) and the oldest undelivered event. The dead get a partial index no delivery enters
		//   until it dies; pending and delivering ones are read through deliveries_due.
		// - The foreign keys of deliveries and attempts ran a trigger per row stored (a look-up and a
		//   row lock on the parent, a WAL record each): the statements that store them take their
		//   parent from the same statement (the insert batch, the results' join on deliveries), a
		//   replay locks its events (REPLAY), and the pruning deletes children first.
		// No row is read or written: a store with a backlog keeps it as it is (the index build reads
		// the table once, under the migration's lock).
		version: 11,
		name: 'deliveries: one partial index of the dead instead of the status and target indexes; no foreign-key triggers',
		sql: `
DROP INDEX IF EXISTS deliveries_status;
DROP INDEX IF EXISTS deliveries_target;
CREATE INDEX IF NOT EXISTS deliveries_dead ON deliveries (target, id) WHERE status = 'dead';
ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_event_id_fkey;
ALTER TABLE attempts DROP CONSTRAINT IF EXISTS attempts_delivery_id_fkey;
`,
	},
	{
		// An attempt took an entry in three b-trees: its primary key, attempts_delivery and
		// attempts_started. No statement reads an attempt by its id alone: they are read by delivery
		// (ATTEMPTS: delivery_id, attempt, id), by time and by target. One unique index of
		// (delivery_id, attempt, id) serves the delivery's attempts in the order they are listed and
		// the pruning, and is the table's replica identity in place of the primary key (logical
		// replication still sees every attempt's update or delete). Identity ids stay unique and
		// increasing without the key. No row is read or written but by the index build, under the
		// migration's lock: a store with a backlog keeps it.
		version: 12,
		name: 'attempts: the delivery index is unique and the replica identity; no primary-key index',
		sql: `
DROP INDEX IF EXISTS attempts_delivery;
CREATE UNIQUE INDEX attempts_delivery ON attempts (delivery_id, attempt, id);
ALTER TABLE attempts REPLICA IDENTITY USING INDEX attempts_delivery;
ALTER TABLE attempts DROP CONSTRAINT IF EXISTS attempts_pkey;
`,
	},
];

/** Any constant: the advisory lock that serialises migrations of instances starting together. */
const MIGRATION_LOCK = 0x70617972; // 'payr'

/**
 * Brings the schema to the newest version; returns the versions applied. Refuses a database
 * migrated by a newer relay (its schema may not fit this code).
 */
export async function migrate(
	client: PoolClient,
	migrations: readonly Migration[] = PG_MIGRATIONS,
): Promise<number[]> {
	await client.query('BEGIN');
	try {
		await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
		await client.query(
			`CREATE TABLE IF NOT EXISTS relay_schema_migrations (
				version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
		);
		const { rows } = await client.query<{ v: number | null }>(
			'SELECT MAX(version) AS v FROM relay_schema_migrations',
		);
		const current = rows[0]?.v ?? 0;
		const newest = migrations.at(-1)?.version ?? 0;
		if (current > newest) {
			throw new Error(
				`the database schema is at version ${current}, newer than this relay knows (${newest}); upgrade the relay`,
			);
		}
		const applied: number[] = [];
		for (const m of migrations) {
			if (m.version <= current) continue;
			if (m.sql !== '') await client.query(m.sql);
			await m.rewrite?.(client);
			await client.query('INSERT INTO relay_schema_migrations (version, name) VALUES ($1, $2)', [
				m.version,
				m.name,
			]);
			applied.push(m.version);
		}
		await client.query('COMMIT');
		return applied;
	} catch (error) {
		await client.query('ROLLBACK').catch(() => {});
		throw error;
	}
}
