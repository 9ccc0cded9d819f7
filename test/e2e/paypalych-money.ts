/**
 * The end-to-end suite's money cases: who gets marked paid, and for how much.
 * - a forgery: example 01 under Order Check "Bill ID Only" marks nothing paid for a forgery made of
 *   another order's redirect signature, a cheap payment's TrsId and a made-up Commission;
 * - the first payment: the merchant's first payment with every default, set up the way
 *   docs/merchant/sandbox.md tells a merchant, against a sandbox started with no switch at all.
 * Run inside paypalych.test.ts's suite, on its stack (its n8n and sink).
 */
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREDENTIAL_NAME } from '../../scripts/harness/examples.ts';
import {
	REPO_ROOT,
	TRIGGER_TYPE,
	nodeBinary,
	type WorkflowJson,
} from '../../scripts/harness/n8n.ts';
import { freePort, httpJson, startService, type Service } from '../../scripts/harness/proc.ts';
import { waitFor, OUTSIDE } from '../../scripts/harness/wait.ts';
import {
	BILL_ID_ONLY_PREFIX,
	SUITE_IDS,
	type Json,
	createBill,
	phases,
	postForm,
	relayAdmin,
	sink,
	stack,
} from './paypalych-world.ts';

type PayResult = { payment: Json; postback: Json; redirect: { url: string | null; fields: Json } };

export function moneyCases(): void {
	describe('money: who is marked paid, and for how much', () => {
		billIdOnlyCase();
		firstPaymentCase();
	});
}

function billIdOnlyCase(): void {
	/** The shop calls of the Bill ID Only copy of example 01 that mark an order paid. */
	const paidByBill = () => sink.on(`${BILL_ID_ONLY_PREFIX}/api/orders/paid`);

	it('in a real n8n, example 01 under Bill ID Only: the forgery marks nothing paid and the genuine payment marks its own order paid once', async () => {
		const stamp = Date.now();
		const trigger = stack.triggerUrls[SUITE_IDS.billIdOnly];
		const executions = async () => await stack.n8n.settledExecutions(SUITE_IDS.billIdOnly);
		const executionsBefore = (await executions()).length;
		const callsBefore = paidByBill().length;

		// The victim's order: a 1000.00 bill whose customer's payment fails. Their browser was sent to
		// the Fail URL with the bill's signed (OutSum, InvId): MD5(OutSum:InvId:token), as a postback's.
		const victimBill = await createBill('1000.00', `order-victim-1000-${stamp}`);
		const victim = await stack.control<PayResult>('POST', `/bills/${victimBill}/pay`, {
			outcome: 'fail',
			method: 'BANK_CARD',
		});
		expect(victim.redirect.fields).toMatchObject({
			OutSum: '1000.00',
			InvId: `order-victim-1000-${stamp}`,
		});
		// The attacker pays a 100.00 bill of their own; its genuine postback is held back (lost by the
		// service, delivered below by hand) so that the forgery comes first, every run.
		const attackerBill = await createBill('100.00', `order-attacker-100-${stamp}`);
		const attacker = await stack.control<PayResult>('POST', `/bills/${attackerBill}/pay`, {
			outcome: 'full',
			method: 'BANK_CARD',
			losePostback: true,
		});
		const attackerPayment = String(attacker.payment.id);

		// The forgery, straight to the trigger's production URL: the victim's signed pair, the
		// attacker's own payment, and the difference claimed as the payer's commission.
		const forged = {
			...victim.redirect.fields,
			TrsId: attackerPayment,
			Status: 'SUCCESS',
			Commission: '900.00',
		};
		expect(await postForm(trigger, forged)).toEqual({ status: 422, receipt: 'rejected' });
		expect(await executions()).toHaveLength(executionsBefore);
		expect(paidByBill()).toHaveLength(callsBefore);

		// The genuine postback reaches the shop's Result URL (the relay), then comes again.
		const genuine = attacker.postback;
		expect(genuine).toMatchObject({ TrsId: attackerPayment, OutSum: '100.00', Status: 'SUCCESS' });
		expect((await postForm(`${stack.relay.url}/postback/payment`, genuine)).status).toBe(200);
		const [paid] = await waitFor(
			`the Bill ID Only copy to mark bill ${attackerBill} paid`,
			() => {
				const calls = paidByBill().filter((c) => (c.body as Json).billId === attackerBill);
				return calls.length > 0 ? calls : undefined;
			},
			{ ...OUTSIDE, timeoutMs: 60_000 },
		);
		expect(paid.body).toMatchObject({
			billId: attackerBill,
			paymentId: attackerPayment,
			status: 'SUCCESS',
			amount: '100.00',
		});
		expect(await postForm(trigger, genuine)).toEqual({ status: 200, receipt: 'duplicate' });
		expect((await postForm(`${stack.relay.url}/postback/payment`, genuine)).status).toBe(200);
		await waitFor(
			`the relay's deliveries of ${attackerPayment} to finish`,
			async () => {
				const { data } = await relayAdmin<{ data: Json[] }>('/events?kind=payment&limit=1000');
				const ours = data.filter((e) => String(e.fields.TrsId) === attackerPayment);
				const detailed = await Promise.all(
					ours.map((e) => relayAdmin<{ deliveries: Json[] }>(`/events/${e.id}`)),
				);
				return ours.length > 0 &&
					detailed.every((d) => d.deliveries.every((x) => x.status === 'delivered'))
					? true
					: undefined;
			},
			OUTSIDE,
		);
		expect(await executions()).toHaveLength(executionsBefore + 1);
		expect(paidByBill()).toHaveLength(callsBefore + 1);
		expect(paidByBill().filter((c) => (c.body as Json).billId === victimBill)).toHaveLength(0);
		phases.mark('Bill ID Only: forged commission refused, genuine payment marked paid once');
	});
}

/** The n8n workflow a merchant builds in the editor: the trigger, untouched, and one HTTP Request. */
const FIRST_PAYMENT = {
	id: 'ppE2eFirstPayment',
	credentialId: 'ppE2eFirstPaymentCred',
	sinkPath: '/first-payment/orders',
	trigger: 'PayPalych Trigger',
} as const;

function firstPaymentWorkflow(sinkUrl: string): WorkflowJson {
	return {
		id: FIRST_PAYMENT.id,
		name: 'My first PayPalych payment',
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'e2e0000-0000-4000-8000-000000000371',
				name: FIRST_PAYMENT.trigger,
				type: TRIGGER_TYPE,
				typeVersion: 2,
				position: [0, 0],
				webhookId: '5f1c7a2e-0d1b-4c55-9a3e-7b1f0c2d9e98',
				// No parameter changed: the event, the Statuses and the Order Check are the defaults.
				parameters: {},
				credentials: { payPalychApi: { id: FIRST_PAYMENT.credentialId, name: CREDENTIAL_NAME } },
			},
			{
				id: 'e2e0000-0000-4000-8000-000000000372',
				name: 'Tell the shop',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [240, 0],
				parameters: {
					method: 'POST',
					url: `${sinkUrl}${FIRST_PAYMENT.sinkPath}`,
					sendBody: true,
					specifyBody: 'json',
					jsonBody: '={{ JSON.stringify($json) }}',
					options: {},
				},
			},
		],
		connections: {
			[FIRST_PAYMENT.trigger]: { main: [[{ node: 'Tell the shop', type: 'main', index: 0 }]] },
		},
	};
}

/** `npm run sandbox` as docs/merchant/sandbox.md starts it: no switch, only a free port. */
async function startDefaultSandbox(logFile: string): Promise<{ service: Service; merchant: Json }> {
	let printed: Json | undefined;
	const service = startService({
		name: 'default-sandbox',
		command: nodeBinary(),
		args: [join(REPO_ROOT, 'sandbox', 'src', 'bin.ts'), '--port', String(await freePort())],
		cwd: REPO_ROOT,
		// No SANDBOX_* variable of this process may switch anything on.
		withoutInherited: /^SANDBOX_/,
		logFile,
		onLine: (line) => {
			if (line.startsWith('{')) printed = JSON.parse(line) as Json;
		},
	});
	const merchant = await waitFor('the default sandbox to print its line', () => printed, OUTSIDE);
	return { service, merchant };
}

function firstPaymentCase(): void {
	let sandbox: { service: Service; merchant: Json } | undefined;
	let webhookUrl = '';
	const sandboxCall = async <T = Json>(method: string, path: string, body?: unknown) =>
		await httpJson<T>(method, `${String(sandbox?.merchant.url)}${path}`, body);
	const shopCalls = () => sink.on(FIRST_PAYMENT.sinkPath);
	const runs = async () => await stack.n8n.settledExecutions(FIRST_PAYMENT.id);

	beforeAll(async () => {
		sandbox = await startDefaultSandbox(join(dirname(stack.n8n.logFile), 'default-sandbox.log'));
		const { merchant } = sandbox;
		expect(merchant.profile).toBe('live');
		// 2. Point n8n at it: the credential (API Token, Base URL), the workflow, published.
		await stack.n8n.importCredentials([
			{
				id: FIRST_PAYMENT.credentialId,
				name: CREDENTIAL_NAME,
				type: 'payPalychApi',
				data: { apiToken: String(merchant.token), baseUrl: String(merchant.url) },
			},
		]);
		await stack.n8n.importWorkflows([firstPaymentWorkflow(sink.url)]);
		await stack.n8n.activateWorkflow(FIRST_PAYMENT.id);
		webhookUrl = stack.n8n.webhookUrl(FIRST_PAYMENT.id, FIRST_PAYMENT.trigger);
		expect(webhookUrl).toMatch(/\/webhook\/[^/]+\/payment$/);
		// 3. The shop's Result URL is the trigger's Production URL.
		const shop = await sandboxCall('PATCH', `/_sandbox/shops/${String(merchant.shopId)}`, {
			resultUrl: webhookUrl,
		});
		expect(shop).toMatchObject({ resultUrl: webhookUrl });
	});

	afterAll(async () => {
		await sandbox?.service.stop(5_000);
	});

	/** 4. A bill made with curl as the page shows, and paid without a browser: the payment's id. */
	async function billAndPay(orderId: string, payBody: Json): Promise<string> {
		const { merchant } = sandbox as { merchant: Json };
		const res = await fetch(`${String(merchant.url)}/api/v1/bill/create`, {
			method: 'POST',
			headers: { authorization: `Bearer ${String(merchant.token)}` },
			body: new URLSearchParams({
				amount: '100.00',
				shop_id: String(merchant.shopId),
				order_id: orderId,
			}),
		});
		const bill = (await res.json()) as Json;
		expect(res.status, JSON.stringify(bill)).toBe(200);
		const paid = await sandboxCall<PayResult>(
			'POST',
			`/_sandbox/bills/${String(bill.bill_id)}/pay`,
			payBody,
		);
		return String(paid.payment.id);
	}

	/** 5. The sandbox's postback of a payment, once n8n has answered it. */
	async function answered(trsId: string): Promise<Json> {
		return await waitFor(
			`the default sandbox's postback of payment ${trsId} to be answered`,
			async () => {
				const { data } = await sandboxCall<{ data: Json[] }>(
					'GET',
					`/_sandbox/deliveries?kind=payment&trsId=${encodeURIComponent(trsId)}`,
				);
				return data.find((d) => d.status !== null && d.status !== undefined);
			},
			OUTSIDE,
		);
	}

	it("the merchant's first payment with default settings: a paid bill starts the workflow once, a failed one starts nothing", async () => {
		const stamp = Date.now();
		const paidId = await billAndPay(`rehearsal-1-${stamp}`, {});
		const [call] = await sink.waitFor(FIRST_PAYMENT.sinkPath, 1);
		// A node of version 2: the order and the amount (a number) at the top, the postback below.
		expect(call.body).toMatchObject({
			paid: true,
			orderId: `rehearsal-1-${stamp}`,
			amount: 100,
			confirmed: true,
			orderConfirmed: true,
			postback: { InvId: `rehearsal-1-${stamp}` },
		});
		expect(await runs()).toHaveLength(1);

		expect(await answered(paidId)).toMatchObject({ url: webhookUrl, status: 200 });

		const failedId = await billAndPay(`rehearsal-2-${stamp}`, { outcome: 'fail' });
		expect(await answered(failedId)).toMatchObject({
			url: webhookUrl,
			status: 200,
			body: { Status: 'FAIL', InvId: `rehearsal-2-${stamp}` },
		});
		expect(await runs()).toHaveLength(1);
		expect(shopCalls()).toHaveLength(1);
		phases.mark('first payment with default settings');
	});
}
