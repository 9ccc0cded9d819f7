// Reads the .cpuprofile files that `node --cpu-prof` writes (one per thread) and says where the
// CPU time went, by part of the relay: each sample's time is given to the first frame, walking up
// from the sampled one, that belongs to a known part (project file or package); node's own
// internals and native functions count for the part that called them. Used by profile.ts.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

interface CallFrame {
	functionName: string;
	url: string;
	lineNumber: number;
}
interface ProfileNode {
	id: number;
	callFrame: CallFrame;
	parent?: number;
	children?: number[];
}
interface CpuProfile {
	nodes: ProfileNode[];
	startTime: number;
	endTime: number;
	samples: number[];
	timeDeltas: number[];
}

/** Parts of the relay, in the order of the rules: the first match names a frame's part. */
const PARTS: Array<[part: string, test: RegExp]> = [
	[
		'logging (pino, the log line)',
		/\/(pino|sonic-boom|fast-redact|pino-std-serializers)\/|\/logging\.[jt]s|\/log-context\.[jt]s/,
	],
	['metrics (prom-client)', /\/prom-client\/|\/metrics\.[jt]s/],
	['parsing and verification (MD5)', /\/contract\.[jt]s|\/nodes\/shared\//],
	['per-pair limit and payout check', /\/(limits|look-ups)\.[jt]s|\/@fastify\/rate-limit\//],
	['route and intake (postbacks.ts, intake.ts)', /\/routes\/postbacks\.[jt]s|\/intake\.[jt]s/],
	['store hand-off (thread message, input checks)', /\/store\/(sqlite|input|ids)\.[jt]s/],
	[
		'SQL (SQLite engine and queries)',
		/\/store\/sqlite-(engine|queries|worker|schema)\.[jt]s|\/store\/sql\.[jt]s/,
	],
	['store (PostgreSQL: batching, statements)', /\/store\/(postgres|pg-[a-z-]+)\.[jt]s/],
	['pg driver', /\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|pgpass|pg-connection-string)\//],
	[
		'delivery (forwarder, undici client)',
		/\/forwarder\.[jt]s|\/delivery-attempt\.[jt]s|\/retry-policy\.[jt]s|\/undici\//,
	],
	[
		'Fastify (routing, hooks, reply)',
		/\/(fastify|find-my-way|avvio|light-my-request|@fastify\/[a-z-]+|fast-json-stringify|secure-json-parse|toad-cache|fastify-plugin)\//,
	],
	['relay: other', /\/relay\/(dist\/relay\/)?src\//],
];

/** Frames with no part of their own, when nothing above them has one either. */
const NODE_PARTS: Array<[string, RegExp]> = [
	[
		'node: HTTP server and sockets',
		/node:(_http_|http|net|internal\/(http|streams|stream_base|net|js_stream))/,
	],
	['node: worker messages', /node:internal\/(worker|per_context\/messageport)/],
	['node: timers and event loop', /node:internal\/(timers|process\/task_queues)/],
];

/** The load's start and end, and when the profiled process exited (epoch ms). */
export interface Window {
	from: number;
	to: number;
	exitAt: number;
}

export interface PartTime {
	part: string;
	micros: number;
}
export interface ThreadProfile {
	file: string;
	totalMicros: number;
	idleMicros: number;
	parts: PartTime[];
	top: Array<{ frame: string; part: string; micros: number }>;
}

function partOf(frame: CallFrame): string | undefined {
	if (frame.functionName === '(garbage collector)') return 'garbage collection';
	for (const [part, test] of PARTS) if (test.test(frame.url)) return part;
	return undefined;
}

/**
 * Self time of each node, its part, and the sum per part; idle time left out of the total. Only
 * the samples taken in `window` (epoch ms) count: start-up (loading modules, opening the store)
 * and shutdown are not a request's cost.
 */
export function summarise(file: string, window: Window, topN = 12): ThreadProfile {
	const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
	const byId = new Map(profile.nodes.map((n) => [n.id, n]));
	for (const n of profile.nodes) for (const c of n.children ?? []) byId.get(c)!.parent = n.id;
	const self = new Map<number, number>();
	profile.samples.forEach((id, i) =>
		self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)),
	);
	const partCache = new Map<number, string>();
	const partOfNode = (id: number): string => {
		const cached = partCache.get(id);
		if (cached) return cached;
		const path: number[] = [];
		let found: string | undefined;
		for (let cur: number | undefined = id; cur !== undefined; cur = byId.get(cur)!.parent) {
			const hit = partCache.get(cur) ?? partOf(byId.get(cur)!.callFrame);
			if (hit) {
				found = hit;
				break;
			}
			path.push(cur);
		}
		if (!found) {
			const own = byId.get(id)!.callFrame;
			found =
				own.functionName === '(program)'
					? 'node: native, outside JavaScript'
					: (NODE_PARTS.find(([, t]) =>
							path.some((p) => t.test(byId.get(p)!.callFrame.url)),
						)?.[0] ?? 'other');
		}
		for (const p of path) partCache.set(p, found);
		partCache.set(id, found);
		return found;
	};
	let total = 0;
	let idle = 0;
	const parts = new Map<string, number>();
	const frames = new Map<string, { part: string; micros: number }>();
	for (const [id, micros] of self) {
		const frame = byId.get(id)!.callFrame;
		if (frame.functionName === '(idle)') {
			idle += micros;
			continue;
		}
		total += micros;
		const part = partOfNode(id);
		parts.set(part, (parts.get(part) ?? 0) + micros);
		const where = frame.url
			? `${frame.url.replace(/^.*\/node_modules\//, '').replace(/^.*\/relay\//, 'relay/')}:${frame.lineNumber + 1}`
			: 'native';
		const key = `${frame.functionName || '(anonymous)'} ${where}`;
		const f = frames.get(key) ?? { part, micros: 0 };
		f.micros += micros;
		frames.set(key, f);
	}
	return {
		file,
		totalMicros: total,
		idleMicros: idle,
		parts: [...parts]
			.map(([part, micros]) => ({ part, micros }))
			.sort((a, b) => b.micros - a.micros),
		top: [...frames]
			.map(([frame, f]) => ({ frame, ...f }))
			.sort((a, b) => b.micros - a.micros)
			.slice(0, topN),
	};
}

/** Every .cpuprofile in `dir` (one per thread of the process). */
export function summariseDir(dir: string, window: Window, topN?: number): ThreadProfile[] {
	return readdirSync(dir)
		.filter((f) => f.endsWith('.cpuprofile'))
		.map((f) => summarise(join(dir, f), window, topN));
}

/** The breakdown per request, as a markdown table (µs per request and share of the thread). */
export function printBreakdown(label: string, threads: ThreadProfile[], requests: number): void {
	const per = (micros: number) => (micros / Math.max(1, requests)).toFixed(1);
	for (const t of threads.sort((a, b) => b.totalMicros - a.totalMicros)) {
		console.log(
			`\n${label}, ${t.file.split('/').pop()}: ${per(t.totalMicros)} µs of CPU per request (${(t.totalMicros / 1e6).toFixed(2)} s busy, ${(t.idleMicros / 1e6).toFixed(2)} s idle)`,
		);
		console.log('| part | µs / request | share |\n| --- | ---: | ---: |');
		for (const p of t.parts) {
			if (p.micros / t.totalMicros < 0.005) continue;
			console.log(
				`| ${p.part} | ${per(p.micros)} | ${((100 * p.micros) / t.totalMicros).toFixed(0)} % |`,
			);
		}
		console.log('top functions (self time):');
		for (const f of t.top)
			console.log(`  ${per(f.micros).padStart(6)} µs  ${f.frame}  [${f.part}]`);
	}
}
