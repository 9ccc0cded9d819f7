// The trigger benchmark's cases, its closing table (markdown), the ratios of one sitting per
// engine set-up, and its targets, each as `<target>: <figures>: met|NOT met`. See trigger.bench.ts.
import type { Engine, Workflow } from './trigger-stand.ts';

/** What is measured: a workflow, fed postbacks whose payment shows its order ID or not. */
export interface Case {
	name: string;
	flow: Workflow;
	/** The stand-in's payment answer shows the order ID (one call where it would take two). */
	orderShown: boolean;
}

export const CASES: readonly Case[] = [
	{ name: 'webhook', flow: 'webhook', orderShown: false },
	{ name: 'hand', flow: 'hand', orderShown: false },
	{ name: 'hand-shown', flow: 'hand-shown', orderShown: true },
	{ name: 'off', flow: 'off', orderShown: false },
	{ name: 'on', flow: 'on', orderShown: false },
	{ name: 'on-shown', flow: 'on', orderShown: true },
	{ name: 'off-full', flow: 'off-full', orderShown: false },
	{ name: 'on-full', flow: 'on-full', orderShown: false },
];

export const CASE_LABEL: Record<string, string> = {
	webhook: "n8n's Webhook node, no check",
	hand: 'hand-built confirmation, order ID from the bill (Crypto, 3 IF, 2 HTTP Request)',
	'hand-shown': 'hand-built confirmation, order ID on the payment (Crypto, 3 IF, 1 HTTP Request)',
	off: 'PayPalych Trigger, confirmation off',
	on: 'PayPalych Trigger, confirmation on, order ID from the bill (2 calls)',
	'on-shown': 'PayPalych Trigger, confirmation on, order ID on the payment (1 call)',
	'off-full': 'PayPalych Trigger, confirmation off, memory full (6,000 keys)',
	'on-full': 'PayPalych Trigger, confirmation on (2 calls), memory full (6,000 keys)',
};

export interface Row {
	case: string;
	engine: Engine;
	/** "saturation" (8 clients) or a fixed rate, "20/s". */
	load: string;
	perSecond: number;
	/** Postbacks answered 2xx; the seconds of load, and those after it until n8n was idle. */
	answers: number;
	loadSeconds: number;
	drainSeconds: number;
	/**
	 * What a measurement that stops with the load reads: answers/s and n8n's CPU per answer within
	 * the load alone. For the trigger (it answers before its execution) this leaves out the
	 * executions still to run; for the Webhook workflows (they answer after theirs) it is the same.
	 */
	windowPerSecond: number;
	windowCpuMs: number;
	p50: number;
	p99: number;
	failed: number;
	/** n8n's CPU per execution (all its processes), ms. */
	cpuMs: number;
	/** Bytes n8n's processes wrote to disk per execution (/proc/<pid>/io write_bytes). */
	writtenBytes: number;
	/** The workflow's stored static data after the run, bytes. */
	staticBytes: number;
	/** The stand-in service's API calls per execution. */
	apiCalls: number;
}

const int = (x: number) => Math.round(x).toLocaleString('en-US');
const one = (x: number) => x.toFixed(1);
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

function find(rows: Row[], name: string, engine: Engine, load = 'saturation') {
	return rows.find((r) => r.case === name && r.engine === engine && r.load === load);
}

export function printTable(rows: Row[]): void {
	console.log(
		'\n| case | engine | load | executions/s | n8n CPU/exec | within the load alone: answers/s, CPU/answer | p50 / p99 ms | failed | written/exec | static data | API calls/exec |',
	);
	console.log('| --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |');
	for (const r of rows) {
		console.log(
			`| ${CASE_LABEL[r.case]} | ${r.engine} | ${r.load} | ${one(r.perSecond)} | ${one(r.cpuMs)} ms | ${one(r.windowPerSecond)}/s, ${one(r.windowCpuMs)} ms | ${int(r.p50)} / ${int(r.p99)} | ${r.failed} | ${kib(r.writtenBytes)} | ${kib(r.staticBytes)} | ${r.apiCalls.toFixed(2)} |`,
		);
	}
}

/** The comparisons the targets make: [case, anchor, target ratio of executions/s]. */
const COMPARED: ReadonlyArray<[string, string, number]> = [
	['on', 'hand', 2.0],
	['on-shown', 'hand-shown', 2.0],
	['off', 'webhook', 0.9],
];

/** Per engine: each comparison's executions/s ratio and its CPU-per-execution ratio (inverse). */
export function printRatios(
	rows: Row[],
	engines: readonly Engine[],
	label: Record<Engine, string>,
): void {
	console.log('\n| ratio in the same run | ' + engines.map((e) => label[e]).join(' | ') + ' |');
	console.log('| --- |' + engines.map(() => ' ---: |').join(''));
	for (const [name, anchor] of COMPARED) {
		const cells = engines.map((engine) => {
			const a = find(rows, name, engine);
			const b = find(rows, anchor, engine);
			if (!a || !b) return '';
			return `${(a.perSecond / b.perSecond).toFixed(2)}x (CPU ${(b.cpuMs / a.cpuMs).toFixed(2)}x)`;
		});
		console.log(`| ${name} / ${anchor}, executions/s (CPU/exec, inverse) | ${cells.join(' | ')} |`);
	}
}

function line(target: string, figures: string, met: boolean): void {
	console.log(`${target}: ${figures}: ${met ? 'met' : 'NOT met'}`);
}

/** One line per target and engine set-up: the ratios of this sitting. */
export function printTargets(
	rows: Row[],
	engines: readonly Engine[],
	dup: Partial<Record<Engine, { duplicates: number; ok: number; calls: number }>>,
): void {
	console.log('');
	for (const engine of engines) {
		for (const [name, anchor, target] of COMPARED) {
			const a = find(rows, name, engine);
			const b = find(rows, anchor, engine);
			if (!a || !b) continue;
			const ratio = a.perSecond / b.perSecond;
			line(
				`[${engine}] ${CASE_LABEL[name]} >= ${target.toFixed(1)}x ${CASE_LABEL[anchor]} (executions/s)`,
				`${one(a.perSecond)} / ${one(b.perSecond)} = ${ratio.toFixed(2)}x; n8n CPU/exec ${one(a.cpuMs)} vs ${one(b.cpuMs)} ms`,
				ratio >= target,
			);
		}
		for (const flow of ['off', 'on'] as const) {
			const empty = find(rows, flow, engine);
			const full = find(rows, `${flow}-full`, engine);
			if (!empty || !full) continue;
			const cpu = full.cpuMs / empty.cpuMs;
			line(
				`[${engine}] ${CASE_LABEL[flow]}: memory full <= 1.1x memory empty (n8n CPU/exec)`,
				`${one(full.cpuMs)} / ${one(empty.cpuMs)} ms = ${cpu.toFixed(2)}x; executions/s ${one(full.perSecond)} vs ${one(empty.perSecond)}`,
				cpu <= 1.1,
			);
		}
	}
	// The InvId check needs bill/status only where the payment's answer lacks the order ID.
	for (const [name, allowed] of [
		['on', 2],
		['on-shown', 1],
	] as const) {
		const worst = rows.filter((r) => r.case === name).reduce((a, r) => Math.max(a, r.apiCalls), 0);
		line(
			`${CASE_LABEL[name]}: service calls per new postback <= ${allowed}`,
			`${worst.toFixed(2)} calls/execution (worst run)`,
			worst > 0 && worst <= allowed + 0.001,
		);
	}
	const dups = Object.values(dup);
	const calls = dups.reduce((a, d) => a + d.calls, 0);
	const sent = dups.reduce((a, d) => a + d.duplicates, 0);
	line(
		'no service call for a duplicate',
		`${calls} calls for ${sent} duplicates (${dups.reduce((a, d) => a + d.ok, 0)} answered 200)`,
		sent > 0 && calls === 0,
	);
}
