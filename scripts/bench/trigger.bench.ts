// npm run bench:trigger: what the PayPalych Trigger costs inside a real n8n, against what a
// merchant would build without it, under n8n's default expression engine and under its lazy
// set-up, in one sitting. One n8n 2.41 per engine set-up (the end-to-end suite's install, SQLite,
// regular mode, execution data not saved: trigger-stand.ts), each with the same published
// workflows: n8n's own Webhook node with a No-Op (no check), the hand-built confirmation a careful
// merchant builds from n8n's own nodes (Webhook answering after its last node, Crypto, IFs, HTTP
// Requests; checked first to stop a forged signature), and the PayPalych Trigger (its default
// version) with confirmation off and on. The service is a stand-in answering at once
// (stand-in-service.ts), in the live service's shapes, two ways: the payment's answer without its
// order ID (the InvId check then asks the bill too: two calls, and the hand-built flow has two
// HTTP Requests) and with it (one call, one HTTP Request). Both are reported.
//
// Each case runs at saturation: 8 clients in a closed loop for BENCH_SECONDS, BENCH_ROUNDS rounds
// interleaved across the cases and the engines (each case measured on every engine back to back),
// the best round kept (n8n on SQLite stalls now and then). Executions/s counts a run until n8n is
// idle again (the trigger answers before its execution runs; the Webhook workflows after theirs);
// CPU per execution is n8n's (all its processes, /proc) over the same span. It prints a table, the
// ratios per engine, and one `met` / `NOT met` line per target.
//
// `--quick` (BENCH_QUICK=1): 3-second runs, one round, no memory-full cases: for development.
// BENCH_ENGINES ("vm,lazy"; "legacy" too), BENCH_CASES (e.g. "webhook,off"; default all), BENCH_SECONDS (8), BENCH_ROUNDS (2), BENCH_RATES
// ("" : fixed rates after saturation, e.g. "20"), BENCH_ROOT (the checkout whose built package n8n
// loads: a before/after), BENCH_TRIGGER_VERSION (the trigger's typeVersion; default its default).
import { execFileSync } from 'node:child_process';
import { Pool } from 'undici';
import { openLoop, ROOT } from '../../relay/bench/common.ts';
import { ensureN8nInstalled, type N8n } from '../harness/n8n.ts';
import {
	ENGINE_ENV,
	ENGINE_LABEL,
	n8nCounters,
	signedPostback,
	startStand,
	staticDataBytes,
	type Engine,
	type Stand,
} from './trigger-stand.ts';
import {
	CASES,
	printRatios,
	printTable,
	printTargets,
	type Case,
	type Row,
} from './trigger-table.ts';

const QUICK = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? (QUICK ? 3 : 8));
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 2)));
const RATES = (process.env.BENCH_RATES ?? '').split(',').map(Number).filter(Boolean);
const ENGINES = (process.env.BENCH_ENGINES ?? 'vm,lazy')
	.split(',')
	.map((e) => e.trim())
	.filter((e): e is Engine => e in ENGINE_ENV);
const CLIENTS = 8;
const TICK_MS = 10;
/** The longest wait for n8n to finish the executions of a run after its load. */
const DRAIN_MAX_S = 30;

/** Each case's postbacks: new ones every time (unique TrsId), of the case's service answer. */
function bodiesOf(c: Case, engine: Engine, tag: string): () => string {
	let n = 0;
	const prefix = c.orderShown ? 'S' : 'P';
	return () => signedPostback(`${prefix}${process.pid}-${engine}-${tag}-${c.name}-${n++}`);
}

interface LoadResult {
	ok: number;
	seconds: number;
	p50: number;
	p99: number;
	failed: number;
}

async function measure(
	stand: Stand,
	n8n: N8n,
	c: Case,
	load: () => Promise<LoadResult>,
): Promise<Omit<Row, 'case' | 'engine' | 'load'>> {
	const before = n8nCounters(n8n.pid);
	const callsBefore = await stand.standIn.calls();
	const result = await load();
	// What a sampler that stops with the load sees: answers/s and CPU within the load only.
	const atLoadEnd = n8nCounters(n8n.pid);
	// The trigger answers before n8n runs its execution: executions may still be running when the
	// load ends. Their CPU and time count too: the run lasts until n8n is idle again.
	const drained = await untilIdle(n8n);
	const after = n8nCounters(n8n.pid);
	const apiCalls = (await stand.standIn.calls()) - callsBefore;
	const ok = Math.max(1, result.ok);
	return {
		perSecond: result.ok / (result.seconds + drained),
		answers: result.ok,
		windowPerSecond: result.ok / result.seconds,
		windowCpuMs: ((atLoadEnd.ticks - before.ticks) * TICK_MS) / ok,
		loadSeconds: result.seconds,
		drainSeconds: drained,
		p50: result.p50,
		p99: result.p99,
		failed: result.failed,
		cpuMs: ((after.ticks - before.ticks) * TICK_MS) / ok,
		writtenBytes: (after.writeBytes - before.writeBytes) / ok,
		staticBytes: staticDataBytes(n8n, stand.workflowIds[c.flow]),
		apiCalls: apiCalls / ok,
	};
}

/**
 * Waits until n8n's processes use less than a tenth of a core over 500 ms (at most DRAIN_MAX_S):
 * the seconds waited beyond the first 300 ms (n8n saves static data after it answers).
 */
async function untilIdle(n8n: N8n): Promise<number> {
	const began = performance.now();
	await new Promise((r) => setTimeout(r, 300));
	for (;;) {
		const from = n8nCounters(n8n.pid).ticks;
		await new Promise((r) => setTimeout(r, 500));
		const used = (n8nCounters(n8n.pid).ticks - from) * TICK_MS;
		const waited = (performance.now() - began) / 1000;
		if (used < 50 || waited >= DRAIN_MAX_S) return Math.max(0, waited - 0.8);
	}
}

/**
 * Saturation: CLIENTS closed loops, each sending its next postback when the last is answered, for
 * SECONDS; requests under way at the end are waited for and counted (a slow workflow is not
 * charged CPU for requests it never finished).
 */
function saturate(n8n: N8n, path: string, next: () => string) {
	return async (): Promise<LoadResult> => {
		const pool = new Pool(n8n.url, { connections: CLIENTS });
		const latencies: number[] = [];
		let failed = 0;
		const start = performance.now();
		const stopAt = start + SECONDS * 1000;
		const client = async () => {
			while (performance.now() < stopAt) {
				const sent = performance.now();
				try {
					const res = await pool.request({
						method: 'POST',
						path,
						headers: { 'content-type': 'application/x-www-form-urlencoded' },
						body: next(),
					});
					await res.body.dump();
					if (res.statusCode >= 200 && res.statusCode < 300)
						latencies.push(performance.now() - sent);
					else failed++;
				} catch {
					failed++;
				}
			}
		};
		await Promise.all(Array.from({ length: CLIENTS }, client));
		const seconds = (performance.now() - start) / 1000;
		await pool.close();
		latencies.sort((a, b) => a - b);
		const at = (q: number) => latencies[Math.floor(q * (latencies.length - 1))] ?? 0;
		return { ok: latencies.length, seconds, p50: at(0.5), p99: at(0.99), failed };
	};
}

function fixedRate(n8n: N8n, path: string, next: () => string, rate: number) {
	return async (): Promise<LoadResult> => {
		const r = await openLoop([n8n.url], rate, SECONDS, 32, next, path);
		const failed = r.non2xx + r.errors;
		return {
			ok: r.requests.total - failed,
			seconds: SECONDS,
			p50: r.latency.p50,
			p99: r.latency.p99,
			failed,
		};
	};
}

async function post(n8n: N8n, path: string, body: string): Promise<string> {
	const res = await fetch(`${n8n.url}${path}`, {
		method: 'POST',
		headers: { 'content-type': 'application/x-www-form-urlencoded' },
		body,
	});
	return `${res.status} ${(await res.text()).slice(0, 80)}`;
}

/** A few calls to each case first (n8n answers errors in its first seconds under load). */
async function warmUp(stand: Stand, engine: Engine, cases: readonly Case[]): Promise<void> {
	const n8n = stand.n8n[engine]!;
	for (const c of cases) {
		const next = bodiesOf(c, engine, 'warm');
		const answers = new Set<string>();
		for (let i = 0; i < 5; i++) answers.add(await post(n8n, stand.paths[c.flow], next()));
		console.log(`warm-up ${engine} ${c.name}: ${[...answers].join(' | ')}`);
	}
}

/**
 * Duplicates: a few new postbacks sent one by one to the confirming trigger (each answered 200,
 * so confirmed and remembered), then each sent again; the API calls the second round makes.
 */
async function duplicateCalls(stand: Stand, engine: Engine) {
	const n8n = stand.n8n[engine]!;
	const next = bodiesOf({ name: 'dup', flow: 'on', orderShown: true }, engine, 'dup');
	const first: string[] = [];
	for (let i = 0; i < 10; i++) {
		const body = next();
		if ((await post(n8n, stand.paths.on, body)).startsWith('2')) first.push(body);
	}
	const before = await stand.standIn.calls();
	let ok = 0;
	for (const body of first) if ((await post(n8n, stand.paths.on, body)).startsWith('2')) ok++;
	return { duplicates: first.length, ok, calls: (await stand.standIn.calls()) - before };
}

/**
 * Before timing: each hand-built flow really confirms. A forged signature ends at its first IF (no
 * answer 2xx, no call to the service); a genuine postback passes every check with its calls.
 */
async function checkHandBuilt(stand: Stand, engine: Engine): Promise<void> {
	const n8n = stand.n8n[engine]!;
	for (const [flow, prefix, calls] of [
		['hand', 'P', 2],
		['hand-shown', 'S', 1],
	] as const) {
		const genuine = signedPostback(`${prefix}${process.pid}-${engine}-check`);
		const forged = new URLSearchParams(genuine);
		forged.set('SignatureValue', '0'.repeat(32));
		const before = await stand.standIn.calls();
		const forgedAnswer = await post(n8n, stand.paths[flow], forged.toString());
		const forgedCalls = (await stand.standIn.calls()) - before;
		const genuineAnswer = await post(n8n, stand.paths[flow], genuine);
		const genuineCalls = (await stand.standIn.calls()) - before - forgedCalls;
		console.log(
			`${engine} ${flow} check: forged signature -> ${forgedAnswer} (${forgedCalls} calls); genuine -> ${genuineAnswer} (${genuineCalls} calls)`,
		);
		if (forgedAnswer.startsWith('2') || forgedCalls !== 0)
			throw new Error(`the ${flow} flow let a forged signature through: figures would not compare`);
		if (!genuineAnswer.startsWith('2') || genuineCalls !== calls)
			throw new Error(`the ${flow} flow did not pass a genuine postback with its ${calls} calls`);
	}
}

const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();

async function main(): Promise<void> {
	await ensureN8nInstalled();
	const only = process.env.BENCH_CASES?.split(',').map((c) => c.trim());
	const cases = CASES.filter((c) =>
		only ? only.includes(c.name) : !QUICK || !c.flow.endsWith('-full'),
	);
	console.log(
		`PayPalych Trigger benchmark: package from ${ROOT}; engines ${ENGINES.join(', ')}; ${SECONDS} s per run, ${ROUNDS} saturation round(s) interleaved (best kept)${QUICK ? ' (--quick)' : ''}`,
	);
	console.log(`load at the start: ${uptime()}`);
	const began = performance.now();
	const stand = await startStand(ROOT, ENGINES);
	console.log(`the trigger's workflows use its typeVersion ${stand.triggerVersion}`);
	const rows: Row[] = [];
	const dup: Partial<Record<Engine, { duplicates: number; ok: number; calls: number }>> = {};
	try {
		for (const engine of ENGINES) {
			await checkHandBuilt(stand, engine);
			await warmUp(stand, engine, cases);
		}
		const best = new Map<string, Row>();
		for (let round = 1; round <= ROUNDS; round++) {
			for (const c of cases) {
				for (const engine of ENGINES) {
					const n8n = stand.n8n[engine]!;
					const next = bodiesOf(c, engine, `r${round}`);
					const sat = await measure(stand, n8n, c, saturate(n8n, stand.paths[c.flow], next));
					console.log(
						`round ${round} ${c.name} ${engine}: ${sat.perSecond.toFixed(1)}/s (${sat.answers} answered in ${sat.loadSeconds.toFixed(1)} s + ${sat.drainSeconds.toFixed(1)} s until idle), ${sat.cpuMs.toFixed(1)} ms CPU/exec (within the load alone: ${sat.windowPerSecond.toFixed(1)} answers/s, ${sat.windowCpuMs.toFixed(1)} ms CPU/answer), ${sat.apiCalls.toFixed(2)} calls/exec, ${sat.failed} failed`,
					);
					const key = `${c.name} ${engine}`;
					const kept = best.get(key);
					if (!kept || sat.perSecond > kept.perSecond)
						best.set(key, { case: c.name, engine, load: 'saturation', ...sat });
				}
			}
		}
		for (const c of cases) {
			for (const engine of ENGINES) {
				rows.push(best.get(`${c.name} ${engine}`)!);
				const n8n = stand.n8n[engine]!;
				for (const rate of RATES) {
					const next = bodiesOf(c, engine, `rate${rate}`);
					const load = fixedRate(n8n, stand.paths[c.flow], next, rate);
					rows.push({
						case: c.name,
						engine,
						load: `${rate}/s`,
						...(await measure(stand, n8n, c, load)),
					});
				}
			}
		}
		for (const engine of ENGINES) dup[engine] = await duplicateCalls(stand, engine);
	} finally {
		await stand.close();
	}
	console.log(
		`\nload at the end: ${uptime()}; the sitting took ${((performance.now() - began) / 60000).toFixed(1)} min`,
	);
	printTable(rows);
	printRatios(rows, ENGINES, ENGINE_LABEL);
	printTargets(rows, ENGINES, dup);
}

await main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
