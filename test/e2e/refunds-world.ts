/**
 * The stack, workflows and helpers of the refunds end-to-end suite (refunds.test.ts holds the
 * cases): one sink, sandbox and n8n for the file; the examples 07, 08 and 05, their Bill ID Only
 * copies for the `spec` profile and a one-URL workflow per profile. Where the shop's URLs point is
 * a ROUTE: straight at the triggers, or at relays started for each profile in front of them.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import {
	CREDENTIAL_ID,
	CREDENTIAL_NAME,
	EXAMPLE_IDS,
	configureWorkflow,
	loadExamples,
	type ExampleSettings,
} from '../../scripts/harness/examples.ts';
import { TRIGGER_TYPE, type WorkflowJson } from '../../scripts/harness/n8n.ts';
import { Phases, freePort } from '../../scripts/harness/proc.ts';
import { startSink, type Sink } from '../../scripts/harness/sink.ts';
import { startRelay, startStack, type RelayInfo, type Stack } from '../../scripts/harness/stack.ts';
import { answeredPostback, ownerFor } from '../../scripts/harness/suite.ts';
import { waitFor } from '../../scripts/harness/wait.ts';
import { md5Upper } from './paypalych-world.ts';

export type Json = Record<string, any>;
export type Kind = 'payment' | 'refund' | 'chargeback';
export type Profile = 'live' | 'spec';

export const PROFILES: Profile[] = ['live', 'spec'];
/** Where the one-URL workflow tells the shop what it received (its whole item). */
export const ONE_URL_PATH = '/api/e2e/one-url';
/** The Result URL of the examples' shop: its payments are not what this file watches. */
export const ELSEWHERE_PATH = '/api/e2e/payments-elsewhere';

/** The workflows of one profile: the examples (a copy with Order Check = Bill ID Only in `spec`,
 * whose service shows no order ID) and the one-URL workflow. */
export interface ProfileIds {
	refund: string;
	chargeback: string;
	oneUrl: string;
}
export const IDS: Record<Profile, ProfileIds> = {
	live: {
		refund: EXAMPLE_IDS.refundMarks,
		chargeback: EXAMPLE_IDS.chargebackHold,
		oneUrl: 'ppE2eOneUrlLive',
	},
	spec: {
		refund: 'ppE2eRefundMarksSpec',
		chargeback: 'ppE2eChargebackHoldSpec',
		oneUrl: 'ppE2eOneUrlSpec',
	},
};

/** The URLs pasted into the shop's fields for one profile, and what was started to serve them. */
export interface Opened {
	/** The examples shop's Refund URL (to 07) and Chargeback URL (to 08). */
	refund: string;
	chargeback: string;
	/** The one-URL shop's Result, Refund and Chargeback URLs (all to the one-URL workflow). */
	oneUrl: Record<Kind, string>;
	/** The relay in front of 07 and 08 (its catch-up on), when the route has one. */
	relay?: RelayInfo;
	close(): Promise<void>;
}

/** How postbacks reach the workflows of one profile. */
export interface Route {
	name: string;
	/** Whether a relay's catch-up stands in front of 07 (Opened.relay). */
	catchesUp?: boolean;
	open(profile: Profile): Promise<Opened>;
}

const STRAIGHT: Route = {
	name: 'straight to n8n',
	open: async (profile) => {
		const url = (workflowId: string) => stack.triggerUrls[workflowId];
		const oneUrl = url(IDS[profile].oneUrl);
		return {
			refund: url(IDS[profile].refund),
			chargeback: url(IDS[profile].chargeback),
			oneUrl: { payment: oneUrl, refund: oneUrl, chargeback: oneUrl },
			close: async () => undefined,
		};
	},
};

/**
 * Two relays per profile, each with its own store, started before the profile's cases (so what
 * they make comes after the relays' catch-up baseline) and stopped after them:
 * - the examples relay: RELAY_REFUND_TARGETS the refund example, RELAY_CHARGEBACK_TARGETS the
 *   chargeback example; it takes no payments (its only other target is a redirect target, the
 *   variables' rule), its catch-up is on (POST /admin/catchup runs one);
 * - the one-URL relay: the one-URL workflow as its only payment target, refund and chargeback
 *   targets unset (they follow the payment targets, the event header saying which); its catch-up
 *   is off (the examples shop's payments, posted elsewhere, are not its to find).
 */
const THROUGH_THE_RELAY: Route = {
	name: 'through the relay',
	catchesUp: true,
	open: async (profile) => {
		const url = (workflowId: string) => stack.triggerUrls[workflowId];
		const relay = async (
			name: string,
			targets: { payment: string[]; fail: string[] },
			env: Record<string, string>,
		) => {
			const logs = join(stateDir, 'logs', `relay-${profile}-${name}`);
			mkdirSync(logs, { recursive: true });
			return await startRelay({
				logs,
				port: await freePort(),
				token: stack.sandbox.token,
				apiBaseUrl: stack.sandbox.url,
				targets: { ...targets, payout: [], success: [] },
				database: join(stateDir, `relay-${profile}-${name}.sqlite`),
				env: {
					RELAY_BASE_DELAY_MS: '50',
					RELAY_MAX_DELAY_MS: '200',
					RELAY_POLL_INTERVAL_MS: '20',
					LOG_LEVEL: 'warn',
					...env,
				},
			});
		};
		const examples = await relay(
			'examples',
			{ payment: [], fail: [`${sink.url}/api/e2e/no-redirects-here`] },
			{
				RELAY_REFUND_TARGETS: url(IDS[profile].refund),
				RELAY_CHARGEBACK_TARGETS: url(IDS[profile].chargeback),
			},
		);
		const oneUrl = await relay(
			'one-url',
			{ payment: [url(IDS[profile].oneUrl)], fail: [] },
			{ RELAY_CATCHUP_INTERVAL_S: '0' },
		).catch(async (error: unknown) => {
			await examples.stop();
			throw error;
		});
		phases.mark(`${profile}: relays up at ${examples.url} (07, 08) and ${oneUrl.url} (one URL)`);
		const payment = `${oneUrl.url}/postback/payment`;
		return {
			refund: `${examples.url}/postback/refund`,
			chargeback: `${examples.url}/postback/chargeback`,
			oneUrl: { payment, refund: payment, chargeback: payment },
			relay: examples,
			close: async () => {
				await oneUrl.stop();
				await examples.stop();
			},
		};
	},
};

export const ROUTES: Route[] = [STRAIGHT, THROUGH_THE_RELAY];

export const phases = new Phases('e2e refunds');
export let stack: Stack;
export let sink: Sink;
let stateDir: string;

/** A copy of an example under another id and webhook, its trigger set to Order Check = Bill ID Only. */
function billIdOnlyCopy(workflow: WorkflowJson, id: string, webhookId: string): WorkflowJson {
	return {
		...workflow,
		id,
		name: `${workflow.name} (Bill ID Only)`,
		nodes: workflow.nodes.map((node) =>
			node.type === TRIGGER_TYPE
				? {
						...node,
						id: `${String(node.id)}-spec`,
						webhookId,
						parameters: { ...node.parameters, orderCheck: 'billId' },
					}
				: { ...node, id: `${String(node.id)}-spec` },
		),
	};
}

/** A Payment trigger taking refunds and chargebacks too, and a call to the shop with its item. */
function oneUrlWorkflow(id: string, webhookId: string, trigger: Json, shop: string): WorkflowJson {
	return {
		id,
		name: `E2E refunds: one URL for payments, refunds and chargebacks (${id})`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: `${id}-trigger`,
				name: 'Every postback',
				type: TRIGGER_TYPE,
				typeVersion: 1,
				position: [0, 0],
				webhookId,
				parameters: { event: 'payment', alsoAccept: ['refund', 'chargeback'], ...trigger },
				credentials: { payPalychApi: { id: CREDENTIAL_ID, name: CREDENTIAL_NAME } },
			},
			{
				id: `${id}-shop`,
				name: 'Tell the shop',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [240, 0],
				parameters: {
					method: 'POST',
					url: `${shop}${ONE_URL_PATH}`,
					sendBody: true,
					specifyBody: 'json',
					jsonBody: '={{ JSON.stringify($json) }}',
					options: {},
				},
			},
		],
		connections: {
			'Every postback': { main: [[{ node: 'Tell the shop', type: 'main', index: 0 }]] },
		},
	} as unknown as WorkflowJson;
}

function workflowsFor(settings: ExampleSettings): WorkflowJson[] {
	const example = (id: string) =>
		configureWorkflow(
			loadExamples().find((e) => e.workflow.id === id)?.workflow as WorkflowJson,
			settings,
		);
	const refund = example(EXAMPLE_IDS.refundMarks);
	const chargeback = example(EXAMPLE_IDS.chargebackHold);
	return [
		refund,
		chargeback,
		example(EXAMPLE_IDS.sellerPayout),
		billIdOnlyCopy(refund, IDS.spec.refund, '7c0e5b2a-34d1-4f6e-9a0b-3e1d5c7f0a01'),
		billIdOnlyCopy(chargeback, IDS.spec.chargeback, '7c0e5b2a-34d1-4f6e-9a0b-3e1d5c7f0a02'),
		oneUrlWorkflow(
			IDS.live.oneUrl,
			'7c0e5b2a-34d1-4f6e-9a0b-3e1d5c7f0a03',
			{},
			settings.shopBackend,
		),
		oneUrlWorkflow(
			IDS.spec.oneUrl,
			'7c0e5b2a-34d1-4f6e-9a0b-3e1d5c7f0a04',
			{ orderCheck: 'billId' },
			settings.shopBackend,
		),
	];
}

/** Starts the file's stack (its own relay unused: its catch-up off) and stops it after. */
export function useRefundsStack(): void {
	beforeAll(async () => {
		stateDir = mkdtempSync(join(tmpdir(), 'paypalych-e2e-refunds-'));
		sink = await startSink();
		stack = await startStack({
			stateDir,
			shopBackend: sink.url,
			owner: ownerFor('E2E'),
			timeFactor: 0.01,
			workflows: workflowsFor,
			relayEnv: { LOG_LEVEL: 'warn', RELAY_CATCHUP_INTERVAL_S: '0' },
			phases,
		});
	});

	afterAll(async () => {
		await stack?.stop();
		await sink?.close();
		phases.mark('stopped');
		phases.total();
		if (stateDir && !process.env.PAYPALYCH_E2E_KEEP)
			rmSync(stateDir, { recursive: true, force: true });
	});
}

export const unique = (label: string) => `${label}-${randomBytes(4).toString('hex')}`;

export async function createShop(fields: Json): Promise<string> {
	const made = await stack.control<{ shopId: string }>('POST', '/shops', {
		merchantId: stack.sandbox.merchantId,
		...fields,
	});
	return made.shopId;
}

export async function createBill(
	shopId: string,
	amount: string,
	orderId: string,
	type: 'NORMAL' | 'MULTI' = 'NORMAL',
): Promise<string> {
	const bill = await stack.api<Json>('POST', '/api/v1/bill/create', {
		amount,
		shop_id: shopId,
		order_id: orderId,
		type,
	});
	if (typeof bill.bill_id !== 'string') throw new Error(`bill/create: ${JSON.stringify(bill)}`);
	return bill.bill_id;
}

/** Pays the bill in full; its payment postback goes to the shop's Result URL. */
export async function pay(billId: string): Promise<Json> {
	const paid = await stack.control<{ payment: Json }>('POST', `/bills/${billId}/pay`, {
		outcome: 'full',
		method: 'BANK_CARD',
	});
	await answeredPostback(stack, paid.payment.id as string, 'payment');
	return paid.payment;
}

/** Refunds (or charges back) a payment on the sandbox; waits until its postback was answered. */
export async function moneyBack(
	kind: 'refund' | 'chargeback',
	paymentId: string,
	amount?: string,
): Promise<{ record: Json; postback: Record<string, string>; status: unknown }> {
	const made = await stack.control<Json>(
		'POST',
		`/payments/${paymentId}/${kind}`,
		amount === undefined ? {} : { amount },
	);
	const record = made[kind] as Json;
	const delivery = await answeredPostback(stack, record.id as string, kind);
	return { record, postback: made.postback as Record<string, string>, status: delivery.status };
}

/** The refund signature, as the service makes it (the oracle in paypalych-world.ts). */
export function signedRefund(fields: Record<string, string>): Record<string, string> {
	const { Amount, Currency, BillId, PaymentId, Id } = fields;
	const text = `${Amount}:${Currency}:${BillId}:${PaymentId}:${Id}:${stack.sandbox.token}`;
	return { ...fields, SignatureValue: md5Upper(text) };
}

/** Posts a postback as the service of `profile` would (form fields; JSON in `spec`). */
export async function post(url: string, fields: Record<string, string>, profile: Profile) {
	const json = profile === 'spec';
	const res = await fetch(url, {
		method: 'POST',
		headers: {
			'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded',
		},
		body: json ? JSON.stringify(fields) : new URLSearchParams(fields).toString(),
	});
	return { status: res.status, text: await res.text() };
}

export const settled = async (workflowId: string) => await stack.n8n.settledExecutions(workflowId);

/** The shop calls to `path` about one order. */
export const callsFor = (path: string, orderId: string) =>
	sink.on(path).filter((r) => (r.body as Json).orderId === orderId);

/** The shop calls to `path` about one bill. */
export const callsAbout = (path: string, billId: string) =>
	sink.on(path).filter((r) => {
		const body = r.body as Json;
		return body.billId === billId || body.BillId === billId;
	});

/** Waits until `count` shop calls to `path` name the bill; returns them. */
export async function waitForCalls(path: string, billId: string, count: number) {
	return await waitFor(
		`${count} calls to ${path} about ${billId}`,
		async () => {
			const calls = callsAbout(path, billId);
			return calls.length >= count ? calls : undefined;
		},
		{ timeoutMs: 60_000, everyMs: 200 },
	);
}
