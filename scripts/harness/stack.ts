/**
 * The whole product wired together on loopback ports: the sandbox (as the payment service), the
 * relay (SQLite store) in front of n8n, and a real n8n with this package installed and the
 * example workflows imported and published. Used by `npm start` and by the end-to-end suite.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
	CREDENTIAL_ID,
	CREDENTIAL_NAME,
	configureWorkflow,
	loadExamples,
	triggersOf,
	type ExampleSettings,
} from './examples.ts';
import { hasDatabase } from './n8n-internals.ts';
import {
	N8n,
	REPO_ROOT,
	ensureN8nInstalled,
	nodeBinary,
	type Owner,
	type WorkflowJson,
} from './n8n.ts';
import { Phases, freePort, httpJson, startService, waitForHttp, type Service } from './proc.ts';

export interface StackOptions {
	/** Everything the stack writes: `n8n/` (the n8n user folder), `relay.sqlite`, `logs/`. */
	stateDir: string;
	/** Preferred ports; a free one is used when a port is 0, missing or taken. */
	ports?: { sandbox?: number; relay?: number; n8n?: number };
	/** Whether the sandbox adds the fields the live service is seen to add (default true). */
	liveExtras?: boolean;
	/** API token of the merchant the stack creates on the sandbox (random when missing). */
	merchantToken?: string;
	/** Starting RUB balance of that merchant. */
	merchantBalance?: string;
	/** Sandbox time factor: postback retry delays and payout timers are multiplied by it. */
	timeFactor?: number;
	/** Extra relay environment (for example RELAY_BASE_DELAY_MS). */
	relayEnv?: Record<string, string>;
	/** Extra n8n environment. */
	n8nEnv?: Record<string, string>;
	/** Base URL of the shop's backend the example workflows call. */
	shopBackend: string;
	/** The workflows to import and publish; all examples by default. */
	workflows?: (settings: ExampleSettings) => WorkflowJson[];
	owner: Owner;
	/** Keep relay.sqlite from an earlier run (default: start with an empty store). */
	keepRelayStore?: boolean;
	phases?: Phases;
	print?: (line: string) => void;
}

export interface SandboxInfo {
	url: string;
	merchantId: string;
	token: string;
	shopId: string;
	payoutAccountId: string;
	service: Service;
}

export interface RelayInfo {
	url: string;
	adminToken: string;
	env: Record<string, string>;
	service: Service;
	/** Stops the relay (graceful) and starts it again with the same store and settings. */
	restart(): Promise<void>;
	/** Stops the relay (graceful); `start` brings it back with the same store and settings. */
	stop(): Promise<void>;
	start(): Promise<void>;
}

export interface Stack {
	sandbox: SandboxInfo;
	relay: RelayInfo;
	n8n: N8n;
	owner: Owner;
	workflows: WorkflowJson[];
	/** Production URL of every PayPalych Trigger, by workflow id. */
	triggerUrls: Record<string, string>;
	/** Calls the sandbox control API (`/_sandbox<path>`). */
	control<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T>;
	/** Calls the sandbox service API as the stack's merchant. */
	api<T = Record<string, unknown>>(
		method: 'GET' | 'POST',
		path: string,
		params?: Record<string, string>,
	): Promise<T>;
	stop(): Promise<void>;
}

export async function startStack(options: StackOptions): Promise<Stack> {
	const print = options.print ?? ((line: string) => process.stdout.write(line + '\n'));
	const phases = options.phases ?? new Phases('stack', print);
	const stateDir = options.stateDir;
	const logs = join(stateDir, 'logs');
	mkdirSync(logs, { recursive: true });
	const stoppers: Array<() => Promise<void>> = [];
	const stopAll = async () => {
		for (const stop of stoppers.splice(0).reverse()) {
			try {
				await stop();
			} catch (error) {
				print(`stopping failed: ${error instanceof Error ? error.message : String(error)}`);
			}
		}
	};

	try {
		await ensureN8nInstalled(print);
		const sandboxPort = await freePort(options.ports?.sandbox || undefined);
		const relayPort = await freePort(options.ports?.relay || undefined);
		const n8n = new N8n({
			userFolder: join(stateDir, 'n8n'),
			port: await freePort(options.ports?.n8n || undefined),
			logFile: join(logs, 'n8n.log'),
			env: { GENERIC_TIMEZONE: 'UTC', ...options.n8nEnv },
		});
		const relayUrl = `http://127.0.0.1:${relayPort}`;

		// 1. The sandbox, and a merchant whose shop sends everything to the relay.
		const sandboxService = startService({
			name: 'sandbox',
			command: nodeBinary(),
			// --live-extras: the stack emulates the live service, which shows a bill's order_id
			// (service-facts.md), so the PayPalych Trigger can confirm a postback's InvId.
			args: [
				join(REPO_ROOT, 'sandbox', 'src', 'bin.ts'),
				'--port',
				String(sandboxPort),
				'--time-factor',
				String(options.timeFactor ?? 1),
				...(options.liveExtras === false ? [] : ['--live-extras']),
			],
			cwd: REPO_ROOT,
			logFile: join(logs, 'sandbox.log'),
		});
		stoppers.push(() => sandboxService.stop(5_000));
		const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
		await waitForHttp(`${sandboxUrl}/_sandbox/demo`, {
			timeoutMs: 30_000,
			service: sandboxService,
		});
		const control = async <T>(method: string, path: string, body?: unknown) =>
			await httpJson<T>(method, `${sandboxUrl}/_sandbox${path}`, body);
		const merchant = await control<{
			merchantId: string;
			token: string;
			shopId: string;
			payoutAccountId: string;
		}>('POST', '/merchants', {
			...(options.merchantToken ? { token: options.merchantToken } : {}),
			verified: true,
			subscription: 'active',
			regularPayoutsEnabled: true,
			balances: { RUB: options.merchantBalance ?? '25000.00' },
			payoutWebhookUrl: `${relayUrl}/postback/payout`,
			shop: {
				name: 'Demo shop',
				resultUrl: `${relayUrl}/postback/payment`,
				successUrl: `${relayUrl}/redirect/success`,
				failUrl: `${relayUrl}/redirect/fail`,
			},
		});
		const sandbox: SandboxInfo = { url: sandboxUrl, ...merchant, service: sandboxService };
		phases.mark(`sandbox up at ${sandboxUrl}, merchant ${merchant.merchantId}`);

		// 2. The workflows, placeholders filled in.
		const settings: ExampleSettings = {
			shopId: merchant.shopId,
			payoutAccountId: merchant.payoutAccountId,
			shopBackend: options.shopBackend,
		};
		const workflows = options.workflows
			? options.workflows(settings)
			: loadExamples().map((e) => configureWorkflow(e.workflow, settings));

		// 3. n8n: credential and workflows imported through its CLI (skipped when unchanged), then
		//    started, the owner set up, and every workflow published.
		await n8n.prepare();
		const credentials = [
			{
				id: CREDENTIAL_ID,
				name: CREDENTIAL_NAME,
				type: 'payPalychApi',
				data: { apiToken: merchant.token, baseUrl: sandboxUrl },
			},
		];
		const digest = createHash('sha256')
			.update(JSON.stringify({ credentials, workflows }))
			.digest('hex');
		const digestFile = join(n8n.userFolder, 'imported.sha256');
		const unchanged =
			existsSync(digestFile) &&
			readFileSync(digestFile, 'utf8') === digest &&
			hasDatabase(n8n.dataFolder);
		if (!unchanged) {
			rmSync(digestFile, { force: true });
			await n8n.importCredentials(credentials);
			await n8n.importWorkflows(workflows);
			phases.mark(`imported 1 credential and ${workflows.length} workflows (n8n CLI)`);
		}
		await n8n.start();
		stoppers.push(() => n8n.stop());
		phases.mark(`n8n up at ${n8n.url}`);
		await n8n.ensureOwner(options.owner);
		for (const workflow of workflows) await n8n.activateWorkflow(workflow.id);
		writeFileSync(digestFile, digest);

		// The production URL of every PayPalych Trigger, as n8n registered it.
		const registered = n8n.registeredWebhooks();
		const triggers = triggersOf(workflows).map((t) => {
			const hit = registered.find((w) => w.workflowId === t.workflowId && w.node === t.node);
			if (!hit) {
				throw new Error(
					`n8n registered no webhook for "${t.node}" of ${t.workflowId}; registered: ${registered.map((w) => w.url).join(', ')}`,
				);
			}
			return { ...t, url: hit.url };
		});
		const triggerUrls: Record<string, string> = {};
		for (const t of triggers) triggerUrls[t.workflowId] = t.url;
		phases.mark(`owner ready, ${workflows.length} workflows published`);

		// 4. The relay in front of the triggers: the shop's URLs already point at it.
		const targets = (event: string) =>
			triggers
				.filter((t) => t.event === event)
				.map((t) => t.url)
				.join(',');
		const database = join(stateDir, 'relay.sqlite');
		if (!options.keepRelayStore)
			for (const suffix of ['', '-wal', '-shm']) rmSync(database + suffix, { force: true });
		const adminToken = randomBytes(16).toString('hex');
		const relayEnv: Record<string, string> = {
			HOST: '127.0.0.1',
			PORT: String(relayPort),
			PAYPALYCH_API_TOKEN: merchant.token,
			RELAY_PAYMENT_TARGETS: targets('payment'),
			RELAY_PAYOUT_TARGETS: targets('payout'),
			RELAY_SUCCESS_TARGETS: targets('success'),
			RELAY_FAIL_TARGETS: targets('fail'),
			RELAY_REDIRECT_TARGETS: '',
			RELAY_DATABASE: database,
			RELAY_ADMIN_TOKEN: adminToken,
			// The catch-up reads the sandbox (the live service is the default).
			PAYPALYCH_API_BASE_URL: sandboxUrl,
			LOG_LEVEL: 'info',
			...options.relayEnv,
		};
		const startRelay = async (): Promise<Service> => {
			const service = startService({
				name: 'relay',
				command: nodeBinary(),
				args: [join(REPO_ROOT, 'relay', 'dist', 'relay', 'src', 'bin.js')],
				cwd: REPO_ROOT,
				env: relayEnv,
				logFile: join(logs, 'relay.log'),
			});
			await waitForHttp(`${relayUrl}/readyz`, { timeoutMs: 30_000, service });
			return service;
		};
		const relay: RelayInfo = {
			url: relayUrl,
			adminToken,
			env: relayEnv,
			service: await startRelay(),
			async restart() {
				await relay.service.stop(15_000);
				relay.service = await startRelay();
			},
			async stop() {
				await relay.service.stop(15_000);
			},
			async start() {
				relay.service = await startRelay();
			},
		};
		stoppers.push(() => relay.service.stop(15_000));
		phases.mark(`relay up at ${relayUrl} -> ${triggers.length} trigger(s)`);

		return {
			sandbox,
			relay,
			n8n,
			owner: options.owner,
			workflows,
			triggerUrls,
			control: control as Stack['control'],
			async api<T>(method: 'GET' | 'POST', path: string, params: Record<string, string> = {}) {
				const query = new URLSearchParams(params).toString();
				const res = await fetch(
					`${sandboxUrl}${path}${method === 'GET' && query ? `?${query}` : ''}`,
					{
						method,
						headers: {
							authorization: `Bearer ${merchant.token}`,
							accept: 'application/json',
							...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
						},
						body: method === 'POST' ? query : undefined,
					},
				);
				const text = await res.text();
				if (!res.ok) throw new Error(`${method} ${path} answered HTTP ${res.status}: ${text}`);
				return JSON.parse(text) as T;
			},
			stop: stopAll,
		};
	} catch (error) {
		await stopAll();
		throw error;
	}
}
