/**
 * The end-to-end suite's stack and what its cases share: the shop backend (sink), the relay, the
 * sandbox and n8n started once, the workflows it runs, and helpers to pay, read executions and ask
 * the relay's admin API. paypalych.test.ts holds the cases, paypalych-security.ts the security ones,
 * paypalych-money.ts the money ones.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import {
	EXAMPLE_IDS,
	CREDENTIAL_ID,
	configureWorkflow,
	loadExamples,
	withDormantSchedules,
	type ExampleSettings,
} from '../../scripts/harness/examples.ts';
import {
	TRIGGER_TYPE,
	type ExecutionSummary,
	type WorkflowJson,
} from '../../scripts/harness/n8n.ts';
import { Phases } from '../../scripts/harness/proc.ts';
import { startSink, type Sink } from '../../scripts/harness/sink.ts';
import { startStack, type RelayInfo, type Stack } from '../../scripts/harness/stack.ts';
import { ownerFor } from '../../scripts/harness/suite.ts';
import { PG_MISSING, createTestDatabase, type TestDatabase } from '../relay/pg.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

/** The relay's store: SQLite by default; paypalych-postgres.test.ts runs this suite on PostgreSQL. */
export const RELAY_STORE =
	process.env.PAYPALYCH_E2E_RELAY_STORE === 'postgres' ? 'postgres' : 'sqlite';
let relayDatabase: TestDatabase | undefined;
/** Set where the PostgreSQL run cannot happen: no PostgreSQL on this machine (pg.ts says why). */
export const SKIP = RELAY_STORE === 'postgres' ? PG_MISSING : undefined;

// Oracle for the signature rule, written out here rather than taken from the code under test.
export const md5Upper = (text: string) =>
	createHash('md5').update(text).digest('hex').toUpperCase();

export const phases = new Phases('e2e');
export let stack: Stack;
export let sink: Sink;
let stateDir: string;

export type Json = Record<string, any>;

/** Asks a relay's admin API (the stack's relay unless another is named). */
export async function relayAdmin<T = Json>(
	path: string,
	method = 'GET',
	relay: Pick<RelayInfo, 'url' | 'adminToken'> = stack.relay,
): Promise<T> {
	const res = await fetch(`${relay.url}/admin${path}`, {
		method,
		headers: { authorization: `Bearer ${relay.adminToken}` },
	});
	const text = await res.text();
	if (!res.ok) throw new Error(`relay admin ${method} ${path}: HTTP ${res.status} ${text}`);
	return JSON.parse(text) as T;
}

/** Asks the "payment link on request" workflow for a bill, as a shop would. */
export async function requestPaymentLink(body: Json): Promise<{ status: number; answer: Json }> {
	const res = await fetch(`${stack.n8n.url}/webhook/paypalych/payment-link`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	return { status: res.status, answer: (await res.json()) as Json };
}

/**
 * Posts form fields to `url` as the service posts a postback (or as anyone can): the answer's
 * status and the trigger's receipt header.
 */
export async function postForm(
	url: string,
	fields: Json,
): Promise<{ status: number; receipt: string | null }> {
	const res = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/x-www-form-urlencoded' },
		body: new URLSearchParams(fields as Record<string, string>).toString(),
		redirect: 'manual',
	});
	await res.arrayBuffer();
	return { status: res.status, receipt: res.headers.get('x-paypalych-receipt') };
}

/** Creates a bill directly on the sandbox API, as the merchant. */
export async function createBill(amount: string, orderId: string): Promise<string> {
	const bill = await stack.api<Json>('POST', '/api/v1/bill/create', {
		amount,
		shop_id: stack.sandbox.shopId,
		order_id: orderId,
	});
	expect(bill.bill_id).toEqual(expect.any(String));
	return bill.bill_id as string;
}

/** Pays a bill on the sandbox; the sandbox then sends the signed postback to the shop's Result URL. */
export async function pay(
	billId: string,
	outcome: 'full' | 'fail' | 'under' | 'over' = 'full',
): Promise<Json> {
	const result = await stack.control<{ payment: Json; postback: Json }>(
		'POST',
		`/bills/${billId}/pay`,
		{ outcome, method: 'BANK_CARD' },
	);
	return result.payment;
}

export async function executionsOf(workflowId: string): Promise<ExecutionSummary[]> {
	return await stack.n8n.executions(workflowId);
}

/** Waits until the workflow has `count` finished executions; returns them. */
export async function waitForExecutions(
	workflowId: string,
	count: number,
): Promise<ExecutionSummary[]> {
	return await waitFor(
		`${count} finished executions of ${workflowId}`,
		async () => {
			const list = (await executionsOf(workflowId)).filter(
				(e) => e.status !== 'running' && e.status !== 'new',
			);
			return list.length >= count ? list : undefined;
		},
		{ timeoutMs: 60_000, everyMs: 250 },
	);
}

export const paidCalls = (orderId: string) =>
	sink.on('/api/orders/paid').filter((r) => (r.body as Json).orderId === orderId);

/**
 * The examples as `npm start` imports them, except that their schedules never fire in the middle
 * of the suite (the suite runs them itself through their "Run now" trigger).
 */
function examplesForTheSuite(settings: ExampleSettings): WorkflowJson[] {
	const examples = loadExamples().map(({ workflow }) => workflow);
	return [...examples, ...suiteWorkflows(examples)].map((workflow) =>
		withDormantSchedules(configureWorkflow(workflow, settings)),
	);
}

/** Workflows of the security and money suites only (published beside the examples). */
export const SUITE_IDS = {
	sellerCopy: 'ppE2eSellerCopy',
	successRedirect: 'ppE2eSuccessRedirect',
	billIdOnly: 'ppE2eBillIdOnly',
} as const;

/** Where the Bill ID Only copy of example 01 calls the shop (the example's paths, moved under this). */
export const BILL_ID_ONLY_PREFIX = '/bill-id-only';

/**
 * A copy of an example under another id, name and trigger webhook id (another production URL),
 * its nodes given other ids and `change`d.
 */
function copyOf(
	source: WorkflowJson,
	copy: { id: string; name: string; webhookId: string; suffix: string },
	change: (node: WorkflowJson['nodes'][number]) => WorkflowJson['nodes'][number] = (n) => n,
): WorkflowJson {
	return {
		...source,
		id: copy.id,
		name: `${source.name} (${copy.name})`,
		nodes: source.nodes.map((node) =>
			change({
				...node,
				id: `${String(node.id)}-${copy.suffix}`,
				...(node.type === TRIGGER_TYPE ? { webhookId: copy.webhookId } : {}),
			}),
		),
	};
}

/**
 * - a second copy of the seller-payout example, as after an accidental second import: every
 *   payment postback reaches two triggers with two memories, so the payout node itself must keep
 *   a duplicate from paying twice;
 * - a copy of example 01 with the trigger's Order Check set to Bill ID Only, calling the shop
 *   under BILL_ID_ONLY_PREFIX (paypalych-money.ts);
 * - a Success-redirect trigger that tells the shop what it received.
 */
function suiteWorkflows(examples: WorkflowJson[]): WorkflowJson[] {
	const example = (id: string) => examples.find((w) => w.id === id) as WorkflowJson;
	const copy = copyOf(example(EXAMPLE_IDS.sellerPayout), {
		id: SUITE_IDS.sellerCopy,
		name: 'second copy',
		webhookId: '5f1c7a2e-0d1b-4c55-9a3e-7b1f0c2d9e95',
		suffix: 'copy',
	});
	const billIdOnly = copyOf(
		example(EXAMPLE_IDS.paymentPaid),
		{
			id: SUITE_IDS.billIdOnly,
			name: 'Order Check: Bill ID Only',
			webhookId: '5f1c7a2e-0d1b-4c55-9a3e-7b1f0c2d9e97',
			suffix: 'bill-id-only',
		},
		(node) => ({
			...node,
			parameters:
				node.type === TRIGGER_TYPE
					? { ...node.parameters, orderCheck: 'billId' }
					: (JSON.parse(
							JSON.stringify(node.parameters).replaceAll(
								'https://shop.example.com/',
								`https://shop.example.com${BILL_ID_ONLY_PREFIX}/`,
							),
						) as Record<string, unknown>),
		}),
	);
	const redirect = {
		id: SUITE_IDS.successRedirect,
		name: 'E2E: success redirect is reported to the shop',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'e2e0000-0000-4000-8000-000000000001',
				name: 'Success redirect',
				type: TRIGGER_TYPE,
				typeVersion: 1,
				position: [0, 0],
				webhookId: '5f1c7a2e-0d1b-4c55-9a3e-7b1f0c2d9e96',
				parameters: { event: 'success', redirectUrl: 'https://shop.example.com/thanks' },
				credentials: { payPalychApi: { id: CREDENTIAL_ID, name: 'PayPalych account' } },
			},
			{
				id: 'e2e0000-0000-4000-8000-000000000002',
				name: 'Report',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [240, 0],
				parameters: {
					method: 'POST',
					url: 'https://shop.example.com/api/redirects/success',
					sendBody: true,
					specifyBody: 'json',
					jsonBody: '={{ JSON.stringify($json) }}',
					options: {},
				},
			},
		],
		connections: { 'Success redirect': { main: [[{ node: 'Report', type: 'main', index: 0 }]] } },
	} as unknown as WorkflowJson;
	return [copy, billIdOnly, redirect];
}

/** Starts the stack (sink, relay, sandbox, n8n) once for the file, and stops it after. */
export function useE2eStack(): void {
	beforeAll(async () => {
		if (SKIP) return;
		stateDir = mkdtempSync(join(tmpdir(), 'paypalych-e2e-'));
		sink = await startSink();
		relayDatabase = RELAY_STORE === 'postgres' ? await createTestDatabase() : undefined;
		stack = await startStack({
			stateDir,
			shopBackend: sink.url,
			owner: ownerFor('E2E'),
			timeFactor: 0.01,
			workflows: examplesForTheSuite,
			// Fast retries: a queued postback is retried many times while n8n stops and starts again.
			relayEnv: {
				RELAY_BASE_DELAY_MS: '50',
				RELAY_MAX_DELAY_MS: '200',
				RELAY_POLL_INTERVAL_MS: '20',
				LOG_LEVEL: 'warn',
				...(relayDatabase ? { RELAY_DATABASE: relayDatabase.url } : {}),
			},
			phases,
		});
	});

	afterAll(async () => {
		await stack?.stop();
		await relayDatabase?.drop();
		await sink?.close();
		phases.mark('stopped');
		phases.total();
		if (stateDir && !process.env.PAYPALYCH_E2E_KEEP)
			rmSync(stateDir, { recursive: true, force: true });
	});
}
