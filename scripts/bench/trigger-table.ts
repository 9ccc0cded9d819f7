// The trigger benchmark's closing table (markdown) and its targets (issue 28), each as
// `<target>: <figures>: met|NOT met`. See trigger.bench.ts.
import { FLOW_LABEL, type Flow } from './trigger-stand.ts';

export interface Row {
	flow: Flow;
	memory: 'empty' | 'full';
	/** "saturation" (8 clients) or a fixed rate, "50/s". */
	load: string;
	perSecond: number;
	p50: number;
	p99: number;
	failed: number;
	/** n8n's CPU per execution (all its processes), ms. */
	cpuMs: number;
	/** Bytes n8n's processes wrote to disk per execution (/proc/<pid>/io write_bytes). */
	writtenBytes: number;
	/** The workflow's stored static data after the run, bytes. */
	staticBytes: number;
	/** The sandbox's API calls per execution. */
	apiCalls: number;
}

const int = (x: number) => Math.round(x).toLocaleString('en-US');
const one = (x: number) => x.toFixed(1);
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

function find(rows: Row[], flow: Flow, memory: Row['memory'], load = 'saturation') {
	return rows.find((r) => r.flow === flow && r.memory === memory && r.load === load);
}

export function printTable(rows: Row[]): void {
	console.log(
		'\n| workflow | memory | load | executions/s | ratio | p50 / p99 ms | failed | n8n CPU/exec | written/exec | static data | API calls/exec |',
	);
	console.log('| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |');
	for (const r of rows) {
		const anchor = find(rows, 'webhook', r.memory, r.load);
		const ratio =
			r.load === 'saturation' && anchor ? `${(r.perSecond / anchor.perSecond).toFixed(2)}x` : '';
		console.log(
			`| ${FLOW_LABEL[r.flow]} | ${r.memory} | ${r.load} | ${one(r.perSecond)} | ${ratio} | ${int(r.p50)} / ${int(r.p99)} | ${r.failed} | ${one(r.cpuMs)} ms | ${kib(r.writtenBytes)} | ${kib(r.staticBytes)} | ${r.apiCalls.toFixed(2)} |`,
		);
	}
}

function line(target: string, figures: string, met: boolean): void {
	console.log(`${target}: ${figures}: ${met ? 'met' : 'NOT met'}`);
}

export function printTargets(
	rows: Row[],
	dup: { duplicates: number; ok: number; calls: number },
): void {
	console.log('');
	const anchor = find(rows, 'webhook', 'empty');
	const off = find(rows, 'off', 'empty');
	if (!anchor || !off) {
		console.log('targets: the saturation runs are missing');
		return;
	}
	const ratio = (r: Row) => r.perSecond / anchor.perSecond;
	line(
		'confirmation off >= 0.8x the Webhook node (executions/s)',
		`${one(off.perSecond)} / ${one(anchor.perSecond)} = ${ratio(off).toFixed(2)}x`,
		ratio(off) >= 0.8,
	);
	for (const flow of ['on', 'on-bill'] as const) {
		const on = find(rows, flow, 'empty');
		if (!on) continue;
		const name = flow === 'on' ? 'confirmation on (InvId)' : 'confirmation on (Bill ID Only)';
		line(
			`${name} >= 0.5x the Webhook node`,
			`${one(on.perSecond)} / ${one(anchor.perSecond)} = ${ratio(on).toFixed(2)}x`,
			ratio(on) >= 0.5,
		);
		const cost = on.cpuMs - off.cpuMs;
		line(
			`${name}: the confirmation's own cost <= 20 ms of n8n CPU per execution`,
			`${one(on.cpuMs)} - ${one(off.cpuMs)} = ${one(cost)} ms`,
			cost <= 20,
		);
		line(
			`${name}: at most one API call per new postback`,
			`${on.apiCalls.toFixed(2)} calls/execution`,
			on.apiCalls <= 1.001,
		);
	}
	for (const flow of ['off', 'on-bill'] as const) {
		for (const load of ['saturation', '50/s']) {
			const empty = find(rows, flow, 'empty', load);
			const full = find(rows, flow, 'full', load);
			if (!empty || !full) continue;
			const cpu = full.cpuMs / empty.cpuMs;
			const p99 = full.p99 / Math.max(1, empty.p99);
			line(
				`${FLOW_LABEL[flow]}, ${load}: memory full <= 1.1x memory empty (CPU/exec, p99)`,
				`CPU ${one(full.cpuMs)} / ${one(empty.cpuMs)} ms = ${cpu.toFixed(2)}x, p99 ${int(full.p99)} / ${int(empty.p99)} ms = ${p99.toFixed(2)}x`,
				cpu <= 1.1 && p99 <= 1.1,
			);
		}
	}
	for (const memory of ['empty', 'full'] as const) {
		const worst = rows
			.filter((r) => r.memory === memory && r.flow !== 'webhook')
			.reduce((a, r) => Math.max(a, r.staticBytes), 0);
		const base = find(rows, 'webhook', memory);
		const extra = rows
			.filter((r) => r.memory === memory && r.flow !== 'webhook' && r.load === 'saturation')
			.map((r) => `${r.flow} ${kib(r.writtenBytes - (base?.writtenBytes ?? 0))}`)
			.join(', ');
		line(
			`static data written per execution <= 8 KiB (memory ${memory})`,
			`static data ${kib(worst)} written whole with each new postback; disk writes per execution beyond the Webhook node's: ${extra}`,
			worst <= 8 * 1024,
		);
	}
	line(
		'no API call for a duplicate',
		`${dup.calls} calls for ${dup.duplicates} duplicates (${dup.ok} answered 200)`,
		dup.duplicates > 0 && dup.calls === 0,
	);
}
