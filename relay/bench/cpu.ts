// Where the CPU went during a benchmark run, from /proc (Linux): how busy the machine was, and the
// CPU time of the servers under test and of PostgreSQL, per request. /proc counts in clock ticks
// of 10 ms (USER_HZ 100), so a run of some thousands of requests resolves to about 1 µs/request.
import { readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';

const TICK_MS = 10;

/** A reading of the counters, in ticks. */
export interface CpuSample {
	machineBusy: number;
	machineTotal: number;
	servers: number;
	/** The servers' main threads alone (a relay's HTTP thread; its writer and GC threads apart). */
	main: number;
	postgres: number;
}

/** CPU per request between two samples, in µs; busyPercent of the whole machine. */
export interface CpuUse {
	busyPercent: number;
	serversUs: number;
	/** The servers' main threads: the relay's HTTP thread. */
	mainUs: number;
	postgresUs: number;
}

function machineTicks(): { busy: number; total: number } {
	const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
	const n = fields.map(Number);
	const idle = n[3] + (n[4] ?? 0);
	const total = n.reduce((a, b) => a + b, 0);
	return { busy: total - idle, total };
}

/**
 * Fields of /proc/<pid>/stat after the command name: [0] state, [1] ppid, [11] utime, [12] stime,
 * [13] cutime, [14] cstime (ended children reaped), [19] start time.
 */
function statFields(pid: number): string[] | undefined {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
		return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	} catch {
		return undefined; // gone
	}
}

/** A process's own CPU, all its threads (worker threads too, those that ended included). */
function processTicks(pid: number | undefined, withReapedChildren = false): number {
	const f = pid ? statFields(pid) : undefined;
	if (!f) return 0;
	const own = Number(f[11]) + Number(f[12]);
	return withReapedChildren ? own + Number(f[13]) + Number(f[14]) : own;
}

/** The CPU of a process's main thread alone (/proc/<pid>/task/<pid>: the thread whose id is the pid's). */
function mainThreadTicks(pid: number | undefined): number {
	if (!pid) return 0;
	try {
		const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
		const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return Number(f[11]) + Number(f[12]);
	} catch {
		return 0;
	}
}

export function parentPid(pid: number): number | undefined {
	const f = statFields(pid);
	return f ? Number(f[1]) : undefined;
}

export function commandName(pid: number): string | undefined {
	try {
		return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
	} catch {
		return undefined;
	}
}

let postmaster: number | undefined;
let ownDatabases = '';
/**
 * CPU ticks of the PostgreSQL processes that count, as last read, by pid and start time (the
 * ended ones stay).
 */
const seen = new Map<string, number>();

/**
 * Counts PostgreSQL as the server whose postmaster is `pid`, and of its processes only the
 * postmaster, its background processes (WAL writer, checkpointer…) and the backends and
 * autovacuum workers of the databases whose names start with `databases`: the benchmark's own.
 * Other databases' backends on a shared server (other people's tests) and other servers on the
 * machine are left out. The processes are read every 250 ms, so that a backend that ends during a
 * run still counts, up to its last reading. Without a postmaster (the server is not on this
 * machine), every process called postgres counts, with the ended children each has reaped.
 */
export function watchPostgresServer(pid: number | undefined, databases: string): void {
	postmaster = pid;
	ownDatabases = databases;
	if (pid !== undefined) setInterval(readPostgres, 250).unref();
}

function childrenOf(pid: number): number[] {
	try {
		return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').map(Number);
	} catch {
		return readdirSync('/proc')
			.filter((entry) => /^\d+$/.test(entry) && parentPid(Number(entry)) === pid)
			.map(Number);
	}
}

/** The title ps shows: "postgres: 15/main: postgres relay_bench_… 127.0.0.1(5000) idle". */
function title(pid: number): string {
	try {
		return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
	} catch {
		return '';
	}
}

function readPostgres(): void {
	if (postmaster === undefined) return;
	for (const pid of [postmaster, ...childrenOf(postmaster)]) {
		const t = title(pid);
		// A client backend ("host(port)" or "[local]") or an autovacuum worker of another database.
		const others = /\(\d+\)|\[local\]|autovacuum worker/.test(t) && !t.includes(ownDatabases);
		const f = statFields(pid);
		if (f && !others) seen.set(`${pid}:${f[19]}`, Number(f[11]) + Number(f[12]));
	}
}

function postgresTicks(): number {
	if (postmaster !== undefined) {
		readPostgres();
		return [...seen.values()].reduce((a, b) => a + b, 0);
	}
	let sum = 0;
	for (const entry of readdirSync('/proc')) {
		if (/^\d+$/.test(entry) && commandName(Number(entry)) === 'postgres')
			sum += processTicks(Number(entry), true);
	}
	return sum;
}

export function sampleCpu(servers: Array<number | undefined>): CpuSample {
	const machine = machineTicks();
	return {
		machineBusy: machine.busy,
		machineTotal: machine.total,
		servers: servers.reduce<number>((a, pid) => a + processTicks(pid), 0),
		main: servers.reduce<number>((a, pid) => a + mainThreadTicks(pid), 0),
		postgres: postgresTicks(),
	};
}

export function cpuPerRequest(from: CpuSample, to: CpuSample, requests: number): CpuUse {
	const us = (ticks: number) => (ticks * TICK_MS * 1000) / Math.max(1, requests);
	return {
		busyPercent:
			(100 * (to.machineBusy - from.machineBusy)) /
			Math.max(1, to.machineTotal - from.machineTotal),
		serversUs: us(to.servers - from.servers),
		mainUs: us(to.main - from.main),
		postgresUs: us(to.postgres - from.postgres),
	};
}

/** "machine 97% busy (2 cores); relay 140 µs/request (main thread 80 µs); PostgreSQL 3 µs/request" */
export function describeCpu(use: CpuUse, servers: string): string {
	const us = (x: number) => Math.round(x).toLocaleString('en-US');
	return (
		`machine ${use.busyPercent.toFixed(0)}% busy (${cpus().length} cores); ` +
		`${servers} ${us(use.serversUs)} µs/request (main thread ${us(use.mainUs)} µs); ` +
		`PostgreSQL ${us(use.postgresUs)} µs/request`
	);
}
