// The stand of the trigger's benchmark (trigger.bench.ts): one real n8n per expression-engine
// set-up (the end-to-end suite's install, started with scripts/harness/n8n.ts), all with this
// package and the same workflows, a stand-in service answering at once (stand-in-service.ts), and
// what the runs read of n8n: its CPU and disk writes from /proc, the trigger's static data from
// its SQLite database.
import { createHash } from 'node:crypto';
import {
	cpSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	readdirSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { packTarball } from '../harness/n8n-install.ts';
import { N8n, PACKAGE_NAME, TRIGGER_TYPE, type WorkflowJson } from '../harness/n8n.ts';
import { run } from '../harness/proc.ts';
import { startStandIn, type StandIn } from './stand-in-service.ts';
import { handBuilt } from './trigger-workflows.ts';

/**
 * n8n's expression-engine set-ups measured side by side: its default (`vm`: an isolate taken for
 * every webhook call of a node other than its own Webhook node and for every execution), and `vm`
 * with lazy acquisition and the compile cache (an isolate taken only where an expression is
 * evaluated). BENCH_ENGINES picks (e.g. "lazy" alone; "legacy" adds N8N_EXPRESSION_ENGINE=legacy).
 */
export const ENGINE_ENV = {
	vm: {},
	lazy: {
		N8N_EXPRESSION_ENGINE_LAZY_ACQUIRE: 'true',
		N8N_EXPRESSION_ENGINE_COMPILE_CACHE: 'true',
	},
	legacy: { N8N_EXPRESSION_ENGINE: 'legacy' },
} as const;
export type Engine = keyof typeof ENGINE_ENV;

export const ENGINE_LABEL: Record<Engine, string> = {
	vm: "n8n's default engine (vm)",
	lazy: 'vm, lazy acquisition + compile cache',
	legacy: 'legacy engine (no isolates)',
};

/** The published workflows of each n8n. */
export const WORKFLOWS = [
	'webhook',
	'hand',
	'hand-shown',
	'off',
	'on',
	'off-full',
	'on-full',
] as const;
export type Workflow = (typeof WORKFLOWS)[number];

/** The trigger's workflows whose memory is filled to its 6,000 keys before n8n starts. */
const FULL: readonly Workflow[] = ['off-full', 'on-full'];

export interface Stand {
	standIn: StandIn;
	token: string;
	/** One n8n per engine set-up measured. */
	n8n: Partial<Record<Engine, N8n>>;
	/** The webhook path (under each n8n's URL) of each workflow: the same in every n8n. */
	paths: Record<Workflow, string>;
	workflowIds: Record<Workflow, string>;
	/** The trigger's typeVersion in the workflows. */
	triggerVersion: number;
	close(): Promise<void>;
}

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

/**
 * The trigger's version a merchant's new workflow gets: the node's default version in the built
 * package of `root` (BENCH_TRIGGER_VERSION to measure another, e.g. 1 as older workflows keep).
 */
function triggerVersionOf(root: string): number {
	if (process.env.BENCH_TRIGGER_VERSION) return Number(process.env.BENCH_TRIGGER_VERSION);
	const node = join(root, 'dist', 'nodes', 'PayPalychTrigger', 'PayPalychTrigger.node.js');
	try {
		const { PayPalychTrigger } = createRequire(join(root, 'package.json'))(node) as {
			PayPalychTrigger: new () => {
				description: { version: number | number[]; defaultVersion?: number };
			};
		};
		const { version, defaultVersion } = new PayPalychTrigger().description;
		return defaultVersion ?? (Array.isArray(version) ? Math.max(...version) : version);
	} catch {
		// A checkout without its own node_modules (a bare before/after copy): read the compiled text.
		const text = readFileSync(node, 'utf8');
		const given = /defaultVersion:\s*([\d.]+)/.exec(text) ?? /\bversion:\s*([\d.]+)/.exec(text);
		if (given) return Number(given[1]);
		const list = /\bversion:\s*\[([^\]]*)\]/.exec(text);
		return list ? Math.max(...list[1].split(',').map(Number)) : 1;
	}
}

function workflow(
	flow: Workflow,
	token: string,
	serviceUrl: string,
	triggerVersion: number,
): WorkflowJson {
	const id = `bench${flow.replace('-', '')}0000000000`.slice(0, 16);
	const settings = { saveDataSuccessExecution: 'none', saveDataErrorExecution: 'none' };
	const done = (nodes: WorkflowJson['nodes']) => ({
		id,
		name: `bench ${flow}`,
		nodes,
		connections: chain(nodes),
		settings,
		active: false,
	});
	if (flow === 'hand' || flow === 'hand-shown') {
		const path = `bench-${flow}`;
		return done([
			...handBuilt(token, serviceUrl, flow === 'hand-shown', path),
			{ ...noOp, position: [1400, 0] },
		]);
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
					typeVersion: triggerVersion,
					webhookId: `bench-${flow}`,
					parameters: {
						event: 'payment',
						confirmWithApi: flow === 'on' || flow === 'on-full',
						// Every status, as version 1's default: the bench's postbacks are all paid ones.
						paymentStatuses: [],
					},
					credentials: { payPalychApi: { id: CREDENTIAL_ID, name: 'PayPalych bench' } },
				};
	return done([{ ...first, position: [0, 0] }, noOp]);
}

/**
 * Installs the package built in `root` (this checkout, or another for a before/after) as n8n's
 * installer does: the `npm pack` tarball unpacked into `<dataFolder>/nodes/node_modules`.
 */
async function installFrom(tarball: string, dataFolder: string): Promise<void> {
	const nodesDir = join(dataFolder, 'nodes');
	const target = join(nodesDir, 'node_modules', PACKAGE_NAME);
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
}

/** The bench's merchant token: it signs the postbacks (the stand-in takes any token). */
export const TOKEN = 'bench|token-0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * The stand-in service, and one n8n per engine in `engines` with the workflows published (the
 * trigger's memory filled in the `-full` ones). `extraEnv` goes to every n8n (e.g. NODE_OPTIONS).
 */
export async function startStand(
	root: string,
	engines: readonly Engine[],
	extraEnv: Record<string, string> = {},
): Promise<Stand> {
	const standIn = await startStandIn();
	const triggerVersion = triggerVersionOf(root);
	const flows = WORKFLOWS.map((flow) => workflow(flow, TOKEN, standIn.url, triggerVersion));
	const packDir = mkdtempSync(join(tmpdir(), 'trigger-bench-pack-'));
	const folders: string[] = [];
	const n8n: Stand['n8n'] = {};
	const close = async () => {
		for (const instance of Object.values(n8n)) await instance.stop();
		standIn.close();
		for (const folder of [packDir, ...folders]) rmSync(folder, { recursive: true, force: true });
	};
	try {
		const tarball = await packTarball(packDir, root);
		// One n8n is set up through its CLI; the others start from a copy of its folder (the same
		// encryption key, credential, workflows and filled memories).
		let prepared: string | undefined;
		for (const engine of engines) {
			const userFolder = mkdtempSync(join(tmpdir(), `trigger-bench-n8n-${engine}-`));
			folders.push(userFolder);
			if (prepared !== undefined) cpSync(prepared, userFolder, { recursive: true });
			const instance = new N8n({
				userFolder,
				installPackage: (dataFolder) =>
					prepared === undefined ? installFrom(tarball, dataFolder) : Promise.resolve(),
				env: {
					EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'none',
					EXECUTIONS_DATA_SAVE_ON_ERROR: 'none',
					EXECUTIONS_DATA_SAVE_ON_PROGRESS: 'false',
					...ENGINE_ENV[engine],
					...extraEnv,
				},
			});
			n8n[engine] = instance;
			await instance.prepare();
			if (prepared === undefined) {
				await instance.importCredentials([
					{
						id: CREDENTIAL_ID,
						name: 'PayPalych bench',
						type: 'payPalychApi',
						data: { apiToken: TOKEN, baseUrl: standIn.url },
					},
				]);
				await instance.importWorkflows(flows);
				publishAll(instance, flows);
				for (const flow of FULL) fillMemory(instance, flows[WORKFLOWS.indexOf(flow)].id);
				prepared = userFolder;
			}
		}
		// Started one after another: n8n's start is the heaviest thing it does.
		for (const engine of engines) await n8n[engine]!.start();
	} catch (error) {
		await close();
		throw error;
	}
	const first = n8n[engines[0]]!;
	const paths = {} as Record<Workflow, string>;
	const workflowIds = {} as Record<Workflow, string>;
	WORKFLOWS.forEach((flow, i) => {
		workflowIds[flow] = flows[i].id;
		paths[flow] = new URL(first.webhookUrl(flows[i].id, flows[i].nodes[0].name)).pathname;
	});
	return { standIn, token: TOKEN, n8n, paths, workflowIds, triggerVersion, close };
}

const md5 = (s: string) => createHash('md5').update(s).digest('hex').toUpperCase();

/**
 * A signed payment postback of the stand-in's payment `TrsId` (P<n>: its order ID shown only on
 * its bill; S<n>: on the payment too), as the live service sends it. The workflows that do not
 * confirm take any of them.
 */
export function signedPostback(trsId: string, token = TOKEN): string {
	const n = trsId.slice(1);
	const invId = `order-${n}`;
	return new URLSearchParams({
		InvId: invId,
		OutSum: '100.00',
		Commission: '3.00',
		Currency: 'RUB',
		CurrencyIn: 'RUB',
		TrsId: trsId,
		Status: 'SUCCESS',
		AccountType: 'BANK_CARD',
		AccountNumber: '553691******2346',
		BalanceAmount: '97.00',
		BalanceCurrency: 'RUB',
		SignatureValue: md5(`100.00:${invId}:${token}`),
	}).toString();
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

const staticDataFile = (n8n: N8n) => join(n8n.dataFolder, 'database.sqlite');

/** The size in bytes of a workflow's stored static data. */
export function staticDataBytes(n8n: N8n, workflowId: string): number {
	const db = new DatabaseSync(staticDataFile(n8n), { readOnly: true });
	try {
		const row = db
			.prepare('SELECT length(staticData) AS n FROM workflow_entity WHERE id = ?')
			.get(workflowId) as { n: number | null } | undefined;
		return row?.n ?? 0;
	} finally {
		db.close();
	}
}

/**
 * Publishes the workflows as n8n 2.x's `publish:workflow` does (the version imported becomes the
 * active one), in one statement rather than one CLI start per workflow. n8n must be stopped.
 */
function publishAll(n8n: N8n, flows: WorkflowJson[]): void {
	const db = new DatabaseSync(staticDataFile(n8n));
	try {
		const publish = db.prepare(
			'UPDATE workflow_entity SET active = 1, activeVersionId = versionId WHERE id = ?',
		);
		for (const wf of flows) {
			if (publish.run(wf.id).changes !== 1) throw new Error(`workflow ${wf.id} was not imported`);
		}
	} finally {
		db.close();
	}
}

/**
 * Fills a trigger's memory to its 6,000 keys, as an older version stored it (a list of keys): every
 * version reads that form (a newer one upgrades it on its first write). n8n must be stopped.
 */
export function fillMemory(n8n: N8n, workflowId: string, keys = 6000): void {
	const list = Array.from({ length: keys }, (_, i) =>
		JSON.stringify(['payment', `FILL-${i}`, 'SUCCESS', '10000c', `order-FILL-${i}`]),
	);
	const db = new DatabaseSync(staticDataFile(n8n));
	try {
		db.prepare('UPDATE workflow_entity SET staticData = ? WHERE id = ?').run(
			JSON.stringify({ [`node:${TRIGGER_NODE}`]: { seenPostbacks: list } }),
			workflowId,
		);
	} finally {
		db.close();
	}
}
