// Where a SQLite relay's CPU goes, thread by thread: `npm run bench:threads`, which
// builds first (BENCH_ROOT: another checkout's compiled relay). The relay of ROOT with delivery
// paused, 3 s of autocannon to warm it up, then THREADS_SECONDS (10) s measured: each thread's CPU
// per request from /proc/<pid>/task (user + system, and system alone), so that the HTTP thread,
// the SQLite writer thread, V8's GC threads and libuv's pool are told apart without a profiler
// (a profile counts wall time: a thread descheduled on a busy machine shows as busy).
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, TICK_MS, fixedLoad, relayEnv, stopServer } from './common.ts';
import { spawnRelay } from './servers.ts';

const SECONDS = Number(process.env.THREADS_SECONDS ?? 10);

/** CPU ms per thread name (the main thread apart), total and system. */
function threads(pid: number): Map<string, { all: number; sys: number }> {
	const out = new Map<string, { all: number; sys: number }>();
	for (const task of readdirSync(`/proc/${pid}/task`)) {
		const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
		const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
		const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		const key = task === String(pid) ? 'HTTP thread (main)' : name;
		const sum = out.get(key) ?? { all: 0, sys: 0 };
		sum.all += (Number(after[11]) + Number(after[12])) * TICK_MS;
		sum.sys += Number(after[12]) * TICK_MS;
		out.set(key, sum);
	}
	return out;
}

const dir = mkdtempSync(join(tmpdir(), 'relay-threads-'));
const relay = await spawnRelay('threads', relayEnv(dir, 'http://127.0.0.1:9/unused'), {
	paused: true,
	logFile: join(dir, 'relay.log'),
});
try {
	const pid = relay.proc.pid!;
	await fixedLoad(relay.url, 0, 3);
	const before = threads(pid);
	const run = await fixedLoad(relay.url, 0, SECONDS);
	const after = threads(pid);
	const n = run.requests.total;
	const us = (ms: number) => ((ms * 1000) / n).toFixed(1);
	let total = 0;
	const rows: string[] = [];
	for (const [name, { all, sys }] of after) {
		const was = before.get(name) ?? { all: 0, sys: 0 };
		total += all - was.all;
		if (all > was.all)
			rows.push(`  ${name.padEnd(20)} ${us(all - was.all)} µs (system ${us(sys - was.sys)} µs)`);
	}
	console.log(
		`${ROOT}, SQLite, delivery paused, LOG_LEVEL=${process.env.LOG_LEVEL ?? 'info'}: ` +
			`${n} requests in ${SECONDS} s (${Math.round(n / SECONDS)}/s), relay ${us(total)} µs/request, ` +
			`load average ${loadavg()
				.map((x) => x.toFixed(2))
				.join(' ')}`,
	);
	console.log(rows.join('\n'));
} finally {
	await stopServer(relay.proc);
	rmSync(dir, { recursive: true, force: true });
}
