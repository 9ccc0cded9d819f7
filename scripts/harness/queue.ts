/**
 * n8n in queue mode on the machine's PostgreSQL and Redis: one main (`n8n start`), workers
 * (`n8n worker`, which run the executions) and webhook processes (`n8n webhook`, which receive
 * production webhooks and enqueue executions), all with this package installed, the example
 * workflows imported and published and the PayPalych credential imported; beside them the sandbox
 * as the payment service, a round-robin balancer in front of the webhook processes and the relay
 * forwarding to it. Each run has a database and Redis key prefixes of its own
 * (QUEUE_BULL_PREFIX, N8N_REDIS_KEY_PREFIX), dropped when it stops, and on process exit if it
 * never got to stop.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBalancer, type Balancer } from './balancer.ts';
import { sandboxCredential, workflowsFor, type ExampleSettings } from './examples.ts';
import { N8n, ensureN8nInstalled, type Owner, type WorkflowJson } from './n8n.ts';
import { PG_URL, REDIS_URL, deleteRedisKeys, psql } from './pg-cli.ts';
import { Phases, freePort, onProcessExit, stopList, waitForHttp, type Service } from './proc.ts';
import {
	startRelay,
	startSandbox,
	targetsByEvent,
	triggerTargets,
	type SandboxMerchant,
	type Stack,
} from './stack.ts';

export interface QueueStackOptions {
	/** Everything the stack writes: `n8n/` (the shared n8n user folder), `relay.sqlite`, `logs/`. */
	stateDir: string;
	shopBackend: string;
	owner: Owner;
	/** The workflows to import and publish; all examples by default. */
	workflows?: (settings: ExampleSettings) => WorkflowJson[];
	workers?: number;
	webhookProcesses?: number;
	timeFactor?: number;
	relayEnv?: Record<string, string>;
	phases?: Phases;
	print?: (line: string) => void;
}

/** A worker or a webhook process. */
export interface QueueProcess {
	name: string;
	/** Where it serves: webhooks on a webhook process, the health check on a worker. */
	url: string;
	service: Service;
	logFile: string;
}

export interface QueueStack extends Omit<Stack, 'triggerUrls'> {
	/** The main process (editor, REST API, activation); `n8n` is the same object. */
	main: N8n;
	workers: QueueProcess[];
	webhookProcesses: QueueProcess[];
	/** n8n's database and its Redis key prefixes. */
	database: string;
	bullPrefix: string;
	redisKeyPrefix: string;
	/** The production URL of a workflow's PayPalych Trigger on one webhook process. */
	triggerUrl(workflowId: string, webhookProcess: number): string;
	/** The balancer in front of the webhook processes (the relay's targets point at it). */
	balancer: Balancer;
	/** Where the relay forwards each workflow's postbacks (through the balancer). */
	relayTargets: Record<string, string>;
	/** The processes whose log says they ran the execution (n8n logs it at info level). */
	ranBy(executionId: string): string[];
}

/** The environment every process of one queue-mode instance shares. */
export function queueEnv(ids: {
	database: string;
	bullPrefix: string;
	redisKeyPrefix: string;
	encryptionKey: string;
}): Record<string, string> {
	const pg = new URL(PG_URL);
	const redis = new URL(REDIS_URL);
	return {
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: pg.hostname,
		DB_POSTGRESDB_PORT: pg.port || '5432',
		DB_POSTGRESDB_USER: decodeURIComponent(pg.username || 'postgres'),
		DB_POSTGRESDB_PASSWORD: decodeURIComponent(pg.password),
		DB_POSTGRESDB_DATABASE: ids.database,
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: redis.hostname,
		QUEUE_BULL_REDIS_PORT: redis.port || '6379',
		QUEUE_BULL_PREFIX: ids.bullPrefix,
		N8N_REDIS_KEY_PREFIX: ids.redisKeyPrefix,
		N8N_ENCRYPTION_KEY: ids.encryptionKey,
		GENERIC_TIMEZONE: 'UTC',
	};
}

export async function startQueueStack(options: QueueStackOptions): Promise<QueueStack> {
	const print = options.print ?? ((line: string) => process.stdout.write(line + '\n'));
	const phases = options.phases ?? new Phases('queue', print);
	const logs = join(options.stateDir, 'logs');
	mkdirSync(logs, { recursive: true });
	const id = randomBytes(5).toString('hex');
	const database = `n8n_queue_${id}`;
	const bullPrefix = `ppq_${id}_bull`;
	const redisKeyPrefix = `ppq_${id}_n8n`;

	const stoppers = stopList(print);
	let dropped = false;
	const drop = () => {
		if (dropped) return;
		dropped = true;
		psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
		deleteRedisKeys(bullPrefix);
		deleteRedisKeys(redisKeyPrefix);
	};
	const cancelExitDrop = onProcessExit(drop);
	const stopAll = async () => {
		await stoppers.stopAll();
		drop();
		cancelExitDrop();
	};

	try {
		await ensureN8nInstalled(print);
		psql(`CREATE DATABASE ${database}`);
		const relayPort = await freePort();
		const relayUrl = `http://127.0.0.1:${relayPort}`;
		const merchant: SandboxMerchant = await startSandbox({
			logs,
			relayUrl,
			timeFactor: options.timeFactor,
		});
		const { sandbox } = merchant;
		stoppers.push(() => sandbox.service.stop(5_000));
		phases.mark(`sandbox up at ${sandbox.url}`);

		const main = new N8n({
			userFolder: join(options.stateDir, 'n8n'),
			logFile: join(logs, 'n8n-main.log'),
			env: queueEnv({
				database,
				bullPrefix,
				redisKeyPrefix,
				encryptionKey: randomBytes(24).toString('hex'),
			}),
		});
		await main.prepare();
		const workflows = workflowsFor(sandbox, options.shopBackend, options.workflows);
		await main.importCredentials([sandboxCredential(sandbox)]);
		await main.importWorkflows(workflows);
		phases.mark(`imported 1 credential and ${workflows.length} workflows into ${database}`);

		await main.start();
		stoppers.push(() => main.stop());
		await main.ensureOwner(options.owner);
		for (const workflow of workflows) await main.activateWorkflow(workflow.id);
		phases.mark(`main up at ${main.url}, ${workflows.length} workflows published`);

		// Workers and webhook processes start together; each has its own ports (HTTP, task broker).
		const startOne = async (kind: 'worker' | 'webhook', index: number): Promise<QueueProcess> => {
			const name = `n8n-${kind}-${index + 1}`;
			const port = await freePort();
			const env: Record<string, string> = {
				N8N_PORT: String(port),
				N8N_RUNNERS_BROKER_PORT: String(await freePort()),
				...(kind === 'worker'
					? { QUEUE_HEALTH_CHECK_ACTIVE: 'true', QUEUE_HEALTH_CHECK_PORT: String(port) }
					: {}),
			};
			const service = main.startProcess(kind, name, env);
			stoppers.push(() => service.stop(20_000));
			const url = `http://127.0.0.1:${port}`;
			await waitForHttp(`${url}/healthz/readiness`, { timeoutMs: 120_000, service });
			return { name, url, service, logFile: join(logs, `${name}.log`) };
		};
		const [workers, webhookProcesses] = await Promise.all([
			Promise.all(Array.from({ length: options.workers ?? 2 }, (_, i) => startOne('worker', i))),
			Promise.all(
				Array.from({ length: options.webhookProcesses ?? 2 }, (_, i) => startOne('webhook', i)),
			),
		]);
		phases.mark(`${workers.length} workers and ${webhookProcesses.length} webhook processes ready`);

		// Trigger URLs as main registered them, served by every webhook process alike.
		const triggers = triggerTargets(workflows, main.registeredWebhooks());
		const triggerUrl = (workflowId: string, process: number) => {
			const trigger = triggers.find((t) => t.workflowId === workflowId);
			if (!trigger) throw new Error(`workflow ${workflowId} has no PayPalych Trigger`);
			return trigger.url.replace(main.url, webhookProcesses[process].url);
		};
		// The relay forwards to a round-robin balancer in front of the webhook processes, as in
		// production (never to each process: every target gets its own copy of each event).
		const balancer = await startBalancer(webhookProcesses.map((p) => p.url));
		stoppers.push(() => balancer.close());
		const relayTargets: Record<string, string> = {};
		const routed = triggers.map((t) => {
			const url = t.url.replace(main.url, balancer.url);
			relayTargets[t.workflowId] = url;
			return { ...t, url };
		});
		const relay = await startRelay({
			logs,
			port: relayPort,
			token: sandbox.token,
			apiBaseUrl: sandbox.url,
			targets: targetsByEvent(routed),
			database: join(options.stateDir, 'relay.sqlite'),
			env: options.relayEnv,
		});
		stoppers.push(() => relay.service.stop(15_000));
		phases.mark(`relay up at ${relayUrl}`);

		const everyProcess = [
			{ name: 'n8n-main', logFile: main.logFile },
			...workers,
			...webhookProcesses,
		];
		return {
			...merchant,
			relay,
			n8n: main,
			main,
			owner: options.owner,
			workflows,
			workers,
			webhookProcesses,
			database,
			bullPrefix,
			redisKeyPrefix,
			triggerUrl,
			balancer,
			relayTargets,
			ranBy(executionId: string) {
				const started = new RegExp(`started execution ${executionId}\\b`);
				return everyProcess
					.filter((p) => existsSync(p.logFile) && started.test(readFileSync(p.logFile, 'utf8')))
					.map((p) => p.name);
			},
			stop: stopAll,
		};
	} catch (error) {
		await stopAll();
		throw error;
	}
}
