/**
 * Drives a trigger node's `webhook()` the way n8n does, over real HTTP.
 *
 * Real parts: a node:http server on port 0, n8n-workflow's `Workflow` (with its observable static
 * data), n8n-core's `WebhookContext` (parameters, credentials, static data, request and response
 * objects all reached through it), and the node class from `dist/`.
 *
 * What stands in for n8n's server (packages/cli), kept to the behaviour the trigger depends on:
 * - body: n8n's raw body reader and `parseBody` (middlewares/body-parser.ts), which n8n runs for a
 *   typeVersion 1 node whatever the content type (webhook-helpers.ts `parseRequestBody`): the whole
 *   body is kept as `req.rawBody` (a Buffer), `application/json` is parsed into `req.body`, form
 *   bodies with `querystring.parse`, text/plain as a string; other types stay unparsed.
 *   A body n8n cannot parse (broken JSON) is answered 422 before the node runs, as n8n does.
 * - response (webhooks/webhook-helpers.ts `executeWebhook` of n8n 2.41.1, responseMode `onReceived`):
 *   when the node returned `noWebhookResponse` it has answered itself; otherwise, with
 *   `workflowData`, the execution starts and the caller then gets the description's `responseData`
 *   (n8n's default 'firstEntryJson' when unset), else `webhookResponse`; without `workflowData`
 *   nothing starts and the caller gets `webhookResponse`. A thrown error is a 500.
 * - static data (webhooks/live-webhooks.ts): each request loads the workflow's static data from
 *   storage (here a JSON string) and saves it in the response callback when its change flag is set.
 *   The run's own Workflow, built over the same object before a deferred answer, resets that flag,
 *   as in n8n. A new harness given the same storage is an n8n restart.
 * - credentials: the credentials helper hands out the decrypted data given to the harness and applies
 *   the credential's authenticate (the trigger calls the API to confirm postbacks).
 * An execution "started" exactly when `webhook()` returned `workflowData`: that is when n8n calls
 * `WorkflowRunner.run`. Each one is recorded in `executions`.
 */
import { createRequire } from 'node:module';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse as parseQueryString } from 'node:querystring';
import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	INode,
	INodeExecutionData,
	INodeParameters,
	INodeType,
	INodeTypes,
	IWebhookData,
	IWebhookResponseData,
	IWorkflowExecuteAdditionalData,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { TestCredentialsHelper, type Credential } from './n8n-context.ts';
import { requireN8n, useN8nSettingsFolder } from './n8n-runtime.ts';

export interface LogEntry {
	level: 'error' | 'warn' | 'info' | 'debug';
	message: string;
	metadata?: unknown;
}

export interface HarnessOptions {
	/** The node class instance under test. */
	nodeType: INodeType;
	/** The n8n type name, e.g. n8n-nodes-paypalych.payPalychTrigger. */
	typeName: string;
	parameters: INodeParameters;
	credentialType: string;
	credentials: ICredentialDataDecryptedObject;
	/** Stored static data (JSON), as n8n keeps it in the workflow row. Shared to emulate restarts. */
	storage?: { staticData: string };
	/** The workflow's id; each harness gets its own unless given (give the same one for a restart). */
	workflowId?: string;
	mode?: WorkflowExecuteMode;
	nodeName?: string;
	/**
	 * Leave no raw body, only the parsed `req.body`, as n8n does for multipart/form-data (its form
	 * parser consumes the stream): the node must fall back to getBodyData().
	 */
	parsedBodyOnly?: boolean;
	/** The node's typeVersion (1 unless given). */
	typeVersion?: number;
}

export interface CallRecord {
	status: number;
	/** Whether webhook() returned workflowData, i.e. n8n would have started an execution. */
	started: boolean;
	result?: IWebhookResponseData;
	error?: unknown;
}

export interface WebhookHarness {
	url: string;
	executions: INodeExecutionData[][][];
	calls: CallRecord[];
	logs: LogEntry[];
	storage: { staticData: string };
	/** The credential reads and request authentications n8n's credentials helper served so far. */
	credentialCounts: { reads: number; authentications: number };
	close(): Promise<void>;
}

let n8nReady:
	| Promise<{
			WebhookContext: typeof import('n8n-core').WebhookContext;
			HookContext: typeof import('n8n-core').HookContext;
			Workflow: typeof import('n8n-workflow').Workflow;
			logs: LogEntry[];
	  }>
	| undefined;

/** Loads n8n-core once, with its instance folder in a temporary directory and a capturing logger. */
function loadN8n() {
	n8nReady ??= (async () => {
		useN8nSettingsFolder('paypalych-trigger-n8n-test');
		const load = requireN8n;
		const core = load('n8n-core') as typeof import('n8n-core');
		const workflow = load('n8n-workflow') as typeof import('n8n-workflow');
		// n8n-core may bring its own copies of these packages: take the ones it uses.
		const fromCore = createRequire(load.resolve('n8n-core'));
		const { Container } = fromCore('@n8n/di') as typeof import('@n8n/di');
		const { Logger } = fromCore('@n8n/backend-common') as typeof import('@n8n/backend-common');
		const logs: LogEntry[] = [];
		const capture = (level: LogEntry['level']) => (message: string, metadata?: unknown) => {
			logs.push({ level, message, metadata });
		};
		const logger = {
			error: capture('error'),
			warn: capture('warn'),
			info: capture('info'),
			debug: capture('debug'),
			scoped() {
				return logger;
			},
		};
		Container.set(Logger, logger as unknown as InstanceType<typeof Logger>);
		return {
			WebhookContext: core.WebhookContext,
			HookContext: core.HookContext,
			Workflow: workflow.Workflow,
			logs,
		};
	})();
	return n8nReady;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
	const chunks: Buffer[] = [];
	for await (const chunk of req) chunks.push(chunk as Buffer);
	return Buffer.concat(chunks);
}

/** n8n's parseIncomingMessage + parseBody, reduced to the content types a postback can have. */
function prepareRequest(req: IncomingMessage, raw: Buffer): 'ok' | 'unparsable' {
	const header = String(req.headers['content-type'] ?? '');
	const contentType = header.split(';')[0].trim().toLowerCase();
	const charset = /charset=([^;]+)/i.exec(header)?.[1]?.trim() ?? 'utf-8';
	const encoding = (Buffer.isEncoding(charset) ? charset : 'utf-8') as BufferEncoding;
	const target = req as IncomingMessage & {
		rawBody?: Buffer;
		body?: unknown;
		readRawBody?: () => Promise<void>;
		contentType?: string;
		query?: unknown;
		params?: unknown;
	};
	target.contentType = contentType;
	target.query = Object.fromEntries(new URL(req.url ?? '/', 'http://x').searchParams);
	target.params = {};
	target.readRawBody = async () => {
		target.rawBody ??= raw;
	};
	// For a node of typeVersion 1, n8n runs parseBody whatever the content type (multipart aside).
	if (contentType.startsWith('multipart/')) return 'ok';
	target.rawBody = raw;
	if (raw.length === 0) return 'ok';
	const parsable =
		contentType === 'application/json' ||
		contentType === 'application/x-www-form-urlencoded' ||
		contentType === 'text/plain';
	if (!parsable) return 'ok';
	try {
		if (contentType === 'application/json') target.body = JSON.parse(raw.toString(encoding));
		else if (contentType === 'application/x-www-form-urlencoded')
			target.body = parseQueryString(raw.toString(encoding), undefined, undefined, {
				maxKeys: 1000,
			});
		else target.body = raw.toString(encoding);
	} catch {
		return 'unparsable';
	}
	return 'ok';
}

let harnessCount = 0;

/** What n8n hands a webhook call: its base URLs, and a credentials helper giving out the test's data. */
function additionalDataFor(
	credentialsHelper: TestCredentialsHelper,
): IWorkflowExecuteAdditionalData {
	return {
		webhookBaseUrl: 'http://n8n.test/webhook',
		webhookTestBaseUrl: 'http://n8n.test/webhook-test',
		variables: {},
		// The same helper as the action node's tests: it hands out the credential and applies its
		// authenticate (n8n-core's httpRequestWithAuthentication), counting both.
		credentialsHelper,
	} as unknown as IWorkflowExecuteAdditionalData;
}

export async function startWebhookHarness(options: HarnessOptions): Promise<WebhookHarness> {
	const { WebhookContext, Workflow, logs } = await loadN8n();
	const workflowId = options.workflowId ?? `wf-paypalych-trigger-${++harnessCount}`;
	const storage = options.storage ?? { staticData: '{}' };
	const executions: INodeExecutionData[][][] = [];
	const calls: CallRecord[] = [];
	const nodeName = options.nodeName ?? 'PayPalych Trigger';
	const credentialsHelper = new TestCredentialsHelper(options.credentials as unknown as Credential);

	const nodeTypes: INodeTypes = {
		getByName: () => options.nodeType,
		getByNameAndVersion: () => options.nodeType,
		getKnownTypes: () => ({}),
	} as unknown as INodeTypes;

	const node: INode = {
		id: '8f1c2d3e-0000-4000-8000-000000000001',
		name: nodeName,
		type: options.typeName,
		typeVersion: options.typeVersion ?? 1,
		position: [0, 0],
		parameters: options.parameters,
		credentials: { [options.credentialType]: { id: 'cred-1', name: 'PayPalych test' } },
		webhookId: '5b0e5a4c-1111-4222-8333-444455556666',
	};

	const handle = async (req: IncomingMessage, res: ServerResponse) => {
		const record: CallRecord = { status: 0, started: false };
		calls.push(record);
		res.on('finish', () => {
			record.status = res.statusCode;
		});
		const raw = await readBody(req);
		if (options.parsedBodyOnly === true) {
			const target = req as IncomingMessage & { body?: unknown };
			target.body = parseQueryString(raw.toString('utf8'));
		} else if (prepareRequest(req, raw) === 'unparsable') {
			res.statusCode = 422;
			res.setHeader('Content-Type', 'application/json');
			res.end(JSON.stringify({ code: 422, message: 'Failed to parse request body' }));
			return;
		}

		const loaded = JSON.parse(storage.staticData) as IDataObject;
		const workflow = new Workflow({
			id: workflowId,
			name: 'PayPalych trigger test',
			nodes: [node],
			connections: {},
			active: true,
			nodeTypes,
			staticData: loaded,
			settings: {},
		});
		const additionalData = {
			...additionalDataFor(credentialsHelper),
			httpRequest: req,
			httpResponse: res,
			webhookWaitingBaseUrl: 'http://n8n.test/webhook-waiting',
			formWaitingBaseUrl: 'http://n8n.test/form-waiting',
		} as IWorkflowExecuteAdditionalData;
		const webhookData = {
			httpMethod: 'POST',
			node: nodeName,
			path: String(options.parameters.event ?? ''),
			webhookDescription: options.nodeType.description.webhooks![0],
			workflowId: workflow.id,
			isTest: options.mode === 'manual',
		} as unknown as IWebhookData;
		const context = new WebhookContext(
			workflow,
			node,
			additionalData,
			options.mode ?? 'webhook',
			webhookData,
			[],
			null,
		);

		let result: IWebhookResponseData;
		try {
			result = await options.nodeType.webhook!.call(context);
		} catch (error) {
			record.error = error;
			if (!res.headersSent) {
				res.statusCode = 500;
				res.setHeader('Content-Type', 'application/json');
				res.end(
					JSON.stringify({
						code: 0,
						message: 'Workflow Webhook Error: Workflow could not be started!',
					}),
				);
			}
			return;
		}
		record.result = result;

		// As LiveWebhooks: the static data is saved in the response callback, when it changed.
		const save = () => {
			const flag = workflow.staticData as { __dataChanged?: boolean };
			if (flag.__dataChanged === true) {
				storage.staticData = JSON.stringify(workflow.staticData);
				flag.__dataChanged = false;
			}
		};
		if (result.noWebhookResponse === true) {
			if (!res.writableEnded) {
				record.error = new Error(
					'noWebhookResponse returned but the node did not end the response',
				);
				res.statusCode = 500;
				res.end();
			}
			save();
		}
		if (result.workflowData !== undefined) {
			// WorkflowRunner.run builds its own Workflow over the same static data object, which
			// resets the change flag; n8n's deferred onReceived answer (and its save) comes after.
			new Workflow({
				id: workflow.id,
				nodes: [node],
				connections: {},
				active: true,
				nodeTypes,
				staticData: loaded,
				settings: {},
			});
			record.started = true;
			executions.push(result.workflowData);
		}
		if (result.noWebhookResponse === true) return;

		// executeWebhook: without workflowData the answer is webhookResponse (or a default message);
		// with it (onReceived), the answer is the description's responseData, which n8n evaluates
		// with the default 'firstEntryJson', then webhookResponse.
		let body: unknown;
		if (result.workflowData === undefined) {
			body =
				result.webhookResponse !== undefined
					? result.webhookResponse
					: { message: 'Webhook call received' };
		} else {
			const responseData =
				(options.nodeType.description.webhooks![0].responseData as string | undefined) ??
				'firstEntryJson';
			body =
				responseData === 'noData'
					? undefined
					: responseData ||
						(result.webhookResponse !== undefined
							? result.webhookResponse
							: { message: 'Workflow was started' });
		}
		res.statusCode = 200;
		if (typeof body === 'string') {
			if (!res.getHeader('content-type')) res.setHeader('Content-Type', 'text/html; charset=utf-8');
			res.end(body);
		} else {
			res.setHeader('Content-Type', 'application/json; charset=utf-8');
			res.end(body === undefined ? '' : JSON.stringify(body));
		}
		save();
	};

	const server: Server = createServer((req, res) => {
		handle(req, res).catch((error: unknown) => {
			calls.push({ status: 500, started: false, error });
			if (!res.headersSent) res.statusCode = 500;
			res.end();
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/webhook/${node.webhookId}/${String(options.parameters.event ?? '')}`,
		executions,
		calls,
		logs,
		storage,
		credentialCounts: credentialsHelper.counts,
		close: () =>
			new Promise<void>((resolve, reject) => {
				server.closeAllConnections();
				server.close((error) => (error ? reject(error) : resolve()));
			}),
	};
}

/**
 * Runs one webhook lifecycle method (checkExists, create, delete) through n8n-core's HookContext,
 * as n8n does when a workflow is published (mode "trigger", activation "activate").
 */
export async function callWebhookMethod(
	options: Pick<
		HarnessOptions,
		'nodeType' | 'typeName' | 'parameters' | 'credentialType' | 'credentials'
	>,
	method: 'checkExists' | 'create' | 'delete',
): Promise<{ result: boolean; logs: LogEntry[]; productionUrl: string }> {
	const { HookContext, Workflow, logs } = await loadN8n();
	const node: INode = {
		id: '8f1c2d3e-0000-4000-8000-000000000002',
		name: 'PayPalych Trigger',
		type: options.typeName,
		typeVersion: 1,
		position: [0, 0],
		parameters: options.parameters,
		credentials: { [options.credentialType]: { id: 'cred-1', name: 'PayPalych test' } },
		webhookId: '0c6f7a1e-aaaa-4bbb-8ccc-dddd00001111',
	};
	const nodeTypes = {
		getByName: () => options.nodeType,
		getByNameAndVersion: () => options.nodeType,
		getKnownTypes: () => ({}),
	} as unknown as INodeTypes;
	const workflow = new Workflow({
		id: 'wf-lifecycle',
		nodes: [node],
		connections: {},
		active: true,
		nodeTypes,
		staticData: {},
		settings: {},
	});
	const additionalData = additionalDataFor(
		new TestCredentialsHelper(options.credentials as unknown as Credential),
	);
	const webhookData = {
		httpMethod: 'POST',
		node: node.name,
		path: String(options.parameters.event ?? ''),
		webhookDescription: options.nodeType.description.webhooks![0],
		workflowId: workflow.id,
	} as unknown as IWebhookData;
	const context = new HookContext(
		workflow,
		node,
		additionalData,
		'trigger',
		'activate',
		webhookData,
	);
	const before = logs.length;
	const result = await options.nodeType.webhookMethods!.default![method].call(context);
	return {
		result,
		logs: logs.slice(before),
		productionUrl: `http://n8n.test/webhook/${node.webhookId}/${String(options.parameters.event ?? '')}`,
	};
}
