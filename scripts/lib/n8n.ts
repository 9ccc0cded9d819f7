/**
 * Drives a real n8n (the version scripts/install-n8n.sh caches) with this package installed the
 * way merchants install a community package: under `<user folder>/.n8n/nodes/node_modules`, so
 * its node types are `n8n-nodes-paypalych.payPalych` and `n8n-nodes-paypalych.payPalychTrigger`.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { freePort, run, sleep, startService, waitForHttp, type RunResult, type Service } from './proc.ts';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const PACKAGE_NAME = 'n8n-nodes-paypalych';
export const N8N_VERSION = process.env.N8N_VERSION ?? '2.41.1';
export const NODE_TYPE = `${PACKAGE_NAME}.payPalych`;
export const TRIGGER_TYPE = `${PACKAGE_NAME}.payPalychTrigger`;

/** The folder holding cached tools: `$PAYPALYCH_CACHE` or `~/.cache/n8n-nodes-paypalych`. */
export function cacheRoot(): string {
	return process.env.PAYPALYCH_CACHE ?? join(homedir(), '.cache', PACKAGE_NAME);
}

export function n8nInstallDir(): string {
	return join(cacheRoot(), `n8n-${N8N_VERSION}`);
}

function n8nBinScript(): string {
	return join(n8nInstallDir(), 'node_modules', 'n8n', 'bin', 'n8n');
}

/** Node 24: the running one when it is 24+, otherwise the one the project brings. */
export function nodeBinary(): string {
	const major = Number(process.versions.node.split('.')[0]);
	if (major >= 24) return process.execPath;
	const local = join(REPO_ROOT, 'node_modules', '.bin', 'node');
	if (existsSync(local)) return local;
	throw new Error(`Node 24 is required (running ${process.versions.node}); run through npm so node_modules/.bin comes first`);
}

export function isN8nInstalled(): boolean {
	return existsSync(join(n8nInstallDir(), '.installed')) && existsSync(n8nBinScript());
}

/**
 * Makes sure n8n is installed, running scripts/install-n8n.sh (with its progress on the terminal)
 * the first time on a machine. Later calls return at once.
 */
export async function ensureN8nInstalled(print: (line: string) => void = (l) => process.stdout.write(l + '\n')): Promise<void> {
	if (isN8nInstalled()) return;
	print(`n8n ${N8N_VERSION} is not installed yet: installing it once into ${n8nInstallDir()} (about 4 minutes, 3 GB)`);
	const binDir = dirname(nodeBinary());
	const code = await new Promise<number>((resolvePromise, reject) => {
		const child = spawn('bash', [join(REPO_ROOT, 'scripts', 'install-n8n.sh')], {
			cwd: REPO_ROOT,
			stdio: ['ignore', 'inherit', 'inherit'],
			env: { ...process.env, PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${binDir}:${process.env.PATH ?? ''}`, N8N_VERSION },
		});
		child.on('error', reject);
		child.on('exit', (c) => resolvePromise(c ?? 1));
	});
	if (code !== 0 || !isN8nInstalled()) {
		throw new Error(`installing n8n failed (exit ${code}); rerun it with: npm run n8n:install`);
	}
}

/** Files the built package must contain (the `n8n` section of package.json). */
function packageEntryFiles(): string[] {
	const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { n8n: { nodes: string[]; credentials: string[] } };
	return [...manifest.n8n.nodes, ...manifest.n8n.credentials];
}

/**
 * Installs the built package into `<dataFolder>/nodes/node_modules/n8n-nodes-paypalych` exactly as
 * n8n's community-package installer does: the `npm pack` tarball (only what package.json's
 * `files` ships), unpacked, with dev/peer/optional dependencies removed from its package.json,
 * and recorded in `<dataFolder>/nodes/package.json`. A copy, not a link: a rebuild of dist/ in
 * the working tree does not change a running n8n.
 */
export async function installPackage(dataFolder: string): Promise<string> {
	const npmCli = process.env.npm_execpath && process.env.npm_execpath.endsWith('.js') ? process.env.npm_execpath : undefined;
	const nodesDir = join(dataFolder, 'nodes');
	const target = join(nodesDir, 'node_modules', PACKAGE_NAME);
	const entries = packageEntryFiles();
	let lastProblem = '';
	for (let attempt = 1; attempt <= 20; attempt++) {
		const missing = entries.filter((f) => !existsSync(join(REPO_ROOT, f)));
		if (missing.length > 0) {
			lastProblem = `dist/ lacks ${missing.join(', ')} (run npm run build)`;
			await sleep(1_500);
			continue;
		}
		const packDir = mkdtempSync(join(tmpdir(), 'paypalych-pack-'));
		try {
			const packArgs = ['pack', '--json', '--ignore-scripts', '--pack-destination', packDir];
			const packed = npmCli
				? await run(nodeBinary(), [npmCli, ...packArgs], { cwd: REPO_ROOT, timeoutMs: 120_000 })
				: await run('npm', packArgs, { cwd: REPO_ROOT, timeoutMs: 120_000 });
			if (packed.code !== 0) throw new Error(`npm pack failed: ${packed.stderr.slice(-2000)}`);
			const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{ filename: string; version: string }>;
			rmSync(target, { recursive: true, force: true });
			mkdirSync(target, { recursive: true });
			const untar = await run('tar', ['-xzf', join(packDir, info[0].filename), '-C', target, '--strip-components=1']);
			if (untar.code !== 0) throw new Error(`unpacking the package failed: ${untar.stderr}`);
			const stillMissing = entries.filter((f) => !existsSync(join(target, f)));
			if (stillMissing.length > 0) {
				// dist/ was being rebuilt while npm packed it: try again.
				lastProblem = `the packed package lacks ${stillMissing.join(', ')}`;
				await sleep(1_500);
				continue;
			}
			const manifestFile = join(target, 'package.json');
			const { devDependencies: _dev, peerDependencies: _peer, optionalDependencies: _optional, ...manifest } = JSON.parse(
				readFileSync(manifestFile, 'utf8'),
			) as Record<string, unknown>;
			writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
			writeFileSync(
				join(nodesDir, 'package.json'),
				JSON.stringify({ name: 'installed-nodes', private: true, dependencies: { [PACKAGE_NAME]: info[0].version } }, null, 2) + '\n',
			);
			return target;
		} finally {
			rmSync(packDir, { recursive: true, force: true });
		}
	}
	throw new Error(`could not install the package into n8n: ${lastProblem}`);
}

export interface WorkflowJson {
	id: string;
	name: string;
	nodes: Array<Record<string, unknown> & { name: string; type: string; parameters: Record<string, unknown>; webhookId?: string }>;
	connections: Record<string, unknown>;
	[key: string]: unknown;
}

export interface CredentialJson {
	id: string;
	name: string;
	type: string;
	data: Record<string, unknown>;
}

export interface N8nOptions {
	/** N8N_USER_FOLDER: n8n keeps everything under `<userFolder>/.n8n`. */
	userFolder: string;
	/** HTTP port of the editor, REST API and webhooks; a free one when omitted. */
	port?: number;
	/** Where `n8n start` writes its output; `<userFolder>/n8n.log` by default. */
	logFile?: string;
	/** Extra environment for every n8n process. */
	env?: Record<string, string>;
}

export interface Owner {
	email: string;
	password: string;
	firstName: string;
	lastName: string;
}

export interface RegisteredWebhook {
	workflowId: string;
	node: string;
	method: string;
	webhookPath: string;
	url: string;
}

/** One n8n instance: its user folder, its CLI and its server. */
export class N8n {
	readonly userFolder: string;
	readonly logFile: string;
	port = 0;
	private brokerPort = 0;
	private readonly extraEnv: Record<string, string>;
	private server: Service | undefined;
	private packageInstalled = false;
	private cookie: string | undefined;
	private readonly browserId = randomUUID();

	constructor(options: N8nOptions) {
		this.userFolder = resolve(options.userFolder);
		this.logFile = options.logFile ?? join(this.userFolder, 'n8n.log');
		this.port = options.port ?? 0;
		this.extraEnv = options.env ?? {};
	}

	get url(): string {
		return `http://127.0.0.1:${this.port}`;
	}

	get dataFolder(): string {
		return join(this.userFolder, '.n8n');
	}

	get running(): boolean {
		return this.server !== undefined;
	}

	/** Picks ports and installs the package the way n8n installs a community package. */
	async prepare(): Promise<void> {
		if (this.port === 0) this.port = await freePort();
		if (this.brokerPort === 0) this.brokerPort = await freePort();
		if (!this.packageInstalled) {
			await installPackage(this.dataFolder);
			this.packageInstalled = true;
		}
	}

	env(): Record<string, string> {
		return {
			N8N_USER_FOLDER: this.userFolder,
			N8N_PORT: String(this.port),
			N8N_LISTEN_ADDRESS: '127.0.0.1',
			N8N_HOST: '127.0.0.1',
			N8N_PROTOCOL: 'http',
			N8N_EDITOR_BASE_URL: this.url,
			WEBHOOK_URL: `${this.url}/`,
			N8N_DIAGNOSTICS_ENABLED: 'false',
			N8N_PERSONALIZATION_ENABLED: 'false',
			N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
			N8N_TEMPLATES_ENABLED: 'false',
			N8N_SECURE_COOKIE: 'false',
			N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'false',
			N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
			N8N_RUNNERS_BROKER_PORT: String(this.brokerPort),
			N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
			N8N_COMMUNITY_PACKAGES_PREVENT_LOADING: 'false',
			DB_SQLITE_POOL_SIZE: '2',
			N8N_LOG_LEVEL: 'info',
			NODE_ENV: 'production',
			EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all',
			EXECUTIONS_DATA_SAVE_ON_ERROR: 'all',
			...this.extraEnv,
		};
	}

	/** Runs an n8n CLI command (`import:workflow`, `publish:workflow`, `execute`, ...). */
	async cli(args: string[], options: { allowFailure?: boolean; timeoutMs?: number; logLevel?: string } = {}): Promise<RunResult> {
		// Its own task-runner broker port: the CLI may run beside `n8n start`.
		const result = await run(nodeBinary(), [n8nBinScript(), ...args], {
			cwd: this.userFolder,
			env: { ...this.env(), N8N_LOG_LEVEL: options.logLevel ?? 'warn', N8N_RUNNERS_BROKER_PORT: String(await freePort()) },
			timeoutMs: options.timeoutMs ?? 180_000,
		});
		if (result.code !== 0 && !options.allowFailure) {
			throw new Error(`n8n ${args.join(' ')} failed (exit ${result.code}):\n${(result.stdout + result.stderr).slice(-3000)}`);
		}
		return result;
	}

	/** Imports workflows in one CLI call (existing ids are overwritten and left unpublished). */
	async importWorkflows(workflows: WorkflowJson[]): Promise<void> {
		const file = join(this.userFolder, `import-workflows-${randomUUID()}.json`);
		writeFileSync(file, JSON.stringify(workflows, null, 2));
		try {
			await this.cli(['import:workflow', `--input=${file}`]);
		} finally {
			rmSync(file, { force: true });
		}
	}

	/** Imports credentials with plain data; n8n encrypts them with the instance key. */
	async importCredentials(credentials: CredentialJson[]): Promise<void> {
		const file = join(this.userFolder, `import-credentials-${randomUUID()}.json`);
		writeFileSync(file, JSON.stringify(credentials, null, 2), { mode: 0o600 });
		try {
			await this.cli(['import:credentials', `--input=${file}`]);
		} finally {
			rmSync(file, { force: true });
		}
	}

	/** Marks a workflow published: it is activated when `n8n start` next starts. */
	async publishWorkflow(id: string): Promise<void> {
		if (this.running) throw new Error('publish:workflow only takes effect at start-up: stop n8n first');
		await this.cli(['publish:workflow', `--id=${id}`]);
	}

	/**
	 * Runs a workflow that has a Manual Trigger once, in a separate n8n process
	 * (`n8n execute --rawOutput`), and returns the run. A failed run throws with the error of the
	 * node that failed.
	 */
	async execute(id: string): Promise<ExecutionRun> {
		const result = await this.cli(['execute', `--id=${id}`, '--rawOutput'], { allowFailure: true, logLevel: 'info' });
		const text = result.stdout;
		const start = text.search(/^\{/m);
		const end = text.search(/^\}/m);
		let runData: ExecutionRun | undefined;
		if (start >= 0 && end > start) {
			try {
				runData = JSON.parse(text.slice(start, end + 1)) as ExecutionRun;
			} catch {
				runData = undefined;
			}
		}
		if (result.code !== 0 || !runData || runData.data.resultData.error) {
			const error = runData?.data.resultData.error;
			const where = runData?.data.resultData.lastNodeExecuted;
			throw new Error(
				`n8n execute --id=${id} failed (exit ${result.code})` +
					(error ? ` in node "${where}": ${error.message ?? JSON.stringify(error)}` : '') +
					`\n${(result.stderr + (runData ? '' : result.stdout)).slice(-3000)}`,
			);
		}
		return runData;
	}

	/** Starts `n8n start` and waits until it serves (`/healthz`) and has loaded the active workflows. */
	async start(): Promise<void> {
		if (this.server) return;
		await this.prepare();
		let activated = false;
		const server = startService({
			name: 'n8n',
			command: nodeBinary(),
			args: [n8nBinScript(), 'start'],
			cwd: this.userFolder,
			env: this.env(),
			logFile: this.logFile,
			onLine: (line) => {
				// Printed after the published workflows are activated (readiness comes before that).
				if (/Editor is now accessible/.test(line)) activated = true;
			},
		});
		this.server = server;
		try {
			await waitForHttp(`${this.url}/healthz/readiness`, { timeoutMs: 120_000, service: server });
			const deadline = Date.now() + 90_000;
			while (!activated) {
				if (Date.now() > deadline) throw new Error(`n8n did not finish activating its workflows:\n${server.tail()}`);
				await sleep(100);
			}
		} catch (error) {
			this.server = undefined;
			await server.stop(5_000);
			throw error;
		}
		this.cookie = undefined;
	}

	/** Stops `n8n start` gracefully (SIGTERM, then SIGKILL after the grace time). */
	async stop(): Promise<void> {
		const server = this.server;
		this.server = undefined;
		this.cookie = undefined;
		if (server) await server.stop(20_000);
	}

	/** Sets up the instance owner on a fresh instance, or logs in when it exists. */
	async ensureOwner(owner: Owner): Promise<void> {
		if (await this.tryLogin(owner)) return;
		const res = await fetch(`${this.url}/rest/owner/setup`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'browser-id': this.browserId },
			body: JSON.stringify(owner),
		});
		const text = await res.text();
		if (!res.ok) {
			const exists = /already set ?up/i.test(text);
			throw new Error(
				exists
					? `the n8n owner in ${this.userFolder} exists with another e-mail or password than ${owner.email}: log in with yours, or delete that folder to start afresh`
					: `owner set-up failed: HTTP ${res.status} ${text.slice(0, 300)}`,
			);
		}
		this.takeCookie(res);
		if (!this.cookie) throw new Error('owner set-up answered without a session cookie');
	}

	private async tryLogin(owner: Owner): Promise<boolean> {
		const res = await fetch(`${this.url}/rest/login`, {
			method: 'POST',
			headers: { 'content-type': 'application/json', 'browser-id': this.browserId },
			body: JSON.stringify({ emailOrLdapLoginId: owner.email, password: owner.password }),
		});
		await res.text();
		if (!res.ok) return false;
		this.takeCookie(res);
		return this.cookie !== undefined;
	}

	private takeCookie(res: Response): void {
		for (const header of res.headers.getSetCookie()) {
			const m = /^(n8n-auth=[^;]+)/.exec(header);
			if (m) this.cookie = m[1];
		}
	}

	/** Calls the REST API as the logged-in owner (call ensureOwner first); returns `data`. */
	async rest<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
		if (!this.cookie) throw new Error('not logged in: call ensureOwner() first');
		const res = await fetch(`${this.url}/rest${path}`, {
			method,
			headers: {
				cookie: this.cookie,
				'browser-id': this.browserId,
				accept: 'application/json',
				...(body === undefined ? {} : { 'content-type': 'application/json' }),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await res.text();
		if (!res.ok) throw new Error(`${method} /rest${path} answered HTTP ${res.status}: ${text.slice(0, 500)}`);
		const parsed = text === '' ? undefined : (JSON.parse(text) as { data?: T });
		return (parsed && typeof parsed === 'object' && 'data' in parsed ? parsed.data : parsed) as T;
	}

	/** Publishes (activates) a workflow on the running instance, as the editor's Publish button does. */
	async activateWorkflow(id: string): Promise<void> {
		const workflow = await this.rest<{ versionId: string; activeVersionId?: string | null }>('GET', `/workflows/${id}`);
		if (workflow.activeVersionId && workflow.activeVersionId === workflow.versionId) return;
		await this.rest('POST', `/workflows/${id}/activate`, { versionId: workflow.versionId });
	}

	/** Whether a workflow is published with its current version. */
	async isActive(id: string): Promise<boolean> {
		const workflow = await this.rest<{ versionId: string; activeVersionId?: string | null; active?: boolean }>('GET', `/workflows/${id}`);
		return Boolean(workflow.activeVersionId) && workflow.activeVersionId === workflow.versionId;
	}

	/** Executions of a workflow, newest first, as the executions list shows them. */
	async executions(workflowId: string): Promise<ExecutionSummary[]> {
		const filter = encodeURIComponent(JSON.stringify({ workflowId }));
		const data = await this.rest<{ results: ExecutionSummary[] } | ExecutionSummary[]>('GET', `/executions?filter=${filter}&limit=100`);
		return Array.isArray(data) ? data : data.results;
	}

	/** One execution with its run data (`includeData`), parsed into plain node outputs. */
	async execution(id: string): Promise<ExecutionRun> {
		const data = await this.rest<{ data: string | ExecutionRun['data']; status: string; mode: string; workflowId?: string }>(
			'GET',
			`/executions/${id}`,
		);
		const runData = typeof data.data === 'string' ? (unflatten(JSON.parse(data.data) as unknown[]) as ExecutionRun['data']) : data.data;
		return { ...data, data: runData } as ExecutionRun;
	}

	/** The production webhooks n8n has registered (read from its database, as it serves them). */
	registeredWebhooks(): RegisteredWebhook[] {
		const file = join(this.dataFolder, 'database.sqlite');
		const db = new DatabaseSync(file, { readOnly: true });
		try {
			const rows = db.prepare('SELECT workflowId, node, method, webhookPath FROM webhook_entity').all() as Array<{
				workflowId: string;
				node: string;
				method: string;
				webhookPath: string;
			}>;
			return rows.map((r) => ({ ...r, url: `${this.url}/webhook/${r.webhookPath}` }));
		} finally {
			db.close();
		}
	}

	/** The production URL of a node's webhook in an active workflow. */
	webhookUrl(workflowId: string, nodeName: string): string {
		const hit = this.registeredWebhooks().find((w) => w.workflowId === workflowId && w.node === nodeName);
		if (!hit) throw new Error(`no production webhook is registered for node "${nodeName}" of workflow ${workflowId}: is it published?`);
		return hit.url;
	}

	/** The log of `n8n start` so far (last lines). */
	tail(): string {
		return this.server?.tail() ?? '';
	}
}

export interface ExecutionSummary {
	id: string;
	workflowId: string;
	status: string;
	mode: string;
	startedAt: string;
	stoppedAt?: string;
	finished?: boolean;
}

export interface NodeRun {
	data?: { main?: Array<Array<{ json: Record<string, unknown> }> | null> };
	error?: { message?: string; description?: string };
	executionStatus?: string;
}

export interface ExecutionRun {
	status?: string;
	mode?: string;
	finished?: boolean;
	data: { resultData: { runData: Record<string, NodeRun[]>; error?: { message?: string }; lastNodeExecuted?: string } };
}

/** The items a node put out on its first output in its first (or given) run. */
export function nodeOutput(run: ExecutionRun, nodeName: string, runIndex = 0, output = 0): Array<Record<string, unknown>> {
	const runs = run.data.resultData.runData[nodeName];
	if (!runs || !runs[runIndex]) return [];
	return (runs[runIndex].data?.main?.[output] ?? []).map((item) => item.json);
}

/**
 * n8n stores execution data "flatted": an array whose first element is the root and where
 * strings that are decimal indexes point to other elements. This reverses it.
 */
export function unflatten(flat: unknown[]): unknown {
	const revived = new Map<number, unknown>();
	const visit = (index: number): unknown => {
		if (revived.has(index)) return revived.get(index);
		const value = flat[index];
		if (Array.isArray(value)) {
			const out: unknown[] = [];
			revived.set(index, out);
			for (const v of value) out.push(resolveValue(v));
			return out;
		}
		if (value !== null && typeof value === 'object') {
			const out: Record<string, unknown> = {};
			revived.set(index, out);
			for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = resolveValue(v);
			return out;
		}
		revived.set(index, value);
		return value;
	};
	const resolveValue = (v: unknown): unknown => (typeof v === 'string' && /^\d+$/.test(v) ? visit(Number(v)) : v);
	return visit(0);
}
