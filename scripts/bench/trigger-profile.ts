// node scripts/bench/trigger-profile.ts: where n8n's CPU goes for one case of bench:trigger. The
// stand of bench:trigger (the stand-in service answering at once), one n8n under PROFILE_ENGINE
// (`vm`, n8n's default, or `lazy`: lazy acquisition and the compile cache) started under V8's
// sampling profiler (--cpu-prof), new postbacks at PROFILE_RATE/s (10) for PROFILE_SECONDS (20) to
// the case PROFILE_FLOW (`off`, the default: confirmation off; `on`, `on-shown`, `hand`,
// `hand-shown`, `webhook`, `off-full`, `on-full`), then n8n's main process profile read back: the
// CPU per execution with a credential read on the stack (n8n-core's getCredentials, the CLI's
// CredentialsHelper, the Cipher), with n8n's expression engine on the stack, the trigger's own
// code, next to the total. Shares of one process's samples: the machine's load changes the total,
// much less the shares. Synchronous stacks only: the database work a read awaits resumes under
// TypeORM's frames, not the caller's (TypeORM's own share is printed too).
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLoop, ROOT } from '../../relay/bench/common.ts';
import { ensureN8nInstalled } from '../harness/n8n.ts';
import { signedPostback, startStand, type Engine } from './trigger-stand.ts';
import { CASES, CASE_LABEL } from './trigger-table.ts';

const RATE = Number(process.env.PROFILE_RATE ?? 10);
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 20);
const ENGINE = (process.env.PROFILE_ENGINE ?? 'vm') as Engine;
const CASE = CASES.find((c) => c.name === (process.env.PROFILE_FLOW ?? 'off'));
if (!CASE) throw new Error(`PROFILE_FLOW: one of ${CASES.map((c) => c.name).join(', ')}`);

interface ProfileNode {
	id: number;
	callFrame: { functionName: string; url: string };
	children?: number[];
}
interface CpuProfile {
	nodes: ProfileNode[];
	samples: number[];
	timeDeltas: number[];
	endTime: number;
}

/** What a frame is, for the shares printed; the first match on a sample's stack counts. */
const CATEGORIES: Array<[string, (f: ProfileNode['callFrame']) => boolean]> = [
	[
		'a credential read (getCredentials, CredentialsHelper, Cipher)',
		(f) =>
			/^_?getCredentials$|^getDecrypted$|^getCredentialsProperties$/.test(f.functionName) ||
			/credentials-helper|encryption|cipher/i.test(f.url),
	],
	['the authenticated request helper', (f) => /httpRequestWithAuthentication/.test(f.functionName)],
	[
		'a service call (any request helper, axios, follow-redirects)',
		(f) =>
			/^httpRequest|^request$|OutboundHttp/.test(f.functionName) ||
			/\/(axios|follow-redirects|backend-network)\//.test(f.url),
	],
	['static data saved (saveStaticData)', (f) => /saveStaticData/.test(f.functionName)],
	[
		"n8n's expression engine (any caller)",
		(f) =>
			/\/(@n8n\/tournament|@n8n\/expression-runtime|isolated-vm)\//.test(f.url) ||
			/expression/i.test(f.url),
	],
	['the trigger (this package)', (f) => f.url.includes('/node_modules/n8n-nodes-paypalych/')],
	['TypeORM (any caller)', (f) => f.url.includes('/typeorm/')],
];

/**
 * Milliseconds of samples by category (a sample counts in each category on its stack), over the
 * samples taken within `window` (µs before the profile's end: [from, to]), which leaves n8n's
 * start and stop out.
 */
function shares(
	profile: CpuProfile,
	window: { from: number; to: number },
): {
	totalMs: number;
	byCategory: Map<string, number>;
	/** Under a credential read: milliseconds by the sampled (leaf) function. */
	credentialLeaves: Map<string, number>;
	/** Milliseconds of own (leaf) time by the package the sampled function is in. */
	ownByPackage: Map<string, number>;
} {
	const parent = new Map<number, number>();
	const byId = new Map<number, ProfileNode>();
	for (const node of profile.nodes) {
		byId.set(node.id, node);
		for (const child of node.children ?? []) parent.set(child, node.id);
	}
	const byCategory = new Map<string, number>(CATEGORIES.map(([name]) => [name, 0]));
	const credentialLeaves = new Map<string, number>();
	const ownByPackage = new Map<string, number>();
	let totalMs = 0;
	const at: number[] = [];
	let t = profile.endTime;
	for (let i = profile.samples.length - 1; i >= 0; i--) {
		at[i] = t;
		t -= profile.timeDeltas[i] ?? 0;
	}
	profile.samples.forEach((id, i) => {
		const before = profile.endTime - at[i];
		if (before > window.from || before < window.to) return;
		const ms = (profile.timeDeltas[i] ?? 0) / 1000;
		const frame = byId.get(id)?.callFrame;
		if (!frame || frame.functionName === '(idle)' || frame.functionName === '(program)') return;
		totalMs += ms;
		const seen = new Set<string>();
		for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
			const f = byId.get(at)?.callFrame;
			if (!f) break;
			for (const [name, test] of CATEGORIES) if (!seen.has(name) && test(f)) seen.add(name);
		}
		for (const name of seen) byCategory.set(name, (byCategory.get(name) ?? 0) + ms);
		const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules)/.exec(frame.url)?.[1];
		const where =
			pkg ??
			(frame.url === '' ? `(native) ${frame.functionName}` : 'node: ' + frame.url.split('/').pop());
		ownByPackage.set(where, (ownByPackage.get(where) ?? 0) + ms);
		if (seen.has(CATEGORIES[0][0])) {
			const leaf = `${frame.functionName || '(anonymous)'} ${frame.url.split('/node_modules/').pop() ?? ''}`;
			credentialLeaves.set(leaf, (credentialLeaves.get(leaf) ?? 0) + ms);
		}
	});
	return { totalMs, byCategory, credentialLeaves, ownByPackage };
}

async function main(): Promise<void> {
	await ensureN8nInstalled();
	const profDir = mkdtempSync(join(tmpdir(), 'trigger-profile-'));
	const stand = await startStand(ROOT, [ENGINE], {
		NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profDir}`,
	});
	try {
		const n8n = stand.n8n[ENGINE]!;
		const mainPid = n8n.pid;
		const path = stand.paths[CASE!.flow];
		let n = 0;
		const next = () => signedPostback(`${CASE!.orderShown ? 'S' : 'P'}${process.pid}-prof-${n++}`);
		for (let i = 0; i < 5; i++) {
			await fetch(`${n8n.url}${path}`, {
				method: 'POST',
				headers: { 'content-type': 'application/x-www-form-urlencoded' },
				body: next(),
			}).then((r) => r.arrayBuffer());
		}
		const loadStart = performance.now();
		const load = await openLoop([n8n.url], RATE, SECONDS, 16, next, path);
		const ok = load.requests.total - load.non2xx - load.errors;
		// The executions still running after the load (the trigger answers before them).
		await new Promise((r) => setTimeout(r, 3000));
		const loadEnd = performance.now();
		await n8n.stop(); // the profile is written as n8n exits
		const stopped = performance.now();
		const file = readdirSync(profDir).find((f) => f.includes(`.${mainPid}.`));
		if (!file) throw new Error(`no profile of n8n's main process (${mainPid}) in ${profDir}`);
		const { totalMs, byCategory, credentialLeaves, ownByPackage } = shares(
			JSON.parse(readFileSync(join(profDir, file), 'utf8')) as CpuProfile,
			{ from: (stopped - loadStart) * 1000, to: (stopped - loadEnd) * 1000 },
		);
		const executions = ok;
		console.log(
			`${CASE_LABEL[CASE!.name]}, ${ENGINE}, ${RATE}/s for ${SECONDS} s: ${ok} answered 2xx, ${load.non2xx + load.errors} not; p50 ${load.latency.p50} ms`,
		);
		console.log(
			`n8n main process, sampled CPU: ${totalMs.toFixed(0)} ms, ${(totalMs / executions).toFixed(1)} ms per execution`,
		);
		for (const [name, ms] of byCategory) {
			console.log(
				`  ${name}: ${(ms / executions).toFixed(2)} ms per execution (${((100 * ms) / totalMs).toFixed(1)} %)`,
			);
		}
		console.log('  under a credential read, by sampled function (top 8):');
		for (const [leaf, ms] of [...credentialLeaves].sort((a, b) => b[1] - a[1]).slice(0, 8))
			console.log(`    ${(ms / executions).toFixed(2)} ms  ${leaf}`);
		console.log('  own time by package (top 12):');
		for (const [pkg, ms] of [...ownByPackage].sort((a, b) => b[1] - a[1]).slice(0, 12))
			console.log(
				`    ${(ms / executions).toFixed(2)} ms (${((100 * ms) / totalMs).toFixed(1)} %)  ${pkg}`,
			);
	} finally {
		await stand.close();
		rmSync(profDir, { recursive: true, force: true });
	}
}

await main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
