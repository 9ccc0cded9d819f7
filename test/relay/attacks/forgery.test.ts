/**
 * The relay on the open internet. A forged postback or redirect (a customer's own signed pair reused, a stored payment's TrsId
 * with another order) is looked up and refused, and never reaches a workflow as the service's.
 * Each case replays an attack of the security review on both stores; cases that fixed a finding
 * say in a `Before:` comment what the relay did before.
 */
import { expect, it } from 'vitest';
import { start } from '../../../relay/src/server.ts';
import { openStore } from '../../../relay/src/store-open.ts';
import type { WebhookHarness } from '../../helpers/webhook-harness.ts';
import { startTrigger } from '../../helpers/trigger-harness.ts';
import { TOKEN, Target, baseEnv, form, md5, paymentFields, redirectFields } from '../helpers.ts';
import {
	FORM,
	MINUTE,
	sb,
	sink,
	control,
	api,
	sandboxCalls,
	metric,
	onEveryStoreKind,
	knownPayout,
} from './world.ts';
import { waitFor } from '../../../scripts/harness/wait.ts';

onEveryStoreKind(
	'forged postbacks and redirects: the look-up and the twin check',
	({ storeKind, cleanups, database, relay, post, admin, events }) => {
		// Security review, finding 1b.
		it("a payment's signature is refused on /postback/payout; a payout the service knows is stored", async () => {
			const r = await relay();
			const seen = redirectFields('order-77', { outSum: '120.00' });
			const asPayout = {
				TrsId: seen.InvId,
				Amount: seen.OutSum,
				Status: 'SUCCESS',
				SignatureValue: seen.SignatureValue,
			};
			const refused = await post(r, '/postback/payout', asPayout);
			expect(refused.statusCode).toBe(403);
			expect(await events(r)).toBe(0);

			const { genuine } = await knownPayout(`attack-payout-${storeKind}`);
			expect((await post(r, '/postback/payout', genuine)).statusCode).toBe(200);
			expect(await events(r)).toBe(1);
			// The service cannot be asked (down): 503, nothing stored, the service sends it again later.
			const offline = await relay({ PAYPALYCH_API_BASE_URL: 'http://127.0.0.1:9' });
			expect((await post(offline, '/postback/payout', genuine)).statusCode).toBe(503);
			expect(await events(offline)).toBe(0);
		});

		// Security review, finding 1c.
		it('the trigger stops asking for retries of a postback the service still does not know after 15 minutes, and the relay dead-letters it', async () => {
			const trigger: WebhookHarness = await startTrigger(
				{ event: 'payment' },
				{ apiToken: TOKEN, baseUrl: sb.url },
			);
			cleanups.push(() => trigger.close());
			const db = await database();
			const store = await openStore(db);
			cleanups.push(() => store.close());
			const r = await relay({}, { database: db, targets: [trigger.url], store });
			const body = (trsId: string) => form(paymentFields(trsId));
			const now = Date.now();
			// Received 16 minutes ago (the relay passes its receive time to the trigger), and just now.
			const old = await store.insertEvent({
				kind: 'payment',
				dedupeKey: `unknown-old-${storeKind}`,
				contentType: FORM['content-type'],
				body: body('unknown-old'),
				fields: paymentFields('unknown-old'),
				receivedAt: now - 16 * MINUTE,
				targets: [trigger.url],
			});
			expect((await post(r, '/postback/payment', paymentFields('unknown-new'))).statusCode).toBe(
				200,
			);
			const deliveries = async (status: string) =>
				(
					JSON.parse((await admin(r, `/admin/deliveries?status=${status}&limit=100`)).body) as {
						data: Array<{ eventId: string; lastStatus: number | null; attempts: number }>;
					}
				).data;
			const dead = await waitFor('the old postback to go dead', async () =>
				(await deliveries('dead')).find((d) => d.eventId === old.eventId),
			);
			expect(dead.lastStatus).toBe(422);
			// The new one is retried (503): it may still be a postback that ran ahead of the service.
			const retried = await waitFor('the new postback to be retried', async () =>
				(await deliveries('pending')).find((d) => d.lastStatus === 503),
			);
			expect(retried.eventId).not.toBe(old.eventId);
			expect(trigger.executions).toHaveLength(0);
			// Dead events are pruned with the rest after retention (kept in the console until then).
			expect(await store.prune(now, 100)).toBe(1);
			expect(await store.getEvent(old.eventId)).toBeUndefined();
		});

		// Security review, finding 8.
		it("a forged duplicate stored first never gives the workflow the attacker's custom as the service's", async () => {
			const trigger: WebhookHarness = await startTrigger(
				{ event: 'payment' },
				{ apiToken: TOKEN, baseUrl: sb.url },
			);
			cleanups.push(() => trigger.close());
			const r = await relay({}, { targets: [trigger.url] });
			const bill = await api('bill/create', {
				amount: '250.00',
				shop_id: sb.shopId,
				order_id: `attack-8-${storeKind}`,
				custom: 'crm=genuine',
			});
			const paid = await control('POST', `bills/${bill.bill_id}/pay`, { outcome: 'full' });
			const genuine = paid.postback as Record<string, string>;
			const forged = { ...genuine, custom: 'crm=attacker', Commission: '999.00' };
			expect((await post(r, '/postback/payment', forged)).statusCode).toBe(200);
			expect((await post(r, '/postback/payment', genuine)).statusCode).toBe(200);
			const item = await waitFor('the execution', async () => trigger.executions[0]?.[0][0].json);
			expect(item.confirmed).toBe(true);
			expect(item.TrsId).toBe(genuine.TrsId);
			// Nothing the signature or the service does not cover is presented as the service's.
			expect(item).not.toHaveProperty('custom');
			expect(item).not.toHaveProperty('Commission');
			expect(item).not.toHaveProperty('CommissionNumber');
			expect(item.unverified).toMatchObject({ custom: 'crm=attacker', Commission: '999.00' });
			expect(item.payment).toMatchObject({ id: genuine.TrsId });
		});

		// Security review, finding 11.
		it("a redirect's forged paid, confirmed, status and eventKey never reach the top of the trigger's item through the relay", async () => {
			// Before: the item had paid "true", confirmed "true", status "SUCCESS", eventKey... at its top.
			const trigger: WebhookHarness = await startTrigger(
				{ event: 'success' },
				{ apiToken: TOKEN, baseUrl: sb.url },
			);
			cleanups.push(() => trigger.close());
			const db = await database();
			const r = await start(
				baseEnv(
					'/unused',
					{ success: [trigger.url] },
					{ RELAY_DATABASE: db, PAYPALYCH_API_BASE_URL: sb.url, LOG_LEVEL: 'silent' },
				),
			);
			cleanups.push(() => r.close());
			const forged = {
				paid: 'true',
				confirmed: 'true',
				payment: '{"status":"SUCCESS"}',
				status: 'SUCCESS',
				orderConfirmed: 'true',
				eventKey: 'payment-genuine-SUCCESS',
			};
			const res = await post(r, '/redirect/success', {
				...redirectFields('order-forged'),
				...forged,
			});
			expect(res.statusCode).toBeLessThan(400);
			const item = await waitFor('the execution', async () => trigger.executions[0]?.[0][0].json);
			for (const name of Object.keys(forged)) expect(item, name).not.toHaveProperty(name);
			expect(item.unverified).toMatchObject(forged);
			expect(item).toMatchObject({ event: 'success', paymentProof: false, InvId: 'order-forged' });
		});

		/**
		 * A paid bill's postback, and a forger's copy of it with another order's signed pair
		 * (OutSum, InvId, SignatureValue: what a customer sees in their own redirect).
		 */
		async function forgery(order: string, otherAmount = '300.00') {
			const target = await new Target().listen();
			cleanups.push(() => target.close());
			const r = await relay({}, { targets: [target.url('/pay')] });
			const pay = async (suffix: string, amount: string) => {
				const bill = await api('bill/create', {
					amount,
					shop_id: sb.shopId,
					order_id: `attack-18-${order}-${suffix}-${storeKind}`,
				});
				const paid = await control('POST', `bills/${bill.bill_id}/pay`, { outcome: 'full' });
				return paid.postback as Record<string, string>;
			};
			const other = await pay('other', otherAmount);
			const genuine = await pay('genuine', '250.00');
			const forged = {
				...genuine,
				OutSum: other.OutSum,
				InvId: other.InvId,
				SignatureValue: other.SignatureValue,
			};
			await control('DELETE', 'calls');
			/** What the target received under the genuine TrsId: the InvIds. */
			const forwarded = () =>
				target.received
					.map((x) => Object.fromEntries(new URLSearchParams(x.body)))
					.filter((f) => f.TrsId === genuine.TrsId)
					.map((f) => f.InvId)
					.sort();
			return {
				r,
				genuine,
				forged,
				/** The events stored under the genuine TrsId: their InvIds. */
				stored: async () =>
					(
						JSON.parse(
							(await admin(r, `/admin/events?limit=100&trsId=${encodeURIComponent(genuine.TrsId)}`))
								.body,
						) as { data: Array<{ fields: Record<string, string> }> }
					).data
						.map((e) => e.fields.InvId)
						.sort(),
				forwarded,
				/** Once the genuine delivery came, and a while after: the target got only the genuine one. */
				onlyGenuineForwarded: async () => {
					await waitFor('the genuine delivery', async () =>
						forwarded().length > 0 ? true : undefined,
					);
					await settle();
					expect(forwarded()).toEqual([genuine.InvId]);
				},
				lookUps: (outcome: string) =>
					metric(r, `paypalych_relay_lookups_total{kind="payment",outcome="${outcome}"}`),
			};
		}
		const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

		// Security review, finding 18a.
		it("the genuine postback, then a forged one with its TrsId and another order's signed pair: the forged one is looked up and refused (403); only the genuine is stored and forwarded", async () => {
			// Before: the forged one was its own event (another dedupe key), stored and forwarded; only
			// the trigger refused it.
			const f = await forgery('a');
			const { r } = f;
			expect((await post(r, '/postback/payment', f.genuine)).statusCode).toBe(200);
			expect(await sandboxCalls('payment/status')).toBe(0);
			const forged = await post(r, '/postback/payment', f.forged);
			expect(forged.statusCode).toBe(403);
			expect(await sandboxCalls('payment/status')).toBe(1);
			expect(await f.lookUps('refused')).toBe(1);
			expect(
				await metric(r, 'paypalych_relay_rejected_total{kind="payment",reason="unknown_payment"}'),
			).toBe(1);
			// Sent again, it is refused from memory, without a call.
			expect((await post(r, '/postback/payment', f.forged)).statusCode).toBe(403);
			expect(await sandboxCalls('payment/status')).toBe(1);
			expect(await f.stored()).toEqual([f.genuine.InvId]);
			await f.onlyGenuineForwarded();
		});

		// Security review, finding 18e.
		it("the genuine postback, then a forged one with its TrsId and the signed pair of another order of the same amount: the payment record agrees on everything but the order, so its bill's order ID is read (bill/status) and the forged one refused (403)", async () => {
			const f = await forgery('e', '250.00');
			const { r } = f;
			expect(f.forged.OutSum).toBe(f.genuine.OutSum);
			expect((await post(r, '/postback/payment', f.genuine)).statusCode).toBe(200);
			const forged = await post(r, '/postback/payment', f.forged);
			expect(forged.statusCode, forged.body).toBe(403);
			expect(await sandboxCalls('payment/status')).toBe(1);
			expect(await sandboxCalls('bill/status')).toBe(1);
			expect(await f.stored()).toEqual([f.genuine.InvId]);
			await f.onlyGenuineForwarded();
		});

		// Security review, finding 18b.
		it('a forged postback first, then the genuine one: the forged one is stored and forwarded (the trigger refuses it), the genuine one is looked up, agrees, and is stored and forwarded', async () => {
			const f = await forgery('b');
			const { r } = f;
			expect((await post(r, '/postback/payment', f.forged)).statusCode).toBe(200);
			expect(await sandboxCalls('payment/status')).toBe(0);
			expect((await post(r, '/postback/payment', f.genuine)).statusCode).toBe(200);
			// Looked up: the service's record agrees with the genuine one.
			expect(await sandboxCalls('payment/status')).toBe(1);
			expect(await f.lookUps('known')).toBe(1);
			const both = [f.genuine.InvId, f.forged.InvId].sort();
			expect(await f.stored()).toEqual(both);
			await waitFor('both deliveries', async () => (f.forwarded().length >= 2 ? true : undefined));
			await settle();
			expect(f.forwarded()).toEqual(both);
		});

		// Security review, finding 18c.
		it("an exact duplicate of a postback (the service's retry, the amount respelled) is answered 200 as a duplicate, with no look-up, even where a forged one shares its TrsId", async () => {
			const f = await forgery('c');
			const { r } = f;
			expect((await post(r, '/postback/payment', f.forged)).statusCode).toBe(200);
			expect((await post(r, '/postback/payment', f.genuine)).statusCode).toBe(200);
			expect(await sandboxCalls('payment/status')).toBe(1);
			// The retries of both: duplicates, no call to the service, nothing more stored or sent.
			const respelled: Record<string, string> = {
				...f.genuine,
				OutSum: String(Number(f.genuine.OutSum)),
			};
			expect(respelled.OutSum).not.toBe(f.genuine.OutSum);
			respelled.SignatureValue = md5(`${respelled.OutSum}:${respelled.InvId}:${TOKEN}`);
			for (const retry of [f.genuine, f.forged, respelled, f.genuine]) {
				expect((await post(r, '/postback/payment', retry)).statusCode).toBe(200);
			}
			expect(await metric(r, 'paypalych_relay_duplicates_total{kind="payment"}')).toBe(4);
			expect(await sandboxCalls('payment/status')).toBe(1);
			expect((await f.lookUps('known')) + (await f.lookUps('refused'))).toBe(1);
			expect(await f.stored()).toHaveLength(2);
			await waitFor('both deliveries', async () => (f.forwarded().length >= 2 ? true : undefined));
			await settle();
			expect(f.forwarded()).toHaveLength(2);
		});

		// Security review, finding 18d.
		it("a payout postback with a stored payout's TrsId and status and another amount is looked up and refused (403); the genuine one is forwarded once", async () => {
			const r = await relay();
			const { id, genuine } = await knownPayout(`attack-18d-${storeKind}`);
			// The service sends a SUCCESS postback once it shows the payout as SUCCESS (before, the
			// look-up answers 503: not final yet, the service retries).
			await control('POST', `payouts/${id}/advance`, { status: 'SUCCESS' });
			// A valid signature for another amount with this id (a payment redirect whose InvId is it).
			const forged = { ...genuine, Amount: '999.00', SignatureValue: md5(`999.00:${id}:${TOKEN}`) };
			await control('DELETE', 'calls');
			expect((await post(r, '/postback/payout', genuine)).statusCode).toBe(200);
			// RELAY_PAYOUT_CHECK=service: each payout is looked up once; the forged one twice (its id is
			// the service's, its amount is not).
			expect(await sandboxCalls('payout/status')).toBe(1);
			expect((await post(r, '/postback/payout', forged)).statusCode).toBe(403);
			expect(await sandboxCalls('payout/status')).toBe(3);
			expect(
				await metric(r, 'paypalych_relay_rejected_total{kind="payout",reason="unknown_payout"}'),
			).toBe(1);
			expect(await events(r)).toBe(1);
			await waitFor('the payout delivery', async () =>
				sink.received.some((x) => x.path === '/payout' && x.body.includes(id)) ? true : undefined,
			);
			await settle();
			expect(sink.received.filter((x) => x.path === '/payout' && x.body.includes(id))).toHaveLength(
				1,
			);
		});
	},
);
