/**
 * The relay on the open internet. What one public signature can cost the relay: events stored per signed pair and per day,
 * look-ups of the service per pair and per minute, and a popular link still paid for.
 * Each case replays an attack of the security review on both stores; cases that fixed a finding
 * say in a `Before:` comment what the relay did before.
 */
import { expect, it } from 'vitest';
import { TOKEN, md5, paymentFields, redirectFields } from '../helpers.ts';
import {
	sb,
	sink,
	control,
	api,
	sandboxCalls,
	ownServer,
	metric,
	asPayout,
	onEveryStoreKind,
	knownPayout,
} from './world.ts';

onEveryStoreKind(
	'limits on postbacks, redirects and look-ups',
	({ storeKind, cleanups, relay, post, events }) => {
		// Security review, finding 1a.
		it('one customer-visible signature stores at most RELAY_PAIR_LIMIT distinct postbacks; the rest are looked up (at most 10 a minute, 403) or get 429, and nothing more is stored', async () => {
			const r = await relay({ RELAY_PAIR_LIMIT: '10' });
			// What the customer's redirect shows: OutSum, InvId and a valid signature for them.
			const seen = redirectFields('order-attacked', { outSum: '100.50' });
			const forged = (i: number, status = 'SUCCESS', outSum = seen.OutSum) => ({
				...paymentFields(`fake-${i}`, { invId: seen.InvId, outSum, status }),
			});
			// 100.5 and 100.50 are one signed pair (cents), so respelling the amount gains nothing.
			const respelled = {
				...forged(0),
				OutSum: '100.5',
				SignatureValue: md5(`100.5:${seen.InvId}:${TOKEN}`),
			};
			const calls = [
				...Array.from({ length: 60 }, (_, i) => forged(i)),
				...Array.from({ length: 20 }, (_, i) => forged(1000, `MADE-UP-${i}`)),
				{ ...respelled, TrsId: 'fake-respelled' },
			];
			await control('DELETE', 'calls');
			const answers = await Promise.all(calls.map((f) => post(r, '/postback/payment', f)));
			const codes = answers.map((a) => a.statusCode);
			expect(codes.filter((c) => c === 200)).toHaveLength(10);
			// Over the limit a payment is looked up (a popular link is not refused for it): the service
			// knows none of these (403), and at most 10 look-ups a minute per pair are made (429 with
			// Retry-After for the rest).
			expect(codes.filter((c) => c === 403 || c === 429)).toHaveLength(calls.length - 10);
			expect(codes.filter((c) => c === 429).length).toBeGreaterThan(0);
			expect(await sandboxCalls('payment/status')).toBe(10);
			const limited = answers.find((a) => a.statusCode === 429)!;
			expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
			expect(await events(r)).toBe(10);
			// The service's retry of a postback already stored is still acknowledged (a duplicate).
			const storedOne = calls[codes.indexOf(200)];
			expect((await post(r, '/postback/payment', storedOne)).statusCode).toBe(200);
			expect(await events(r)).toBe(10);
			// Another payment (another signed pair) is not affected.
			expect((await post(r, '/postback/payment', paymentFields('other-1'))).statusCode).toBe(200);
			expect(await events(r)).toBe(11);
		});

		// Security review, finding 13.
		it('look-ups caused by postbacks: a refusal is remembered, all pairs share a ceiling a minute (then 503 + Retry-After, counted), and a trickled answer ends at the deadline', async () => {
			// Before: 10 payout/status calls per signed pair per minute, no global ceiling, no memory
			// of a "not found" (about 14,400 calls a day from one public signature), and undici's idle
			// timeouts only (a trickled answer held the postback past its timeout).
			const r = await relay({ RELAY_LOOKUP_GLOBAL_LIMIT: '5' });
			await control('DELETE', 'calls');
			const replayed = asPayout(`remembered-${storeKind}`);
			for (let i = 0; i < 30; i++) {
				expect((await post(r, '/postback/payout', replayed)).statusCode).toBe(403);
			}
			// One call: the other 29 were refused from memory.
			expect(await sandboxCalls('payout/status')).toBe(1);
			// Many signatures (distinct pairs): 4 more calls fill the minute's 5, the rest get 503.
			const answers = [];
			for (let i = 0; i < 20; i++)
				answers.push(await post(r, '/postback/payout', asPayout(`many-${storeKind}-${i}`)));
			expect(answers.slice(0, 4).map((a) => a.statusCode)).toEqual([403, 403, 403, 403]);
			const throttled = answers.slice(4);
			expect(throttled.map((a) => a.statusCode)).toEqual(throttled.map(() => 503));
			const wait = Number(throttled[0].headers['retry-after']);
			expect(wait).toBeGreaterThan(0);
			expect(wait).toBeLessThanOrEqual(60);
			expect(await sandboxCalls('payout/status')).toBe(5);
			expect(await metric(r, 'paypalych_relay_lookups_throttled_total{kind="payout"}')).toBe(16);
			// A genuine payout in that minute is not refused: 503, the service sends it again later.
			const { genuine } = await knownPayout(`ceiling-${storeKind}`);
			const later = await post(r, '/postback/payout', genuine);
			expect(later.statusCode).toBe(503);
			expect(Number(later.headers['retry-after'])).toBeGreaterThan(0);
			expect(await events(r)).toBe(0);
			// A fresh minute (another instance on the same store): the same postback is stored.
			const next = await relay({ RELAY_LOOKUP_GLOBAL_LIMIT: '5' }, { database: r.database });
			expect((await post(next, '/postback/payout', genuine)).statusCode).toBe(200);
			expect(await events(next)).toBe(1);

			// A service that trickles its answer (a byte every 200 ms): the look-up ends at its
			// overall deadline (RELAY_DELIVERY_TIMEOUT_MS), 503, not when the trickle stops.
			const trickle = await ownServer(cleanups, (_req, res) => {
				res.writeHead(200, { 'content-type': 'application/json' });
				const timer = setInterval(() => res.write(' '), 200);
				res.on('close', () => clearInterval(timer));
			});
			const slow = await relay({
				PAYPALYCH_API_BASE_URL: trickle,
				RELAY_DELIVERY_TIMEOUT_MS: '1000',
				RELAY_LEASE_MS: '60000',
			});
			const started = Date.now();
			expect((await post(slow, '/postback/payout', genuine)).statusCode).toBe(503);
			expect(Date.now() - started).toBeLessThan(5_000);
		});

		// Security review, finding 14.
		it('redirects: one signed pair stores at most RELAY_REDIRECT_LIMIT_PER_PAYMENT_DAY events a day, across instances; the customer still gets the page', async () => {
			// Before: only the per-minute limit (10), so one signature minted ~14,400 events a day.
			const limits = {
				RELAY_REDIRECT_LIMIT_PER_PAYMENT_DAY: '3',
				RELAY_REDIRECT_LIMIT_PER_PAYMENT: '0',
				RELAY_REDIRECT_LIMIT_PER_CLIENT: '0',
				RELAY_REDIRECT_TARGETS: sink.url('/redirect'),
				RELAY_SUCCESS_URL: 'https://shop.example/thanks',
				RELAY_FAIL_URL: 'https://shop.example/sorry',
			};
			const r = await relay(limits);
			const seen = redirectFields(`daily-${storeKind}`, { outSum: '50.00' });
			const codes = [];
			for (let i = 0; i < 5; i++) codes.push((await post(r, '/redirect/success', seen)).statusCode);
			for (let i = 0; i < 2; i++) codes.push((await post(r, '/redirect/fail', seen)).statusCode);
			expect(codes).toEqual([303, 303, 303, 303, 303, 303, 303]);
			expect(await events(r)).toBe(3);
			expect(
				await metric(
					r,
					'paypalych_relay_rejected_total{kind="success",reason="redirect_daily_limit"}',
				),
			).toBe(2);
			// Another instance on the same store counts the same day.
			const other = await relay(limits, { database: r.database });
			expect((await post(other, '/redirect/success', seen)).statusCode).toBe(303);
			expect(await events(other)).toBe(3);
			// Another payment's redirect, and the payment postback of the same pair, are not touched.
			const another = redirectFields(`daily-other-${storeKind}`, { outSum: '50.00' });
			expect((await post(other, '/redirect/success', another)).statusCode).toBe(303);
			const sameOrder = paymentFields(`daily-pay-${storeKind}`, {
				invId: seen.InvId,
				outSum: seen.OutSum,
			});
			expect((await post(other, '/postback/payment', sameOrder)).statusCode).toBe(200);
			expect(await events(other)).toBe(5);
		});

		// Security review, finding 15.
		for (const profile of ['live', 'spec'] as const) {
			it(`a popular MULTI link (${profile} profile): 12 genuine payments in a row are all stored, 3 forged TrsIds on its pair refused (403), with bounded look-ups`, async () => {
				// Before: from the 11th payment of one signed pair in the window, 429 for the genuine ones.
				// `spec`: the document's answers only (no `commission` field; `amount` leaves out the
				// commission the payer paid). Nothing the service shows there makes OutSum with the
				// payer's commission (the postback's own Commission never counts), so the merchant
				// pays the commission on that profile.
				await control('PATCH', `merchants/${sb.merchantId}`, {
					profile,
					liveExtras: profile === 'live',
				});
				cleanups.push(async () => {
					await control('PATCH', `merchants/${sb.merchantId}`, {
						profile: 'live',
						liveExtras: true,
					});
				});
				const r = await relay({ RELAY_PAIR_LIMIT: '10' });
				const bill = await api('bill/create', {
					amount: '250.00',
					shop_id: sb.shopId,
					order_id: `link-${storeKind}-${profile}`,
					type: 'multi',
					payer_pays_commission: profile === 'live' ? '1' : '0',
				});
				const billId = String(bill.bill_id ?? bill.data?.bill_id);
				await control('DELETE', 'calls');
				const postbacks: Array<Record<string, string>> = [];
				for (let i = 0; i < 12; i++) {
					const paid = await control('POST', `bills/${billId}/pay`, {});
					postbacks.push(paid.postback as Record<string, string>);
				}
				// One pair: the same InvId and amount, distinct TrsIds.
				expect(new Set(postbacks.map((p) => `${p.InvId}:${p.OutSum}`)).size).toBe(1);
				expect(new Set(postbacks.map((p) => p.TrsId)).size).toBe(12);
				await control('DELETE', 'calls');
				const stored = [];
				for (const fields of postbacks)
					stored.push((await post(r, '/postback/payment', fields)).statusCode);
				expect(stored).toEqual(postbacks.map(() => 200));
				expect(await events(r)).toBe(12);
				// Two look-ups: the 11th and the 12th.
				expect(await sandboxCalls('payment/status')).toBe(2);
				// The service's retries of them are duplicates: acknowledged without a call.
				expect((await post(r, '/postback/payment', postbacks[11])).statusCode).toBe(200);
				expect(await sandboxCalls('payment/status')).toBe(2);
				const forged = ['a', 'b', 'c'].map((x) => ({
					...postbacks[0],
					TrsId: `forged-${x}-${storeKind}`,
				}));
				for (const fields of forged)
					expect((await post(r, '/postback/payment', fields)).statusCode).toBe(403);
				// Sent again, each forged one is refused from memory.
				for (const fields of forged)
					expect((await post(r, '/postback/payment', fields)).statusCode).toBe(403);
				expect(await sandboxCalls('payment/status')).toBe(5);
				expect(await events(r)).toBe(12);
			});
		}
	},
);
