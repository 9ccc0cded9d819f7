/**
 * End-to-end, where the live service may answer otherwise: the sandbox answers the other way the
 * interface document allows (its `spec` profile: no order_id on bills and payments, page-numbered
 * searches with `links`/`meta`, an exclusive `finish_date`, Moscow dates, OutSum with the payer's
 * commission while the API's amount has none, JSON postbacks), through the relay and a real n8n.
 *
 * Two workflows listen for payments, both targets of the relay:
 * - "Bill ID Only": a PayPalych Trigger with Order Check = Bill ID Only, then a call to the shop;
 * - "Default": the same with the default Order Check, which must refuse every payment of a service
 *   that shows no order ID, loudly (the relay's dead letter, its alert, n8n's log name the fix).
 *
 * 1. Postbacks lost: a NORMAL bill created 10 days ago and paid today, 15 payments today of a MULTI
 *    link created 20 days ago, a bill on page 2 of the bill search, a bill created today. Each
 *    reaches the Bill ID Only workflow once (the deep catch-up finds the old ones); a second deep
 *    run and the late genuine postback start nothing more.
 * 2. A popular link: 12 genuine postbacks of one MULTI link in a row each start an execution (the
 *    11th and 12th are over RELAY_PAIR_LIMIT and looked up, not refused); 3 forged TrsIds on its
 *    signed pair start none.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, dateIn } from '../../nodes/shared/dates.ts';
import { CREDENTIAL_ID, CREDENTIAL_NAME } from '../../scripts/harness/examples.ts';
import { TRIGGER_TYPE, type WorkflowJson } from '../../scripts/harness/n8n.ts';
import { Phases } from '../../scripts/harness/proc.ts';
import { startSink, type Sink } from '../../scripts/harness/sink.ts';
import { startStack, type Stack } from '../../scripts/harness/stack.ts';
import { answeredPostback, ownerFor } from '../../scripts/harness/suite.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Json = Record<string, any>;

const FIX =
	'this service shows no order ID for bills: set Order Check to Bill ID Only and find the order by bill_id';
const DAY_MS = 86_400_000;
/** Rows per page of the spec profile's searches for this merchant: page 2 with a dozen bills. */
const PAGE_SIZE = 5;

const IDS = { billIdOnly: 'ppSpecBillIdOnly', byDefault: 'ppSpecDefaultCheck' } as const;
const PATHS = { billIdOnly: '/api/spec/bill-id-only', byDefault: '/api/spec/default' } as const;

const phases = new Phases('e2e spec profile');
let stack: Stack;
let sink: Sink;
let stateDir: string;

/** A PayPalych payment trigger and a call to the shop with everything the trigger put out. */
function paymentWorkflow(
	id: string,
	webhookId: string,
	path: string,
	trigger: Json,
	settingsOf: { shopBackend: string },
): WorkflowJson {
	return {
		id,
		name: `E2E spec profile: ${id}`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: `${id}-trigger`,
				name: 'Payment postback',
				type: TRIGGER_TYPE,
				typeVersion: 1,
				position: [0, 0],
				webhookId,
				parameters: { event: 'payment', ...trigger },
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
					url: `${settingsOf.shopBackend}${path}`,
					sendBody: true,
					specifyBody: 'json',
					jsonBody: '={{ JSON.stringify($json) }}',
					options: {},
				},
			},
		],
		connections: {
			'Payment postback': { main: [[{ node: 'Tell the shop', type: 'main', index: 0 }]] },
		},
	} as unknown as WorkflowJson;
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

/** Bills made inside `fn` are dated `days` days ago on the service. */
async function daysAgo<T>(days: number, fn: () => Promise<T>): Promise<T> {
	await stack.control('POST', '/clock', { offsetMs: -days * DAY_MS });
	try {
		return await fn();
	} finally {
		await stack.control('POST', '/clock', { now: null });
	}
}

/** A bill whose payer pays the commission (in `spec`, OutSum is then more than the API's amount). */
async function createBill(amount: string, type: 'NORMAL' | 'MULTI', orderId: string) {
	const created = await stack.api<Json>('POST', '/api/v1/bill/create', {
		amount,
		shop_id: stack.sandbox.shopId,
		order_id: orderId,
		type,
		payer_pays_commission: '1',
	});
	if (!created.bill_id) throw new Error(`bill/create: ${JSON.stringify(created)}`);
	return created.bill_id as string;
}

/** One payment of a bill; `lose`: the service gives its postback up without sending it. */
async function pay(billId: string, lose: boolean): Promise<{ trsId: string; postback: Json }> {
	const paid = await stack.control<Json>('POST', `/bills/${billId}/pay`, {
		outcome: 'full',
		method: 'BANK_CARD',
		losePostback: lose,
	});
	return { trsId: paid.payment.id as string, postback: paid.postback as Json };
}

/** The shop calls of a workflow, by TrsId. */
function shopCalls(path: string): Json[] {
	return sink.on(path).map((r) => r.body as Json);
}

/** Each TrsId the Bill ID Only workflow told the shop about, with how many times. */
function timesTold(): Map<string, number> {
	const counts = new Map<string, number>();
	for (const call of shopCalls(PATHS.billIdOnly)) {
		counts.set(call.TrsId, (counts.get(call.TrsId) ?? 0) + 1);
	}
	return counts;
}

/** The service's day in Moscow time, `days` from today. */
const moscowDay = (days = 0) => addDays(dateIn('Europe/Moscow'), days);

beforeAll(async () => {
	stateDir = mkdtempSync(join(tmpdir(), 'paypalych-e2e-spec-'));
	sink = await startSink();
	stack = await startStack({
		stateDir,
		shopBackend: sink.url,
		owner: ownerFor('E2E'),
		timeFactor: 0.01,
		workflows: (settings) => [
			paymentWorkflow(
				IDS.billIdOnly,
				'9d1f0a36-5b1e-4d8e-8f4a-25c0e1a7b101',
				PATHS.billIdOnly,
				{ orderCheck: 'billId' },
				settings,
			),
			paymentWorkflow(
				IDS.byDefault,
				'9d1f0a36-5b1e-4d8e-8f4a-25c0e1a7b102',
				PATHS.byDefault,
				{},
				settings,
			),
		],
		relayEnv: {
			RELAY_ALERT_TARGETS: `${sink.url}/alerts`,
			// Runs only when the suite asks for one.
			RELAY_CATCHUP_INTERVAL_S: '3600',
			RELAY_BASE_DELAY_MS: '200',
			RELAY_MAX_DELAY_MS: '2000',
			RELAY_CONCURRENCY: '4',
		},
		phases,
	});
	// The service answers the other way the document allows, and pages its searches by 5 rows.
	await stack.control('PATCH', `/merchants/${stack.sandbox.merchantId}`, {
		profile: 'spec',
		searchPageSize: PAGE_SIZE,
	});
	// The first run after the start is a deep one: asked for now, on a merchant with no bill yet,
	// so that the suite's next plain run is an ordinary one.
	const first = await relayAdmin<Json>('/catchup', 'POST');
	expect(first).toMatchObject({ outcome: 'done', deep: true, found: [] });
	phases.mark('merchant switched to the spec profile');
}, 900_000);

afterAll(async () => {
	await stack?.stop();
	await sink?.close();
	if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe('the spec profile through the relay and a real n8n', () => {
	const lost: Record<string, string[]> = { old: [], multi: [], page2: [], today: [] };
	const lateBodies: Json[] = [];

	it('lost postbacks of an old bill, a MULTI link, a bill on page 2 and a bill of today each reach the Bill ID Only workflow once; the default Order Check refuses them naming the fix', async () => {
		const stamp = randomBytes(3).toString('hex');
		const oldBill = await daysAgo(10, () => createBill('310.00', 'NORMAL', `spec-old-${stamp}`));
		const link = await daysAgo(20, () => createBill('150.00', 'MULTI', `spec-link-${stamp}`));
		// A dozen bills of today: with 5 rows a page, the search has three pages.
		const todays: string[] = [];
		for (let i = 0; i < 10; i++)
			todays.push(await createBill(`${500 + i}.00`, 'NORMAL', `spec-today-${stamp}-${i}`));

		// The search as the relay's deep run reads it (every bill of the merchant is in its window):
		// a bill of today on page 2 and one on page 1.
		const range = { start_date: moscowDay(-30), finish_date: moscowDay(2) };
		const page = async (n: number) =>
			await stack.api<Json>('GET', '/api/v1/bill/search', { ...range, page: String(n) });
		const [first, second] = [await page(1), await page(2)];
		expect(second.meta).toMatchObject({ current_page: 2, per_page: PAGE_SIZE });
		expect(second.meta.last_page).toBeGreaterThanOrEqual(2);
		expect(first.data.length).toBe(PAGE_SIZE);
		const onPage2 = (second.data as Json[]).map((b) => b.id as string);
		const onPage1 = (first.data as Json[]).map((b) => b.id as string);
		const page2Bill = todays.find((id) => onPage2.includes(id));
		const todayBill = todays.find((id) => onPage1.includes(id));
		expect(page2Bill, 'a bill of today on page 2').toBeDefined();
		expect(todayBill, 'a bill of today on page 1').toBeDefined();
		// The spec profile shows no order ID.
		expect((first.data as Json[]).every((b) => b.order_id === undefined)).toBe(true);

		const remember = async (group: string, billId: string) => {
			const { trsId, postback } = await pay(billId, true);
			lost[group].push(trsId);
			lateBodies.push(postback);
		};
		await remember('old', oldBill);
		for (let i = 0; i < 15; i++) await remember('multi', link);
		await remember('page2', page2Bill as string);
		await remember('today', todayBill as string);
		const all = Object.values(lost).flat();
		expect(new Set(all).size).toBe(18);
		phases.mark('18 payments made, every postback lost');

		// An ordinary run reads the bills of the last RELAY_CATCHUP_DAYS days and the payments of
		// those days (payment/search), whatever their bill's age: every payment lost here, the old
		// bill's and the MULTI link's too.
		const ordinary = await relayAdmin<Json>('/catchup', 'POST');
		const foundBy = (run: Json) => (run.found as Json[]).map((f) => f.trsId as string);
		expect(ordinary).toMatchObject({ outcome: 'done', deep: false });
		expect(foundBy(ordinary).sort()).toEqual([...all].sort());
		// The deep run (bills of the last RELAY_CATCHUP_BILL_DAYS days) finds nothing more: each
		// payment is one event.
		const deep = await relayAdmin<Json>('/catchup', 'POST', { deep: true });
		expect(deep, JSON.stringify(deep)).toMatchObject({ outcome: 'done', deep: true });
		expect(foundBy(deep)).toEqual([]);
		phases.mark(`catch-up: ordinary found ${foundBy(ordinary).length}, deep found none more`);

		// Each payment reaches the Bill ID Only workflow once, confirmed with the service.
		await waitFor(
			'a shop call for each of the 18 payments',
			() => (all.every((t) => timesTold().has(t)) ? true : undefined),
			{ timeoutMs: 120_000, everyMs: 500 },
		);
		const executions = await stack.n8n.settledExecutions(IDS.billIdOnly);
		expect(executions).toHaveLength(18);
		expect(executions.every((e) => e.status === 'success')).toBe(true);
		for (const trsId of all) expect(timesTold().get(trsId), trsId).toBe(1);
		for (const call of shopCalls(PATHS.billIdOnly)) {
			expect(call).toMatchObject({ confirmed: true, orderConfirmed: false, paid: true });
			expect(call.payment.id).toBe(call.TrsId);
		}
		const billOf = (trsId: string) =>
			shopCalls(PATHS.billIdOnly).find((c) => c.TrsId === trsId)?.payment.bill_id;
		expect(billOf(lost.old[0])).toBe(oldBill);
		expect(lost.multi.every((t) => billOf(t) === link)).toBe(true);
		expect(billOf(lost.page2[0])).toBe(page2Bill);
		expect(billOf(lost.today[0])).toBe(todayBill);
		phases.mark('18 executions of the Bill ID Only workflow, one per payment');

		// The default Order Check refuses every one, loudly: dead letters naming the fix.
		const deadForDefault = await waitFor(
			'18 dead deliveries to the default workflow',
			async () => {
				const { data } = await relayAdmin<{ data: Json[] }>('/dead?limit=200');
				const mine = data.filter((d) => d.target.includes('9d1f0a36-5b1e-4d8e-8f4a-25c0e1a7b102'));
				return mine.length >= 18 ? mine : undefined;
			},
			{ timeoutMs: 60_000, everyMs: 500 },
		);
		expect(deadForDefault).toHaveLength(18);
		for (const dead of deadForDefault) {
			expect(dead.lastStatus).toBe(422);
			expect(dead.lastResponse).toContain(FIX);
		}
		expect(await stack.n8n.executions(IDS.byDefault)).toHaveLength(0);
		expect(shopCalls(PATHS.byDefault)).toHaveLength(0);
		expect(readFileSync(join(stateDir, 'logs', 'n8n.log'), 'utf8')).toContain(FIX);
		// The relay's alert of the dead deliveries carries the trigger's answer.
		const alert = await waitFor(
			'the dead-delivery alert',
			() =>
				sink
					.on('/alerts')
					.map((r) => r.body as Json)
					.find((a) => a.alert === 'dead'),
			{ timeoutMs: 60_000, everyMs: 500 },
		);
		expect(JSON.stringify(alert)).toContain(FIX);
		phases.mark('default Order Check: 18 dead letters, the alert and the n8n log name the fix');

		// Once: a second deep run finds nothing new, and the service's late retries of the lost
		// postbacks (JSON, as the spec profile sends them) are answered and start nothing.
		const again = await relayAdmin<Json>('/catchup', 'POST', { deep: true });
		expect(foundBy(again)).toEqual([]);
		for (const body of lateBodies.slice(0, 3)) {
			const late = await fetch(`${stack.relay.url}/postback/payment`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
			});
			expect(late.status, await late.text()).toBe(200);
		}
		expect(await stack.n8n.settledExecutions(IDS.billIdOnly)).toHaveLength(18);
		for (const trsId of all) expect(timesTold().get(trsId), trsId).toBe(1);
		const { data: events } = await relayAdmin<{ data: Json[] }>('/events?kind=payment&limit=1000');
		for (const trsId of all)
			expect(
				events.filter((e) => e.fields.TrsId === trsId),
				trsId,
			).toHaveLength(1);
		phases.mark('second deep run and late postbacks: nothing more');
	});

	it('12 genuine postbacks of a popular link in a row each start an execution; 3 forged TrsIds on its signed pair start none', async () => {
		const before = (await stack.n8n.settledExecutions(IDS.billIdOnly)).length;
		const stamp = randomBytes(3).toString('hex');
		const popular = await createBill('99.00', 'MULTI', `spec-popular-${stamp}`);
		const genuine: Array<{ trsId: string; body: Json }> = [];
		for (let i = 0; i < 12; i++) {
			const { trsId } = await pay(popular, false);
			const delivery = await answeredPostback(stack, trsId);
			expect(delivery.status, `payment ${i + 1} answered by the relay`).toBe(200);
			genuine.push({ trsId, body: delivery.body as Json });
		}
		// Every payment of the link carries the same signed pair (InvId, OutSum).
		const pairs = new Set(genuine.map((g) => `${g.body.InvId} ${g.body.OutSum}`));
		expect(pairs.size).toBe(1);
		await waitFor(
			'a shop call for each of the 12 payments',
			() => (genuine.every((g) => timesTold().has(g.trsId)) ? true : undefined),
			{ timeoutMs: 120_000, everyMs: 500 },
		);
		phases.mark('12 genuine postbacks of one link: 12 executions');

		const forged = Array.from({ length: 3 }, () => randomBytes(16).toString('hex'));
		const last = genuine[genuine.length - 1].body;
		for (const trsId of forged) {
			const res = await fetch(`${stack.relay.url}/postback/payment`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ ...last, TrsId: trsId }),
			});
			expect(res.status, await res.text()).toBe(403);
		}
		const executions = await stack.n8n.settledExecutions(IDS.billIdOnly);
		expect(executions).toHaveLength(before + 12);
		for (const g of genuine) expect(timesTold().get(g.trsId), g.trsId).toBe(1);
		for (const trsId of forged) expect(timesTold().has(trsId)).toBe(false);
		const { data: events } = await relayAdmin<{ data: Json[] }>('/events?kind=payment&limit=1000');
		expect(events.filter((e) => forged.includes(e.fields.TrsId))).toHaveLength(0);
		phases.mark('3 forged TrsIds on the pair: refused, no execution');
	});
});
