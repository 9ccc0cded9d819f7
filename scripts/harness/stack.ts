/**
 * The whole product wired together on loopback ports: the sandbox (as the payment service), the
 * relay (SQLite store) in front of n8n, and a real n8n with this package installed and the
 * example workflows imported and published. Used by `npm start` and by the end-to-end suite.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxCredential, triggersOf, workflowsFor, type ExampleSettings } from './examples.ts';
import { hasDatabase, type RegisteredWebhook } from './n8n-internals.ts';
import { N8N_VERSION } from './n8n-install.ts';
import {
	N8n,
	REPO_ROOT,
	ensureN8nInstalled,
	nodeBinary,
	type Owner,
	type WorkflowJson,
} from './n8n.ts';
import {
	Phases,
	freePort,
	httpJson,
	startService,
	stopList,
	waitForHttp,
	type Service,
} from './proc.ts';

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
	/** How the package is installed into n8n (see N8nOptions.installPackage). */
	installPackage?: (dataFolder: string) => Promise<unknown>;
	/** Base URL of the shop's backend the example workflows call. */
	shopBackend: string;
	/** The workflows to import and publish; all examples by default. */
	workflows?: (settings: ExampleSettings) => WorkflowJson[];
	owner: Owner;
	/** RELAY_REFUND_TARGETS and RELAY_CHARGEBACK_TARGETS: the Refund and Chargeback triggers (off:
	 * unset, they follow the payment targets). The shop's URLs are the caller's to set. */
	relayMoneyBack?: boolean;
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

export interface SandboxMerchant {
	sandbox: SandboxInfo;
	control: Stack['control'];
	api: Stack['api'];
}

/**
 * The sandbox as the payment service, and a merchant whose shop sends every postback and redirect
 * to `relayUrl`. Stopped with `sandbox.service.stop()`.
 */
export async function startSandbox(options: {
	logs: string;
	relayUrl: string;
	port?: number;
	liveExtras?: boolean;
	merchantToken?: string;
	merchantBalance?: string;
	timeFactor?: number;
}): Promise<SandboxMerchant> {
	const sandboxPort = await freePort(options.port || undefined);
	const relayUrl = options.relayUrl;
	const sandboxService = startService({
		name: 'sandbox',
		command: nodeBinary(),
		// --live-extras: the stack emulates the fields the live service is seen to add (the
		// postback's BalanceAmount, a payment's commission, a bill's active). A bill's order_id,
		// which the PayPalych Trigger needs to confirm a postback's InvId, is the sandbox's default.
		args: [
			join(REPO_ROOT, 'sandbox', 'src', 'bin.ts'),
			'--port',
			String(sandboxPort),
			'--time-factor',
			String(options.timeFactor ?? 1),
			...(options.liveExtras === false ? [] : ['--live-extras']),
		],
		cwd: REPO_ROOT,
		logFile: join(options.logs, 'sandbox.log'),
	});
	const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
	try {
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
		const api = async <T>(
			method: 'GET' | 'POST',
			path: string,
			params: Record<string, string> = {},
		) => {
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
		};
		return {
			sandbox: { url: sandboxUrl, ...merchant, service: sandboxService },
			control: control as Stack['control'],
			api: api as Stack['api'],
		};
	} catch (error) {
		await sandboxService.stop(5_000);
		throw error;
	}
}

/** The relay (compiled) on `port`, forwarding each kind of event to its targets. */
export async function startRelay(options: {
	logs: string;
	port: number;
	token: string;
	/** PAYPALYCH_API_BASE_URL: the service the relay asks whether it knows a payout postback's TrsId. */
	apiBaseUrl: string;
	targets: Record<'payment' | 'payout' | 'success' | 'fail', string[]>;
	/** RELAY_DATABASE: a SQLite file (emptied unless `keepStore`) or a postgres:// URL. */
	database: string;
	keepStore?: boolean;
	env?: Record<string, string>;
}): Promise<RelayInfo> {
	const relayUrl = `http://127.0.0.1:${options.port}`;
	if (!options.keepStore && !/^postgres(ql)?:/.test(options.database))
		for (const suffix of ['', '-wal', '-shm']) rmSync(options.database + suffix, { force: true });
	const adminToken = randomBytes(16).toString('hex');
	const relayEnv: Record<string, string> = {
		HOST: '127.0.0.1',
		PORT: String(options.port),
		PAYPALYCH_API_TOKEN: options.token,
		PAYPALYCH_API_BASE_URL: options.apiBaseUrl,
		// The sandbox listens on plain http; the relay refuses it unless told.
		...(options.apiBaseUrl.startsWith('http:') ? { RELAY_ALLOW_PLAIN_HTTP_API: '1' } : {}),
		RELAY_PAYMENT_TARGETS: options.targets.payment.join(','),
		RELAY_PAYOUT_TARGETS: options.targets.payout.join(','),
		RELAY_SUCCESS_TARGETS: options.targets.success.join(','),
		RELAY_FAIL_TARGETS: options.targets.fail.join(','),
		RELAY_REDIRECT_TARGETS: '',
		RELAY_DATABASE: options.database,
		RELAY_ADMIN_TOKEN: adminToken,
		LOG_LEVEL: 'info',
		...options.env,
	};
	const startRelayService = async (): Promise<Service> => {
		const service = startService({
			name: 'relay',
			command: nodeBinary(),
			args: [join(REPO_ROOT, 'relay', 'dist', 'relay', 'src', 'bin.js')],
			cwd: REPO_ROOT,
			env: relayEnv,
			// The relay refuses RELAY_*/PAYPALYCH_* variables it does not know: the harness's own
			// (PAYPALYCH_DEMO_*, PAYPALYCH_E2E_*, PAYPALYCH_CACHE) must not reach it.
			withoutInherited: /^(RELAY|PAYPALYCH)_/,
			logFile: join(options.logs, 'relay.log'),
		});
		await waitForHttp(`${relayUrl}/readyz`, { timeoutMs: 30_000, service });
		return service;
	};
	const relay: RelayInfo = {
		url: relayUrl,
		adminToken,
		env: relayEnv,
		service: await startRelayService(),
		async restart() {
			await relay.service.stop(15_000);
			relay.service = await startRelayService();
		},
		async stop() {
			await relay.service.stop(15_000);
		},
		async start() {
			relay.service = await startRelayService();
		},
	};
	return relay;
}

/** The production URL of every PayPalych Trigger in `workflows`, as n8n registered them. */
export function triggerTargets(
	workflows: WorkflowJson[],
	registered: RegisteredWebhook[],
): Array<{ workflowId: string; node: string; event: string; url: string }> {
	return triggersOf(workflows).map((t) => {
		const hit = registered.find((w) => w.workflowId === t.workflowId && w.node === t.node);
		if (!hit) {
			throw new Error(
				`n8n registered no webhook for "${t.node}" of ${t.workflowId}; registered: ${registered.map((w) => w.url).join(', ')}`,
			);
		}
		return { ...t, url: hit.url };
	});
}

const EVENTS = ['payment', 'payout', 'success', 'fail', 'refund', 'chargeback'] as const;

/** Relay targets by event: every trigger listening for it. */
export function targetsByEvent(triggers: Array<{ event: string; url: string }>) {
	const of = (event: string) => triggers.filter((t) => t.event === event).map((t) => t.url);
	return Object.fromEntries(EVENTS.map((e) => [e, of(e)])) as Record<
		(typeof EVENTS)[number],
		string[]
	>;
}

export async function startStack(options: StackOptions): Promise<Stack> {
	const print = options.print ?? ((line: string) => process.stdout.write(line + '\n'));
	const phases = options.phases ?? new Phases('stack', print);
	const stateDir = options.stateDir;
	const logs = join(stateDir, 'logs');
	mkdirSync(logs, { recursive: true });
	const stoppers = stopList(print);
	const stopAll = stoppers.stopAll;

	try {
		if (await ensureN8nInstalled(print))
			phases.mark(`n8n ${N8N_VERSION} installed (once per machine)`);
		const relayPort = await freePort(options.ports?.relay || undefined);
		const n8n = new N8n({
			userFolder: join(stateDir, 'n8n'),
			port: await freePort(options.ports?.n8n || undefined),
			logFile: join(logs, 'n8n.log'),
			env: { GENERIC_TIMEZONE: 'UTC', ...options.n8nEnv },
			installPackage: options.installPackage,
		});
		const relayUrl = `http://127.0.0.1:${relayPort}`;

		// 1. The sandbox, and a merchant whose shop sends everything to the relay.
		const { sandbox, control, api } = await startSandbox({
			logs,
			relayUrl,
			port: options.ports?.sandbox,
			liveExtras: options.liveExtras,
			merchantToken: options.merchantToken,
			merchantBalance: options.merchantBalance,
			timeFactor: options.timeFactor,
		});
		stoppers.push(() => sandbox.service.stop(5_000));
		phases.mark(`sandbox up at ${sandbox.url}, merchant ${sandbox.merchantId}`);

		// 2. The workflows, placeholders filled in.
		const workflows = workflowsFor(sandbox, options.shopBackend, options.workflows);

		// 3. n8n: credential and workflows imported through its CLI (skipped when unchanged), then
		//    started, the owner set up, and every workflow published.
		await n8n.prepare();
		const credentials = [sandboxCredential(sandbox)];
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
		const triggers = triggerTargets(workflows, n8n.registeredWebhooks());
		const triggerUrls: Record<string, string> = {};
		for (const t of triggers) triggerUrls[t.workflowId] = t.url;
		phases.mark(`owner ready, ${workflows.length} workflows published`);

		// 4. The relay in front of the triggers: the shop's URLs already point at it.
		const targets = targetsByEvent(triggers);
		const [refunds, chargebacks] = [targets.refund.join(','), targets.chargeback.join(',')];
		const moneyBack = { RELAY_REFUND_TARGETS: refunds, RELAY_CHARGEBACK_TARGETS: chargebacks };
		const relay = await startRelay({
			logs,
			port: relayPort,
			token: sandbox.token,
			apiBaseUrl: sandbox.url,
			targets,
			database: join(stateDir, 'relay.sqlite'),
			keepStore: options.keepRelayStore,
			env: { ...(options.relayMoneyBack ? moneyBack : {}), ...options.relayEnv },
		});
		stoppers.push(() => relay.service.stop(15_000));
		phases.mark(`relay up at ${relayUrl} -> ${triggers.length} trigger(s)`);

		return {
			sandbox,
			relay,
			n8n,
			owner: options.owner,
			workflows,
			triggerUrls,
			control,
			api,
			stop: stopAll,
		};
	} catch (error) {
		await stopAll();
		throw error;
	}
}
