/**
 * The smoke set: what must work on every n8n line the package supports, run on the n8n that
 * N8N_VERSION names (2.41.1 by default, under Node 24; `npm run test:e2e:n8n1` runs it on
 * 1.123.81, the last 1.x, under Node 22). With the sandbox as PayPalych and the relay in front:
 * - the package installed from its packed tarball with the npm line of docs/merchant/install.md,
 *   into an empty `~/.n8n/nodes`;
 * - n8n's credential test, through its REST API: the right token passes, a wrong one is refused
 *   (with the credential's own message on n8n 2.x);
 * - one operation of each resource (Balance, Bill, Payment, Payout, SBP Bank), one workflow run by
 *   `n8n execute`;
 * - a payment postback (sandbox → relay → trigger) confirmed with the API and run once (example
 *   01 tells the shop); the same postback again, straight to the trigger, answered `duplicate`
 *   and run no second time;
 * - n8n's AI Agent calling the node as a tool (a fake chat model).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
	CREDENTIAL_ID,
	CREDENTIAL_NAME,
	EXAMPLE_IDS,
	configureWorkflow,
	loadExamples,
} from '../../scripts/harness/examples.ts';
import {
	N8N_VERSION,
	installTarball,
	n8nMajor,
	packTarball,
} from '../../scripts/harness/n8n-install.ts';
import {
	NODE_TYPE,
	PACKAGE_NAME,
	nodeOutput,
	type WorkflowJson,
} from '../../scripts/harness/n8n.ts';
import { Phases } from '../../scripts/harness/proc.ts';
import { startSink, type Sink } from '../../scripts/harness/sink.ts';
import { startStack, type Stack } from '../../scripts/harness/stack.ts';
import { ownerFor } from '../../scripts/harness/suite.ts';
import { agentWorkflow, startFakeLlm, type FakeLlm } from './fake-llm.ts';
import { waitFor, OUTSIDE } from '../../scripts/harness/wait.ts';

type Json = Record<string, any>;

const phases = new Phases(`e2e smoke n8n ${N8N_VERSION}`);
let stack: Stack;
let sink: Sink;
let llm: FakeLlm;
let stateDir: string;

const IDS = { resources: 'ppSmokeResources', agent: 'ppSmokeAgentTool' } as const;
const LLM_CREDENTIAL = { id: 'smokeLlmCred01', name: 'Fake chat model' };
const credential = { payPalychApi: { id: CREDENTIAL_ID, name: CREDENTIAL_NAME } };

/** A Manual Trigger, then one PayPalych node per resource in a row (each runs once per item). */
function resourcesWorkflow(billId: string, paymentId: string): WorkflowJson {
	const steps: Array<[string, Json]> = [
		['Balance', { resource: 'balance', operation: 'get', options: {} }],
		[
			'Bill',
			{ resource: 'bill', operation: 'get', billId: { __rl: true, mode: 'id', value: billId } },
		],
		['Payment', { resource: 'payment', operation: 'get', paymentId }],
		[
			'Payout',
			{
				resource: 'payout',
				operation: 'createPersonal',
				payoutAccountId: stack.sandbox.payoutAccountId,
				amount: '150.00',
				orderId: `smoke-${N8N_VERSION}`,
				options: {},
			},
		],
		['SBP banks', { resource: 'sbpBank', operation: 'getMany', returnAll: false, limit: 3 }],
	];
	const nodes = [
		{
			id: `${IDS.resources}-start`,
			name: 'Start',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
		...steps.map(([name, parameters], i) => ({
			id: `${IDS.resources}-${i}`,
			name,
			type: NODE_TYPE,
			typeVersion: 1,
			position: [220 * (i + 1), 0],
			parameters,
			credentials: credential,
		})),
	];
	const names = nodes.map((n) => n.name);
	return {
		id: IDS.resources,
		name: 'Smoke: one operation of each resource',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes,
		connections: Object.fromEntries(
			names
				.slice(0, -1)
				.map((name, i) => [name, { main: [[{ node: names[i + 1], type: 'main', index: 0 }]] }]),
		),
	} as unknown as WorkflowJson;
}

async function testCredential(apiToken: string): Promise<{ status: string; message?: string }> {
	return await stack.n8n.rest('POST', '/credentials/test', {
		credentials: {
			id: CREDENTIAL_ID,
			name: CREDENTIAL_NAME,
			type: 'payPalychApi',
			data: { apiToken, baseUrl: stack.sandbox.url },
		},
	});
}

beforeAll(async () => {
	stateDir = mkdtempSync(join(tmpdir(), 'paypalych-e2e-smoke-'));
	sink = await startSink();
	llm = await startFakeLlm();
	const tarball = await packTarball(stateDir);
	const paymentExample = loadExamples().find((e) => e.workflow.id === EXAMPLE_IDS.paymentPaid);
	if (!paymentExample) throw new Error('example 01 is missing');
	stack = await startStack({
		stateDir,
		shopBackend: sink.url,
		owner: ownerFor('Smoke'),
		timeFactor: 0.01,
		workflows: (settings) => [configureWorkflow(paymentExample.workflow, settings)],
		installPackage: async (dataFolder) => await installTarball(dataFolder, tarball),
		relayEnv: { LOG_LEVEL: 'warn' },
		phases,
	});
	await stack.n8n.importCredentials([
		{ ...LLM_CREDENTIAL, type: 'openAiApi', data: { apiKey: 'sk-fake', url: `${llm.url}/v1` } },
	]);
	phases.mark('stack up');
});

afterAll(async () => {
	await stack?.stop();
	await sink?.close();
	await llm?.close();
	phases.total();
	if (stateDir && !process.env.PAYPALYCH_E2E_KEEP)
		rmSync(stateDir, { recursive: true, force: true });
});

describe(`smoke on n8n ${N8N_VERSION}`, () => {
	it('runs the n8n version asked for, with the package npm installed from its tarball', async () => {
		const settings = await stack.n8n.rest<Json>('GET', '/settings');
		expect(settings.versionCli).toBe(N8N_VERSION);
		const types = await stack.n8n.nodeTypes<{ name: string }>([
			{ name: NODE_TYPE, version: 1 },
			{ name: `${NODE_TYPE}Trigger`, version: 1 },
		]);
		// n8n 1.x answers with the description's own name, 2.x with the package prefix.
		expect(types.map((t) => t.name.replace(`${PACKAGE_NAME}.`, '')).sort()).toEqual([
			'payPalych',
			'payPalychTrigger',
		]);
	});

	it("n8n's credential test passes the merchant's token and refuses a wrong one", async () => {
		expect(await testCredential(stack.sandbox.token)).toMatchObject({ status: 'OK' });
		const refused = await testCredential('1|not-the-token');
		expect(refused.status).toBe('Error');
		// n8n 2.x shows the credential's own sentence for a 401; n8n 1.x's credential test does not
		// apply the credential's rules to a 401 and shows its generic text.
		expect(refused.message).toContain(
			n8nMajor() >= 2
				? 'The API token was rejected'
				: 'Authorization failed - please check your credentials',
		);
	});

	it('runs one operation of each resource against the sandbox', async () => {
		const bill = await stack.api<Json>('POST', '/api/v1/bill/create', {
			amount: '990.00',
			shop_id: stack.sandbox.shopId,
			order_id: `smoke-res-${Date.now()}`,
		});
		const { payment } = await stack.control<{ payment: Json }>(
			'POST',
			`/bills/${bill.bill_id as string}/pay`,
			{ outcome: 'full', method: 'BANK_CARD' },
		);
		await stack.n8n.importWorkflows([
			resourcesWorkflow(bill.bill_id as string, payment.id as string),
		]);
		const run = await stack.n8n.execute(IDS.resources);
		expect(nodeOutput(run, 'Balance')[0]).toHaveProperty('balances');
		expect(nodeOutput(run, 'Bill')[0]).toMatchObject({ id: bill.bill_id });
		expect(nodeOutput(run, 'Payment')[0]).toMatchObject({ id: payment.id });
		const payouts = nodeOutput(run, 'Payout');
		expect(payouts.length).toBeGreaterThanOrEqual(1);
		expect(payouts[0]).toMatchObject({ order_id: `smoke-${N8N_VERSION}` });
		expect(nodeOutput(run, 'SBP banks')).toHaveLength(3);
	});

	it('a payment postback through the relay is confirmed and runs once; the same postback again is a duplicate', async () => {
		const orderId = `smoke-pay-${Date.now()}`;
		// Executions of example 01 so far (the bill paid in the test before ran it too).
		const earlier = new Set((await stack.n8n.executions(EXAMPLE_IDS.paymentPaid)).map((e) => e.id));
		const bill = await stack.api<Json>('POST', '/api/v1/bill/create', {
			amount: '1250.00',
			shop_id: stack.sandbox.shopId,
			order_id: orderId,
		});
		const { payment } = await stack.control<{ payment: Json }>(
			'POST',
			`/bills/${bill.bill_id as string}/pay`,
			{ outcome: 'full', method: 'BANK_CARD' },
		);
		const told = await waitFor(
			'the shop to be told the order is paid',
			async () => {
				const calls = sink
					.on('/api/orders/paid')
					.filter((r) => (r.body as Json).orderId === orderId);
				return calls.length > 0 ? calls : undefined;
			},
			OUTSIDE,
		);
		expect(told).toHaveLength(1);
		// The shop is told from inside the execution, so the execution may still be running here.
		const execution = await waitFor(
			'the execution that told the shop to end',
			async () => {
				const [e] = (await stack.n8n.executions(EXAMPLE_IDS.paymentPaid)).filter(
					(x) => !earlier.has(x.id),
				);
				return e && e.status !== 'running' && e.status !== 'new' ? e : undefined;
			},
			OUTSIDE,
		);
		expect(execution.status).toBe('success');
		const trigger = nodeOutput(await stack.n8n.execution(execution.id), 'Payment postback')[0];
		expect(trigger).toMatchObject({ confirmed: true, paid: true, TrsId: payment.id });

		// The same postback, straight to the trigger's production URL.
		const { data } = await stack.control<{ data: Json[] }>(
			'GET',
			`/deliveries?kind=payment&trsId=${encodeURIComponent(payment.id as string)}`,
		);
		const again = await fetch(stack.triggerUrls[EXAMPLE_IDS.paymentPaid], {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body: new URLSearchParams(data[0].body as Record<string, string>).toString(),
		});
		expect(again.status).toBe(200);
		expect(again.headers.get('x-paypalych-receipt')).toBe('duplicate');
		const runs = (await stack.n8n.executions(EXAMPLE_IDS.paymentPaid)).filter(
			(e) => !earlier.has(e.id),
		);
		expect(runs, JSON.stringify(runs)).toHaveLength(1);
		expect(
			sink.on('/api/orders/paid').filter((r) => (r.body as Json).orderId === orderId),
		).toHaveLength(1);
	});

	it("n8n's AI Agent calls the node as a tool and reads its answer", async () => {
		await stack.n8n.importWorkflows([
			agentWorkflow({
				id: IDS.agent,
				prompt: 'What is my balance?',
				model: LLM_CREDENTIAL,
				tool: {
					name: 'Balance',
					type: `${NODE_TYPE}Tool`,
					parameters: { resource: 'balance', operation: 'get', options: {} },
					credentials: credential,
				},
			}),
		]);
		llm.toolCalls.push({});
		const before = llm.toolAnswers().length;
		const run = await stack.n8n.execute(IDS.agent);
		const answers = llm.toolAnswers().slice(before);
		expect(answers).toHaveLength(1);
		expect(answers[0]).toContain('balances');
		expect(JSON.stringify(nodeOutput(run, 'Agent'))).toContain('The tool said');
	});
});
