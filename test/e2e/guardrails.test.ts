/**
 * End-to-end: the payout guardrails in a real n8n with this package installed as a community
 * package, the sandbox as the payment service. Each guard runs in a workflow of its own through
 * `n8n execute`; example 06 (a payout request approved by a person through the Wait node's form)
 * is published and one request is approved, one rejected. The sandbox is the oracle: its payouts,
 * its balance, and a tripwire on its create endpoints (a zero-delay fault that counts down on
 * every create request that reaches it).
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
	type ExampleSettings,
} from '../../scripts/harness/examples.ts';
import { NODE_TYPE, nodeOutput, type WorkflowJson } from '../../scripts/harness/n8n.ts';
import { Phases } from '../../scripts/harness/proc.ts';
import { startSink, type Sink } from '../../scripts/harness/sink.ts';
import { startStack, type Stack } from '../../scripts/harness/stack.ts';
import { ownerFor } from '../../scripts/harness/suite.ts';
import { utcDay } from '../helpers/sandbox.ts';
import { agentWorkflow, startFakeLlm, type FakeLlm } from './fake-llm.ts';
import { waitFor, OUTSIDE } from '../../scripts/harness/wait.ts';

type Json = Record<string, any>;

const phases = new Phases('e2e guardrails');
let stack: Stack;
let sink: Sink;
let stateDir: string;
let llm: FakeLlm;

const CREATE_PATHS = ['/api/v1/payout/personal/create', '/api/v1/payout/regular/create'];
const ARMED = 1000;

const AT = new Date(Date.now() + 12 * 3_600_000);
const NEVER = `${AT.getUTCMinutes()} ${AT.getUTCHours()} ${AT.getUTCDate()} ${AT.getUTCMonth() + 1} *`;

const GUARD_IDS = {
	dryRun: 'ppE2eGuardDryRun',
	maxAmount: 'ppE2eGuardMaxAmount',
	dailyLimit: 'ppE2eGuardDailyLimit',
	agent: 'ppE2eGuardAgentTool',
} as const;
const LLM_CREDENTIAL = { id: 'fakeLlmCred01', name: 'Fake chat model' };

/**
 * A Manual Trigger and one PayPalych payout node: a workflow `n8n execute` can run. The harness
 * publishes every workflow and n8n publishes none without a trigger that starts on its own: a
 * Schedule Trigger due once a year, 12 hours from now, makes it publishable (it never fires
 * during the suite; `n8n execute` starts from either trigger).
 */
function guardWorkflow(id: string, nodeName: string, parameters: Json): WorkflowJson {
	return {
		id,
		name: `E2E guardrail: ${nodeName}`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: `${id}-schedule`,
				name: 'Never in this suite',
				type: 'n8n-nodes-base.scheduleTrigger',
				typeVersion: 1.2,
				position: [0, 200],
				parameters: { rule: { interval: [{ field: 'cronExpression', expression: NEVER }] } },
			},
			{
				id: `${id}-trigger`,
				name: 'Run now',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{
				id: `${id}-payout`,
				name: nodeName,
				type: NODE_TYPE,
				typeVersion: 1,
				position: [240, 0],
				parameters,
				credentials: { payPalychApi: { id: CREDENTIAL_ID, name: CREDENTIAL_NAME } },
			},
		],
		connections: {
			'Run now': { main: [[{ node: nodeName, type: 'main', index: 0 }]] },
			'Never in this suite': { main: [[{ node: nodeName, type: 'main', index: 0 }]] },
		},
	} as unknown as WorkflowJson;
}

/**
 * n8n's AI Agent with a chat model (the fake one) and the PayPalych node as its tool: n8n turns
 * the node into `payPalychTool`; the amount and the Order ID come from the model ($fromAI).
 */
function payoutAgentWorkflow(): WorkflowJson {
	const base = guardWorkflow(GUARD_IDS.agent, 'Payout agent', {});
	return {
		...agentWorkflow({
			id: GUARD_IDS.agent,
			prompt: 'Pay the customer 250 RUB to their card.',
			model: LLM_CREDENTIAL,
			agentName: 'Payout agent',
			triggers: [base.nodes[0], base.nodes[1]],
			tool: {
				name: 'Pay out',
				type: `${NODE_TYPE}Tool`,
				parameters: {
					resource: 'payout',
					operation: 'createRegular',
					accountType: 'credit_card',
					amount: "={{ $fromAI('amount', 'Amount in RUB', 'string') }}",
					cardNumber: '4111 1111 1111 1111',
					cardHolder: 'IVAN PETROV',
					orderId:
						"={{ $fromAI('orderId', 'The ID of the payout request the user gave', 'string') }}",
					options: {},
				},
				credentials: { payPalychApi: { id: CREDENTIAL_ID, name: CREDENTIAL_NAME } },
			},
		}),
		name: base.name,
	};
}

function workflowsForTheSuite(settings: ExampleSettings): WorkflowJson[] {
	const approval = loadExamples().find((e) => e.workflow.id === EXAMPLE_IDS.payoutApproval);
	if (!approval) throw new Error('example 06 (payout approval) is missing');
	const card = {
		resource: 'payout',
		operation: 'createRegular',
		accountType: 'credit_card',
		cardNumber: '4111 1111 1111 1111',
		cardHolder: 'IVAN PETROV',
	};
	const personal = {
		resource: 'payout',
		operation: 'createPersonal',
		payoutAccountId: 'YOUR_PAYOUT_ACCOUNT_ID',
	};
	return [
		approval.workflow,
		guardWorkflow(GUARD_IDS.dryRun, 'Dry run', {
			...personal,
			amount: '150.50',
			orderId: 'e2e-dry-1',
			options: { dryRun: true },
		}),
		guardWorkflow(GUARD_IDS.maxAmount, 'Capped payout', {
			...card,
			amount: '1000.01',
			orderId: 'e2e-max-1',
			options: { maxAmount: '1000' },
		}),
		guardWorkflow(GUARD_IDS.dailyLimit, 'Limited payout', {
			...personal,
			amount: '400.01',
			orderId: 'e2e-day-2',
			// The stack's sandbox (live profile) writes UTC times: Time Zone says so.
			options: { dailyLimit: '1000', timeZone: 'UTC' },
		}),
		payoutAgentWorkflow(),
	].map((workflow) => configureWorkflow(workflow, settings));
}

async function sandboxPayouts(): Promise<Json[]> {
	const { data } = await stack.control<{ data: Json[] }>(
		'GET',
		`/payouts?merchantId=${stack.sandbox.merchantId}`,
	);
	return data;
}

async function availableRub(): Promise<string> {
	const merchant = await stack.control<Json>('GET', `/merchants/${stack.sandbox.merchantId}`);
	return merchant.balances.RUB.available as string;
}

/** Create requests that reached the sandbox since the tripwire was armed. */
async function createRequests(): Promise<number> {
	const { faults } = await stack.control<{ faults: Json[] }>('GET', '/faults');
	return CREATE_PATHS.reduce(
		(sum, path) => sum + ARMED - ((faults.find((f) => f.path === path)?.remaining as number) ?? 0),
		0,
	);
}

/** Runs `body` with the tripwire armed; returns how many create requests reached the sandbox. */
async function countingCreates(body: () => Promise<void>): Promise<number> {
	await stack.control('DELETE', '/faults');
	for (const path of CREATE_PATHS)
		await stack.control('POST', '/faults', { kind: 'delay', delayMs: 0, count: ARMED, path });
	try {
		await body();
		return await createRequests();
	} finally {
		await stack.control('DELETE', '/faults');
	}
}

/** The error `n8n execute` reports for a run that failed (the harness throws it). */
async function failedRun(id: string): Promise<string> {
	try {
		await stack.n8n.execute(id);
	} catch (error) {
		return error instanceof Error ? error.message : String(error);
	}
	throw new Error(`workflow ${id} ran without an error`);
}

async function requestPayout(body: Json): Promise<{ status: number; answer: Json }> {
	const res = await fetch(`${stack.n8n.url}/webhook/paypalych/payout-request`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	return { status: res.status, answer: (await res.json()) as Json };
}

/** The approver's link for a request, as "Ask a person to approve" sent it (to the shop here). */
async function approvalLink(requestId: string): Promise<string> {
	const asked = await waitFor(
		`the approval request of ${requestId}`,
		async () =>
			sink
				.on('/api/payouts/approval-request')
				.find((r) => (r.body as Json).requestId === requestId),
		OUTSIDE,
	);
	const link = new URL((asked.body as Json).approvalUrl as string);
	// n8n builds the link from its own idea of its address; the test reaches it on 127.0.0.1.
	const reachable = new URL(link.pathname + link.search, stack.n8n.url);
	return reachable.toString();
}

/** A person opens the approval form and submits a decision, as a browser would (multipart). */
async function decide(link: string, decision: 'Approve' | 'Reject', who: string): Promise<void> {
	const page = await fetch(link);
	expect(page.status).toBe(200);
	const html = await page.text();
	expect(html).toContain('Approve');
	const form = new FormData();
	form.set('field-0', decision);
	form.set('field-1', who);
	const res = await fetch(link, { method: 'POST', body: form });
	expect(res.status, await res.text()).toBeLessThan(400);
}

beforeAll(async () => {
	stateDir = mkdtempSync(join(tmpdir(), 'paypalych-e2e-guardrails-'));
	sink = await startSink();
	llm = await startFakeLlm();
	stack = await startStack({
		stateDir,
		shopBackend: sink.url,
		owner: ownerFor('E2E'),
		timeFactor: 0.01,
		merchantBalance: '25000.00',
		workflows: workflowsForTheSuite,
		// No PayPalych Trigger here: the relay only needs a target to start.
		relayEnv: { RELAY_PAYOUT_TARGETS: `${sink.url}/relay/payout`, LOG_LEVEL: 'warn' },
		phases,
	});
	await stack.n8n.importCredentials([
		{
			...LLM_CREDENTIAL,
			type: 'openAiApi',
			data: { apiKey: 'sk-fake', url: `${llm.url}/v1` },
		},
	]);
});

afterAll(async () => {
	await stack?.stop();
	await sink?.close();
	await llm?.close();
	phases.mark('stopped');
	phases.total();
	if (stateDir && !process.env.PAYPALYCH_E2E_KEEP)
		rmSync(stateDir, { recursive: true, force: true });
});

describe('Payout guardrails in a real n8n', () => {
	it("Daily Limit: today's payouts plus this one above the limit are refused, naming both figures; nothing is sent", async () => {
		// 600.00 already paid out today (straight on the service, as another system would).
		await stack.api('POST', '/api/v1/payout/personal/create', {
			amount: '600',
			payout_account_id: stack.sandbox.payoutAccountId,
			order_id: 'e2e-day-1',
		});
		const before = await sandboxPayouts();
		const balance = await availableRub();
		let message = '';
		const creates = await countingCreates(async () => {
			message = await failedRun(GUARD_IDS.dailyLimit);
		});
		expect(message).toMatch(
			new RegExp(
				`Refused: Daily Limit 1000\\.00 RUB would be exceeded: 600\\.00 paid out today \\((${utcDay(-1)}|${utcDay()}), UTC\\) \\+ 400\\.01 to payout account ${stack.sandbox.payoutAccountId} = 1000\\.01`,
			),
		);
		expect(creates).toBe(0);
		expect(await sandboxPayouts()).toEqual(before);
		expect(await availableRub()).toBe(balance);
		phases.mark('daily limit refused');
	});

	it('Dry Run: outputs what would be paid and sends no create request', async () => {
		const before = await sandboxPayouts();
		const balance = await availableRub();
		let out: Json[] = [];
		const creates = await countingCreates(async () => {
			out = nodeOutput(await stack.n8n.execute(GUARD_IDS.dryRun), 'Dry run');
		});
		expect(out).toEqual([
			expect.objectContaining({
				dry_run: true,
				would_pay: true,
				amount: '150.50',
				currency: 'RUB',
				destination: `payout account ${stack.sandbox.payoutAccountId}`,
				order_id: 'e2e-dry-1',
				order_id_exists: false,
				balance_available: balance,
				balance_covers: true,
			}),
		]);
		expect(creates).toBe(0);
		expect(await sandboxPayouts()).toEqual(before);
		expect(await availableRub()).toBe(balance);
		phases.mark('dry run sent nothing');
	});

	it('Max Amount: a payout above it is refused before anything is sent', async () => {
		const before = await sandboxPayouts();
		const balance = await availableRub();
		let message = '';
		const creates = await countingCreates(async () => {
			message = await failedRun(GUARD_IDS.maxAmount);
		});
		expect(message).toContain(
			'Refused: the payout of 1000.01 to card 411111******1111 is above Max Amount 1000.00',
		);
		expect(creates).toBe(0);
		expect(await sandboxPayouts()).toEqual(before);
		expect(await availableRub()).toBe(balance);
		phases.mark('max amount refused');
	});

	it('as an AI tool: refuses a payout without an explicit Order ID and names the amount and destination in its answer', async () => {
		const before = await sandboxPayouts();
		llm.toolCalls.push({ amount: '250', orderId: '' });
		let run: unknown;
		const creates = await countingCreates(async () => {
			run = await stack.n8n.execute(GUARD_IDS.agent).catch((error: Error) => error);
		});
		const refusal = llm.toolAnswers().join('\n');
		expect(refusal, JSON.stringify(run).slice(0, 2000)).toContain(
			'Refused: no payout of 250.00 RUB to card 411111******1111 without an explicit Order ID',
		);
		expect(creates).toBe(0);
		expect(await sandboxPayouts()).toEqual(before);
		phases.mark('tool without an Order ID refused');

		llm.requests.length = 0;
		llm.toolCalls.push({ amount: '250', orderId: 'agent-42' });
		await stack.n8n.execute(GUARD_IDS.agent);
		const added = (await sandboxPayouts()).filter((p) => !before.some((b) => b.id === p.id));
		expect(added.map((p) => [p.order_id, p.amount])).toEqual([['agent-42', 250]]);
		expect(llm.toolAnswers().join('\n')).toContain(
			`Paid out 250.00 RUB to card 411111******1111 under Order ID agent-42: payout ${String(added[0].id)}`,
		);
		phases.mark('tool with an Order ID paid and said so');
	});

	it('example 06: an approved request is paid once under its request ID; a rejected one pays nothing', async () => {
		const before = await sandboxPayouts();
		const approved = await requestPayout({
			requestId: 'wd-e2e-approved',
			amount: '1500.00',
			cardNumber: '4111111111111111',
			cardHolder: 'IVAN PETROV',
		});
		expect(approved.status).toBe(202);
		expect(approved.answer).toEqual({
			requestId: 'wd-e2e-approved',
			status: 'awaiting_approval',
			amount: '1500.00',
			destination: 'card 411111******1111',
		});
		const rejected = await requestPayout({
			requestId: 'wd-e2e-rejected',
			amount: '700.00',
			cardNumber: '5555555555554444',
			cardHolder: 'ANNA PETROVA',
		});
		expect(rejected.status).toBe(202);
		const approveLink = await approvalLink('wd-e2e-approved');
		const rejectLink = await approvalLink('wd-e2e-rejected');
		// Waiting for a person: nothing paid yet.
		expect(await sandboxPayouts()).toEqual(before);
		phases.mark('two payout requests waiting for approval');

		await decide(rejectLink, 'Reject', 'Olga (finance)');
		const [told] = await sink.waitFor('/api/payouts/rejected', 1);
		expect(told.body).toMatchObject({
			requestId: 'wd-e2e-rejected',
			decision: 'Reject',
			decidedBy: 'Olga (finance)',
		});
		await decide(approveLink, 'Approve', 'Olga (finance)');
		const [paid] = await sink.waitFor('/api/payouts/approved', 1);
		expect(paid.body).toMatchObject({
			requestId: 'wd-e2e-approved',
			amount: 1500,
			alreadyExisted: false,
			decidedBy: 'Olga (finance)',
		});
		const added = (await sandboxPayouts()).filter((p) => !before.some((b) => b.id === p.id));
		expect(added.map((p) => [p.order_id, p.amount, p.account_identifier])).toEqual([
			['wd-e2e-approved', 1500, '411111******1111'],
		]);
		expect((paid.body as Json).payoutId).toBe(added[0].id);

		// The same request sent again is refused at the preview: its request ID is already paid.
		const again = await requestPayout({
			requestId: 'wd-e2e-approved',
			amount: '1500.00',
			cardNumber: '4111111111111111',
			cardHolder: 'IVAN PETROV',
		});
		expect(again).toEqual({
			status: 422,
			answer: {
				requestId: 'wd-e2e-approved',
				status: 'refused',
				reason: 'this request ID was already paid out',
			},
		});
		expect(await sandboxPayouts()).toHaveLength(before.length + 1);
		const executions = await waitFor(
			'the approval executions to finish',
			async () => {
				const list = await stack.n8n.executions(EXAMPLE_IDS.payoutApproval);
				return list.length >= 3 &&
					list.every((e) => !['running', 'new', 'waiting'].includes(e.status))
					? list
					: undefined;
			},
			OUTSIDE,
		);
		expect(executions.filter((e) => e.status === 'error')).toEqual([]);
		phases.mark('approved paid once, rejected paid nothing');
	});
});
