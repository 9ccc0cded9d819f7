/**
 * End-to-end, refunds and chargebacks from payment to workflow, in a real n8n, on both sandbox
 * profiles (`live`, then `spec` with the refund API switched on), on each ROUTE (refunds-world.ts):
 * straight to n8n (the shop's Refund URL and Chargeback URL name the triggers themselves) and
 * through the relay (they name the relay's `/postback/refund` and `/postback/chargeback`; the
 * one-URL shop names its `/postback/payment` in all three fields).
 *
 * - a refund made in the sandbox reaches the refund example (07) once and the shop stand-in marks
 *   the order refunded;
 * - a chargeback reaches its example (08) once: the shop records the payout hold and a person is
 *   alerted;
 * - one URL (a Payment trigger with Also Accept refund and chargeback) pasted into the Result,
 *   Refund and Chargeback URL fields: a payment, its refund and its chargeback each start the one
 *   workflow once, with the right `event`;
 * - a refund postback with a valid signature but an id the service does not know, one naming
 *   another bill, and a replay in another spelling start nothing;
 * - through the relay: a refund postback the sandbox loses is found by the relay's catch-up and
 *   reaches the refund example once.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_IDS } from '../../scripts/harness/examples.ts';
import { waitFor } from '../../scripts/harness/wait.ts';
import { relayAdmin } from './paypalych-world.ts';
import {
	IDS,
	ONE_URL_PATH,
	ELSEWHERE_PATH,
	PROFILES,
	ROUTES,
	callsAbout,
	callsFor,
	createBill,
	createShop,
	moneyBack,
	pay,
	phases,
	post,
	settled,
	signedRefund,
	sink,
	stack,
	unique,
	useRefundsStack,
	waitForCalls,
	type Json,
	type Kind,
	type Opened,
} from './refunds-world.ts';

const md5Upper = (text: string) =>
	createHash('md5').update(text, 'utf8').digest('hex').toUpperCase();

useRefundsStack();

for (const route of ROUTES) {
	for (const profile of PROFILES) {
		describe(`refunds and chargebacks ${route.name}, ${profile} profile`, () => {
			const ids = IDS[profile];
			let examplesShop: string;
			let oneUrlShop: string;
			let opened: Opened;

			beforeAll(async () => {
				opened = await route.open(profile);
				// `spec`: the refund API is switched on (refund/status confirms); `live`: it is not
				// (the refunds payment/status lists confirm).
				await stack.control('PATCH', `/merchants/${stack.sandbox.merchantId}`, {
					profile,
					refunds: profile === 'spec',
				});
				examplesShop = await createShop({
					name: `Examples shop (${profile})`,
					resultUrl: `${sink.url}${ELSEWHERE_PATH}`,
					refundUrl: opened.refund,
					chargebackUrl: opened.chargeback,
				});
				oneUrlShop = await createShop({
					name: `One URL shop (${profile})`,
					resultUrl: opened.oneUrl.payment,
					refundUrl: opened.oneUrl.refund,
					chargebackUrl: opened.oneUrl.chargeback,
				});
			});

			afterAll(async () => {
				await opened?.close();
			});

			// The profile's first case: the relay's catch-up then has this refund only to find (the
			// refund search lists the merchant's every refund, the one-URL shop's too).
			it.runIf(route.catchesUp === true)(
				'a refund postback lost on its way is found by catch-up and reaches the workflow once',
				async () => {
					const relay = opened.relay as NonNullable<Opened['relay']>;
					const merchant = `/merchants/${stack.sandbox.merchantId}`;
					const orderId = unique(`refund-lost-${profile}`);
					const billId = await createBill(examplesShop, '600.00', orderId);
					const payment = await pay(billId);
					const before = (await settled(ids.refund)).length;
					// The catch-up finds refunds through refund/search: the refund API is on here in both
					// profiles (where it is off, its coverage says so and it finds none).
					await stack.control('PATCH', merchant, { refunds: true, losePostbacks: true });
					try {
						let refundId: string;
						try {
							const made = await stack.control<Json>('POST', `/payments/${payment.id}/refund`, {});
							refundId = String((made.refund as Json).id);
						} finally {
							await stack.control('PATCH', merchant, { losePostbacks: false });
						}
						const { data } = await stack.control<{ data: Json[] }>(
							'GET',
							`/deliveries?kind=refund&trsId=${encodeURIComponent(refundId)}`,
						);
						expect(data).toEqual([expect.objectContaining({ lost: true, status: null })]);

						const run = await relayAdmin<Json>('/catchup', 'POST', relay);
						expect(run.outcome).toBe('done');
						expect(run.moneyBack).toMatchObject({ refunds: 'read' });
						// `spec`: the service's times carry no zone (Moscow time), so the refunds of the
						// last three hours count as after the relay's baseline and are forwarded too
						// (relay/src/catchup/baseline.ts); `live` writes UTC: this refund only.
						const found = (run.found as Json[]).filter((f) => f.kind === 'refund');
						expect(found.filter((f) => f.trsId === refundId)).toHaveLength(1);
						if (profile === 'live') expect(found).toHaveLength(1);
						// `spec`: the service shows no bill's order ID, so the postback the catch-up rebuilds
						// has an empty InvId (the workflow has the bill and the payment).
						const [marked] = await waitForCalls('/api/orders/refunded', billId, 1);
						expect(marked.body).toMatchObject({
							orderId: profile === 'live' ? orderId : '',
							billId,
							paymentId: payment.id,
							refundId,
							refundStatus: 'SUCCESS',
						});
						if (profile === 'live') expect(sink.orders.get(orderId)).toBe('refunded');
						await relayIdle(relay);
						const runs = await settled(ids.refund);
						if (profile === 'live') expect(runs).toHaveLength(before + 1);
						expect(runs.every((e) => e.status === 'success')).toBe(true);

						// The next run forwards nothing: the refund reached the workflow once.
						const next = await relayAdmin<Json>('/catchup', 'POST', relay);
						expect(next.found).toEqual([]);
						await relayIdle(relay);
						expect(await settled(ids.refund)).toHaveLength(runs.length);
						expect(callsAbout('/api/orders/refunded', billId)).toHaveLength(1);
						phases.mark(`${profile}: a lost refund ${refundId} found by catch-up, delivered once`);
					} finally {
						await stack.control('PATCH', merchant, { refunds: profile === 'spec' });
					}
				},
			);

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
				const again = await post(opened.refund, refund.postback, profile);
				expect(again.status).toBe(200);
				const runs = await settled(ids.refund);
				expect(runs).toHaveLength(before + 1);
				expect(runs.every((e) => e.status === 'success')).toBe(true);
				expect(callsAbout('/api/orders/refunded', billId)).toHaveLength(1);
				phases.mark(
					`${route.name}, ${profile}: refund ${String(refund.record.id)} marked order ${orderId} refunded once`,
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

				const again = await post(opened.chargeback, chargeback.postback, profile);
				expect(again.status).toBe(200);
				const runs = await settled(ids.chargeback);
				expect(runs).toHaveLength(before + 1);
				expect(runs.every((e) => e.status === 'success')).toBe(true);
				expect(callsAbout('/api/payouts/holds', billId)).toHaveLength(1);
				phases.mark(
					`${route.name}, ${profile}: chargeback ${String(chargeback.record.id)} held order ${orderId} once`,
				);
			});

			it.runIf(profile === 'live')(
				"after a chargeback the seller-payout example (05) pays that order's seller nothing more",
				async () => {
					const marketplaceShop = await createShop({
						name: 'Marketplace shop',
						// Its payments straight to 05 (no relay here takes payments for 05), its chargebacks
						// by the route.
						resultUrl: stack.triggerUrls[EXAMPLE_IDS.sellerPayout],
						chargebackUrl: opened.chargeback,
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

			it('money back bound to its fields, through a real n8n: a genuine refund replayed without its Status, or re-cut as a chargeback, starts nothing; a P2P deal posted to the one URL is answered OK and starts nothing', async () => {
				const orderId = unique(`refund-bound-${profile}`);
				const billId = await createBill(examplesShop, '900.00', orderId);
				const payment = await pay(billId);
				const refund = await moneyBack('refund', payment.id as string, '100.00');
				expect(refund.status).toBe(200);
				await waitForCalls('/api/orders/refunded', billId, 1);
				const refunds = (await settled(ids.refund)).length;
				const chargebacks = (await settled(ids.chargeback)).length;
				const oneUrl = (await settled(ids.oneUrl)).length;

				// M-1: the genuine refund without its Status, and with an empty one.
				const { Status: _status, ...noStatus } = refund.postback;
				for (const replay of [noStatus, { ...refund.postback, Status: '' }]) {
					const answer = await post(opened.refund, replay, profile);
					expect(answer.status, answer.text).toBe(opened.relay ? 400 : 401);
				}
				// M-2: the genuine refund's signature re-cut as a chargeback's.
				const recut: Record<string, string> = {
					Id: refund.postback.Id,
					Status: 'SUCCESS',
					InvId: refund.postback.InvId,
					BillId: `${refund.postback.Amount}:${refund.postback.Currency}:${refund.postback.BillId}`,
					PaymentId: refund.postback.PaymentId,
					SignatureValue: refund.postback.SignatureValue,
				};
				for (const url of [opened.chargeback, opened.oneUrl.payment]) {
					const answer = await post(url, recut, profile);
					expect(answer.status, answer.text).toBe(opened.relay ? 400 : 401);
				}
				// D-1: a P2P deal, signed like a payout, at the one URL (a Result URL).
				const deal: Record<string, string> = {
					TrsId: unique(`deal-${profile}`),
					InvId: unique(`deal-order-${profile}`),
					Status: 'SUCCESS',
					Amount: '900.00',
					Currency: 'RUB',
					'Payment[0][id]': String(payment.id),
					'Payout[0][id]': 'po-1',
				};
				deal.SignatureValue = md5Upper(`${deal.Amount}:${deal.TrsId}:${stack.sandbox.token}`);
				const dealAnswer = await post(opened.oneUrl.payment, deal, profile);
				expect(dealAnswer.status, dealAnswer.text).toBe(200);

				await new Promise((resolve) => setTimeout(resolve, 1500));
				expect(await settled(ids.refund)).toHaveLength(refunds);
				expect(await settled(ids.chargeback)).toHaveLength(chargebacks);
				expect(await settled(ids.oneUrl)).toHaveLength(oneUrl);
				phases.mark(`${profile}: money back bound to its fields, a P2P deal, nothing started`);
			});

			it('a signed refund postback the service does not confirm, or a replay in another spelling, starts nothing', async () => {
				const url = opened.refund;
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
				// Through the relay, the relay's own look-up refuses both: nothing is stored or forwarded.
				if (opened.relay) expect([unknown.status, elsewhere.status]).toEqual([403, 403]);
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

/** Waits until the relay has nothing left to deliver (no delivery pending or under way). */
async function relayIdle(relay: NonNullable<Opened['relay']>) {
	await waitFor(
		'the relay to deliver everything',
		async () => {
			for (const status of ['pending', 'delivering']) {
				const { data } = await relayAdmin<{ data: Json[] }>(
					`/events?status=${status}`,
					'GET',
					relay,
				);
				if (data.length > 0) return undefined;
			}
			return true;
		},
		{ timeoutMs: 60_000, everyMs: 200 },
	);
}
