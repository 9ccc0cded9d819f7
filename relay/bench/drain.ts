// The drain of a backlog, shared by the drain runs and the growth run of relay.bench.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewEvent, Store } from '../src/store/types.ts';
import { relayEnv, signedBody, stopServer } from './common.ts';
import { cpuPerRequest, sampleCpu } from './cpu.ts';
import type { CpuUse } from './cpu.ts';
import { spawnRelay } from './servers.ts';

const fmt = (x: number, digits = 0) =>
	x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Drained {
	text: string;
	perSec: number;
	cpu: CpuUse;
}

export type DrainName = 'sqlite' | 'pg1' | 'pg2' | `growth-${string}`;

/** The target deliveries go to: its URL and how many it has received so far. */
export interface DrainTarget {
	webhook: string;
	received: () => Promise<number>;
}

export interface DrainOptions {
	name: DrainName;
	instances: number;
	/** The store to fill (closed before the relays start), its RELAY_DATABASE and how to drop it. */
	open: () => Promise<{ store: Store; database: string; drop: () => Promise<void> }>;
	label?: string;
	backlog: number;
	target: DrainTarget;
}

/**
 * BACKLOG deliveries committed while no relay runs, then `instances` relays started on that store
 * and timed until the target has them all: deliveries/s and CPU per delivery (relay, PostgreSQL).
 */
export async function drainBacklog({
	name,
	instances,
	open,
	label,
	backlog: BACKLOG,
	target,
}: DrainOptions): Promise<Drained> {
	const { store, database, drop } = await open();
	try {
		const fill = Date.now();
		for (let i = 0; i < BACKLOG; i += 500) {
			await Promise.all(
				Array.from({ length: Math.min(500, BACKLOG - i) }, (_, j) => {
					const body = signedBody(`D-${fill}-${i + j}`);
					const event: NewEvent = {
						kind: 'payment',
						dedupeKey: `payment:D-${fill}-${i + j}:SUCCESS`,
						contentType: 'application/x-www-form-urlencoded',
						body,
						fields: Object.fromEntries(new URLSearchParams(body)),
						receivedAt: fill,
						targets: [target.webhook],
					};
					return store.insertEvent(event);
				}),
			);
		}
		await store.close();
		const runDir = mkdtempSync(join(tmpdir(), 'relay-bench-drain-'));
		const base = await target.received();
		const started = Date.now();
		const drainers = await Promise.all(
			Array.from({ length: instances }, () =>
				spawnRelay(`drain-${name}`, relayEnv(runDir, target.webhook, { RELAY_DATABASE: database })),
			),
		);
		const pids = drainers.map((d) => d.proc.pid);
		const listening = Date.now();
		const cpu0 = sampleCpu(pids);
		while ((await target.received()) - base < BACKLOG) await sleep(20);
		const drained = Date.now();
		const cpu = cpuPerRequest(cpu0, sampleCpu(pids), BACKLOG);
		await Promise.all(drainers.map((d) => stopServer(d.proc)));
		rmSync(runDir, { recursive: true, force: true });
		const secs = (drained - listening) / 1000;
		const labels: Record<string, string> = {
			sqlite: 'SQLite',
			pg1: 'PostgreSQL, 1 instance',
			pg2: 'PostgreSQL, 2 instances',
		};
		const text =
			`${label ?? labels[name]}: ${fmt(BACKLOG)} deliveries in ${fmt(secs, 2)} s after listening (${fmt(BACKLOG / secs)} deliveries/s; ` +
			`${fmt((drained - started) / 1000, 2)} s including start-up; RELAY_CONCURRENCY ${process.env.RELAY_CONCURRENCY ?? '16 (default)'} per instance); ` +
			`relay${instances > 1 ? 's' : ''} ${fmt(cpu.serversUs)} µs, PostgreSQL ${fmt(cpu.postgresUs)} µs CPU per delivery`;
		console.log(`drain ${text}`);
		return { text, perSec: BACKLOG / secs, cpu };
	} finally {
		await drop();
	}
}
