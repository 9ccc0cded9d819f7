// The relay benchmark's child processes (relays, the bare route, the fast target) and its
// PostgreSQL databases. See relay.bench.ts.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import getPort from 'get-port';
import pg from 'pg';
import { commandName, parentPid } from './cpu.ts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TOKEN = 'bench|token-0123456789abcdefghijklmnopqrstuvwxyz';
export const PG_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** BENCH_CPU_PROF=<dir>: every relay is profiled (node --cpu-prof) into <dir>/<run name>. */
export const CPU_PROF = process.env.BENCH_CPU_PROF
	? resolve(process.env.BENCH_CPU_PROF)
	: undefined;

const RELAY_BIN = join(ROOT, 'relay/dist/relay/src/bin.js');
/** The relay as its bin starts it, built without a forwarder with BENCH_DELIVERY=paused. */
const RELAY_SERVER = join(ROOT, 'relay/dist/relay/bench/relay-server.js');

export interface Server {
	proc: ChildProcess;
	url: string;
}

/** Starts a server script as a child on a free port and waits until it answers /healthz. */
export async function spawnServer(
	script: string,
	env: Record<string, string>,
	options: { logFile?: string; nodeArgs?: string[] } = {},
): Promise<Server> {
	const port = await getPort({ host: '127.0.0.1' });
	const url = `http://127.0.0.1:${port}`;
	const out = options.logFile ? openSync(options.logFile, 'a') : 'ignore';
	const proc = spawn(process.execPath, [...(options.nodeArgs ?? []), script], {
		cwd: ROOT,
		env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
		stdio: ['ignore', out, 'inherit'],
	});
	if (typeof out === 'number') closeSync(out);
	let exited = false;
	proc.once('exit', () => (exited = true));
	for (;;) {
		if (exited) throw new Error(`${script} exited before listening`);
		try {
			const res = await fetch(`${url}/healthz`, { method: 'GET' });
			await res.arrayBuffer();
			if (res.ok) return { proc, url };
		} catch {
			// not listening yet
		}
		await new Promise((r) => setTimeout(r, 50));
	}
}

/** SIGTERM and the exit (a relay closes gracefully, and profiled, writes its profiles). */
export async function stopServer(proc: ChildProcess): Promise<void> {
	if (proc.exitCode !== null || proc.signalCode !== null) return;
	const exited = new Promise((r) => proc.once('exit', r));
	proc.kill('SIGTERM');
	await exited;
}

export function relayEnv(
	dir: string,
	target: string,
	extra: Record<string, string> = {},
): Record<string, string> {
	return {
		HOST: '127.0.0.1',
		PAYPALYCH_API_TOKEN: TOKEN,
		RELAY_PAYMENT_TARGETS: target,
		RELAY_DATABASE: join(dir, 'relay.sqlite'),
		RELAY_ADMIN_TOKEN: 'bench-admin-token-0123456789',
		...(process.env.RELAY_CONCURRENCY ? { RELAY_CONCURRENCY: process.env.RELAY_CONCURRENCY } : {}),
		LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
		...extra,
	};
}

/** A relay of the run `run` (delivering, or with delivery paused), profiled with BENCH_CPU_PROF. */
export function spawnRelay(
	run: string,
	env: Record<string, string>,
	options: { paused?: boolean; logFile?: string } = {},
): Promise<Server> {
	return spawnServer(
		options.paused ? RELAY_SERVER : RELAY_BIN,
		options.paused ? { ...env, BENCH_DELIVERY: 'paused' } : env,
		{
			logFile: options.logFile,
			nodeArgs: CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(CPU_PROF, run)}`] : [],
		},
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

/** The names of the databases this benchmark creates start with this. */
export const DATABASE_PREFIX = `relay_bench_${process.pid}_`;

/** A fresh database on the PostgreSQL server of BENCH_PG_URL, and how to drop it. */
export async function createDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
	const name = `${DATABASE_PREFIX}${Date.now()}`;
	const admin = async (sql: string) => {
		const client = new pg.Client({ connectionString: PG_URL });
		await client.connect();
		try {
			await client.query(sql);
		} finally {
			await client.end();
		}
	};
	await admin(`CREATE DATABASE ${name}`);
	const url = new URL(PG_URL);
	url.pathname = `/${name}`;
	return { url: url.href, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
