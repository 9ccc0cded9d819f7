// npm run bench:trigger: what the PayPalych Trigger costs inside a real n8n. One n8n 2.41 (the
// end-to-end suite's install) on SQLite, regular mode, execution data not saved, with five
// published workflows side by side: n8n's own Webhook node with a No-Op (no check), the
// hand-built confirmation a careful merchant builds from n8n's own nodes (Webhook answering after
// its last node, Crypto, 3 IF, 2 HTTP Request; checked first to stop a forged signature), the
// PayPalych Trigger with confirmation off, and with confirmation on (the default InvId check, and
// Bill ID Only) against the sandbox. Each at saturation (8 clients in a closed loop, BENCH_ROUNDS
// rounds interleaved across the workflows, the best round kept: n8n on SQLite stalls now and then
// under load) and at fixed rates (the open loop of relay/bench), with the trigger's memory empty
// and full (6,000 keys). Prints a table, the ratios against the Webhook node and the hand-built
// flow in the same run, and one line per target.
//
// Executions/s counts a run until n8n is idle again after its load (the trigger answers before
// its execution runs; the Webhook workflows answer after theirs). Under n8n's default expression
// engine it also measures what one isolate costs (isolate-cost.ts) and gives each throughput
// target the ceiling the isolates leave the trigger (trigger-table.ts, ISOLATES).
//
// BENCH_ROOT: the checkout whose built package n8n loads (default: this one; another for a
// before/after). BENCH_SECONDS (8), BENCH_ROUNDS (2), BENCH_RATES ("50,200"; "" for none),
// BENCH_BILL_RATE (40: paid bills prepared per second of a confirming workflow's runs; raise it
// where the trigger runs faster, e.g. under BENCH_EXPRESSION_ENGINE=legacy),
// BENCH_PORT (a free one).
import getPort from 'get-port';
import { Pool } from 'undici';
import { openLoop, ROOT } from '../../relay/bench/common.ts';
import { ensureN8nInstalled } from '../harness/n8n.ts';
import {
	CONFIRMING,
	FLOWS,
	apiCallCounter,
	fillMemory,
	genuinePostbacks,
	n8nCounters,
	signedPostback,
	staticDataBytes,
	startStand,
	type Flow,
	type Stand,
} from './trigger-stand.ts';
import { isolateCpuMs } from './isolate-cost.ts';
import { printTable, printTargets, type Row } from './trigger-table.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 2));
/** Paid bills prepared per second of a confirming workflow's runs (its genuine postbacks). */
const BILL_RATE = Number(process.env.BENCH_BILL_RATE ?? 40);
const RATES = (process.env.BENCH_RATES ?? '50,200').split(',').map(Number).filter(Boolean);
const CLIENTS = 8;
const TICK_MS = 10;
/** The longest wait for n8n to finish the executions of a run after its load. */
const DRAIN_MAX_S = 30;

/** Request bodies for a workflow: signed postbacks, or genuine ones of paid bills where it confirms. */
class Bodies {
	private n = 0;
	private pool: string[] = [];
	private readonly stand: Stand;
	private readonly flow: Flow;
	constructor(stand: Stand, flow: Flow) {
		this.stand = stand;
		this.flow = flow;
	}
	async prepare(count: number, tag: string): Promise<void> {
		if (CONFIRMING.includes(this.flow)) {
			this.pool = await genuinePostbacks(this.stand, count, `${tag}-${this.flow}`);
		}
	}
	next = (): string => {
		if (this.flow === 'webhook' || this.flow === 'off') {
			return signedPostback(this.stand.token, `B-${process.pid}-${this.flow}-${this.n++}`);
		}
		// Past the paid bills: a postback the service does not know (answered 503 or 500, counted failed).
		return this.pool[this.n++] ?? signedPostback(this.stand.token, `U-${process.pid}-${this.n}`);
	};
}

async function measure(
	stand: Stand,
	flow: Flow,
	calls: () => Promise<number>,
	load: () => Promise<{ ok: number; seconds: number; p50: number; p99: number; failed: number }>,
): Promise<Omit<Row, 'flow' | 'memory' | 'load'>> {
	const before = n8nCounters(stand.n8n.pid);
	const callsBefore = await calls();
	const result = await load();
	// The trigger answers before n8n runs its execution: executions may still be running when the
	// load ends. Their CPU and time count too: the run lasts until n8n is idle again.
	const drained = await untilIdle(stand);
	const after = n8nCounters(stand.n8n.pid);
	const apiCalls = (await calls()) - callsBefore;
	const ok = Math.max(1, result.ok);
	return {
		perSecond: result.ok / (result.seconds + drained),
		p50: result.p50,
		p99: result.p99,
		failed: result.failed,
		cpuMs: ((after.ticks - before.ticks) * TICK_MS) / ok,
		writtenBytes: (after.writeBytes - before.writeBytes) / ok,
		staticBytes: staticDataBytes(stand, flow),
		apiCalls: apiCalls / ok,
	};
}

/**
 * Waits until n8n's processes use less than a tenth of a core over 500 ms (at most DRAIN_MAX_S):
 * the seconds waited beyond the first 300 ms (n8n saves static data after it answers).
 */
async function untilIdle(stand: Stand): Promise<number> {
	const began = performance.now();
	await new Promise((r) => setTimeout(r, 300));
	for (;;) {
		const from = n8nCounters(stand.n8n.pid).ticks;
		await new Promise((r) => setTimeout(r, 500));
		const used = (n8nCounters(stand.n8n.pid).ticks - from) * TICK_MS;
		const waited = (performance.now() - began) / 1000;
		if (used < 50 || waited >= DRAIN_MAX_S) return Math.max(0, waited - 0.8);
	}
}

/**
 * Saturation: CLIENTS closed loops, each sending its next postback when the last is answered, for
 * SECONDS; requests under way at the end are waited for and counted (a slow workflow is not
 * charged CPU for requests it never finished).
 */
function saturate(stand: Stand, flow: Flow, bodies: Bodies) {
	return async () => {
		const pool = new Pool(stand.n8n.url, { connections: CLIENTS });
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
						path: stand.paths[flow],
						headers: { 'content-type': 'application/x-www-form-urlencoded' },
						body: bodies.next(),
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

function fixedRate(stand: Stand, flow: Flow, bodies: Bodies, rate: number) {
	return async () => {
		const r = await openLoop([stand.n8n.url], rate, SECONDS, 32, bodies.next, stand.paths[flow]);
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

/** A few calls to each workflow first: n8n answers errors in its first seconds under load. */
async function warmUp(stand: Stand, bodies: Record<Flow, Bodies>): Promise<void> {
	for (const flow of FLOWS) {
		const answers: string[] = [];
		for (let i = 0; i < 5; i++) {
			const res = await fetch(`${stand.n8n.url}${stand.paths[flow]}`, {
				method: 'POST',
				headers: { 'content-type': 'application/x-www-form-urlencoded' },
				body: bodies[flow].next(),
			});
			answers.push(`${res.status} ${(await res.text()).slice(0, 80)}`);
		}
		console.log(`warm-up ${flow} (${stand.paths[flow]}): ${[...new Set(answers)].join(' | ')}`);
	}
}

/**
 * Duplicates: a few new genuine postbacks sent one by one (each answered 200, so confirmed and
 * remembered), then each sent again; the API calls the second round makes (should be none).
 */
async function duplicateCalls(stand: Stand, calls: () => Promise<number>) {
	const bodies = await genuinePostbacks(stand, 10, 'dup');
	const send = async (body: string) => {
		const res = await fetch(`${stand.n8n.url}${stand.paths['on-bill']}`, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body,
		});
		await res.arrayBuffer();
		return res.ok;
	};
	const first: string[] = [];
	for (const body of bodies) if (await send(body)) first.push(body);
	const before = await calls();
	let ok = 0;
	for (const body of first) if (await send(body)) ok++;
	return { duplicates: first.length, ok, calls: (await calls()) - before };
}

/**
 * Before timing: the hand-built flow really confirms. A forged signature ends at its first IF (no
 * answer 2xx, no call to the service); a genuine postback passes all three checks with two calls.
 */
async function checkHandBuilt(stand: Stand, calls: () => Promise<number>): Promise<void> {
	const post = async (body: string) => {
		const res = await fetch(`${stand.n8n.url}${stand.paths.hand}`, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body,
		});
		return `${res.status} ${(await res.text()).slice(0, 80)}`;
	};
	const [genuine] = await genuinePostbacks(stand, 1, 'hand-check');
	const forged = new URLSearchParams(genuine);
	forged.set('SignatureValue', '0'.repeat(32));
	const before = await calls();
	const forgedAnswer = await post(forged.toString());
	const forgedCalls = (await calls()) - before;
	const genuineAnswer = await post(genuine);
	const genuineCalls = (await calls()) - before - forgedCalls;
	console.log(
		`hand-built check: forged signature -> ${forgedAnswer} (${forgedCalls} service calls); genuine -> ${genuineAnswer} (${genuineCalls} service calls)`,
	);
	if (forgedAnswer.startsWith('2') || forgedCalls !== 0) {
		throw new Error(
			'the hand-built flow let a forged signature through: its figures would not compare',
		);
	}
	if (!genuineAnswer.startsWith('2') || genuineCalls !== 2) {
		throw new Error(
			'the hand-built flow did not pass a genuine postback with its two service calls',
		);
	}
}

async function main(): Promise<void> {
	await ensureN8nInstalled();
	const port = Number(process.env.BENCH_PORT ?? (await getPort({ host: '127.0.0.1' })));
	console.log(
		`PayPalych Trigger benchmark: package from ${ROOT}, ${SECONDS} s per run, ${ROUNDS} saturation rounds (best kept)`,
	);
	// One isolate's CPU, measured in this process before n8n starts (a fresh process on a quiet
	// machine) and again after the runs (a process that has worked, as n8n's has): the ceilings
	// take the lower, the one most generous to the trigger.
	const vm = (process.env.BENCH_EXPRESSION_ENGINE ?? 'vm') === 'vm';
	const isolateBefore = vm ? await isolateCpuMs() : undefined;
	const stand = await startStand(ROOT, port);
	const rows: Row[] = [];
	let dup = { duplicates: 0, ok: 0, calls: 0 };
	try {
		const calls = await apiCallCounter(stand);
		await checkHandBuilt(stand, calls);
		for (const memory of ['empty', 'full'] as const) {
			if (memory === 'full') {
				await stand.n8n.stop();
				for (const flow of FLOWS)
					if (flow !== 'webhook' && flow !== 'hand') fillMemory(stand, flow);
				await stand.n8n.start();
			}
			const bodies = Object.fromEntries(
				FLOWS.map((flow) => [flow, new Bodies(stand, flow)]),
			) as Record<Flow, Bodies>;
			const pool = Math.ceil(
				SECONDS *
					(BILL_RATE * ROUNDS + RATES.filter((r) => r <= BILL_RATE).reduce((a, b) => a + b, 0)),
			);
			for (const flow of FLOWS) await bodies[flow].prepare(pool, memory);
			await warmUp(stand, bodies);
			const best = new Map<Flow, Row>();
			for (let round = 1; round <= ROUNDS; round++) {
				for (const flow of FLOWS) {
					const sat = await measure(stand, flow, calls, saturate(stand, flow, bodies[flow]));
					console.log(
						`${memory} ${flow} saturation, round ${round}: ${sat.perSecond.toFixed(1)}/s, ${sat.cpuMs.toFixed(1)} ms CPU/exec, ${sat.failed} failed`,
					);
					const kept = best.get(flow);
					if (!kept || sat.perSecond > kept.perSecond) {
						best.set(flow, { flow, memory, load: 'saturation', ...sat });
					}
				}
			}
			for (const flow of FLOWS) {
				const sat = best.get(flow)!;
				rows.push(sat);
				for (const rate of RATES) {
					if (sat.perSecond < rate * 1.2) {
						console.log(
							`${memory} ${flow} ${rate}/s: skipped (saturates at ${sat.perSecond.toFixed(1)}/s)`,
						);
						continue;
					}
					const fixed = await measure(
						stand,
						flow,
						calls,
						fixedRate(stand, flow, bodies[flow], rate),
					);
					rows.push({ flow, memory, load: `${rate}/s`, ...fixed });
				}
			}
			if (memory === 'full') dup = await duplicateCalls(stand, calls);
		}
	} finally {
		await stand.close();
	}
	const isolate =
		isolateBefore === undefined
			? undefined
			: { before: isolateBefore, after: await isolateCpuMs() };
	printTable(rows);
	printTargets(rows, dup, isolate);
}

await main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
