/**
 * End-to-end, issue 34's "Done when" for refunds and chargebacks, in a real n8n, on both sandbox
 * profiles (`live`, then `spec` with the refund API switched on), straight to n8n: the shop's
 * Refund URL and Chargeback URL name the triggers themselves.
 *
 * - a refund made in the sandbox reaches the refund example (07) once and the shop stand-in marks
 *   the order refunded;
 * - a chargeback reaches its example (08) once: the shop records the payout hold and a person is
 *   alerted;
 * - one URL (a Payment trigger with Also Accept refund and chargeback) pasted into the Result,
 *   Refund and Chargeback URL fields: a payment, its refund and its chargeback each start the one
 *   workflow once, with the right `event`;
 * - a refund postback with a valid signature but an id the service does not know, one naming
 *   another bill, and a replay in another spelling start nothing.
 *
 * Where the postbacks go is one parameter (ROUTES): a "through the relay" variant adds a route
 * whose URLs are the relay's `/postback/refund` and `/postback/chargeback`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
	CREDENTIAL_ID,
	CREDENTIAL_NAME,
	EXAMPLE_IDS,
	configureWorkflow,
	loadExamples,
	type ExampleSettings,
} from '../../scripts/harness/examples.ts';
import { TRIGGER_TYPE, type WorkflowJson } from '../../scripts/harness/n8n.ts';
import { Phases } from '../../scripts/harness/proc.ts';
import { startSink, type Sink } from '../../scripts/harness/sink.ts';
import { startStack, type Stack } from '../../scripts/harness/stack.ts';
import { answeredPostback, ownerFor } from '../../scripts/harness/suite.ts';
import { waitFor } from '../../scripts/harness/wait.ts';
import { md5Upper } from './paypalych-world.ts';

type Json = Record<string, any>;
type Kind = 'payment' | 'refund' | 'chargeback';
type Profile = 'live' | 'spec';

const PROFILES: Profile[] = ['live', 'spec'];
/** Where the one-URL workflow tells the shop what it received (its whole item). */
const ONE_URL_PATH = '/api/e2e/one-url';
/** The Result URL of the examples' shop: its payments are not what this file watches. */
const ELSEWHERE_PATH = '/api/e2e/payments-elsewhere';

/** The workflows of one profile: the examples (a copy with Order Check = Bill ID Only in `spec`,
 * whose service shows no order ID) and the one-URL workflow. */
interface ProfileIds {
	refund: string;
	chargeback: string;
	oneUrl: string;
}
const IDS: Record<Profile, ProfileIds> = {
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

/** How a postback reaches the workflow: the URL pasted into the shop's field for `kind`. */
interface Route {
	name: string;
	urlFor(stack: Stack, workflowId: string, kind: Kind): string;
}
const STRAIGHT: Route = {
	name: 'straight to n8n',
	urlFor: (s, workflowId) => s.triggerUrls[workflowId],
};
const ROUTES: Route[] = [STRAIGHT];

const phases = new Phases('e2e refunds');
let stack: Stack;
let sink: Sink;
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

beforeAll(async () => {
	stateDir = mkdtempSync(join(tmpdir(), 'paypalych-e2e-refunds-'));
	sink = await startSink();
	stack = await startStack({
		stateDir,
		shopBackend: sink.url,
		owner: ownerFor('E2E'),
		timeFactor: 0.01,
		workflows: workflowsFor,
		relayEnv: { LOG_LEVEL: 'warn' },
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

const unique = (label: string) => `${label}-${randomBytes(4).toString('hex')}`;

async function createShop(fields: Json): Promise<string> {
	const made = await stack.control<{ shopId: string }>('POST', '/shops', {
		merchantId: stack.sandbox.merchantId,
		...fields,
	});
	return made.shopId;
}

async function createBill(
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
async function pay(billId: string): Promise<Json> {
	const paid = await stack.control<{ payment: Json }>('POST', `/bills/${billId}/pay`, {
		outcome: 'full',
		method: 'BANK_CARD',
	});
	await answeredPostback(stack, paid.payment.id as string, 'payment');
	return paid.payment;
}

/** Refunds (or charges back) a payment on the sandbox; waits until its postback was answered. */
async function moneyBack(
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
function signedRefund(fields: Record<string, string>): Record<string, string> {
	const { Amount, Currency, BillId, PaymentId, Id } = fields;
	const text = `${Amount}:${Currency}:${BillId}:${PaymentId}:${Id}:${stack.sandbox.token}`;
	return { ...fields, SignatureValue: md5Upper(text) };
}

/** Posts a postback as the service of `profile` would (form fields; JSON in `spec`). */
async function post(url: string, fields: Record<string, string>, profile: Profile) {
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

const settled = async (workflowId: string) => await stack.n8n.settledExecutions(workflowId);

/** The shop calls to `path` about one order. */
const callsFor = (path: string, orderId: string) =>
	sink.on(path).filter((r) => (r.body as Json).orderId === orderId);

/** The shop calls to `path` about one bill. */
const callsAbout = (path: string, billId: string) =>
	sink.on(path).filter((r) => {
		const body = r.body as Json;
		return body.billId === billId || body.BillId === billId;
	});

for (const route of ROUTES) {
	for (const profile of PROFILES) {
		describe(`refunds and chargebacks ${route.name}, ${profile} profile`, () => {
			const ids = IDS[profile];
			let examplesShop: string;
			let oneUrlShop: string;

			beforeAll(async () => {
				// `spec`: the refund API is switched on (refund/status confirms); `live`: it is not
				// (the refunds payment/status lists confirm).
				await stack.control('PATCH', `/merchants/${stack.sandbox.merchantId}`, {
					profile,
					refunds: profile === 'spec',
				});
				examplesShop = await createShop({
					name: `Examples shop (${profile})`,
					resultUrl: `${sink.url}${ELSEWHERE_PATH}`,
					refundUrl: route.urlFor(stack, ids.refund, 'refund'),
					chargebackUrl: route.urlFor(stack, ids.chargeback, 'chargeback'),
				});
				oneUrlShop = await createShop({
					name: `One URL shop (${profile})`,
					resultUrl: route.urlFor(stack, ids.oneUrl, 'payment'),
					refundUrl: route.urlFor(stack, ids.oneUrl, 'refund'),
					chargebackUrl: route.urlFor(stack, ids.oneUrl, 'chargeback'),
				});
			});

			it('a refund made in the sandbox reaches the refund example once and marks the order refunded', async () => {
				const orderId = unique(`refund-${profile}`);
				const billId = await createBill(examplesShop, '1000.00', orderId);
				const payment = await pay(billId);
				const before = (await settled(ids.refund)).length;

				const refund = await moneyBack('refund', payment.id as string);
				expect(refund.status).toBe(200);
				const [marked] = await waitForCalls('/api/orders/refunded', billId, 1);
				expect(marked.body).toMatchObject({
					orderId,
					billId,
					paymentId: payment.id,
					refundId: refund.record.id,
					refundStatus: 'SUCCESS',
				});
				expect(Number((marked.body as Json).amount)).toBe(1000);
				expect(sink.orders.get(orderId)).toBe('refunded');

				// The same postback again (the service retrying) starts nothing.
				const again = await post(
					route.urlFor(stack, ids.refund, 'refund'),
					refund.postback,
					profile,
				);
				expect(again.status).toBe(200);
				const runs = await settled(ids.refund);
				expect(runs).toHaveLength(before + 1);
				expect(runs.every((e) => e.status === 'success')).toBe(true);
				expect(callsAbout('/api/orders/refunded', billId)).toHaveLength(1);
				phases.mark(
					`${profile}: refund ${String(refund.record.id)} marked order ${orderId} refunded once`,
				);
			});

			it('a chargeback reaches its workflow once: the payout hold is recorded and a person alerted', async () => {
				const orderId = unique(`mkt-chargeback-${profile}`);
				const billId = await createBill(examplesShop, '700.00', orderId);
				const payment = await pay(billId);
				const before = (await settled(ids.chargeback)).length;

				const chargeback = await moneyBack('chargeback', payment.id as string);
				expect(chargeback.status).toBe(200);
				const [hold] = await waitForCalls('/api/payouts/holds', billId, 1);
				expect(hold.body).toMatchObject({
					orderId,
					paymentId: payment.id,
					chargebackId: chargeback.record.id,
					chargebackStatus: 'SUCCESS',
					reason: 'chargeback',
				});
				const [alert] = await waitForCalls('/api/alerts/chargeback', billId, 1);
				expect(String((alert.body as Json).text)).toContain(String(chargeback.record.id));
				expect(sink.holds.has(orderId)).toBe(true);

				const again = await post(
					route.urlFor(stack, ids.chargeback, 'chargeback'),
					chargeback.postback,
					profile,
				);
				expect(again.status).toBe(200);
				const runs = await settled(ids.chargeback);
				expect(runs).toHaveLength(before + 1);
				expect(runs.every((e) => e.status === 'success')).toBe(true);
				expect(callsAbout('/api/payouts/holds', billId)).toHaveLength(1);
				phases.mark(
					`${profile}: chargeback ${String(chargeback.record.id)} held order ${orderId} once`,
				);
			});

			it.runIf(profile === 'live')(
				"after a chargeback the seller-payout example (05) pays that order's seller nothing more",
				async () => {
					const marketplaceShop = await createShop({
						name: 'Marketplace shop',
						resultUrl: route.urlFor(stack, EXAMPLE_IDS.sellerPayout, 'payment'),
						chargebackUrl: route.urlFor(stack, ids.chargeback, 'chargeback'),
					});
					const orderId = unique('mkt-held');
					const billId = await createBill(marketplaceShop, '1000.00', orderId, 'MULTI');
					const first = await pay(billId);
					await waitFor(
						'the seller paid for the first payment',
						async () => callsFor('/api/payouts/seller', orderId).length === 1 || undefined,
					);
					expect((await moneyBack('chargeback', first.id as string)).status).toBe(200);
					await waitFor('the hold', async () => sink.holds.has(orderId) || undefined);

					// The buyer pays the link again: the seller is on hold, nothing is paid out.
					const second = await pay(billId);
					const [held] = await waitFor(
						'the payout held',
						async () => {
							const calls = callsFor('/api/payouts/seller-held', orderId);
							return calls.length >= 1 ? calls : undefined;
						},
						{ timeoutMs: 60_000, everyMs: 200 },
					);
					expect((held.body as Json).hold).toMatchObject({ orderId, held: true });
					await settled(EXAMPLE_IDS.sellerPayout);
					expect(callsFor('/api/payouts/seller', orderId)).toHaveLength(1);
					const payouts = await stack.control<Json>(
						'GET',
						`/merchants/${stack.sandbox.merchantId}`,
					);
					const payoutsOf = (payment: Json) =>
						(payouts.payouts as Json[]).filter((p) =>
							String(p.order_id ?? '').includes(String(payment.id)),
						);
					expect(payoutsOf(first)).toHaveLength(1);
					expect(payoutsOf(second)).toHaveLength(0);
					phases.mark(
						`${profile}: a chargeback held order ${orderId}: its next payment paid no seller`,
					);
				},
			);

			it('one URL in all three fields: a payment, its refund and its chargeback each start the workflow once with the right event', async () => {
				const orderId = unique(`one-url-${profile}`);
				const billId = await createBill(oneUrlShop, '900.00', orderId);
				const before = (await settled(ids.oneUrl)).length;

				const payment = await pay(billId);
				const refund = await moneyBack('refund', payment.id as string, '400.00');
				const chargeback = await moneyBack('chargeback', payment.id as string);
				expect([refund.status, chargeback.status]).toEqual([200, 200]);

				const items = (await waitForCalls(ONE_URL_PATH, billId, 3)).map((r) => r.body as Json);
				const byEvent = (event: Kind) => items.filter((item) => item.event === event);
				expect(items.map((item) => item.event).sort()).toEqual(['chargeback', 'payment', 'refund']);
				expect(byEvent('payment')[0]).toMatchObject({ paid: true, confirmed: true });
				const [refundItem] = byEvent('refund');
				expect(refundItem).toMatchObject({
					confirmed: true,
					refunded: true,
					refundStatus: 'SUCCESS',
					Id: String(refund.record.id),
				});
				// Nothing in a refund reads as a payment: no paid, no top-level status.
				expect(refundItem.paid).toBeUndefined();
				expect(refundItem.status).toBeUndefined();
				expect(refundItem.refund).toMatchObject({ id: refund.record.id });
				expect(refundItem.payment).toMatchObject({ id: payment.id });
				const [chargebackItem] = byEvent('chargeback');
				expect(chargebackItem).toMatchObject({
					confirmed: true,
					chargedBack: true,
					chargebackStatus: 'SUCCESS',
					Id: String(chargeback.record.id),
				});
				expect(chargebackItem.paid).toBeUndefined();
				expect(chargebackItem.status).toBeUndefined();

				const runs = await settled(ids.oneUrl);
				expect(runs).toHaveLength(before + 3);
				expect(callsAbout(ONE_URL_PATH, billId)).toHaveLength(3);
				phases.mark(`${profile}: one URL, payment + refund + chargeback, three executions`);
			});

			it('a signed refund postback the service does not confirm, or a replay in another spelling, starts nothing', async () => {
				const url = route.urlFor(stack, ids.refund, 'refund');
				const orderId = unique(`refund-forged-${profile}`);
				const billId = await createBill(examplesShop, '800.00', orderId);
				const payment = await pay(billId);
				const refund = await moneyBack('refund', payment.id as string, '300.00');
				expect(refund.status).toBe(200);
				await waitForCalls('/api/orders/refunded', billId, 1);
				expect(sink.orders.get(orderId)).toBe('partly refunded');
				const otherBill = await createBill(examplesShop, '800.00', unique(`other-${profile}`));
				await pay(otherBill);
				const before = await settled(ids.refund);

				// A valid signature on an id the service does not know: retried (it may not exist yet).
				const unknown = await post(
					url,
					signedRefund({ ...refund.postback, Id: `${String(refund.record.id)}0` }),
					profile,
				);
				expect(unknown.status).not.toBe(200);
				// A real refund said to be of another bill: refused.
				const elsewhere = await post(
					url,
					signedRefund({ ...refund.postback, BillId: otherBill }),
					profile,
				);
				expect(elsewhere.status).not.toBe(200);
				// The same refund in another spelling (status in lower case, the amount without its
				// trailing zeros, padded id): the same refund, already delivered.
				const respelled = signedRefund({
					...refund.postback,
					Status: 'success',
					Amount: String(Number(refund.postback.Amount)),
					Id: ` ${refund.postback.Id} `,
				});
				const replay = await post(url, respelled, profile);
				expect(replay.status, replay.text).toBeLessThan(500);
				// A late postback of an earlier status: the service's record says SUCCESS, delivered.
				const late = await post(url, { ...refund.postback, Status: 'PROCESS' }, profile);
				expect(late.status, late.text).toBeLessThan(500);

				const after = await settled(ids.refund);
				expect(after).toHaveLength(before.length);
				expect(callsAbout('/api/orders/refunded', billId)).toHaveLength(1);
				expect(callsAbout('/api/orders/refunded', otherBill)).toHaveLength(0);
				phases.mark(`${profile}: unknown id, another bill and a respelled replay started nothing`);
			});
		});
	}
}

/** Waits until `count` shop calls to `path` name the bill; returns them. */
async function waitForCalls(path: string, billId: string, count: number) {
	return await waitFor(
		`${count} calls to ${path} about ${billId}`,
		async () => {
			const calls = callsAbout(path, billId);
			return calls.length >= count ? calls : undefined;
		},
		{ timeoutMs: 60_000, everyMs: 200 },
	);
}
