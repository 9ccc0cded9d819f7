/**
 * End-to-end: a real n8n with this package installed as a community package, the relay (SQLite)
 * and the sandbox as the payment service, all as separate processes talking real HTTP. The
 * example workflows from examples/ are imported and published exactly as `npm start` does; a
 * local "shop backend" records what the workflows do.
 */
import { describe, expect, it } from 'vitest';
import { EXAMPLE_IDS, CREDENTIAL_ID, loadExamples } from '../../scripts/harness/examples.ts';
import { NODE_TYPE, TRIGGER_TYPE, nodeOutput } from '../../scripts/harness/n8n.ts';
import { answeredPostback } from '../../scripts/harness/suite.ts';
import { utcDay } from '../helpers/sandbox.ts';
import { waitFor, OUTSIDE } from '../../scripts/harness/wait.ts';
import {
	RELAY_STORE,
	SKIP,
	type Json,
	createBill,
	executionsOf,
	md5Upper,
	pay,
	paidCalls,
	phases,
	relayAdmin,
	requestPaymentLink,
	sink,
	stack,
	useE2eStack,
	waitForExecutions,
} from './paypalych-world.ts';
import { moneyCases } from './paypalych-money.ts';
import { securityCases } from './paypalych-security.ts';

useE2eStack();

describe.skipIf(SKIP)(`PayPalych in a real n8n (relay store: ${RELAY_STORE})`, () => {
	it('loads the package as an installed community package and publishes every example', async () => {
		const examples = loadExamples();
		expect(examples.map((e) => e.workflow.id).sort()).toEqual(Object.values(EXAMPLE_IDS).sort());
		for (const { file, workflow } of examples) {
			const ours = workflow.nodes.filter((n) => n.type === NODE_TYPE || n.type === TRIGGER_TYPE);
			expect(ours.length, `${file} uses the package's nodes`).toBeGreaterThan(0);
			for (const node of ours)
				expect((node.credentials as Json).payPalychApi.id, `${file}: ${node.name}`).toBe(
					CREDENTIAL_ID,
				);
			expect(await stack.n8n.isActive(workflow.id), `${file} is published`).toBe(true);
		}
		// The editor's node list comes from the installed package: both types are known to n8n.
		const types = await stack.n8n.nodeTypes<Json>([
			{ name: NODE_TYPE, version: 1 },
			{ name: TRIGGER_TYPE, version: 1 },
		]);
		// Asked by their package-prefixed type names, n8n describes both nodes.
		expect(types.map((t) => t.name).sort()).toEqual(['payPalych', 'payPalychTrigger']);
		phases.mark('examples published, node types loaded');
	});

	it('a bill created in n8n and paid on the sandbox runs the payment workflow once via the relay', async () => {
		const before = (await executionsOf(EXAMPLE_IDS.paymentPaid)).length;
		const orderId = `e2e-order-${Date.now()}`;
		const { status, answer } = await requestPaymentLink({
			amount: '1234.50',
			orderId,
			custom: 'cart-42',
		});
		expect(status).toBe(201);
		expect(answer.paymentPage).toBe(`${stack.sandbox.url}/pay/${answer.billId}`);
		const bill = await stack.control<Json>('GET', `/bills/${answer.billId}`);
		expect(bill).toMatchObject({
			orderId,
			amount: '1234.50',
			shopId: stack.sandbox.shopId,
			status: 'NEW',
			custom: 'cart-42',
		});

		const payment = await pay(answer.billId);
		const delivery = await answeredPostback(stack, payment.id);
		expect(delivery.url).toBe(`${stack.relay.url}/postback/payment`);
		expect(delivery.status).toBe(200);

		await waitFor(
			`the shop call for ${orderId}`,
			() => (paidCalls(orderId).length >= 1 ? true : undefined),
			{ ...OUTSIDE, timeoutMs: 60_000 },
		);
		expect(paidCalls(orderId)).toHaveLength(1);
		expect(paidCalls(orderId)[0].body).toMatchObject({
			orderId,
			paymentId: payment.id,
			billId: answer.billId,
			status: 'SUCCESS',
			amount: '1234.50',
			received: Number(payment.amount_received),
			eventKey: `payment-${payment.id}-SUCCESS`,
		});

		const executions = await waitForExecutions(EXAMPLE_IDS.paymentPaid, before + 1);
		expect(executions).toHaveLength(before + 1);
		const newest = executions[0];
		expect(newest.status).toBe('success');
		expect(newest.mode).toBe('webhook');
		const run = await stack.n8n.execution(newest.id);
		// The trigger confirmed the postback with payment/status: the item carries the service's record.
		expect(nodeOutput(run, 'Payment postback')[0]).toMatchObject({
			TrsId: payment.id,
			InvId: orderId,
			Status: 'SUCCESS',
			verified: true,
			confirmed: true,
			paid: true,
			payment: { id: payment.id, bill_id: answer.billId, status: 'SUCCESS' },
		});
		phases.mark('bill -> pay -> postback -> relay -> trigger -> node -> shop backend');
	});

	it('a forged postback starts no execution', async () => {
		const before = (await executionsOf(EXAMPLE_IDS.paymentPaid)).length;
		const forgedOrder = `e2e-forged-${Date.now()}`;
		await createBill('500.00', forgedOrder);
		const fields = {
			InvId: forgedOrder,
			OutSum: '500.00',
			Commission: '0.00',
			CurrencyIn: 'RUB',
			TrsId: `forged-${Date.now()}`,
			Status: 'SUCCESS',
		};
		const forge = (token: string) =>
			new URLSearchParams({
				...fields,
				SignatureValue: md5Upper(`${fields.OutSum}:${fields.InvId}:${token}`),
			}).toString();
		const post = async (url: string, body: string) =>
			(
				await fetch(url, {
					method: 'POST',
					headers: { 'content-type': 'application/x-www-form-urlencoded' },
					body,
				})
			).status;

		// Through the relay (what the Result URL points at) and straight at n8n's trigger URL.
		expect(await post(`${stack.relay.url}/postback/payment`, forge('not-the-token'))).toBe(401);
		expect(await post(stack.triggerUrls[EXAMPLE_IDS.paymentPaid], forge('not-the-token'))).toBe(
			401,
		);
		expect(
			await post(
				stack.triggerUrls[EXAMPLE_IDS.paymentPaid],
				new URLSearchParams(fields).toString(),
			),
		).toBeGreaterThanOrEqual(400);
		// Signed over a different amount than the one sent.
		const tampered = new URLSearchParams({
			...fields,
			OutSum: '5000.00',
			SignatureValue: md5Upper(`500.00:${forgedOrder}:${stack.sandbox.token}`),
		});
		expect(await post(stack.triggerUrls[EXAMPLE_IDS.paymentPaid], tampered.toString())).toBe(401);

		// A genuine payment afterwards goes through: the pipeline was live the whole time.
		const realOrder = `e2e-after-forged-${Date.now()}`;
		const payment = await pay(await createBill('75.00', realOrder));
		await waitFor(
			`the shop call for ${realOrder}`,
			() => (paidCalls(realOrder).length === 1 ? true : undefined),
			{ ...OUTSIDE, timeoutMs: 60_000 },
		);
		const executions = await waitForExecutions(EXAMPLE_IDS.paymentPaid, before + 1);
		expect(executions).toHaveLength(before + 1);
		const run = await stack.n8n.execution(executions[0].id);
		expect(nodeOutput(run, 'Payment postback')[0]).toMatchObject({
			TrsId: payment.id,
			InvId: realOrder,
		});
		expect(paidCalls(forgedOrder)).toHaveLength(0);
		const events = await relayAdmin<{ data: Json[] }>('/events?kind=payment&limit=1000');
		expect(events.data.some((e) => e.fields.TrsId === fields.TrsId)).toBe(false);
		phases.mark('forged postbacks refused');
	});

	// Shared by the outage test and the redelivery test after it.
	const outage: { before: number; orders: string[]; payments: Json[]; events: Json[] } = {
		before: 0,
		orders: [],
		payments: [],
		events: [],
	};

	/** Which payments the executions since `outage.before` handled, as "<status> <TrsId>", sorted. */
	async function handledSinceOutage(): Promise<string[]> {
		const executions = await stack.n8n.settledExecutions(EXAMPLE_IDS.paymentPaid);
		const handled = await Promise.all(
			executions.slice(0, executions.length - outage.before).map(async (e) => {
				const run = await stack.n8n.execution(e.id);
				return `${e.status} ${String(nodeOutput(run, 'Payment postback')[0]?.TrsId)}`;
			}),
		);
		return handled.sort();
	}

	async function allDelivered(): Promise<true | undefined> {
		for (const event of outage.events) {
			const { deliveries } = await relayAdmin<{ deliveries: Json[] }>(`/events/${event.id}`);
			if (deliveries.length === 0 || deliveries.some((d) => d.status !== 'delivered'))
				return undefined;
		}
		return true;
	}

	it('postbacks sent while n8n is stopped each reach the workflow once after it starts again', async () => {
		outage.before = (await executionsOf(EXAMPLE_IDS.paymentPaid)).length;
		await stack.n8n.stop();
		phases.mark('n8n stopped');

		const stamp = Date.now();
		const orders = [1, 2, 3].map((i) => `e2e-offline-${stamp}-${i}`);
		const payments: Json[] = [];
		for (const [i, orderId] of orders.entries())
			payments.push(await pay(await createBill(`${100 + i}.00`, orderId)));
		outage.orders = orders;
		outage.payments = payments;
		for (const payment of payments) {
			const delivery = await answeredPostback(stack, payment.id);
			expect(delivery.status, 'the relay acknowledges while n8n is down').toBe(200);
		}
		// The relay has tried n8n and failed: every delivery is pending with at least one attempt.
		const events = await waitFor(
			'the relay to store the three postbacks',
			async () => {
				const { data } = await relayAdmin<{ data: Json[] }>('/events?kind=payment&limit=1000');
				const ours = data.filter((e) => payments.some((p) => p.id === e.fields.TrsId));
				return ours.length === payments.length ? ours : undefined;
			},
			OUTSIDE,
		);
		outage.events = events;
		await waitFor(
			'failed delivery attempts while n8n is down',
			async () => {
				for (const event of events) {
					const { deliveries } = await relayAdmin<{ deliveries: Json[] }>(`/events/${event.id}`);
					if (
						!(
							deliveries.length > 0 &&
							deliveries.every((d) => d.status === 'pending' && d.attempts >= 1)
						)
					)
						return undefined;
				}
				return true;
			},
			OUTSIDE,
		);
		// The service sends one of them again (a retry): the relay must not hand it over twice.
		const [first] = (
			await stack.control<{ data: Json[] }>(
				'GET',
				`/deliveries?kind=payment&trsId=${payments[0].id}`,
			)
		).data;
		const again = await fetch(`${stack.relay.url}/postback/payment`, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body: new URLSearchParams(first.body as Record<string, string>).toString(),
		});
		expect(again.status).toBe(200);
		expect(orders.every((o) => paidCalls(o).length === 0)).toBe(true);
		phases.mark('3 postbacks queued in the relay');

		await stack.n8n.start();
		await stack.n8n.ensureOwner(stack.owner);
		phases.mark('n8n started again');
		try {
			await waitFor(
				`the shop calls for ${orders.join(', ')}`,
				() => (orders.every((o) => paidCalls(o).length >= 1) ? true : undefined),
				{ ...OUTSIDE, timeoutMs: 60_000 },
			);
		} catch (error) {
			const deliveries = await Promise.all(
				events.map((e) => relayAdmin<{ event: Json; deliveries: Json[] }>(`/events/${e.id}`)),
			);
			const executions = await executionsOf(EXAMPLE_IDS.paymentPaid);
			const lost = deliveries
				.filter(
					(d) =>
						d.deliveries.every((x) => x.status === 'delivered') &&
						paidCalls(d.event.fields.InvId).length === 0,
				)
				.map((d) => d.event.fields.InvId);
			throw new Error(
				`${(error as Error).message}\n` +
					(lost.length > 0
						? `LOST: the relay counts ${lost.join(', ')} as delivered (HTTP 200 from n8n) but no workflow ran for them; n8n 2.41 answers any request with HTTP 200 "n8n is starting up. Please wait" while it starts\n`
						: '') +
					`relay: ${JSON.stringify(deliveries)}\nexecutions: ${JSON.stringify(executions)}\nn8n log:\n${stack.n8n.tail()}`,
			);
		}
		await waitFor('the relay to finish its deliveries', allDelivered, OUTSIDE);
		expect(await handledSinceOutage()).toEqual(payments.map((p) => `success ${p.id}`).sort());
		for (const orderId of orders) expect(paidCalls(orderId), orderId).toHaveLength(1);
		phases.mark('each queued postback ran its workflow once');
	});

	it('postbacks delivered again (the relay replays the outage) start no second execution', async () => {
		expect(outage.events).toHaveLength(3);
		// The relay delivers at least once; an operator replays the outage window with its admin API.
		// The trigger has seen these payments (TrsId + Status) and must answer OK without a new run.
		const receivedAt = outage.events.map((e) => Number(e.receivedAt));
		const replay = await fetch(`${stack.relay.url}/admin/replay`, {
			method: 'POST',
			headers: {
				authorization: `Bearer ${stack.relay.adminToken}`,
				'content-type': 'application/json',
			},
			body: JSON.stringify({
				from: Math.min(...receivedAt),
				to: Math.max(...receivedAt) + 1,
				kind: 'payment',
			}),
		});
		expect(replay.status).toBe(200);
		expect(((await replay.json()) as Json).events).toBe(outage.events.length);
		await waitFor('the replayed deliveries', allDelivered, OUTSIDE);
		expect(await handledSinceOutage()).toEqual(
			outage.payments.map((p) => `success ${p.id}`).sort(),
		);
		for (const orderId of outage.orders) expect(paidCalls(orderId), orderId).toHaveLength(1);
		phases.mark('replayed postbacks deduplicated');
	});

	it('the payout sweep run twice on the same day pays once', async () => {
		const merchantPath = `/merchants/${stack.sandbox.merchantId}`;
		const payoutsOf = async (orderId: string) =>
			(
				await stack.control<{ data: Json[] }>(
					'GET',
					`/payouts?merchantId=${stack.sandbox.merchantId}`,
				)
			).data.filter((p) => p.order_id === orderId);
		await stack.control('PATCH', merchantPath, { balances: { RUB: '5000.00' } });
		const dayBefore = utcDay();
		const first = await stack.n8n.execute(EXAMPLE_IDS.payoutSweep);
		const [paid] = nodeOutput(first, 'Pay out the surplus');
		expect(paid).toMatchObject({ already_existed: false, amount: 4000 });
		expect([`sweep-${dayBefore}`, `sweep-${utcDay()}`]).toContain(paid.order_id);
		expect(await payoutsOf(paid.order_id as string)).toHaveLength(1);
		phases.mark('sweep run 1 (n8n execute)');

		// More money arrives the same day; the sweep runs again (a retry, or someone clicks again).
		// It finds today's sweep by its order ID and pays nothing.
		await stack.control('PATCH', merchantPath, { balances: { RUB: '7000.00' } });
		const second = await stack.n8n.execute(EXAMPLE_IDS.payoutSweep);
		expect(nodeOutput(second, 'Pay out the surplus')).toHaveLength(0);
		expect(nodeOutput(second, 'Tell the shop: already swept')).toHaveLength(1);
		const payouts = await payoutsOf(paid.order_id as string);
		expect(payouts).toHaveLength(1);
		const merchant = await stack.control<Json>('GET', merchantPath);
		expect(merchant.balances.RUB.available).toBe('7000.00');
		const told = sink.on('/api/payouts/sweep').map((r) => r.body as Json);
		expect(told.map((b) => [b.payoutId, b.alreadyExisted])).toEqual([
			[paid.id, false],
			[paid.id, true],
		]);
		phases.mark('sweep run 2 paid nothing');
	});

	it('the nightly reconciliation summarises yesterday’s bills and their payments', async () => {
		await stack.control('POST', '/clock', { offsetMs: -86_400_000 });
		const yesterday = utcDay(-1);
		let ids: string[];
		let paid: Json;
		try {
			ids = [
				await createBill('100.00', 'recon-paid'),
				await createBill('200.00', 'recon-failed'),
				await createBill('300.50', 'recon-open'),
			];
			paid = await pay(ids[0], 'full');
			await pay(ids[1], 'fail');
		} finally {
			await stack.control('POST', '/clock', { now: null });
		}
		await createBill('999.00', 'recon-today'); // today: not part of yesterday's report
		const run = await stack.n8n.execute(EXAMPLE_IDS.reconciliation);
		const [summary] = nodeOutput(run, 'Summarise');
		const reports = sink.on('/api/reports/reconciliation');
		expect(reports).toHaveLength(1);
		expect(reports[0].body).toEqual(summary);
		expect(summary).toMatchObject({
			date: yesterday,
			bills: 3,
			paidBills: 1,
			payments: 2,
			paymentsByStatus: { SUCCESS: 1, FAIL: 1 },
			// Received is what reached the balance: the paid payment's amount_received (after the fee).
			totals: { RUB: { billed: '600.50', received: Number(paid.amount_received).toFixed(2) } },
		});
		expect(Number(paid.amount_received)).toBeGreaterThan(0);
		expect((summary.unpaidBills as Json[]).map((b) => b.id).sort()).toEqual(
			[ids[1], ids[2]].sort(),
		);
		phases.mark('reconciliation (n8n execute)');
	});
	securityCases();
	moneyCases();

	it('paid bills whose postbacks the service lost reach the workflow once each, by the catch-up, with the relay stopped for part of the run', async () => {
		const before = (await executionsOf(EXAMPLE_IDS.paymentPaid)).length;
		const stamp = Date.now();
		const orders = Array.from({ length: 40 }, (_, i) => `e2e-catchup-${stamp}-${i}`);
		// Bills 0-19: the service gives up on their postbacks without sending them; 20-39: normal.
		const lost = (i: number) => i < 20;
		const paid: Json[] = [];
		const payBill = async (i: number) => {
			const billId = await createBill(`${200 + i}.50`, orders[i]);
			const result = await stack.control<{ payment: Json }>('POST', `/bills/${billId}/pay`, {
				outcome: 'full',
				method: 'BANK_CARD',
				losePostback: lost(i),
			});
			paid[i] = result.payment;
		};
		// Half of each group with the relay up, the other half while it is stopped: the service's
		// postbacks of the normal ones fail then and are retried (10 s, 100 s … times 0.01).
		for (const i of [...Array(10).keys()].flatMap((i) => [i, i + 20])) await payBill(i);
		await stack.relay.stop();
		phases.mark('relay stopped with 10 lost and 10 normal postbacks paid');
		// (At once, so the relay is down for a few seconds, not the time of 20 bills one by one.)
		await Promise.all([...Array(10).keys()].flatMap((i) => [payBill(i + 10), payBill(i + 30)]));
		// Started again with gentler deliveries than the suite's fast retries: the catch-up hands n8n
		// 30-odd postbacks at once (each to three triggers), and retries every 200 ms would keep a
		// busy n8n from ever catching up.
		Object.assign(stack.relay.env, {
			RELAY_CONCURRENCY: '4',
			RELAY_BASE_DELAY_MS: '500',
			RELAY_MAX_DELAY_MS: '3000',
		});
		await stack.relay.start();
		phases.mark('relay started again after 20 more bills were paid');

		// One catch-up run now (the interval's timer would run it within RELAY_CATCHUP_INTERVAL_S).
		const run = await fetch(`${stack.relay.url}/admin/catchup`, {
			method: 'POST',
			headers: { authorization: `Bearer ${stack.relay.adminToken}` },
		});
		const result = (await run.json()) as Json;
		phases.mark(`catch-up: HTTP ${run.status}, ${JSON.stringify(result.found?.length)} found`);

		// The service's postbacks of the normal bills paid while the relay was down come late (its
		// next retry is 10^n s away): each is sent now, as that retry would, after the catch-up.
		for (const i of [...Array(10).keys()].map((i) => i + 30)) {
			const { data } = await stack.control<{ data: Json[] }>(
				'GET',
				`/deliveries?kind=payment&trsId=${paid[i].id}`,
			);
			const late = await fetch(`${stack.relay.url}/postback/payment`, {
				method: 'POST',
				headers: { 'content-type': 'application/x-www-form-urlencoded' },
				body: new URLSearchParams(data[0].body as Record<string, string>).toString(),
			});
			expect(late.status, paid[i].id).toBe(200);
		}
		try {
			await waitFor(
				'a shop call for each of the 40 orders',
				() => (orders.every((o) => paidCalls(o).length >= 1) ? true : undefined),
				{ ...OUTSIDE, timeoutMs: 90_000 },
			);
		} catch (error) {
			const missing = orders.flatMap((o, i) => (paidCalls(o).length === 0 ? [i] : []));
			const details = await Promise.all(
				missing.map(async (i) => {
					const { data } = await relayAdmin<{ data: Json[] }>(
						`/events?kind=payment&trsId=${paid[i].id}`,
					);
					const events = await Promise.all(
						data.map((e) => relayAdmin<{ event: Json; deliveries: Json[] }>(`/events/${e.id}`)),
					);
					return {
						i,
						lost: lost(i),
						events: events.map((e) => ({
							source: e.event.source,
							deliveries: e.deliveries.map((d) => [
								d.status,
								d.attempts,
								d.lastStatus,
								d.lastError,
							]),
						})),
					};
				}),
			);
			throw new Error(
				`${(error as Error).message}\nmissing: ${JSON.stringify(details)}\ncatch-up: ${JSON.stringify(result)}\nn8n log:\n${stack.n8n.tail()}`,
			);
		}
		// Each payment once: 40 executions since, one per payment, each confirmed with the service.
		const executions = await stack.n8n.settledExecutions(EXAMPLE_IDS.paymentPaid);
		const ours = executions.slice(0, executions.length - before);
		const outputs = await Promise.all(
			ours.map(async (e) => ({
				status: e.status,
				item: nodeOutput(await stack.n8n.execution(e.id), 'Payment postback')[0] as Json,
			})),
		);
		// (Bills of earlier tests are in the catch-up's window too; their executions are not counted.)
		const mine = outputs.filter((o) => paid.some((p) => p.id === o.item?.TrsId));
		expect(mine.map((o) => o.item.TrsId).sort()).toEqual(paid.map((p) => p.id).sort());
		for (const o of mine) {
			expect(o.status, o.item.TrsId).toBe('success');
			expect(o.item.confirmed, o.item.TrsId).toBe(true);
		}
		for (const orderId of orders) expect(paidCalls(orderId), orderId).toHaveLength(1);
		// The lost ones came from the catch-up; the relay stored each payment once.
		const { data } = await relayAdmin<{ data: Json[] }>('/events?kind=payment&limit=1000');
		const stored = data.filter((e) => paid.some((p) => p.id === e.fields.TrsId));
		expect(stored).toHaveLength(40);
		for (const i of [...Array(20).keys()])
			expect(stored.find((e) => e.fields.TrsId === paid[i].id)?.source).toBe('catch-up');
		phases.mark('40 paid bills, 20 postbacks lost: 40 executions, each once, each confirmed');
	});

	it('every example workflow has run successfully', async () => {
		// The payout approval (06) is run, approved and rejected, by guardrails.test.ts; the refund
		// (07) and chargeback (08) examples by refunds.test.ts; the daily statement (09), a morning
		// schedule, by statement.test.ts, which runs it against a relay of its own.
		const elsewhere: string[] = [
			EXAMPLE_IDS.payoutApproval,
			EXAMPLE_IDS.refundMarks,
			EXAMPLE_IDS.chargebackHold,
			EXAMPLE_IDS.dailyStatement,
		];
		for (const id of Object.values(EXAMPLE_IDS).filter((id) => !elsewhere.includes(id))) {
			const executions = await executionsOf(id);
			expect(
				executions.some((e) => e.status === 'success'),
				`${id} has a successful execution`,
			).toBe(true);
			expect(
				executions.filter((e) => e.status === 'error'),
				`${id} has no failed execution`,
			).toHaveLength(0);
		}
		phases.mark('executions checked');
	});
});
