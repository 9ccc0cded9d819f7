// The trigger benchmark's closing table (markdown), the ratios of one sitting, and its targets,
// each as `<target>: <figures>: met|NOT met`. See trigger.bench.ts.
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
		'\n| workflow | memory | load | executions/s | x Webhook node | x hand-built | p50 / p99 ms | failed | n8n CPU/exec | written/exec | static data | API calls/exec |',
	);
	console.log('| --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |');
	for (const r of rows) {
		const ratioTo = (flow: Flow) => {
			const anchor = find(rows, flow, r.memory, r.load);
			return r.load === 'saturation' && anchor
				? `${(r.perSecond / anchor.perSecond).toFixed(2)}x`
				: '';
		};
		console.log(
			`| ${FLOW_LABEL[r.flow]} | ${r.memory} | ${r.load} | ${one(r.perSecond)} | ${ratioTo('webhook')} | ${ratioTo('hand')} | ${int(r.p50)} / ${int(r.p99)} | ${r.failed} | ${one(r.cpuMs)} ms | ${kib(r.writtenBytes)} | ${kib(r.staticBytes)} | ${r.apiCalls.toFixed(2)} |`,
		);
	}
}

function line(target: string, figures: string, met: boolean): void {
	console.log(`${target}: ${figures}: ${met ? 'met' : 'NOT met'}`);
}

/**
 * Isolates of n8n's default expression engine per postback (see isolate-cost.ts): n8n's Webhook
 * node and the hand-built flow take one (the execution; n8n skips the webhook call's for its own
 * Webhook node), the trigger one more for its webhook call, and with confirmation off one more for
 * the credential read every call makes (a signature is then the only check).
 */
export const ISOLATES: Record<Flow, number> = { webhook: 1, hand: 1, off: 3, on: 2, 'on-bill': 2 };

/**
 * The most a workflow's executions/s can be of an anchor's if everything it does beyond the
 * Webhook node's workflow cost nothing but its isolates: the anchor's CPU per execution over the
 * Webhook node's plus the isolates more.
 */
function ceiling(anchor: Row, webhook: Row, flow: Flow, isolateMs: number): number {
	return anchor.cpuMs / (webhook.cpuMs + (ISOLATES[flow] - ISOLATES.webhook) * isolateMs);
}

/**
 * One line per target, for each memory state: the ratios of this sitting. With `isolate` (one
 * isolate's CPU, measured before and after the runs; absent under the legacy engine), the
 * throughput lines also give the ceiling n8n's isolates leave the trigger, with the lower figure.
 */
export function printTargets(
	rows: Row[],
	dup: { duplicates: number; ok: number; calls: number },
	isolate?: { before: number; after: number },
): void {
	console.log('');
	const isolateMs = isolate && Math.min(isolate.before, isolate.after);
	if (isolate !== undefined) {
		console.log(
			`n8n's expression engine (vm): one isolate built, initialised and disposed = ${one(isolate.before)} ms of CPU before the runs, ${one(isolate.after)} ms after (this process); isolates per postback: Webhook node ${ISOLATES.webhook}, hand-built ${ISOLATES.hand}, trigger with confirmation on ${ISOLATES.on}, off ${ISOLATES.off}`,
		);
	}
	const bound = (anchor: Row, webhook: Row | undefined, flow: Flow) =>
		isolateMs === undefined || webhook === undefined
			? ''
			: `; ceiling under n8n's isolates ${ceiling(anchor, webhook, flow, isolateMs).toFixed(2)}x`;
	for (const memory of ['empty', 'full'] as const) {
		const webhook = find(rows, 'webhook', memory);
		const hand = find(rows, 'hand', memory);
		const off = find(rows, 'off', memory);
		const on = find(rows, 'on', memory);
		const bill = find(rows, 'on-bill', memory);
		if (hand && on) {
			const ratio = on.perSecond / hand.perSecond;
			line(
				`confirmation on (InvId, the default) >= 1.2x the hand-built flow (executions/s, memory ${memory})`,
				`${one(on.perSecond)} / ${one(hand.perSecond)} = ${ratio.toFixed(2)}x; n8n CPU/exec ${one(on.cpuMs)} vs ${one(hand.cpuMs)} ms${bill ? `; Bill ID Only ${(bill.perSecond / hand.perSecond).toFixed(2)}x` : ''}${bound(hand, webhook, 'on')}`,
				ratio >= 1.2,
			);
		}
		if (webhook && off) {
			const ratio = off.perSecond / webhook.perSecond;
			line(
				`confirmation off >= 0.9x the Webhook node (executions/s, memory ${memory})`,
				`${one(off.perSecond)} / ${one(webhook.perSecond)} = ${ratio.toFixed(2)}x; n8n CPU/exec ${one(off.cpuMs)} vs ${one(webhook.cpuMs)} ms${bound(webhook, webhook, 'off')}`,
				ratio >= 0.9,
			);
		}
	}
	for (const flow of ['off', 'on', 'on-bill'] as const) {
		const empty = find(rows, flow, 'empty');
		const full = find(rows, flow, 'full');
		if (!empty || !full) continue;
		const cpu = full.cpuMs / empty.cpuMs;
		line(
			`${FLOW_LABEL[flow]}: memory full <= 1.1x memory empty (n8n CPU/exec at saturation)`,
			`${one(full.cpuMs)} / ${one(empty.cpuMs)} ms = ${cpu.toFixed(2)}x; executions/s ${one(full.perSecond)} vs ${one(empty.perSecond)}`,
			cpu <= 1.1,
		);
	}
	// The InvId check needs bill/status only because the payment's answer lacks the order ID: two
	// calls where the answer does not allow one; Bill ID Only needs one.
	for (const [flow, allowed] of [
		['on', 2],
		['on-bill', 1],
	] as const) {
		const worst = rows
			.filter((r) => r.flow === flow && r.load === 'saturation')
			.reduce((a, r) => Math.max(a, r.apiCalls), 0);
		line(
			`${FLOW_LABEL[flow]}: service calls per new postback <= ${allowed} (${allowed === 1 ? 'one' : "payment/status, then bill/status as the payment's answer has no order ID"})`,
			`${worst.toFixed(2)} calls/execution (worst saturation run)`,
			worst > 0 && worst <= allowed + 0.001,
		);
	}
	line(
		'no service call for a duplicate',
		`${dup.calls} calls for ${dup.duplicates} duplicates (${dup.ok} answered 200)`,
		dup.duplicates > 0 && dup.calls === 0,
	);
}
