/**
 * End-to-end in n8n's queue mode: PostgreSQL and Redis, one main, two workers and two webhook
 * processes (scripts/harness/queue.ts), the published examples, the sandbox as the payment service
 * and the relay in front of a balancer over the webhook processes. Storms of the same postback hit
 * both webhook processes at once, straight and through the relay.
 *
 * Straight to n8n the trigger cannot hold "one execution" across processes: n8n gives a node no
 * shared atomic store (the in-flight claim is per process, static data is last-writer-wins), so
 * the suite measures how often a storm starts more than one and asserts that the effect happens
 * once: example 01 sends the eventKey as an Idempotency-Key, and example 05's payout is keyed by
 * its Order ID at the service.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
	EXAMPLE_IDS,
	configureWorkflow,
	loadExamples,
	withDormantSchedules,
} from '../../scripts/harness/examples.ts';
import { NODE_TYPE, TRIGGER_TYPE } from '../../scripts/harness/n8n.ts';
import { psql } from '../../scripts/harness/pg-cli.ts';
import { Phases } from '../../scripts/harness/proc.ts';
import { startQueueStack, type QueueStack } from '../../scripts/harness/queue.ts';
import { ownerFor } from '../../scripts/harness/suite.ts';
import { startSink, type Sink } from '../../scripts/harness/sink.ts';
import { waitFor, OUTSIDE } from '../../scripts/harness/wait.ts';

type Json = Record<string, any>;

/** Storms of each size sent straight to the two webhook processes to measure the trigger. */
const MEASURED_STORMS = Number(process.env.PAYPALYCH_QUEUE_STORMS ?? 5);

const md5Upper = (text: string) => createHash('md5').update(text).digest('hex').toUpperCase();
const phases = new Phases('queue-e2e');
let stack: QueueStack;
let sink: Sink;
let stateDir: string;
/** A shop of the stack's merchant whose Result URL is the sink: the tests send its postbacks on. */
let stormShopId: string;

beforeAll(async () => {
	stateDir = mkdtempSync(join(tmpdir(), 'paypalych-queue-'));
	sink = await startSink();
	stack = await startQueueStack({
		stateDir,
		shopBackend: sink.url,
		owner: ownerFor('Queue'),
		timeFactor: 0.01,
		workflows: (settings) =>
			loadExamples().map(({ workflow }) =>
				withDormantSchedules(configureWorkflow(workflow, settings)),
			),
		relayEnv: {
			RELAY_BASE_DELAY_MS: '50',
			RELAY_MAX_DELAY_MS: '500',
			RELAY_POLL_INTERVAL_MS: '20',
			LOG_LEVEL: 'warn',
		},
		phases,
	});
	const shop = await stack.control<{ shopId: string }>('POST', '/shops', {
		merchantId: stack.sandbox.merchantId,
		name: 'Storm shop',
		resultUrl: `${sink.url}/storm-shop/result`,
	});
	stormShopId = shop.shopId;
}, 900_000);

afterAll(async () => {
	await stack?.stop();
	await sink?.close();
	phases.total();
	if (stateDir && !process.env.PAYPALYCH_E2E_KEEP)
		rmSync(stateDir, { recursive: true, force: true });
});

const form = (fields: Json) => new URLSearchParams(fields as Record<string, string>).toString();

async function send(url: string, fields: Json): Promise<{ status: number; receipt: string }> {
	const res = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/x-www-form-urlencoded' },
		body: form(fields),
	});
	await res.arrayBuffer();
	return { status: res.status, receipt: res.headers.get('x-paypalych-receipt') ?? '' };
}

/** `copies` copies of one postback at once, spread over `urls` in turn. */
async function storm(urls: string[], fields: Json, copies: number) {
	return await Promise.all(
		Array.from({ length: copies }, (_, i) => send(urls[i % urls.length], fields)),
	);
}

/** A bill of the storm shop paid on the sandbox; its signed postback (which went to the sink). */
async function paidPostback(orderId: string, amount = '100.00'): Promise<Json> {
	const bill = await stack.api<Json>('POST', '/api/v1/bill/create', {
		amount,
		shop_id: stormShopId,
		order_id: orderId,
	});
	const paid = await stack.control<{ payment: Json; postback: Json }>(
		'POST',
		`/bills/${String(bill.bill_id)}/pay`,
		{ outcome: 'full', method: 'BANK_CARD' },
	);
	return paid.postback;
}

/** The relay's stored events for a payment ID. */
async function relayEvents(trsId: string): Promise<Json[]> {
	const res = await fetch(`${stack.relay.url}/admin/events?kind=payment&limit=1000`, {
		headers: { authorization: `Bearer ${stack.relay.adminToken}` },
	});
	expect(res.status).toBe(200);
	const { data } = (await res.json()) as { data: Json[] };
	return data.filter((e) => String(e.fields.TrsId).trim() === trsId);
}

const direct = (workflowId: string) => [0, 1].map((i) => stack.triggerUrl(workflowId, i));
const relayPayment = () => `${stack.relay.url}/postback/payment`;

/** Executions of a workflow in n8n's database whose data names `text` (an order ID). */
function executionsNaming(workflowId: string, text: string): Array<{ id: string; status: string }> {
	return psql(
		`SELECT e.id, e.status FROM execution_entity e JOIN execution_data d ON d."executionId" = e.id
		 WHERE e."workflowId" = '${workflowId}' AND d.data LIKE '%${text.replace(/'/g, "''")}%'`,
		stack.database,
	).map(([id, status]) => ({ id, status }));
}

/** Waits until no execution of the workflows is queued or running, twice in a row. */
async function settle(...workflowIds: string[]): Promise<void> {
	let previous = '';
	await waitFor(
		'the executions to settle',
		() => {
			const rows = psql(
				`SELECT id, status FROM execution_entity WHERE "workflowId" IN (${workflowIds
					.map((id) => `'${id}'`)
					.join(',')}) ORDER BY id`,
				stack.database,
			);
			const key = rows.map((r) => r.join(':')).join(',');
			const busy = rows.some(([, status]) => ['new', 'running', 'waiting'].includes(status));
			const settled = !busy && key === previous;
			previous = key;
			return settled ? true : undefined;
		},
		{ timeoutMs: 90_000, everyMs: 400 },
	);
}

const paidCalls = (orderId: string) =>
	sink.on('/api/orders/paid').filter((r) => (r.body as Json).orderId === orderId);
const sellerCalls = (orderId: string) =>
	sink.on('/api/payouts/seller').filter((r) => (r.body as Json).orderId === orderId);
async function sellerPayouts(paymentId: string): Promise<Json[]> {
	const { data } = await stack.control<{ data: Json[] }>(
		'GET',
		`/payouts?merchantId=${stack.sandbox.merchantId}`,
	);
	return data.filter((p) => p.order_id === `seller-payment-${paymentId}-SUCCESS`);
}

/** The shop received the order's payment once: every call carries the same Idempotency-Key. */
function expectPaidOnceByKey(orderId: string, paymentId: string): void {
	const calls = paidCalls(orderId);
	expect(calls.length).toBeGreaterThanOrEqual(1);
	expect([
		...sink.idempotencyKeys('/api/orders/paid', (r) => paidCalls(orderId).includes(r)),
	]).toEqual([`payment-${paymentId}-SUCCESS`]);
}

describe('PayPalych on n8n queue mode (main, 2 workers, 2 webhook processes)', () => {
	it('runs five processes with the package and the examples published', async () => {
		expect(stack.workers).toHaveLength(2);
		expect(stack.webhookProcesses).toHaveLength(2);
		for (const { workflow } of loadExamples())
			expect(await stack.main.isActive(workflow.id), workflow.id).toBe(true);
		const types = await stack.main.nodeTypes<Json>([
			{ name: NODE_TYPE, version: 1 },
			{ name: TRIGGER_TYPE, version: 1 },
		]);
		expect(types.map((t) => t.name).sort()).toEqual(['payPalych', 'payPalychTrigger']);
		// Both webhook processes serve the trigger (the package runs there): an unsigned call is refused.
		for (const url of direct(EXAMPLE_IDS.paymentPaid)) {
			const unsigned = await send(url, {
				InvId: 'x',
				OutSum: '1.00',
				TrsId: 'x',
				Status: 'SUCCESS',
			});
			expect(unsigned.receipt).toBe('rejected');
			expect(unsigned.status).toBeGreaterThanOrEqual(400);
		}
	});

	it('a payment postback starts one execution, and a worker runs it', async () => {
		const orderId = `q-one-${Date.now()}`;
		const bill = await stack.api<Json>('POST', '/api/v1/bill/create', {
			amount: '250.00',
			shop_id: stack.sandbox.shopId,
			order_id: orderId,
		});
		// The shop's Result URL is the relay: sandbox -> relay -> balancer -> a webhook process.
		const { payment } = await stack.control<{ payment: Json }>(
			'POST',
			`/bills/${String(bill.bill_id)}/pay`,
			{ outcome: 'full', method: 'BANK_CARD' },
		);
		await sink.waitFor('/api/orders/paid', 1);
		await settle(EXAMPLE_IDS.paymentPaid, EXAMPLE_IDS.sellerPayout);
		const executions = executionsNaming(EXAMPLE_IDS.paymentPaid, orderId);
		expect(executions).toHaveLength(1);
		expect(executions[0].status).toBe('success');
		const ranBy = stack.ranBy(executions[0].id);
		expect(ranBy).toHaveLength(1);
		expect(ranBy[0]).toMatch(/^n8n-worker-\d$/);
		expectPaidOnceByKey(orderId, String(payment.id));
		phases.mark(`one postback, one execution, run by ${ranBy[0]}`);
	});

	it('a forged postback starts nothing on either webhook process, nor through the relay', async () => {
		const orderId = `q-forged-${Date.now()}`;
		const genuine = await paidPostback(orderId);
		const forged = {
			...genuine,
			SignatureValue: md5Upper(`${String(genuine.OutSum)}:${orderId}:not-the-token`),
		};
		for (const url of [...direct(EXAMPLE_IDS.paymentPaid), ...direct(EXAMPLE_IDS.sellerPayout)])
			expect(await send(url, forged)).toEqual({ status: 401, receipt: 'rejected' });
		expect((await send(relayPayment(), forged)).status).toBe(401);
		// The genuine one afterwards: it runs, and nothing of the forged calls ran before it. The
		// service's retry of it minutes later at the other process is a duplicate there: the first
		// process saved the trigger's memory in the database (static data).
		expect(await send(direct(EXAMPLE_IDS.paymentPaid)[0], genuine)).toMatchObject({
			receipt: 'accepted',
		});
		await waitFor(
			'the genuine run',
			() => (paidCalls(orderId).length === 1 ? true : undefined),
			OUTSIDE,
		);
		await settle(EXAMPLE_IDS.paymentPaid);
		expect(await send(direct(EXAMPLE_IDS.paymentPaid)[1], genuine)).toMatchObject({
			receipt: 'duplicate',
		});
		await settle(EXAMPLE_IDS.paymentPaid, EXAMPLE_IDS.sellerPayout);
		expect(executionsNaming(EXAMPLE_IDS.paymentPaid, orderId)).toHaveLength(1);
		expect(executionsNaming(EXAMPLE_IDS.sellerPayout, orderId)).toHaveLength(0);
		expect(paidCalls(orderId)).toHaveLength(1);
		phases.mark('forged postbacks refused on both webhook processes');
	});

	describe.each([2, 5])('the same postback, %i copies at once', (copies) => {
		it('through the relay: one execution', async () => {
			const orderId = `q-relay${copies}-${Date.now()}`;
			const postback = await paidPostback(orderId);
			const answers = await storm([relayPayment()], postback, copies);
			expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
			await waitFor(
				`the shop call for ${orderId}`,
				() => (paidCalls(orderId).length > 0 ? true : undefined),
				OUTSIDE,
			);
			await settle(EXAMPLE_IDS.paymentPaid, EXAMPLE_IDS.sellerPayout);
			// The relay stored one event and delivered it once (through the balancer) per trigger.
			expect(await relayEvents(String(postback.TrsId))).toHaveLength(1);
			expect(executionsNaming(EXAMPLE_IDS.paymentPaid, orderId)).toHaveLength(1);
			expect(paidCalls(orderId)).toHaveLength(1);
			expectPaidOnceByKey(orderId, String(postback.TrsId));
			phases.mark(`${copies} copies through the relay: one execution`);
		});

		it('straight to both webhook processes: the shop is told once per Idempotency-Key (measured)', async () => {
			let multiple = 0;
			let most = 0;
			for (let i = 0; i < MEASURED_STORMS; i++) {
				const orderId = `q-direct${copies}-${i}-${Date.now()}`;
				const postback = await paidPostback(orderId);
				const answers = await storm(direct(EXAMPLE_IDS.paymentPaid), postback, copies);
				for (const a of answers) expect(['accepted', 'duplicate', 'retry']).toContain(a.receipt);
				const accepted = answers.filter((a) => a.receipt === 'accepted').length;
				expect(accepted).toBeGreaterThanOrEqual(1);
				await waitFor(
					`the shop calls for ${orderId}`,
					() => (paidCalls(orderId).length >= accepted ? true : undefined),
					OUTSIDE,
				);
				await settle(EXAMPLE_IDS.paymentPaid);
				// Every accepted copy is one execution: the answers tell what n8n did.
				expect(executionsNaming(EXAMPLE_IDS.paymentPaid, orderId)).toHaveLength(accepted);
				expectPaidOnceByKey(orderId, String(postback.TrsId));
				if (accepted > 1) multiple++;
				most = Math.max(most, accepted);
			}
			const figure = `${copies} copies straight to 2 webhook processes: ${multiple} of ${MEASURED_STORMS} storms started more than one execution (at most ${most})`;
			phases.mark(figure);
			console.log(`[queue-e2e] MEASURED ${figure}`);
		});

		it('the marketplace example pays the seller once, straight and through the relay', async () => {
			for (const route of ['direct', 'relay'] as const) {
				const orderId = `mkt-q-${route}${copies}-${Date.now()}`;
				const postback = await paidPostback(orderId);
				const urls = route === 'direct' ? direct(EXAMPLE_IDS.sellerPayout) : [relayPayment()];
				const answers = await storm(urls, postback, copies);
				const accepted = answers.filter((a) => a.receipt === 'accepted').length;
				await waitFor(
					`the seller calls for ${orderId}`,
					() => (sellerCalls(orderId).length >= Math.max(1, accepted) ? true : undefined),
					OUTSIDE,
				);
				await settle(EXAMPLE_IDS.paymentPaid, EXAMPLE_IDS.sellerPayout);
				const payouts = await sellerPayouts(String(postback.TrsId));
				expect(payouts, `${route}: one payout at the service`).toHaveLength(1);
				const calls = sellerCalls(orderId);
				expect(new Set(calls.map((c) => (c.body as Json).payoutId))).toEqual(
					new Set([payouts[0].id]),
				);
				expect(calls.filter((c) => (c.body as Json).alreadyExisted === false)).toHaveLength(1);
				if (route === 'relay')
					expect(executionsNaming(EXAMPLE_IDS.sellerPayout, orderId)).toHaveLength(1);
			}
			phases.mark(`marketplace, ${copies} copies: one seller payout`);
		});
	});
});
