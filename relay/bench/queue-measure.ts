// Measurement helpers of relay/bench/queue-libraries.ts: a fresh database per candidate, where the
// CPU went during a phase (this process, the PostgreSQL processes) and which statements ran
// (pg_stat_statements of that database only).
import { readFileSync, readdirSync } from 'node:fs';
import pg from 'pg';
import { processTicks } from './common.ts';

/** Marks the benchmark's own statements (progress checks) so the statement table leaves them out. */
export const BENCH_MARK = '/* queue-bench */';

/** A fresh database on the server of `adminUrl` (with pg_stat_statements), and how to drop it. */
export async function createDatabase(
	adminUrl: string,
	label: string,
): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
	const name = `queue_bench_${label}_${process.pid}_${Date.now()}`;
	const admin = async (url: string, sql: string) => {
		const client = new pg.Client({ connectionString: url });
		await client.connect();
		try {
			await client.query(sql);
		} finally {
			await client.end();
		}
	};
	await admin(adminUrl, `CREATE DATABASE ${name}`);
	const url = new URL(adminUrl);
	url.pathname = `/${name}`;
	await admin(url.href, 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
	return {
		url: url.href,
		name,
		drop: () => admin(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
	};
}

function postgresPids(): number[] {
	const pids: number[] = [];
	for (const entry of readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') pids.push(+entry);
		} catch {
			// gone
		}
	}
	return pids;
}

/** The machine's busy and total ticks (/proc/stat). */
export function machineTicks(): { busy: number; total: number } {
	const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
	const n = fields.map(Number);
	const idle = n[3] + (n[4] ?? 0);
	return { busy: n.reduce((a, b) => a + b, 0) - idle, total: n.reduce((a, b) => a + b, 0) };
}

/**
 * The CPU of PostgreSQL processes during a phase, from /proc every 200 ms: every `postgres` process
 * on the machine (as relay.bench.ts counts them), or with `database`, the backends serving that
 * database (their process title names it): the part that other load on the same server cannot
 * inflate. Counted per process, so a process that ends during the phase (another client's
 * backend) takes away nothing; it only loses its last ticks since the previous sample (the pools
 * here keep their connections through a phase). A process that starts during the phase counts whole.
 */
export class PostgresSampler {
	#title: string | undefined;
	#first = new Map<number, number>();
	#last = new Map<number, number>();
	#other = new Set<number>();
	#timer: NodeJS.Timeout | undefined;

	constructor(database?: string) {
		this.#title = database === undefined ? undefined : ` ${database} `;
		this.#scan(true);
		this.#timer = setInterval(() => this.#scan(false), 200);
	}

	#scan(initial: boolean): void {
		for (const pid of postgresPids()) {
			if (this.#other.has(pid)) continue;
			if (!this.#first.has(pid)) {
				if (this.#title !== undefined) {
					let title = '';
					try {
						title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
					} catch {
						continue;
					}
					if (!title.includes(this.#title)) {
						this.#other.add(pid);
						continue;
					}
				}
				this.#first.set(pid, initial ? processTicks(pid) : 0);
			}
			const ticks = processTicks(pid);
			if (ticks > 0) this.#last.set(pid, ticks);
		}
	}

	/** Ticks of the processes since construction. */
	stop(): number {
		clearInterval(this.#timer);
		this.#scan(false);
		let sum = 0;
		for (const [pid, first] of this.#first)
			sum += Math.max(0, (this.#last.get(pid) ?? first) - first);
		return sum;
	}
}

export interface StatementFigure {
	query: string;
	calls: number;
	execMs: number;
}

/** Forgets the statements of this database only (other databases' figures stay). */
export async function resetStatements(client: pg.Client): Promise<void> {
	await client.query(
		`SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)`,
	);
}

/** The statements run in this database since the reset, most execution time first. */
export async function readStatements(client: pg.Client): Promise<StatementFigure[]> {
	const { rows } = await client.query<{ query: string; calls: string; exec: number }>(
		`SELECT query, calls, total_exec_time AS exec FROM pg_stat_statements
		 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		   AND query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%queue-bench%'
		 ORDER BY total_exec_time DESC`,
	);
	return rows.map((r) => ({ query: r.query, calls: Number(r.calls), execMs: r.exec }));
}

export interface PhaseFigures {
	jobs: number;
	ms: number;
	/** This process: user + system, µs. */
	clientUs: number;
	/** Every postgres process on the machine, ticks of 10 ms. */
	pgTicks: number;
	/** The backends of the candidate's database, ticks of 10 ms. */
	dbTicks: number;
	/** How busy the machine was, %. */
	busy: number;
	statements: StatementFigure[];
}

/**
 * Runs one phase of `jobs` jobs and says how long it took and what it cost: this process's CPU,
 * the PostgreSQL processes' CPU, and the statements the database ran (`stats` is a client of the
 * candidate's database, used only before and after the phase).
 */
export async function measure(
	stats: pg.Client,
	database: string,
	jobs: number,
	phase: () => Promise<void>,
): Promise<PhaseFigures> {
	await resetStatements(stats);
	const all = new PostgresSampler();
	const ours = new PostgresSampler(database);
	const m0 = machineTicks();
	const c0 = process.cpuUsage();
	const t0 = performance.now();
	await phase();
	const ms = performance.now() - t0;
	const c1 = process.cpuUsage(c0);
	const m1 = machineTicks();
	const pgTicks = all.stop();
	const dbTicks = ours.stop();
	const statements = await readStatements(stats);
	return {
		jobs,
		ms,
		clientUs: c1.user + c1.system,
		pgTicks,
		dbTicks,
		busy: (100 * (m1.busy - m0.busy)) / Math.max(1, m1.total - m0.total),
		statements,
	};
}
