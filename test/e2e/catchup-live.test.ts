/**
 * End-to-end, the relay's catch-up on the `live` sandbox profile (the public record's shapes: a
 * chargeback under the singular `chargeback`, without an amount), through the relay into a real
 * n8n. The examples 01 (payment marks the order paid), 07 (refund) and 08 (chargeback) are the
 * relay's targets; the merchant's shop sends every postback to the relay. The relay's catch-up runs
 * only when a case asks for one (POST /admin/catchup).
 *
 * 1. A chargeback whose postback the service never sent: the next ordinary run finds it and the
 *    chargeback example runs once; later runs and the late genuine postback start nothing more.
 * 2. A chargeback of a payment made 150 days ago, its postback lost: a deep run finds it
 *    (RELAY_CATCHUP_CHARGEBACK_DAYS, 180 by default, beyond the bills' 90) and 08 runs once.
 * 3. A payment today of a MULTI link made 100 days ago that the relay never saw pay, its postback
 *    lost: no bill search reaches the link (RELAY_CATCHUP_BILL_DAYS is 90), the payment search
 *    does: found once, 01 runs once.
 * (A lost refund found by catch-up on `live` is in refunds.test.ts, through the relay.)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, dateIn } from '../../nodes/shared/dates.ts';
import {
	EXAMPLE_IDS,
	configureWorkflow,
	loadExamples,
	type ExampleSettings,
} from '../../scripts/harness/examples.ts';
import type { WorkflowJson } from '../../scripts/harness/n8n.ts';
import { Phases } from '../../scripts/harness/proc.ts';
import { startSink, type Sink } from '../../scripts/harness/sink.ts';
import { startStack, type Stack } from '../../scripts/harness/stack.ts';
import { answeredPostback, ownerFor } from '../../scripts/harness/suite.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Json = Record<string, any>;

const DAY_MS = 86_400_000;
const IDS = {
	payment: EXAMPLE_IDS.paymentPaid,
	refund: EXAMPLE_IDS.refundMarks,
	chargeback: EXAMPLE_IDS.chargebackHold,
} as const;
const PATHS = { paid: '/api/orders/paid', hold: '/api/payouts/holds' } as const;

const phases = new Phases('e2e catch-up, live profile');
let stack: Stack;
let sink: Sink;
let stateDir: string;

function workflows(settings: ExampleSettings): WorkflowJson[] {
	const examples = loadExamples();
	return Object.values(IDS).map((id) =>
		configureWorkflow(
			examples.find((e) => e.workflow.id === id)?.workflow as WorkflowJson,
			settings,
		),
	);
}

async function relayAdmin<T = Json>(path: string, method = 'GET', body?: unknown): Promise<T> {
	const res = await fetch(`${stack.relay.url}/admin${path}`, {
		method,
		headers: {
			authorization: `Bearer ${stack.relay.adminToken}`,
			...(body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await res.text();
	if (!res.ok) throw new Error(`relay admin ${method} ${path}: HTTP ${res.status} ${text}`);
	return JSON.parse(text) as T;
}

/** One catch-up run now; `deep`: bills of RELAY_CATCHUP_BILL_DAYS, chargebacks of their window. */
const catchUp = async (deep = false) =>
	await relayAdmin<Json>('/catchup', 'POST', deep ? { deep: true } : {});
const foundBy = (run: Json) => (run.found as Json[]).map((f) => `${f.kind} ${f.trsId}`).sort();

/** Bills and payments made inside `fn` are dated `days` days ago on the service. */
async function daysAgo<T>(days: number, fn: () => Promise<T>): Promise<T> {
	await stack.control('POST', '/clock', { offsetMs: -days * DAY_MS });
	try {
		return await fn();
	} finally {
		await stack.control('POST', '/clock', { now: null });
	}
}

/** The service's day (Moscow time), `days` from today, as the relay's coverage writes it. */
const isoDay = (days: number) => addDays(dateIn('Europe/Moscow'), days);

const unique = (label: string) => `${label}-${randomBytes(4).toString('hex')}`;

async function createBill(amount: string, orderId: string, type: 'NORMAL' | 'MULTI' = 'NORMAL') {
	const bill = await stack.api<Json>('POST', '/api/v1/bill/create', {
		amount,
		shop_id: stack.sandbox.shopId,
		order_id: orderId,
		type,
	});
	if (typeof bill.bill_id !== 'string') throw new Error(`bill/create: ${JSON.stringify(bill)}`);
	return bill.bill_id;
}

/** A full payment of the bill; `lose`: the service gives its postback up without sending it. */
async function pay(billId: string, lose: boolean): Promise<{ id: string; postback: Json }> {
	const paid = await stack.control<Json>('POST', `/bills/${billId}/pay`, {
		outcome: 'full',
		method: 'BANK_CARD',
		losePostback: lose,
	});
	const id = paid.payment.id as string;
	if (!lose) expect((await answeredPostback(stack, id)).status).toBe(200);
	return { id, postback: paid.postback as Json };
}

/** A chargeback of the payment whose postback the service never sends (an outage). */
async function lostChargeback(paymentId: string): Promise<{ id: string; postback: Json }> {
	const merchant = `/merchants/${stack.sandbox.merchantId}`;
	await stack.control('PATCH', merchant, { losePostbacks: true });
	let made: Json;
	try {
		made = await stack.control<Json>('POST', `/payments/${paymentId}/chargeback`, {});
	} finally {
		await stack.control('PATCH', merchant, { losePostbacks: false });
	}
	const id = String((made.chargeback as Json).id);
	const { data } = await stack.control<{ data: Json[] }>(
		'GET',
		`/deliveries?kind=chargeback&trsId=${encodeURIComponent(id)}`,
	);
	expect(data).toEqual([expect.objectContaining({ lost: true, status: null })]);
	return { id, postback: made.postback as Json };
}

/** The shop calls to `path` about one bill. */
const callsAbout = (path: string, billId: string) =>
	sink.on(path).filter((r) => (r.body as Json).billId === billId);

async function waitForCalls(path: string, billId: string, count: number) {
	return await waitFor(
		`${count} calls to ${path} about ${billId}`,
		() => {
			const calls = callsAbout(path, billId);
			return calls.length >= count ? calls : undefined;
		},
		{ timeoutMs: 60_000, everyMs: 200 },
	);
}

/** Waits until the relay has nothing left to deliver (no delivery pending or under way). */
async function relayIdle() {
	await waitFor(
		'the relay to deliver everything',
		async () => {
			for (const status of ['pending', 'delivering']) {
				const { data } = await relayAdmin<{ data: Json[] }>(`/events?status=${status}`);
				if (data.length > 0) return undefined;
			}
			return true;
		},
		{ timeoutMs: 60_000, everyMs: 200 },
	);
}

/** Posts a postback to the relay as the live service does (form fields). */
async function postToRelay(kind: 'payment' | 'chargeback', fields: Json) {
	const res = await fetch(`${stack.relay.url}/postback/${kind}`, {
		method: 'POST',
		headers: { 'content-type': 'application/x-www-form-urlencoded' },
		body: new URLSearchParams(fields as Record<string, string>).toString(),
	});
	return { status: res.status, text: await res.text() };
}

const settled = async (workflowId: string) => await stack.n8n.settledExecutions(workflowId);

beforeAll(async () => {
	stateDir = mkdtempSync(join(tmpdir(), 'paypalych-e2e-catchup-live-'));
	sink = await startSink();
	stack = await startStack({
		stateDir,
		shopBackend: sink.url,
		owner: ownerFor('E2E'),
		timeFactor: 0.01,
		workflows,
		relayMoneyBack: true,
		relayEnv: {
			LOG_LEVEL: 'warn',
			// Runs only when a case asks for one.
			RELAY_CATCHUP_INTERVAL_S: '3600',
			RELAY_BASE_DELAY_MS: '50',
			RELAY_MAX_DELAY_MS: '200',
		},
		phases,
	});
	const merchant = await stack.control<Json>('GET', `/merchants/${stack.sandbox.merchantId}`);
	expect(merchant.profile).toBe('live');
	// The first run after the start (deep) on a merchant with nothing yet: it sets the relay's
	// baseline, and what the cases make comes after it.
	const first = await catchUp();
	expect(first).toMatchObject({ outcome: 'done', deep: true, found: [] });
	phases.mark('first catch-up run: nothing to find');
}, 900_000);

afterAll(async () => {
	await stack?.stop();
	await sink?.close();
	phases.mark('stopped');
	phases.total();
	if (stateDir && !process.env.PAYPALYCH_E2E_KEEP)
		rmSync(stateDir, { recursive: true, force: true });
});

describe('catch-up through the relay into a real n8n, live profile', () => {
	it('a chargeback whose postback was never sent is found by the next ordinary run and starts the chargeback workflow once; later runs and the late genuine postback start nothing more', async () => {
		const orderId = unique('cb-lost');
		const billId = await createBill('700.00', orderId);
		const payment = await pay(billId, false);
		await waitForCalls(PATHS.paid, billId, 1);
		const before = (await settled(IDS.chargeback)).length;
		const chargeback = await lostChargeback(payment.id);
		// The public record's shape: no amount in the postback the service would have sent.
		expect(chargeback.postback.Amount).toBeUndefined();

		const run = await catchUp();
		expect(run).toMatchObject({ outcome: 'done', deep: false });
		expect(foundBy(run)).toEqual([`chargeback ${chargeback.id}`]);
		const [hold] = await waitForCalls(PATHS.hold, billId, 1);
		expect(hold.body).toMatchObject({
			orderId,
			billId,
			paymentId: payment.id,
			chargebackId: chargeback.id,
			chargebackStatus: 'SUCCESS',
			reason: 'chargeback',
		});
		expect(sink.holds.has(orderId)).toBe(true);
		await relayIdle();
		const runs = await settled(IDS.chargeback);
		expect(runs).toHaveLength(before + 1);
		expect(runs.every((e) => e.status === 'success')).toBe(true);

		// Once: the next ordinary run, a deep one and the service's late genuine postback.
		expect((await catchUp()).found).toEqual([]);
		expect((await catchUp(true)).found).toEqual([]);
		const late = await postToRelay('chargeback', chargeback.postback);
		expect(late.status, late.text).toBe(200);
		await relayIdle();
		expect(await settled(IDS.chargeback)).toHaveLength(before + 1);
		expect(callsAbout(PATHS.hold, billId)).toHaveLength(1);
		const { data } = await relayAdmin<{ data: Json[] }>('/events?kind=chargeback&limit=1000');
		expect(data.filter((e) => e.fields.Id === chargeback.id).map((e) => e.source)).toEqual([
			'catch-up',
		]);
		phases.mark(`a lost chargeback ${chargeback.id} found by catch-up, delivered once`);
	});

	it('a chargeback of a payment made 150 days ago, its postback lost: a deep run finds it (the chargeback window, 180 days) and the chargeback workflow runs once', async () => {
		const orderId = unique('cb-old');
		// Paid 150 days ago, its postback lost then too: before the relay's baseline, never forwarded.
		const { billId, payment } = await daysAgo(150, async () => {
			const billId = await createBill('400.00', orderId);
			return { billId, payment: await pay(billId, true) };
		});
		const before = (await settled(IDS.chargeback)).length;
		const paymentsBefore = (await settled(IDS.payment)).length;
		const chargeback = await lostChargeback(payment.id);

		// An ordinary run reads the payments of the last RELAY_CATCHUP_DAYS days: not this one.
		expect(foundBy(await catchUp())).not.toContain(`chargeback ${chargeback.id}`);
		const deep = await catchUp(true);
		expect(deep).toMatchObject({ outcome: 'done', deep: true });
		expect(foundBy(deep)).toEqual([`chargeback ${chargeback.id}`]);
		expect(deep.moneyBack.chargebacksSince).toBe(isoDay(-180));
		const [hold] = await waitForCalls(PATHS.hold, billId, 1);
		expect(hold.body).toMatchObject({
			orderId,
			paymentId: payment.id,
			chargebackId: chargeback.id,
			chargebackStatus: 'SUCCESS',
		});
		await relayIdle();
		expect(await settled(IDS.chargeback)).toHaveLength(before + 1);

		expect((await catchUp(true)).found).toEqual([]);
		const late = await postToRelay('chargeback', chargeback.postback);
		expect(late.status, late.text).toBe(200);
		await relayIdle();
		expect(await settled(IDS.chargeback)).toHaveLength(before + 1);
		expect(callsAbout(PATHS.hold, billId)).toHaveLength(1);
		// The payment itself, made before the relay's baseline, is counted and never forwarded.
		expect(await settled(IDS.payment)).toHaveLength(paymentsBefore);
		expect(callsAbout(PATHS.paid, billId)).toHaveLength(0);
		phases.mark(`a chargeback of a 150-day-old payment found by a deep run, delivered once`);
	});

	it('a payment today of a MULTI link made 100 days ago that the relay never saw pay, its postback lost: found by the payment search, the payment workflow runs once', async () => {
		const orderId = unique('link-old');
		const link = await daysAgo(100, () => createBill('150.00', orderId, 'MULTI'));
		const before = (await settled(IDS.payment)).length;
		const payment = await pay(link, true);

		const deep = await catchUp(true);
		expect(deep).toMatchObject({ outcome: 'done', deep: true });
		// No bill search reaches the link (RELAY_CATCHUP_BILL_DAYS, 90): the payment search does.
		expect(deep.billsSince > isoDay(-100)).toBe(true);
		expect(foundBy(deep)).toEqual([`payment ${payment.id}`]);
		expect(deep.paymentSearch).toMatchObject({ state: 'read', olderBills: 1 });
		const [paid] = await waitForCalls(PATHS.paid, link, 1);
		expect(paid.body).toMatchObject({ orderId, paymentId: payment.id, billId: link });
		expect(sink.orders.get(orderId)).toBe('paid');
		await relayIdle();
		const runs = await settled(IDS.payment);
		expect(runs).toHaveLength(before + 1);
		expect(runs.every((e) => e.status === 'success')).toBe(true);

		// Once: two more runs and the late genuine postback start nothing more.
		expect((await catchUp()).found).toEqual([]);
		expect((await catchUp(true)).found).toEqual([]);
		const late = await postToRelay('payment', payment.postback);
		expect(late.status, late.text).toBe(200);
		await relayIdle();
		expect(await settled(IDS.payment)).toHaveLength(before + 1);
		expect(callsAbout(PATHS.paid, link)).toHaveLength(1);
		phases.mark(`a lost payment of a 100-day-old MULTI link found by catch-up, delivered once`);
	});
});
