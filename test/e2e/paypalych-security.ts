/**
 * The end-to-end suite's security cases: what a dishonest customer or an unlucky operator can do,
 * through the relay and straight to n8n. Run inside paypalych.test.ts's suite, on its stack.
 */
import { describe, expect, it } from 'vitest';
import { EXAMPLE_IDS } from '../../scripts/harness/examples.ts';
import { answeredPostback } from '../../scripts/harness/suite.ts';
import { waitFor, OUTSIDE } from '../../scripts/harness/wait.ts';
import {
	type Json,
	createBill,
	paidCalls,
	phases,
	postForm,
	relayAdmin,
	sink,
	stack,
} from './paypalych-world.ts';

export function securityCases(): void {
	describe('security: what a dishonest customer or an unlucky operator can do', () => {
		const form = (fields: Json) => new URLSearchParams(fields as Record<string, string>).toString();
		const relayPayment = () => `${stack.relay.url}/postback/payment`;
		const direct = () => stack.triggerUrls[EXAMPLE_IDS.paymentPaid];
		type PayResult = {
			payment: Json;
			postback: Json;
			redirect: { url: string | null; fields: Json };
		};
		const payFull = async (billId: string, outcome: 'full' | 'fail' = 'full') =>
			await stack.control<PayResult>('POST', `/bills/${billId}/pay`, {
				outcome,
				method: 'BANK_CARD',
			});

		/** The relay's events for a TrsId with a given Status, once every delivery of each has finished. */
		async function settledRelayEvents(
			trsId: string,
			status: string,
		): Promise<Array<{ event: Json; deliveries: Json[] }>> {
			return await waitFor(
				`the relay's deliveries of ${trsId} ${status} to finish`,
				async () => {
					const { data } = await relayAdmin<{ data: Json[] }>('/events?kind=payment&limit=1000');
					const ours = data.filter(
						(e) =>
							String(e.fields.TrsId).trim() === trsId &&
							String(e.fields.Status).trim().toUpperCase() === status,
					);
					if (ours.length === 0) return undefined;
					const detailed = await Promise.all(
						ours.map((e) => relayAdmin<{ event: Json; deliveries: Json[] }>(`/events/${e.id}`)),
					);
					const done = detailed.every(
						(d) =>
							d.deliveries.length > 0 &&
							d.deliveries.every((x) => x.status === 'delivered' || x.status === 'dead'),
					);
					return done ? detailed : undefined;
				},
				OUTSIDE,
			);
		}

		it('a Fail redirect turned into a SUCCESS postback marks nothing paid, through the relay and straight to n8n', async () => {
			const orderId = `e2e-sec-fail-${Date.now()}`;
			const failed = await payFull(await createBill('2500.00', orderId), 'fail');
			await answeredPostback(stack, failed.payment.id);
			// The customer's browser showed them this form: a valid signature for (OutSum, InvId).
			const forged = { ...failed.redirect.fields, TrsId: failed.payment.id, Status: 'SUCCESS' };
			expect(await postForm(direct(), forged)).toEqual({ status: 422, receipt: 'rejected' });
			expect(await postForm(direct(), { ...forged, TrsId: `made-up-${Date.now()}` })).toEqual({
				status: 503,
				receipt: 'retry',
			});
			// The relay can only check the signature: it stores the call, and every trigger refuses it.
			expect((await postForm(relayPayment(), forged)).status).toBe(200);
			const [event] = await settledRelayEvents(failed.payment.id, 'SUCCESS');
			expect(event.deliveries.map((d) => [d.status, d.lastStatus])).toEqual(
				event.deliveries.map(() => ['dead', 422]),
			);
			expect(paidCalls(orderId)).toHaveLength(0);
			phases.mark('forged SUCCESS from a Fail redirect refused');
		});

		it('a borrowed TrsId (a cheap real payment, or one of the same amount on another order) marks nothing paid', async () => {
			const stamp = Date.now();
			const cheap = await payFull(await createBill('10.00', `e2e-sec-cheap-${stamp}`));
			const twin = await payFull(await createBill('3000.00', `e2e-sec-twin-${stamp}`));
			const victimOrder = `e2e-sec-victim-${stamp}`;
			const victim = await payFull(await createBill('3000.00', victimOrder), 'fail');
			await waitFor(
				'the genuine payments',
				() =>
					paidCalls(`e2e-sec-cheap-${stamp}`).length === 1 &&
					paidCalls(`e2e-sec-twin-${stamp}`).length === 1
						? true
						: undefined,
				{ ...OUTSIDE, timeoutMs: 60_000 },
			);
			for (const borrowed of [cheap.payment.id, twin.payment.id]) {
				const forged = { ...victim.redirect.fields, TrsId: borrowed, Status: 'SUCCESS' };
				expect(await postForm(direct(), forged)).toEqual({ status: 422, receipt: 'rejected' });
				// The relay holds the genuine postback of this TrsId and status under another signed pair:
				// it asks the service, whose record does not agree with the forged call.
				expect((await postForm(relayPayment(), forged)).status).toBe(403);
			}
			for (const borrowed of [cheap.payment.id, twin.payment.id]) {
				const events = await settledRelayEvents(borrowed, 'SUCCESS');
				// Only the genuine postback is stored and delivered; the forged call never was.
				expect(
					events.map((e) => e.event.fields.InvId),
					`the relay's events of TrsId ${borrowed}`,
				).not.toContain(victimOrder);
				expect(events).toHaveLength(1);
			}
			expect(paidCalls(victimOrder)).toHaveLength(0);
			expect(paidCalls(`e2e-sec-cheap-${stamp}`)).toHaveLength(1);
			expect(paidCalls(`e2e-sec-twin-${stamp}`)).toHaveLength(1);
			phases.mark('borrowed TrsIds refused');
		});

		it('replays in another spelling of Status or TrsId start no second execution, through the relay or straight to n8n', async () => {
			const orderId = `e2e-sec-replay-${Date.now()}`;
			const paid = await payFull(await createBill('64.00', orderId));
			await waitFor(
				`the shop call for ${orderId}`,
				() => (paidCalls(orderId).length === 1 ? true : undefined),
				{ ...OUTSIDE, timeoutMs: 60_000 },
			);
			const before = (await stack.n8n.settledExecutions(EXAMPLE_IDS.paymentPaid)).length;
			const genuine = paid.postback;
			for (const variant of [
				{ Status: 'success' },
				{ Status: ' SUCCESS' },
				{ Status: 'Success ' },
				{ TrsId: ` ${String(genuine.TrsId)} ` },
			]) {
				expect((await postForm(relayPayment(), { ...genuine, ...variant })).status).toBe(200);
				expect(await postForm(direct(), { ...genuine, ...variant })).toEqual({
					status: 200,
					receipt: 'duplicate',
				});
			}
			const events = await settledRelayEvents(String(genuine.TrsId), 'SUCCESS');
			expect(events).toHaveLength(1);
			expect((await stack.n8n.settledExecutions(EXAMPLE_IDS.paymentPaid)).length).toBe(before);
			expect(paidCalls(orderId)).toHaveLength(1);
			phases.mark('re-spelled replays deduplicated');
		});

		it('a Fail redirect posted to the Success URL claims no payment', async () => {
			const orderId = `e2e-sec-redirect-${Date.now()}`;
			const failed = await payFull(await createBill('15.00', orderId), 'fail');
			const res = await fetch(`${stack.relay.url}/redirect/success`, {
				method: 'POST',
				headers: { 'content-type': 'application/x-www-form-urlencoded' },
				body: form(failed.redirect.fields),
				redirect: 'manual',
			});
			expect(res.status).toBeLessThan(400);
			const [report] = await waitFor(
				'the success-redirect workflow',
				() => {
					const calls = sink
						.on('/api/redirects/success')
						.filter((r) => (r.body as Json).InvId === orderId);
					return calls.length > 0 ? calls : undefined;
				},
				{ ...OUTSIDE, timeoutMs: 60_000 },
			);
			// The shop backend's placeholder was replaced with the suite's stand-in backend.
			expect(report.body).toMatchObject({
				event: 'success',
				verified: true,
				paymentProof: false,
				customerSentTo: `${sink.url}/thanks`,
			});
			expect(report.body).not.toHaveProperty('paid');
			expect(paidCalls(orderId)).toHaveLength(0);
			phases.mark('redirect claims nothing');
		});

		it('a marketplace payment pays its seller once: two workflows get the postback, the service drops the answer after paying, the relay replays it', async () => {
			const orderId = `mkt-e2e-${Date.now()}`;
			const sellerCalls = () =>
				sink.on('/api/payouts/seller').filter((r) => (r.body as Json).orderId === orderId);
			// The first payout request is carried out, then its answer is lost.
			await stack.control('POST', '/faults', {
				kind: 'drop_after',
				path: '/api/v1/payout/personal/create',
				count: 1,
			});
			const paid = await payFull(await createBill('500.00', orderId));
			const payoutOrderId = `seller-payment-${String(paid.payment.id)}-SUCCESS`;
			await waitFor('both seller workflows', () => (sellerCalls().length >= 2 ? true : undefined), {
				...OUTSIDE,
				timeoutMs: 60_000,
			});
			const payouts = async () =>
				(
					await stack.control<{ data: Json[] }>(
						'GET',
						`/payouts?merchantId=${stack.sandbox.merchantId}`,
					)
				).data.filter((p) => p.order_id === payoutOrderId);
			expect(await payouts()).toHaveLength(1);
			expect(
				sellerCalls()
					.map((c) => (c.body as Json).alreadyExisted)
					.sort(),
			).toEqual([false, true]);
			expect(new Set(sellerCalls().map((c) => (c.body as Json).payoutId)).size).toBe(1);

			// An operator replays the event: the triggers know it, nothing runs again.
			const [event] = await settledRelayEvents(String(paid.payment.id), 'SUCCESS');
			await relayAdmin(`/events/${event.event.id}/replay`, 'POST');
			await waitFor(
				'the replayed deliveries',
				async () => {
					const { deliveries } = await relayAdmin<{ deliveries: Json[] }>(
						`/events/${event.event.id}`,
					);
					return deliveries.length >= 2 * event.deliveries.length &&
						deliveries.every((d) => d.status === 'delivered')
						? true
						: undefined;
				},
				OUTSIDE,
			);
			await stack.n8n.settledExecutions(EXAMPLE_IDS.sellerPayout);
			expect(sellerCalls()).toHaveLength(2);
			expect(await payouts()).toHaveLength(1);
			phases.mark('seller paid once');
		});
	});
}
