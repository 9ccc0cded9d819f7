// What each stored and delivered postback writes, counted rather than timed (a timing is the
// machine's load; these counts are not): `npm run bench:store-writes` (BENCH_ROOT: another
// checkout's compiled relay, for a before/after in one sitting). Through the store's own methods,
// WRITES_N (10,000) postbacks of one target in two phases: stored leased to the forwarder and
// delivered (the path with free delivery slots), and stored pending, claimed and delivered (a
// backlog).
// - PostgreSQL: the WAL records of this database alone (pg_walinspect, each record attributed to
//   the relation of its first block; the commits of its transactions apart), by relation, with the
//   bytes of full-page images apart (a CHECKPOINT before each phase: every page first written in the
//   phase has one); then the tables' and indexes' sizes.
// - SQLite: the bytes the process wrote (/proc/self/io wchar: the WAL frames, the checkpoints into
//   the file) and the file's pages.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import type { ClaimedDelivery, DeliveryResult, NewEvent, Store } from '../src/store/types.ts';
import { ROOT, compiled, createDatabase, signedBody } from './common.ts';

const { PostgresStore } = (await import(
	compiled('src/store-postgres/store.js')
)) as typeof import('../src/store-postgres/store.ts');
const { SqliteStore } = (await import(
	compiled('src/store-sqlite/store.js')
)) as typeof import('../src/store-sqlite/store.ts');

const N = Number(process.env.WRITES_N ?? 10_000);
const TARGET = 'http://127.0.0.1:9/webhook/paypalych';
const OWNER = 'bench-writes';
/** Postbacks stored at once (the group commit's batches), and results recorded at once. */
const CHUNK = 64;
const RESULTS = 16;
const SLOT = `relay_bench_writes_${process.pid}`;

let serial = 0;
function event(lease: boolean): NewEvent {
	const trsId = `W-${process.pid}-${serial++}-${Math.random().toString(36).slice(2, 10)}`;
	const body = signedBody(trsId);
	const fields = Object.fromEntries(new URLSearchParams(body));
	const now = Date.now();
	return {
		kind: 'payment',
		dedupeKey: `payment:${trsId}:SUCCESS:10000:order-${trsId}`,
		contentType: 'application/x-www-form-urlencoded',
		body,
		fields,
		receivedAt: now,
		targets: [TARGET],
		pairLimit: { max: 1_000_000, since: now - 3_600_000 },
		twinCheck: trsId,
		...(lease ? { lease: { owner: OWNER, until: now + 60_000 } } : {}),
	};
}

const delivered = (d: ClaimedDelivery): DeliveryResult => {
	const now = Date.now();
	return {
		id: d.id,
		outcome: 'delivered',
		owner: OWNER,
		httpStatus: 200,
		now,
		timing: { attempt: d.attempts, startedAt: now - 3, durationMs: 3, receipt: 'accepted' },
	};
};

async function deliver(store: Store, claimed: ClaimedDelivery[]): Promise<void> {
	for (let i = 0; i < claimed.length; i += RESULTS)
		await store.recordResults(claimed.slice(i, i + RESULTS).map(delivered));
}

/** `n` postbacks stored leased and delivered (`leased`), or stored pending, claimed, delivered. */
async function phase(store: Store, n: number, leased: boolean): Promise<void> {
	for (let done = 0; done < n; done += CHUNK) {
		const batch = Array.from({ length: Math.min(CHUNK, n - done) }, () => event(leased));
		const stored = await Promise.all(batch.map((e) => store.insertEvent(e)));
		if (leased) {
			await deliver(
				store,
				stored.flatMap((r) => r.claimed ?? []),
			);
			continue;
		}
		for (;;) {
			const claimed = await store.claimDue(Date.now(), RESULTS, 60_000, OWNER);
			if (claimed.length === 0) break;
			await deliver(store, claimed);
		}
	}
}

interface WalRecord {
	xid: string;
	resource_manager: string;
	record_type: string;
	record_length: number;
	fpi_length: number;
	block_ref: string | null;
}

/** This database's WAL between two positions: records and bytes per relation, per postback. */
async function walOf(c: pg.Client, from: string, to: string, n: number): Promise<string[]> {
	const oid = (
		await c.query<{ oid: number }>('SELECT oid FROM pg_database WHERE datname = current_database()')
	).rows[0].oid;
	const names = new Map(
		(
			await c.query<{ f: string; name: string }>(
				'SELECT relfilenode::text AS f, relname AS name FROM pg_class WHERE relfilenode <> 0',
			)
		).rows.map((r) => [r.f, r.name]),
	);
	const { rows } = await c.query<WalRecord>(
		'SELECT xid::text, resource_manager, record_type, record_length, fpi_length, block_ref FROM pg_get_wal_records_info($1, $2)',
		[from, to],
	);
	const ours = new RegExp(`rel \\d+/${oid}/(\\d+)`);
	const xids = new Set<string>();
	const by = new Map<string, { records: number; bytes: number; fpi: number }>();
	const add = (key: string, r: WalRecord) => {
		const s = by.get(key) ?? { records: 0, bytes: 0, fpi: 0 };
		s.records += 1;
		s.bytes += r.record_length;
		s.fpi += r.fpi_length;
		by.set(key, s);
	};
	for (const r of rows) {
		const m = r.block_ref === null ? null : ours.exec(r.block_ref);
		if (!m) continue;
		if (r.xid !== '0') xids.add(r.xid);
		add(names.get(m[1]) ?? `relfilenode ${m[1]}`, r);
	}
	for (const r of rows)
		if (r.resource_manager === 'Transaction' && xids.has(r.xid)) add('(commits)', r);
	const total = { records: 0, bytes: 0, fpi: 0 };
	const lines = [...by]
		.sort(([a], [b]) => a.localeCompare(b))
		.map(([name, s]) => {
			total.records += s.records;
			total.bytes += s.bytes;
			total.fpi += s.fpi;
			return `    ${name.padEnd(28)} ${(s.records / n).toFixed(2).padStart(6)} records ${(s.bytes / n).toFixed(0).padStart(6)} bytes (${(s.fpi / n).toFixed(0)} of them full pages)`;
		});
	lines.push(
		`    ${'all'.padEnd(28)} ${(total.records / n).toFixed(2).padStart(6)} records ${(total.bytes / n).toFixed(0).padStart(6)} bytes (${(total.fpi / n).toFixed(0)} of them full pages), ${((total.bytes - total.fpi) / n).toFixed(0)} without them`,
	);
	return lines;
}

async function postgres(): Promise<void> {
	const db = await createDatabase();
	const store = await PostgresStore.open(db.url);
	const c = new pg.Client({ connectionString: db.url });
	await c.connect();
	try {
		await c.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
		// Keeps the WAL of the phases until it is read (a checkpoint would recycle it).
		await c.query('SELECT pg_create_physical_replication_slot($1, true)', [SLOT]);
		await phase(store, 500, true);
		for (const leased of [true, false]) {
			await c.query('CHECKPOINT');
			const from = (await c.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l')).rows[0]
				.l;
			await phase(store, N, leased);
			const to = (await c.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l;
			// A durable commit after `to`: the WAL flushed past the results' unsynced commits.
			await c.query(
				'INSERT INTO heartbeat (id, at) VALUES (2, 0) ON CONFLICT (id) DO UPDATE SET at = 0',
			);
			console.log(
				`PostgreSQL, ${leased ? 'stored leased and delivered' : 'stored pending, claimed and delivered'}: WAL per postback`,
			);
			for (const line of await walOf(c, from, to, N)) console.log(line);
		}
		await new Promise((r) => setTimeout(r, 1_500)); // the store's connections flush their statistics
		const updates = await c.query<{ name: string; upd: string; hot: string }>(
			`SELECT relname AS name, n_tup_upd::text AS upd, n_tup_hot_upd::text AS hot FROM pg_stat_user_tables
			WHERE relname IN ('events', 'deliveries', 'attempts') ORDER BY relname`,
		);
		for (const r of updates.rows)
			console.log(
				`PostgreSQL: ${r.name} updated ${r.upd} times, ${r.hot} of them HOT (no index entry)`,
			);
		const { rows } = await c.query<{ name: string; bytes: string }>(
			`SELECT c.relname AS name, pg_relation_size(c.oid)::text AS bytes FROM pg_class c
			WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'i')
				AND c.relname ~ '^(events|deliveries|attempts)' ORDER BY c.relname`,
		);
		const all = 2 * N + 500;
		console.log(`PostgreSQL: bytes per 10,000 postbacks (${all} stored)`);
		for (const r of rows)
			console.log(
				`    ${r.name.padEnd(28)} ${((Number(r.bytes) * 10_000) / all / 1024).toFixed(0).padStart(7)} KiB`,
			);
	} finally {
		await c.query('SELECT pg_drop_replication_slot($1)', [SLOT]).catch(() => {});
		await c.end();
		await store.close();
		await db.drop();
	}
}

const written = () => Number(/wchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'))?.[1]);

async function sqlite(): Promise<void> {
	const dir = mkdtempSync(join(tmpdir(), 'relay-writes-'));
	const store = await SqliteStore.open(join(dir, 'relay.sqlite'));
	try {
		await phase(store, 500, true);
		for (const leased of [true, false]) {
			const before = written();
			await phase(store, N, leased);
			const bytes = written() - before;
			console.log(
				`SQLite, ${leased ? 'stored leased and delivered' : 'stored pending, claimed and delivered'}: ${(bytes / N).toFixed(0)} bytes written per postback`,
			);
		}
	} finally {
		await store.close();
	}
	const probe = new DatabaseSync(join(dir, 'relay.sqlite'), { readOnly: true });
	try {
		const pages = Number(
			(probe.prepare('PRAGMA page_count').get() as { page_count: number }).page_count,
		);
		const size = Number(
			(probe.prepare('PRAGMA page_size').get() as { page_size: number }).page_size,
		);
		const per10k = (bytes: number) => ((bytes * 10_000) / (2 * N + 500) / 1024).toFixed(0);
		console.log(`SQLite: the file ${per10k(pages * size)} KiB per 10,000 postbacks`);
		try {
			const rows = probe
				.prepare(
					"SELECT name, SUM(pgsize) AS bytes FROM dbstat WHERE name GLOB 'events*' OR name GLOB 'deliveries*' OR name GLOB 'attempts*' OR name GLOB 'sqlite_autoindex_events*' GROUP BY name ORDER BY name",
				)
				.all() as Array<{ name: string; bytes: number }>;
			for (const r of rows)
				console.log(`    ${r.name.padEnd(28)} ${per10k(Number(r.bytes)).padStart(7)} KiB`);
		} catch {
			console.log('    (no dbstat in this SQLite: no sizes per table and index)');
		}
	} finally {
		probe.close();
		rmSync(dir, { recursive: true, force: true });
	}
}

console.log(
	`store writes of ${ROOT}, ${N} postbacks a phase; load average ${loadavg()
		.map((l) => l.toFixed(2))
		.join(' ')}`,
);
const only = process.env.WRITES_ONLY;
if (only !== 'sqlite') await postgres();
if (only !== 'postgres') await sqlite();
