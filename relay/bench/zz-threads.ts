// Ad hoc: per-thread CPU of a SQLite relay (delivery paused) under autocannon, from /proc.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, fixedLoad, relayEnv, stopServer } from './common.ts';
import { spawnRelay } from './servers.ts';

const threads = (pid: number) => {
	const out = new Map<string, number>();
	for (const t of readdirSync(`/proc/${pid}/task`)) {
		const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
		const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
		const a = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		const key = `${name}${t === String(pid) ? ' (main)' : ''}`;
		out.set(key, (out.get(key) ?? 0) + (Number(a[11]) + Number(a[12])) * 10);
		out.set(`${key} sys`, (out.get(`${key} sys`) ?? 0) + Number(a[12]) * 10);
	}
	return out;
};
const dir = mkdtempSync(join(tmpdir(), 'threads-'));
const relay = await spawnRelay('sqlite-paused', relayEnv(dir, 'http://127.0.0.1:9/x'), { paused: true, logFile: join(dir, 'log') });
const pid = relay.proc.pid!;
await fixedLoad(relay.url, 0, 3); // warm up
const before = threads(pid);
const r = await fixedLoad(relay.url, 0, Number(process.env.SECS ?? 10));
const after = threads(pid);
const n = r.requests.total;
let sum = 0;
const rows: string[] = [];
for (const [k, v] of after) {
	const d = v - (before.get(k) ?? 0);
	if (!k.endsWith(' sys')) sum += d;
	if (d > 0) rows.push(`  ${k.padEnd(24)} ${((d * 1000) / n).toFixed(1)} µs`);
}
console.log(`${ROOT}: ${n} requests, ${(n / Number(process.env.SECS ?? 10)).toFixed(0)}/s, relay ${((sum * 1000) / n).toFixed(1)} µs/request`);
console.log(rows.join('\n'));
await stopServer(relay.proc);
rmSync(dir, { recursive: true, force: true });
