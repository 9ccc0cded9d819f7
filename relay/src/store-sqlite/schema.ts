import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/**
 * Versioned migrations of the SQLite file, numbered by PRAGMA user_version (index + 1). Version 1
 * is the schema files had before versions existed; every statement says IF NOT EXISTS, so a file
 * from before the versions simply moves up.
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
	`
CREATE TABLE IF NOT EXISTS events (
	id TEXT PRIMARY KEY,
	kind TEXT NOT NULL,
	dedupe_key TEXT UNIQUE,
	content_type TEXT NOT NULL,
	body TEXT NOT NULL,
	fields_json TEXT NOT NULL,
	received_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS events_received ON events (received_at);
CREATE TABLE IF NOT EXISTS deliveries (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	event_id TEXT NOT NULL REFERENCES events (id),
	target TEXT NOT NULL,
	status TEXT NOT NULL,
	attempts INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	budget_start INTEGER NOT NULL,
	next_attempt_at INTEGER NOT NULL,
	lease_until INTEGER,
	lease_owner TEXT,
	last_status INTEGER,
	last_error TEXT,
	delivered_at INTEGER
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (next_attempt_at) WHERE status IN ('pending', 'delivering');
CREATE INDEX IF NOT EXISTS deliveries_event ON deliveries (event_id);
CREATE INDEX IF NOT EXISTS deliveries_status ON deliveries (status, created_at);
`,
	`
CREATE INDEX IF NOT EXISTS deliveries_target ON deliveries (target, status);
CREATE INDEX IF NOT EXISTS deliveries_delivered ON deliveries (delivered_at) WHERE delivered_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_trs_id ON events (json_extract(fields_json, '$.TrsId'));
CREATE INDEX IF NOT EXISTS events_inv_id ON events (json_extract(fields_json, '$.InvId'));
CREATE TABLE IF NOT EXISTS attempts (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	delivery_id INTEGER NOT NULL REFERENCES deliveries (id),
	target TEXT NOT NULL,
	attempt INTEGER NOT NULL,
	started_at INTEGER NOT NULL,
	duration_ms INTEGER NOT NULL,
	http_status INTEGER,
	error TEXT,
	outcome TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS attempts_delivery ON attempts (delivery_id, attempt);
CREATE INDEX IF NOT EXISTS attempts_started ON attempts (started_at);
CREATE INDEX IF NOT EXISTS attempts_target_error ON attempts (target, started_at) WHERE error IS NOT NULL;
CREATE TABLE IF NOT EXISTS heartbeat (id INTEGER PRIMARY KEY, at INTEGER NOT NULL);
`,
	// 3: console logouts that every instance and restart sees.
	`
CREATE TABLE IF NOT EXISTS console_revocations (
	session_id TEXT PRIMARY KEY,
	expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS console_revocations_expiry ON console_revocations (expires_at);
`,
	// 4: where an event came from (a postback, or the relay's catch-up), and the catch-up's marks of
	// bills it has read in a final state (see relay/src/catchup).
	`
ALTER TABLE events ADD COLUMN source TEXT NOT NULL DEFAULT 'postback';
CREATE TABLE IF NOT EXISTS catchup_marks (mark TEXT PRIMARY KEY, at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS catchup_marks_at ON catchup_marks (at);
`,
	// 5: the target's answer kept with each attempt, whether an operator asked for it, and attempt
	// numbers that go on across requeues (attempt_base: the attempts before the latest requeue).
	`
ALTER TABLE deliveries ADD COLUMN attempt_base INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN manual INTEGER NOT NULL DEFAULT 0;
ALTER TABLE deliveries ADD COLUMN last_response TEXT;
ALTER TABLE attempts ADD COLUMN origin TEXT NOT NULL DEFAULT 'scheduled';
ALTER TABLE attempts ADD COLUMN response TEXT;
`,
	// 6: each payment and payout event's signed pair (pairKeyOf), so that the per-pair limit is one
	// indexed count inside the insert (events stored before are filled in at open, see SqliteStore.open).
	`
ALTER TABLE events ADD COLUMN pair_key TEXT;
CREATE INDEX IF NOT EXISTS events_pair ON events (pair_key, received_at) WHERE pair_key IS NOT NULL;
`,
	// 7: the MULTI links the catch-up has seen pay, whatever their age, and when each was last read
	// (the catch-up reads them in rotation, least recently read first).
	`
CREATE TABLE IF NOT EXISTS catchup_links (bill_id TEXT PRIMARY KEY, read_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS catchup_links_read ON catchup_links (read_at, bill_id);
`,
	// 8: the PayPalych Trigger's receipt (X-PayPalych-Receipt) kept with each attempt, and the
	// latest one with its delivery: what the workflow did with it (accepted, duplicate, ...).
	`
ALTER TABLE deliveries ADD COLUMN last_receipt TEXT;
ALTER TABLE attempts ADD COLUMN receipt TEXT;
`,
	// 9: the one money-back identity: chargeback events keyed by kind, Id and status, and the
	// catch-up's refund and chargeback marks under the same keys (store/money-back-keys.ts). The rows
	// are rewritten by SqliteStore.open on the relay's thread (the writer thread does not load the
	// wire contract), in one transaction that also deletes this row: until then the rewrite is due.
	`
CREATE TABLE IF NOT EXISTS store_rewrites (name TEXT PRIMARY KEY);
INSERT OR IGNORE INTO store_rewrites (name) VALUES ('money-back-keys');
`,
	// 10: the merchant's balances read at each day boundary and at the first start (the statement:
	// store/balances.ts); the first one kept for a zone, day and kind stays.
	`
CREATE TABLE IF NOT EXISTS balance_snapshots (
	time_zone TEXT NOT NULL,
	day TEXT NOT NULL,
	kind TEXT NOT NULL,
	taken_at INTEGER NOT NULL,
	balances_json TEXT NOT NULL,
	PRIMARY KEY (time_zone, day, kind)
);
`,
	// 11: indexes only for the queries the relay runs (self-contained: it needs nothing of the versions
	// between 9 and it, so it keeps its meaning at any place after 9). `deliveries_status` and
	// `deliveries_target` took an entry per delivery stored and two more at every change of its
	// status; what read them was the dead list (of every target, of one target) and the oldest
	// undelivered event. The dead deliveries get a partial index of their own, which no delivery
	// enters until it dies; the pending and delivering ones are read through `deliveries_due`.
	// Indexes only: no row is read or written, a store with a backlog keeps it as it is.
	`
DROP INDEX IF EXISTS deliveries_status;
DROP INDEX IF EXISTS deliveries_target;
CREATE INDEX IF NOT EXISTS deliveries_dead ON deliveries (target, id) WHERE status = 'dead';
`,
];

/**
 * Opens (creating file and directory if needed) the store file: WAL journal, synchronous=FULL,
 * foreign keys, and the schema migrated to the newest version, each version in a transaction.
 */
export function openSqlite(path: string): DatabaseSync {
	if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
	const db = new DatabaseSync(path);
	db.exec('PRAGMA journal_mode = WAL');
	db.exec('PRAGMA synchronous = FULL');
	db.exec('PRAGMA busy_timeout = 5000');
	// 64 MiB of page cache instead of SQLite's 2 MiB: every stored event adds an entry at a random
	// place in a few indexes (dedupe key, TrsId, InvId), and with 2 MiB a store of 1,000,000 events
	// reads most of those index pages from the file again on every insert (relay/README.md,
	// performance: the growth run). The cache holds pages read, it is not allocated up front.
	db.exec('PRAGMA cache_size = -65536');
	db.exec('PRAGMA foreign_keys = ON');
	const current = Number(
		(db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version,
	);
	if (current > SQLITE_MIGRATIONS.length) {
		db.close();
		throw new Error(
			`the store file is at schema version ${current}, newer than this relay knows (${SQLITE_MIGRATIONS.length}); upgrade the relay`,
		);
	}
	for (let v = current + 1; v <= SQLITE_MIGRATIONS.length; v++) {
		db.exec('BEGIN IMMEDIATE');
		try {
			db.exec(SQLITE_MIGRATIONS[v - 1]);
			db.exec(`PRAGMA user_version = ${v}`);
			db.exec('COMMIT');
		} catch (error) {
			db.exec('ROLLBACK');
			db.close();
			throw error;
		}
	}
	return db;
}
