/**
 * Runs the PayPalych node's real `execute()` (and its list-search method) inside n8n-core's real
 * execution contexts: `ExecuteContext` / `LoadOptionsContext` with n8n-core's own helpers, so
 * every request goes through n8n-core's `httpRequestWithAuthentication` and n8n's outbound HTTP
 * client over a real socket.
 *
 * The only stand-in is the credentials helper (the real one lives in the n8n CLI package): it
 * hands out the credential data and applies the credential class's generic `authenticate`
 * block, resolving its expressions with n8n-workflow's real expression engine, as n8n does.
 */
import { join } from 'node:path';

import { requireN8n, useN8nSettingsFolder } from './n8n-runtime.ts';
import type {
	ICredentialDataDecryptedObject,
	ICredentials,
	ICredentialType,
	IDataObject,
	IExecuteData,
	IHttpRequestOptions,
	INode,
	INodeCredentialsDetails,
	INodeExecutionData,
	INodeListSearchResult,
	INodeParameters,
	INodeProperties,
	INodeType,
	INodeTypes,
	IRequestOptionsSimplified,
	IWorkflowExecuteAdditionalData,
	IAuthenticateGeneric,
} from 'n8n-workflow';

useN8nSettingsFolder('paypalych-n8n-test');
const load = requireN8n;
const workflowLib = load('n8n-workflow') as typeof import('n8n-workflow');
const core = load('n8n-core') as typeof import('n8n-core');
const { Workflow, ICredentialsHelper, createRunExecutionData } = workflowLib;

const root = join(__dirname, '..', '..');
const { PayPalych } = load(join(root, 'dist/nodes/PayPalych/PayPalych.node.js')) as {
	PayPalych: new () => INodeType;
};
const { PayPalychApi } = load(join(root, 'dist/credentials/PayPalychApi.credentials.js')) as {
	PayPalychApi: new () => ICredentialType;
};

export const NODE_TYPE = 'n8n-nodes-paypalych.payPalych';

export interface Credential {
	apiToken: string;
	baseUrl: string;
	/** The credential's optional Shop ID. */
	shopId?: string;
}

/** n8n's credentials helper, reduced to handing out the test's data and applying `authenticate`. */
export class TestCredentialsHelper extends ICredentialsHelper {
	private readonly data: Credential;
	/**
	 * What n8n's credentials helper was asked to do: `reads`, the credential's decrypted data handed
	 * out (a node's getCredentials, and httpRequestWithAuthentication's own read); `authentications`,
	 * a request given the credential's authentication (its expressions resolved).
	 */
	readonly counts = { reads: 0, authentications: 0 };
	constructor(data: Credential) {
		super();
		this.data = data;
	}
	getParentTypes(): string[] {
		return [];
	}
	isCredentialUsableByNode(): boolean {
		return true;
	}
	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
		workflow?: InstanceType<typeof Workflow>,
		node?: INode,
	): Promise<IHttpRequestOptions> {
		this.counts.authentications++;
		const type = new PayPalychApi();
		if (typeName !== type.name) throw new Error(`Unknown credential type ${typeName}`);
		const authenticate = type.authenticate as IAuthenticateGeneric;
		const options = requestOptions as IHttpRequestOptions & Record<string, IDataObject | undefined>;
		for (const [outer, values] of Object.entries(authenticate.properties)) {
			const target: IDataObject = (options[outer] as IDataObject | undefined) ?? {};
			for (const [key, value] of Object.entries(values as IDataObject)) {
				target[key] =
					typeof value === 'string' && value.startsWith('=') && workflow && node
						? workflow.expression.getSimpleParameterValue(
								node,
								value,
								'internal',
								{ $credentials: credentials },
								undefined,
								'',
							)
						: value;
			}
			options[outer] = target;
		}
		return options;
	}
	async preAuthentication(): Promise<undefined> {
		return undefined;
	}
	async runPreAuthentication(): Promise<undefined> {
		return undefined;
	}
	async getCredentials(): Promise<ICredentials> {
		throw new Error('not used');
	}
	async getDecrypted(
		_a: IWorkflowExecuteAdditionalData,
		_n: INodeCredentialsDetails,
		type: string,
	): Promise<ICredentialDataDecryptedObject> {
		if (type !== 'payPalychApi') throw new Error(`No credential of type ${type}`);
		this.counts.reads++;
		return { ...this.data };
	}
	async updateCredentials(): Promise<void> {}
	async updateCredentialsOauthTokenData(): Promise<void> {}
	getCredentialsProperties(): INodeProperties[] {
		return new PayPalychApi().properties;
	}
}

const nodeTypes: INodeTypes = {
	getByName: () => new PayPalych(),
	getByNameAndVersion: () => new PayPalych(),
	getKnownTypes: () => ({}),
} as unknown as INodeTypes;

export interface RunOptions {
	credential: Credential;
	parameters: INodeParameters;
	items?: IDataObject[];
	continueOnFail?: boolean;
	workflowId?: string;
	nodeName?: string;
	/** The node's type in the workflow: n8n gives the node used as an AI agent's tool `…payPalychTool`. */
	nodeType?: string;
	/** The id n8n gives the node's credential (default `cred-1`). */
	credentialId?: string;
}

function build(options: Omit<RunOptions, 'items'>) {
	const node: INode = {
		id: 'b6b1c0f0-0000-4000-8000-000000000001',
		name: options.nodeName ?? 'PayPalych',
		type: options.nodeType ?? NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: options.parameters,
		credentials: {
			payPalychApi: { id: options.credentialId ?? 'cred-1', name: 'PayPalych account' },
		},
		...(options.continueOnFail ? { onError: 'continueRegularOutput' as const } : {}),
	};
	const workflow = new Workflow({
		id: options.workflowId ?? 'wf-test-1',
		name: 'PayPalych test',
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes,
	});
	// Resolve the parameters like n8n does (defaults filled in, display options applied).
	const nodeType = new PayPalych();
	const resolved = workflowLib.NodeHelpers.getNodeParameters(
		nodeType.description.properties,
		node.parameters,
		true,
		false,
		node,
		nodeType.description,
	);
	node.parameters = resolved ?? node.parameters;
	const additionalData = {
		credentialsHelper: new TestCredentialsHelper(options.credential),
		restApiUrl: 'http://127.0.0.1:5678/rest',
		instanceBaseUrl: 'http://127.0.0.1:5678/',
		webhookBaseUrl: 'http://127.0.0.1:5678/webhook',
		webhookWaitingBaseUrl: 'http://127.0.0.1:5678/webhook-waiting',
		webhookTestBaseUrl: 'http://127.0.0.1:5678/webhook-test',
		formWaitingBaseUrl: 'http://127.0.0.1:5678/form-waiting',
		variables: {},
		currentNodeParameters: undefined,
		executionTimeoutTimestamp: undefined,
		userId: 'user-1',
		setExecutionStatus: () => {},
	} as unknown as IWorkflowExecuteAdditionalData;
	return { node, workflow, nodeType, additionalData };
}

/** Runs the node once over the given input items, as n8n's workflow engine would. */
export async function runNode(options: RunOptions): Promise<INodeExecutionData[]> {
	const { node, workflow, nodeType, additionalData } = build(options);
	const items: INodeExecutionData[] = (options.items ?? [{}]).map((json) => ({ json }));
	const inputData = { main: [items] };
	const executeData: IExecuteData = { node, data: inputData, source: null };
	const context = new core.ExecuteContext(
		workflow,
		node,
		additionalData,
		'manual',
		createRunExecutionData(),
		0,
		items,
		inputData,
		executeData,
		[],
	);
	const output = await nodeType.execute!.call(context);
	return (output as INodeExecutionData[][])[0];
}

/** Calls the node's list-search method (the Bank picker) in n8n-core's real LoadOptionsContext. */
export async function runListSearch(
	options: Omit<RunOptions, 'items'> & { method: string; filter?: string },
): Promise<INodeListSearchResult> {
	const { node, workflow, nodeType, additionalData } = build(options);
	const context = new core.LoadOptionsContext(workflow, node, additionalData, 'parameters.bank');
	const method = (
		nodeType.methods?.listSearch as Record<
			string,
			(this: unknown, filter?: string) => Promise<INodeListSearchResult>
		>
	)[options.method];
	return await method.call(context, options.filter);
}

export { workflowLib };

/**
 * Resolves an expression of the credential (its `test` request, its `authenticate` block) with
 * `$credentials` set, through n8n-workflow's real expression engine, as n8n does.
 */
export function resolveCredentialExpression(expression: string, credentials: Credential): unknown {
	const { node, workflow } = build({ credential: credentials, parameters: {} });
	return workflow.expression.getSimpleParameterValue(
		node,
		expression,
		'internal',
		{ $credentials: credentials },
		undefined,
		'',
	);
}

export { PayPalych, PayPalychApi };
