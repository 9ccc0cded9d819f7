// The relay benchmark's relays, fast target and PostgreSQL server, on top of common.ts (shared
// with the profiler). See relay.bench.ts.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { PG_URL, ROOT, spawnServer } from './common.ts';
import { commandName, parentPid } from './cpu.ts';

export type Server = Awaited<ReturnType<typeof spawnServer>>;

/** BENCH_CPU_PROF=<dir>: every relay is profiled (node --cpu-prof) into <dir>/<run name>. */
export const CPU_PROF = process.env.BENCH_CPU_PROF
	? resolve(process.env.BENCH_CPU_PROF)
	: undefined;
/** The names of the databases common.ts's createDatabase makes in this process start with this. */
export const DATABASE_PREFIX = `relay_bench_${process.pid}_`;

const RELAY_BIN = join(ROOT, 'relay/dist/relay/src/bin.js');
/** The relay as its bin starts it, built without a forwarder with BENCH_DELIVERY=paused. */
const RELAY_SERVER = join(ROOT, 'relay/dist/relay/bench/relay-server.js');

/** A relay of the run `run` (delivering, or with delivery paused), profiled with BENCH_CPU_PROF. */
export function spawnRelay(
	run: string,
	env: Record<string, string>,
	options: { paused?: boolean; logFile?: string } = {},
): Promise<Server> {
	return spawnServer(
		options.paused ? RELAY_SERVER : RELAY_BIN,
		options.paused ? { ...env, BENCH_DELIVERY: 'paused' } : env,
		options.logFile,
		CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(CPU_PROF, run)}`] : [],
	);
}

/** The fast local target (the stand-in for n8n), and the count of deliveries it received. */
export async function startTarget(): Promise<{
	server: Server;
	webhook: string;
	received: () => Promise<number>;
}> {
	const server = await spawnServer(join(ROOT, 'relay/bench/fast-target.ts'), {});
	const received = async () =>
		((await (await fetch(`${server.url}/count`)).json()) as { received: number }).received;
	return { server, webhook: `${server.url}/webhook/paypalych`, received };
}

/** The relay's last words ("store closing"): its commits, store calls and fsynced commits. */
export function groupCommit(logFile: string): string {
	const line = readFileSync(logFile, 'utf8')
		.split('\n')
		.filter((l) => l.includes('"store closing"'))
		.pop();
	if (!line) return 'group commit: no "store closing" line in the log';
	const { commits, calls, syncedCommits } = (
		JSON.parse(line) as { store: { commits: number; calls: number; syncedCommits: number } }
	).store;
	return `group commit: ${calls} store calls in ${commits} commits (${(calls / commits).toFixed(1)} per commit), ${syncedCommits} of them fsynced`;
}

/**
 * Whether the PostgreSQL server of BENCH_PG_URL answers, and its postmaster's pid when it runs on
 * this machine (the parent of the backend serving this connection, a process called postgres).
 */
export async function findPostgres(): Promise<{ reachable: boolean; postmaster?: number }> {
	const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2_000 });
	try {
		await client.connect();
	} catch {
		return { reachable: false };
	}
	try {
		const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
		const parent = parentPid(rows[0].pid);
		const local = parent !== undefined && commandName(parent) === 'postgres';
		return { reachable: true, postmaster: local ? parent : undefined };
	} finally {
		await client.end();
	}
}
