/**
 * One real n8n (the version scripts/install-n8n.sh caches) with this package installed: its
 * process (`n8n start`, stop) and its CLI (import, publish, execute). What it reads of n8n's REST
 * routes and database lives in n8n-internals.ts, where and how n8n is installed in n8n-install.ts.
 */
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { installPackage, n8nBinScript, n8nMajor, n8nNodeBinary } from './n8n-install.ts';
import {
	N8nSession,
	registeredWebhooks,
	registeredWebhooksOnPostgres,
	type ExecutionRun,
	type ExecutionSummary,
	type Owner,
	type RegisteredWebhook,
} from './n8n-internals.ts';
import {
	freePort,
	run,
	sleep,
	startService,
	waitForHttp,
	type RunResult,
	type Service,
} from './proc.ts';
import { waitFor } from './wait.ts';

export {
	NODE_TYPE,
	PACKAGE_NAME,
	REPO_ROOT,
	TRIGGER_TYPE,
	ensureN8nInstalled,
	nodeBinary,
} from './n8n-install.ts';
export {
	nodeOutput,
	type ExecutionRun,
	type ExecutionSummary,
	type NodeRun,
	type Owner,
	type RegisteredWebhook,
} from './n8n-internals.ts';

export interface WorkflowJson {
	id: string;
	name: string;
	nodes: Array<
		Record<string, unknown> & {
			name: string;
			type: string;
			parameters: Record<string, unknown>;
			webhookId?: string;
		}
	>;
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
	/**
	 * How the package gets into `<userFolder>/.n8n/nodes`: as n8n's installer puts it there
	 * (installPackage) by default; installTarball for the npm line merchants run.
	 */
	installPackage?: (dataFolder: string) => Promise<unknown>;
}

/** One n8n instance: its user folder, its CLI and its server. */
export class N8n {
	readonly userFolder: string;
	readonly logFile: string;
	port = 0;
	private brokerPort = 0;
	private readonly extraEnv: Record<string, string>;
	private readonly install: (dataFolder: string) => Promise<unknown>;
	private server: Service | undefined;
	private packageInstalled = false;
	private readonly session = new N8nSession(() => this.url);

	constructor(options: N8nOptions) {
		this.userFolder = resolve(options.userFolder);
		this.logFile = options.logFile ?? join(this.userFolder, 'n8n.log');
		this.port = options.port ?? 0;
		this.extraEnv = options.env ?? {};
		this.install = options.installPackage ?? installPackage;
	}

	get url(): string {
		return `http://127.0.0.1:${this.port}`;
	}

	get dataFolder(): string {
		return join(this.userFolder, '.n8n');
	}

	/** The pid of `n8n start` (its process group: task runners included), while it runs. */
	get pid(): number | undefined {
		return this.server?.child.pid;
	}

	get running(): boolean {
		return this.server !== undefined;
	}

	/** Picks ports and installs the package the way n8n installs a community package. */
	async prepare(): Promise<void> {
		if (this.port === 0) this.port = await freePort();
		if (this.brokerPort === 0) this.brokerPort = await freePort();
		if (!this.packageInstalled) {
			await this.install(this.dataFolder);
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
	async cli(
		args: string[],
		options: { allowFailure?: boolean; timeoutMs?: number; logLevel?: string } = {},
	): Promise<RunResult> {
		// Its own task-runner broker port: the CLI may run beside `n8n start`.
		const result = await run(n8nNodeBinary(), [n8nBinScript(), ...args], {
			cwd: this.userFolder,
			env: {
				...this.env(),
				N8N_LOG_LEVEL: options.logLevel ?? 'warn',
				N8N_RUNNERS_BROKER_PORT: String(await freePort()),
			},
			timeoutMs: options.timeoutMs ?? 180_000,
		});
		if (result.code !== 0 && !options.allowFailure) {
			throw new Error(
				`n8n ${args.join(' ')} failed (exit ${result.code}):\n${(result.stdout + result.stderr).slice(-3000)}`,
			);
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

	/**
	 * Marks a workflow published (n8n 2.x `publish:workflow`; n8n 1.x, which has no such command,
	 * `update:workflow --active=true`): it is activated when `n8n start` next starts.
	 */
	async publishWorkflow(id: string): Promise<void> {
		if (this.running)
			throw new Error('publishing from the CLI only takes effect at start-up: stop n8n first');
		await this.cli(
			n8nMajor() >= 2
				? ['publish:workflow', `--id=${id}`]
				: ['update:workflow', `--id=${id}`, '--active=true'],
		);
	}

	/**
	 * Runs a workflow that has a Manual Trigger once, in a separate n8n process
	 * (`n8n execute --rawOutput`), and returns the run. A failed run throws with the error of the
	 * node that failed.
	 */
	async execute(id: string): Promise<ExecutionRun> {
		const result = await this.cli(['execute', `--id=${id}`, '--rawOutput'], {
			allowFailure: true,
			logLevel: 'info',
		});
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

	/**
	 * Starts another process of this instance beside `n8n start` (queue mode: `n8n worker`,
	 * `n8n webhook`): the same user folder and environment, with `env` on top (its own ports).
	 * Its output goes to `<name>.log` beside the main log. The caller waits for it and stops it.
	 */
	startProcess(command: 'worker' | 'webhook', name: string, env: Record<string, string>): Service {
		return startService({
			name,
			command: n8nNodeBinary(),
			args: [n8nBinScript(), command],
			cwd: this.userFolder,
			env: { ...this.env(), ...env },
			logFile: join(dirname(this.logFile), `${name}.log`),
		});
	}

	/** Starts `n8n start` and waits until it serves (`/healthz`) and has loaded the active workflows. */
	async start(): Promise<void> {
		if (this.server) return;
		await this.prepare();
		let activated = false;
		const server = startService({
			name: 'n8n',
			command: n8nNodeBinary(),
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
				if (Date.now() > deadline)
					throw new Error(`n8n did not finish activating its workflows:\n${server.tail()}`);
				await sleep(100);
			}
		} catch (error) {
			this.server = undefined;
			await server.stop(5_000);
			throw error;
		}
		this.session.logout();
	}

	/** Stops `n8n start` gracefully (SIGTERM, then SIGKILL after the grace time). */
	async stop(): Promise<void> {
		const server = this.server;
		this.server = undefined;
		this.session.logout();
		if (server) await server.stop(20_000);
	}

	/** Sets up the instance owner on a fresh instance, or logs in when it exists (see n8n-internals.ts). */
	async ensureOwner(owner: Owner): Promise<void> {
		await this.session.ensureOwner(owner, this.userFolder);
	}

	/** Calls the REST API as the logged-in owner (call ensureOwner first); returns `data`. */
	async rest<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
		return await this.session.rest<T>(method, path, body);
	}

	/** Publishes (activates) a workflow on the running instance, as the editor's Publish button does. */
	async activateWorkflow(id: string): Promise<void> {
		await this.session.activateWorkflow(id);
	}

	/** Whether a workflow is published with its current version. */
	async isActive(id: string): Promise<boolean> {
		return await this.session.isActive(id);
	}

	/** Saves a credential's whole new data on the running instance (see n8n-internals.ts). */
	async updateCredential(credential: CredentialJson): Promise<void> {
		await this.session.updateCredential(credential);
	}

	/** Executions of a workflow, newest first. */
	async executions(workflowId: string): Promise<ExecutionSummary[]> {
		return await this.session.executions(workflowId);
	}

	/**
	 * The executions of a workflow once none is running any more (the same list twice in a row,
	 * `everyMs` apart), newest first.
	 */
	async settledExecutions(workflowId: string, everyMs = 500): Promise<ExecutionSummary[]> {
		let previous = '';
		return await waitFor(
			`the executions of ${workflowId} to settle`,
			async () => {
				const list = await this.executions(workflowId);
				const key = list.map((e) => `${e.id}:${e.status}`).join(',');
				const settled =
					key === previous && list.every((e) => !['running', 'new', 'waiting'].includes(e.status));
				previous = key;
				return settled ? list : undefined;
			},
			{ timeoutMs: 60_000, everyMs: everyMs },
		);
	}

	/** One execution with its run data. */
	async execution(id: string): Promise<ExecutionRun> {
		return await this.session.execution(id);
	}

	/** The descriptions of node types, as the editor loads them. */
	async nodeTypes<T = Record<string, unknown>>(
		types: Array<{ name: string; version: number }>,
	): Promise<T[]> {
		return await this.session.nodeTypes<T>(types);
	}

	/** The production webhooks n8n has registered. */
	registeredWebhooks(): RegisteredWebhook[] {
		const env = this.env();
		return env.DB_TYPE === 'postgresdb'
			? registeredWebhooksOnPostgres(env.DB_POSTGRESDB_DATABASE, this.url)
			: registeredWebhooks(this.dataFolder, this.url);
	}

	/** The production URL of a node's webhook in an active workflow. */
	webhookUrl(workflowId: string, nodeName: string): string {
		const hit = this.registeredWebhooks().find(
			(w) => w.workflowId === workflowId && w.node === nodeName,
		);
		if (!hit)
			throw new Error(
				`no production webhook is registered for node "${nodeName}" of workflow ${workflowId}: is it published?`,
			);
		return hit.url;
	}

	/** The log of `n8n start` so far (last lines). */
	tail(): string {
		return this.server?.tail() ?? '';
	}
}
