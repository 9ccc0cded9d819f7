// The stand of the trigger's benchmark (trigger.bench.ts): one real n8n (the end-to-end suite's
// install, started with scripts/harness/n8n.ts) with this package, the sandbox as the service,
// the benchmark's workflows, and what the runs read of n8n: its CPU and disk writes from /proc,
// the trigger's static data from its SQLite database.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startSandbox, type RunningSandbox } from '../../sandbox/src/index.ts';
import { packTarball } from '../harness/n8n-install.ts';
import { N8n, PACKAGE_NAME, TRIGGER_TYPE, type WorkflowJson } from '../harness/n8n.ts';
import { run } from '../harness/proc.ts';
import { handBuilt } from './trigger-workflows.ts';

/**
 * The benchmark's workflows: n8n's Webhook node (no check), the hand-built confirmation (what a
 * careful merchant builds from n8n's own nodes) and the trigger three ways.
 */
export const FLOWS = ['webhook', 'hand', 'off', 'on', 'on-bill'] as const;
export type Flow = (typeof FLOWS)[number];

/** The workflows that confirm postbacks with the service (sent genuine postbacks of paid bills). */
export const CONFIRMING: readonly Flow[] = ['hand', 'on', 'on-bill'];

export const FLOW_LABEL: Record<Flow, string> = {
	webhook: "n8n's Webhook node, no check",
	hand: 'hand-built confirmation (Webhook, Crypto, 3 IF, 2 HTTP Request)',
	off: 'PayPalych Trigger, confirmation off',
	on: 'PayPalych Trigger, confirmation on (InvId, the default)',
	'on-bill': 'PayPalych Trigger, confirmation on, Bill ID Only',
};

const TRIGGER_NODE = 'PayPalych Trigger';
const CREDENTIAL_ID = 'benchPayPalych';
const noOp = {
	name: 'No Op',
	type: 'n8n-nodes-base.noOp',
	typeVersion: 1,
	position: [250, 0],
	parameters: {},
};

function chain(nodes: WorkflowJson['nodes']): WorkflowJson['connections'] {
	const connections: WorkflowJson['connections'] = {};
	for (let i = 0; i + 1 < nodes.length; i++) {
		// An IF's first output is its "true" branch; nothing follows its "false" one.
		connections[nodes[i].name] = { main: [[{ node: nodes[i + 1].name, type: 'main', index: 0 }]] };
	}
	return connections;
}

function workflow(flow: Flow, token: string, serviceUrl: string): WorkflowJson {
	const id = `bench${flow.replace('-', '')}00000000`.slice(0, 16);
	const settings = { saveDataSuccessExecution: 'none', saveDataErrorExecution: 'none' };
	if (flow === 'hand') {
		const nodes = [...handBuilt(token, serviceUrl), { ...noOp, position: [1400, 0] }];
		return { id, name: `bench ${flow}`, nodes, connections: chain(nodes), settings, active: false };
	}
	const first =
		flow === 'webhook'
			? {
					name: 'Webhook',
					type: 'n8n-nodes-base.webhook',
					typeVersion: 2,
					webhookId: 'bench-webhook',
					parameters: {
						httpMethod: 'POST',
						path: 'bench-webhook',
						// Answers after its (No-Op) execution, as the hand-built flow does: an answer
						// rate is then an execution rate.
						responseMode: 'lastNode',
						responseData: 'firstEntryJson',
						options: {},
					},
				}
			: {
					name: TRIGGER_NODE,
					type: TRIGGER_TYPE,
					typeVersion: 1,
					webhookId: `bench-${flow}`,
					parameters: {
						event: 'payment',
						confirmWithApi: flow !== 'off',
						...(flow === 'on-bill' ? { orderCheck: 'billId' } : {}),
					},
					credentials: { payPalychApi: { id: CREDENTIAL_ID, name: 'PayPalych bench' } },
				};
	const nodes = [{ ...first, position: [0, 0] }, noOp];
	return { id, name: `bench ${flow}`, nodes, connections: chain(nodes), settings, active: false };
}

/**
 * Installs the package built in `root` (this checkout, or another for a before/after) as n8n's
 * installer does: the `npm pack` tarball unpacked into `<dataFolder>/nodes/node_modules`.
 */
async function installFrom(root: string, dataFolder: string): Promise<void> {
	const nodesDir = join(dataFolder, 'nodes');
	const target = join(nodesDir, 'node_modules', PACKAGE_NAME);
	const packDir = mkdtempSync(join(tmpdir(), 'trigger-bench-pack-'));
	try {
		const tarball = await packTarball(packDir, root);
		rmSync(target, { recursive: true, force: true });
		mkdirSync(target, { recursive: true });
		const untar = await run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
		if (untar.code !== 0) throw new Error(`unpacking the package failed: ${untar.stderr}`);
		const manifest = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as {
			version: string;
		};
		writeFileSync(
			join(nodesDir, 'package.json'),
			JSON.stringify({
				name: 'installed-nodes',
				private: true,
				dependencies: { [PACKAGE_NAME]: manifest.version },
			}),
		);
	} finally {
		rmSync(packDir, { recursive: true, force: true });
	}
}

export interface Stand {
	n8n: N8n;
	sandbox: RunningSandbox;
	token: string;
	shopId: string;
	/** The webhook path (under the n8n URL) of each workflow. */
	paths: Record<Flow, string>;
	workflowIds: Record<Flow, string>;
	close(): Promise<void>;
}

async function control<T>(sandbox: RunningSandbox, method: string, path: string, body?: unknown) {
	const res = await fetch(`${sandbox.url}/_sandbox${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await res.text();
	if (!res.ok) throw new Error(`sandbox ${method} ${path}: ${res.status} ${text}`);
	return JSON.parse(text) as T;
}

/** The sandbox, a merchant with the live service's extras, n8n with the workflows published. */
export async function startStand(root: string, port: number): Promise<Stand> {
	const sandbox = await startSandbox({ port: 0, profile: 'live' });
	const merchant = await control<{ merchantId: string; token: string; shopId: string }>(
		sandbox,
		'POST',
		'/merchants',
		{ liveExtras: true },
	);
	await control(sandbox, 'PATCH', `/shops/${merchant.shopId}`, {
		resultUrl: 'http://127.0.0.1:9/closed',
		successUrl: null,
		failUrl: null,
	});
	const userFolder = mkdtempSync(join(tmpdir(), 'trigger-bench-n8n-'));
	const n8n = new N8n({
		userFolder,
		port,
		installPackage: (dataFolder) => installFrom(root, dataFolder),
		env: {
			EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'none',
			EXECUTIONS_DATA_SAVE_ON_ERROR: 'none',
			EXECUTIONS_DATA_SAVE_ON_PROGRESS: 'false',
			// BENCH_EXPRESSION_ENGINE=legacy: n8n's expressions without its isolate ("vm", the
			// default, takes a fresh isolate for every webhook call of a node other than its own
			// Webhook node, and for every execution): to see what the isolates cost.
			...(process.env.BENCH_EXPRESSION_ENGINE
				? { N8N_EXPRESSION_ENGINE: process.env.BENCH_EXPRESSION_ENGINE }
				: {}),
		},
	});
	await n8n.prepare();
	await n8n.importCredentials([
		{
			id: CREDENTIAL_ID,
			name: 'PayPalych bench',
			type: 'payPalychApi',
			data: { apiToken: merchant.token, baseUrl: sandbox.url },
		},
	]);
	const flows = FLOWS.map((flow) => workflow(flow, merchant.token, sandbox.url));
	await n8n.importWorkflows(flows);
	for (const wf of flows) await n8n.publishWorkflow(wf.id);
	await n8n.start();
	const paths = {} as Record<Flow, string>;
	const workflowIds = {} as Record<Flow, string>;
	FLOWS.forEach((flow, i) => {
		workflowIds[flow] = flows[i].id;
		const url = n8n.webhookUrl(flows[i].id, flows[i].nodes[0].name);
		paths[flow] = new URL(url).pathname;
	});
	return {
		n8n,
		sandbox,
		token: merchant.token,
		shopId: merchant.shopId,
		paths,
		workflowIds,
		async close() {
			await n8n.stop();
			await sandbox.close();
			rmSync(userFolder, { recursive: true, force: true });
		},
	};
}

/** Pays `count` bills at the sandbox: their genuine postbacks, as form bodies. */
export async function genuinePostbacks(
	stand: Stand,
	count: number,
	tag: string,
): Promise<string[]> {
	const bodies: string[] = [];
	for (let i = 0; i < count; i++) {
		const res = await fetch(`${stand.sandbox.url}/api/v1/bill/create`, {
			method: 'POST',
			headers: { authorization: `Bearer ${stand.token}`, accept: 'application/json' },
			body: new URLSearchParams({
				amount: '100.00',
				shop_id: stand.shopId,
				order_id: `${tag}-${i}`,
			}),
		});
		const { bill_id } = (await res.json()) as { bill_id: string };
		const paid = await control<{ postback: Record<string, string> }>(
			stand.sandbox,
			'POST',
			`/bills/${bill_id}/pay`,
			{ outcome: 'full' },
		);
		bodies.push(new URLSearchParams(paid.postback).toString());
	}
	return bodies;
}

const md5 = (s: string) => createHash('md5').update(s).digest('hex').toUpperCase();

/** A signed payment postback no service has heard of (for the workflows that do not confirm). */
export function signedPostback(token: string, trsId: string): string {
	const invId = `order-${trsId}`;
	return new URLSearchParams({
		InvId: invId,
		OutSum: '100.00',
		CurrencyIn: 'RUB',
		TrsId: trsId,
		Status: 'SUCCESS',
		SignatureValue: md5(`100.00:${invId}:${token}`),
	}).toString();
}

/** Counts the sandbox's API calls: a fault that changes nothing, whose count goes down per call. */
export async function apiCallCounter(stand: Stand): Promise<() => Promise<number>> {
	const start = 1_000_000;
	await control(stand.sandbox, 'DELETE', '/faults');
	await control(stand.sandbox, 'POST', '/faults', {
		kind: 'delay',
		delayMs: 0,
		path: '/api/',
		count: start,
	});
	return async () => {
		const { faults } = await control<{ faults: Array<{ remaining: number }> }>(
			stand.sandbox,
			'GET',
			'/faults',
		);
		return start - (faults[0]?.remaining ?? 0);
	};
}

/** n8n's counters summed over its process group (task runners included): CPU ticks, bytes written. */
export function n8nCounters(pid: number | undefined): { ticks: number; writeBytes: number } {
	let ticks = 0;
	let writeBytes = 0;
	if (pid === undefined) return { ticks, writeBytes };
	for (const entry of readdirSync('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		try {
			const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
			const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			if (Number(f[2]) !== pid) continue; // process group
			ticks += Number(f[11]) + Number(f[12]);
			const io = /write_bytes: (\d+)/.exec(readFileSync(`/proc/${entry}/io`, 'utf8'));
			writeBytes += io ? Number(io[1]) : 0;
		} catch {
			// gone meanwhile
		}
	}
	return { ticks, writeBytes };
}

const staticDataFile = (stand: Stand) => join(stand.n8n.dataFolder, 'database.sqlite');

/** The size in bytes of a workflow's stored static data. */
export function staticDataBytes(stand: Stand, flow: Flow): number {
	const db = new DatabaseSync(staticDataFile(stand), { readOnly: true });
	try {
		const row = db
			.prepare('SELECT length(staticData) AS n FROM workflow_entity WHERE id = ?')
			.get(stand.workflowIds[flow]) as { n: number | null } | undefined;
		return row?.n ?? 0;
	} finally {
		db.close();
	}
}

/**
 * Fills a trigger's memory to its 6,000 keys, as an older version stored it (a list of keys): both
 * checkouts read that form (the new one upgrades it on its first write). n8n must be stopped.
 */
export function fillMemory(stand: Stand, flow: Flow, keys = 6000): void {
	const list = Array.from({ length: keys }, (_, i) =>
		JSON.stringify(['payment', `FILL-${flow}-${i}`, 'SUCCESS', '10000c', `order-FILL-${i}`]),
	);
	const db = new DatabaseSync(staticDataFile(stand));
	try {
		db.prepare('UPDATE workflow_entity SET staticData = ? WHERE id = ?').run(
			JSON.stringify({ [`node:${TRIGGER_NODE}`]: { seenPostbacks: list } }),
			stand.workflowIds[flow],
		);
	} finally {
		db.close();
	}
}
