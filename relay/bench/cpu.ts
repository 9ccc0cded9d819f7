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
	postgres: number;
}

/** CPU per request between two samples, in µs; busyPercent of the whole machine. */
export interface CpuUse {
	busyPercent: number;
	serversUs: number;
	postgresUs: number;
}

function machineTicks(): { busy: number; total: number } {
	const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
	const n = fields.map(Number);
	const idle = n[3] + (n[4] ?? 0);
	const total = n.reduce((a, b) => a + b, 0);
	return { busy: total - idle, total };
}

/** Fields of /proc/<pid>/stat after the command name: [0] state, [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime. */
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

/**
 * Counts PostgreSQL as the server whose postmaster is `pid` (with its backends, and the backends
 * that ended, reaped into the postmaster's children's time) rather than every process called
 * postgres on the machine (other servers, such as the throwaway ones of the crash test).
 */
export function watchPostgresServer(pid: number | undefined): void {
	postmaster = pid;
}

function postgresTicks(): number {
	let sum = 0;
	for (const entry of readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		const pid = Number(entry);
		if (postmaster === undefined) {
			if (commandName(pid) === 'postgres') sum += processTicks(pid, true);
		} else if (pid === postmaster) {
			sum += processTicks(pid, true);
		} else if (parentPid(pid) === postmaster) {
			sum += processTicks(pid);
		}
	}
	return sum;
}

export function sampleCpu(servers: Array<number | undefined>): CpuSample {
	const machine = machineTicks();
	return {
		machineBusy: machine.busy,
		machineTotal: machine.total,
		servers: servers.reduce<number>((a, pid) => a + processTicks(pid), 0),
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
		postgresUs: us(to.postgres - from.postgres),
	};
}

/** "machine 97% busy (2 cores); relay 140 µs/request; PostgreSQL 3 µs/request" */
export function describeCpu(use: CpuUse, servers: string): string {
	const us = (x: number) => Math.round(x).toLocaleString('en-US');
	return (
		`machine ${use.busyPercent.toFixed(0)}% busy (${cpus().length} cores); ` +
		`${servers} ${us(use.serversUs)} µs/request; PostgreSQL ${us(use.postgresUs)} µs/request`
	);
}
