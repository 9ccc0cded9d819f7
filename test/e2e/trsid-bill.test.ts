/**
 * End-to-end, TrsId naming a bill: the sandbox gives TrsId as the bill id (its `trsId: "bill"`
 * switch, as some deployments of the service do), through the relay and straight to a real n8n
 * running example 01 (a PayPalych Trigger with the default settings, then "mark the order paid" in
 * the shop with the payment's id):
 * - a NORMAL bill's payment starts one execution;
 * - five payments of one MULTI link, their postbacks all identical (same InvId, OutSum, TrsId,
 *   Status, signature), start five executions, each with its own `payment.id`;
 * - the service's retries of each (the same bodies again) start nothing more.
 * Through the relay each postback is one event (the relay's look-ups tell the payments apart, see
 * test/relay/trsid-bill.test.ts); straight to n8n the trigger tells them apart itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_IDS, configureWorkflow, loadExamples } from '../../scripts/harness/examples.ts';
import { Phases } from '../../scripts/harness/proc.ts';
import { startSink, type Sink } from '../../scripts/harness/sink.ts';
import { startStack, type Stack } from '../../scripts/harness/stack.ts';
import { ownerFor } from '../../scripts/harness/suite.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Json = Record<string, any>;

const WORKFLOW = EXAMPLE_IDS.paymentPaid;
const PAID = '/api/orders/paid';

const phases = new Phases('e2e TrsId = bill id');
let stack: Stack;
let sink: Sink;
let stateDir: string;

beforeAll(async () => {
	stateDir = mkdtempSync(join(tmpdir(), 'paypalych-e2e-trsid-'));
	sink = await startSink();
	const example = loadExamples().find((e) => e.workflow.id === WORKFLOW);
	if (!example) throw new Error(`example ${WORKFLOW} not found`);
	stack = await startStack({
		stateDir,
		shopBackend: sink.url,
		owner: ownerFor('E2E'),
		timeFactor: 0.01,
		workflows: (settings) => [configureWorkflow(example.workflow, settings)],
		relayEnv: {
			// Runs only when the suite asks for one (it does not).
			RELAY_CATCHUP_INTERVAL_S: '3600',
			RELAY_BASE_DELAY_MS: '200',
			RELAY_MAX_DELAY_MS: '2000',
		},
		phases,
	});
	await stack.control('PATCH', `/merchants/${stack.sandbox.merchantId}`, { trsId: 'bill' });
	phases.mark('merchant switched to TrsId = bill id');
}, 900_000);

afterAll(async () => {
	await stack?.stop();
	await sink?.close();
	if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

async function createBill(amount: string, type: 'NORMAL' | 'MULTI', orderId: string) {
	const created = await stack.api<Json>('POST', '/api/v1/bill/create', {
		amount,
		shop_id: stack.sandbox.shopId,
		order_id: orderId,
		type,
	});
	if (!created.bill_id) throw new Error(`bill/create: ${JSON.stringify(created)}`);
	return created.bill_id as string;
}

/** Pays the bill; the sandbox posts the postback to the shop's Result URL. The payment's id. */
async function pay(billId: string): Promise<string> {
	const paid = await stack.control<Json>('POST', `/bills/${billId}/pay`, {
		outcome: 'full',
		method: 'BANK_CARD',
	});
	return paid.payment.id as string;
}

/** The sandbox's delivered postbacks filed under `trsId` (the bill id), once there are `n`. */
async function delivered(trsId: string, n: number): Promise<Json[]> {
	return await waitFor(
		`${n} postbacks of ${trsId} answered 200`,
		async () => {
			const { data } = await stack.control<{ data: Json[] }>(
				'GET',
				`/deliveries?kind=payment&trsId=${encodeURIComponent(trsId)}`,
			);
			const done = data.filter((d) => d.delivered === true);
			return done.length >= n ? done : undefined;
		},
		{ timeoutMs: 120_000, everyMs: 250 },
	);
}

/** The service's retry of a postback: the same body, to `url`. Its answer. */
async function retry(url: string, delivery: Json): Promise<Response> {
	const json = String(delivery.contentType).includes('json');
	return await fetch(url, {
		method: 'POST',
		headers: { 'content-type': String(delivery.contentType) },
		body: json ? JSON.stringify(delivery.body) : new URLSearchParams(delivery.body).toString(),
	});
}

/** The shop's "order paid" calls for the order. */
const paidCalls = (orderId: string) =>
	sink
		.on(PAID)
		.map((r) => r.body as Json)
		.filter((c) => c.orderId === orderId);

/** The signed fields of a postback: what the dedupe key and the signature cover. */
const signedFields = ({ InvId, OutSum, TrsId, Status, SignatureValue }: Json) =>
	JSON.stringify([InvId, OutSum, TrsId, Status, SignatureValue]);

async function relayEvents(trsId: string): Promise<Json[]> {
	const res = await fetch(
		`${stack.relay.url}/admin/events?kind=payment&limit=100&trsId=${encodeURIComponent(trsId)}`,
		{ headers: { authorization: `Bearer ${stack.relay.adminToken}` } },
	);
	return ((await res.json()) as { data: Json[] }).data;
}

/**
 * A NORMAL bill paid once and a MULTI link paid five times, each postback sent by the sandbox to
 * the shop's Result URL (the relay, or n8n): one execution per payment, each with its payment's id.
 */
async function payAll(stamp: string) {
	const before = (await stack.n8n.settledExecutions(WORKFLOW)).length;
	const normalOrder = `trsid-normal-${stamp}`;
	const linkOrder = `trsid-link-${stamp}`;
	const normal = await createBill('240.00', 'NORMAL', normalOrder);
	const normalPayment = await pay(normal);
	const link = await createBill('100.00', 'MULTI', linkOrder);
	const linkPayments: string[] = [];
	for (let i = 0; i < 5; i++) linkPayments.push(await pay(link));
	const normalPostbacks = await delivered(normal, 1);
	const linkPostbacks = await delivered(link, 5);
	expect(normalPostbacks[0].body.TrsId).toBe(normal);
	// The five postbacks of the link: the same signed fields, the bill's id as TrsId.
	expect(new Set(linkPostbacks.map((d) => signedFields(d.body))).size).toBe(1);
	expect(linkPostbacks[0].body.TrsId).toBe(link);

	await waitFor(
		'a shop call for each of the 6 payments',
		() => (paidCalls(normalOrder).length + paidCalls(linkOrder).length >= 6 ? true : undefined),
		{ timeoutMs: 120_000, everyMs: 500 },
	);
	const executions = await stack.n8n.settledExecutions(WORKFLOW);
	expect(executions).toHaveLength(before + 6);
	expect(executions.every((e) => e.status === 'success')).toBe(true);
	expect(paidCalls(normalOrder).map((c) => c.paymentId)).toEqual([normalPayment]);
	expect(paidCalls(normalOrder)[0]).toMatchObject({ billId: normal, status: 'SUCCESS' });
	// Five executions, each with its own payment.id: the five payments of the link.
	const told = paidCalls(linkOrder);
	expect(told.map((c) => c.paymentId).sort()).toEqual([...linkPayments].sort());
	for (const call of told) expect(call).toMatchObject({ billId: link, status: 'SUCCESS' });
	expect(new Set(told.map((c) => c.eventKey)).size).toBe(5);
	return { before, normal, link, postbacks: [...normalPostbacks, ...linkPostbacks] };
}

describe('TrsId naming the bill, through the relay and straight to a real n8n', () => {
	it('through the relay: a NORMAL bill one execution, five identical MULTI postbacks five, with their own payment.id; the retries nothing more', async () => {
		const { before, normal, link, postbacks } = await payAll('relay');
		// The relay stored one event per payment, each delivered once.
		expect(await relayEvents(normal)).toHaveLength(1);
		expect(await relayEvents(link)).toHaveLength(5);
		phases.mark('through the relay: 6 payments, 6 executions');

		// The service's retries of each: duplicates, no event, nothing forwarded.
		for (const delivery of postbacks) {
			const answer = await retry(`${stack.relay.url}/postback/payment`, delivery);
			expect(answer.status, await answer.text()).toBe(200);
		}
		expect(await relayEvents(normal)).toHaveLength(1);
		expect(await relayEvents(link)).toHaveLength(5);
		expect(await stack.n8n.settledExecutions(WORKFLOW)).toHaveLength(before + 6);
		phases.mark('through the relay: 6 retries, nothing more');
	});

	it('straight to n8n: a NORMAL bill one execution, five identical MULTI postbacks five, with their own payment.id; the retries nothing more', async () => {
		const trigger = stack.triggerUrls[WORKFLOW];
		await stack.control('PATCH', `/shops/${stack.sandbox.shopId}`, { resultUrl: trigger });
		const { before, postbacks } = await payAll('straight');
		expect(postbacks.every((d) => d.url === trigger)).toBe(true);
		phases.mark('straight to n8n: 6 payments, 6 executions');

		for (const delivery of postbacks) {
			const answer = await retry(trigger, delivery);
			expect(answer.status, await answer.text()).toBe(200);
			expect(answer.headers.get('x-paypalych-receipt')).toBe('duplicate');
		}
		expect(await stack.n8n.settledExecutions(WORKFLOW)).toHaveLength(before + 6);
		phases.mark('straight to n8n: 6 retries, nothing more');
	});
});
