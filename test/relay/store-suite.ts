// The behaviour every Store must have, run against each store (SQLite in both modes, PostgreSQL):
// the queue's cases here, the reads and housekeeping in store-reads-suite.ts, the results in
// store-results-suite.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreInputError } from '../../relay/src/store/input.ts';
import type { NewEvent, Store } from '../../relay/src/store/types.ts';
import { resultsContract } from './store-results-suite.ts';
import { readsContract } from './store-reads-suite.ts';
import { linksContract } from './store-links-suite.ts';
import { baselineContract } from './store-baseline-suite.ts';
import { balancesContract } from './store-balances-suite.ts';
import { markDead, markDelivered, markRetry } from './marks.ts';
import { T0, storeEvent, timing, type OpenedStore } from './store-events.ts';

export { storeEvent, type OpenedStore } from './store-events.ts';

export function storeContract(name: string, open: () => Promise<OpenedStore>): void {
	describe(`Store contract: ${name}`, () => {
		let opened: OpenedStore;
		let store: Store;

		beforeEach(async () => {
			opened = await open();
			store = opened.store;
		});
		afterEach(async () => {
			await opened?.cleanup();
		});

		it('deduplicates postbacks on their key and never redirects', async () => {
			const first = await store.insertEvent(storeEvent('S-1'));
			expect(first).toMatchObject({ duplicate: false, deliveries: 2 });
			const again = await store.insertEvent(storeEvent('S-1'));
			expect(again).toEqual({ eventId: first.eventId, duplicate: true, deliveries: 0 });
			const redirect = storeEvent('S-r', ['http://t1/x'], T0, 'success');
			const r1 = await store.insertEvent(redirect);
			const r2 = await store.insertEvent(redirect);
			expect(r1.eventId).not.toBe(r2.eventId);
			expect(await store.listDeliveries({ eventId: first.eventId, limit: 10 })).toHaveLength(2);
			expect((await store.counts()).pending).toBe(4);
		});

		it('twinCheck: stores nothing and says twins when an event of the kind holds the TrsId under another key; a duplicate is still a duplicate', async () => {
			const first = await store.insertEvent(storeEvent('S-twin'));
			expect(first).toMatchObject({ duplicate: false, deliveries: 2 });
			// The same TrsId under another key (another status or signed pair): a twin.
			const other = { ...storeEvent('S-twin'), dedupeKey: 'payment:S-twin:SUCCESS:other-pair' };
			expect(await store.insertEvent({ ...other, twinCheck: 'S-twin' })).toEqual({
				eventId: '',
				duplicate: false,
				deliveries: 0,
				twins: true,
			});
			expect(await store.listEvents({ trsId: 'S-twin', limit: 10 })).toHaveLength(1);
			// Many at once (PostgreSQL's group commit): each one is told the same.
			const many = await Promise.all(
				Array.from({ length: 5 }, (_, i) =>
					store.insertEvent({
						...other,
						dedupeKey: `${other.dedupeKey}-${i}`,
						twinCheck: 'S-twin',
					}),
				),
			);
			expect(many.every((r) => r.twins === true && r.eventId === '')).toBe(true);
			// Its own key: a duplicate, not a twin.
			expect(await store.insertEvent({ ...storeEvent('S-twin'), twinCheck: 'S-twin' })).toEqual({
				eventId: first.eventId,
				duplicate: true,
				deliveries: 0,
			});
			// Another kind, or no event with the TrsId: stored as usual.
			const payout = storeEvent('S-twin', ['http://t1/x'], Date.now(), 'payout');
			expect(await store.insertEvent({ ...payout, twinCheck: 'S-twin' })).toMatchObject({
				duplicate: false,
				deliveries: 1,
			});
			expect(
				await store.insertEvent({ ...storeEvent('S-single'), twinCheck: 'S-single' }),
			).toMatchObject({ duplicate: false, deliveries: 2 });
			// Without the check, the other key is stored.
			expect(await store.insertEvent(other)).toMatchObject({ duplicate: false, deliveries: 2 });
			expect(await store.listEvents({ trsId: 'S-twin', limit: 10 })).toHaveLength(3);
		});

		it('fails a bad call alone when calls run together', async () => {
			const bad = { ...storeEvent('S-bad'), contentType: null as unknown as string };
			const results = await Promise.allSettled([
				store.insertEvent(storeEvent('S-good-1')),
				store.insertEvent(bad),
				store.insertEvent(storeEvent('S-good-2')),
			]);
			expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
			expect(await store.listEvents({ trsId: 'S-bad', limit: 10 })).toEqual([]);
		});

		it('takes many calls at once: duplicates among them share one event, and a bad one fails alone', async () => {
			// The bad call early (alone in its statement) and late (inside a batch, PostgreSQL's group commit).
			for (const [round, bad] of [
				[1, 2],
				[2, 30],
			] as const) {
				const calls = Array.from({ length: 40 }, (_, i) =>
					i === bad
						? { ...storeEvent(`S-many-bad-${round}`), contentType: null as unknown as string }
						: storeEvent(`S-many-${round}-${i % 13}`, ['http://a/', 'http://b/'], T0 + i),
				);
				const results = await Promise.allSettled(calls.map((e) => store.insertEvent(e)));
				expect(results[bad].status).toBe('rejected');
				// Calls made at the same moment have no order: per key, exactly one is the event and the
				// others are its duplicates.
				const byKey = new Map<
					string,
					Array<{ eventId: string; duplicate: boolean; deliveries: number }>
				>();
				calls.forEach((e, i) => {
					if (i === bad) return;
					expect(results[i].status).toBe('fulfilled');
					const r = (
						results[i] as PromiseFulfilledResult<{
							eventId: string;
							duplicate: boolean;
							deliveries: number;
						}>
					).value;
					byKey.set(e.dedupeKey!, [...(byKey.get(e.dedupeKey!) ?? []), r]);
				});
				let fresh = 0;
				for (const [key, list] of byKey) {
					const [event, ...more] = list.filter((r) => !r.duplicate);
					expect(more).toEqual([]);
					expect(event.deliveries).toBe(2);
					for (const r of list.filter((x) => x.duplicate))
						expect(r).toEqual({ eventId: event.eventId, duplicate: true, deliveries: 0 });
					expect((await store.getEvent(event.eventId))?.dedupeKey).toBe(key);
					fresh += 1;
				}
				expect(fresh).toBe(13);
				expect(await store.listEvents({ trsId: `S-many-bad-${round}`, limit: 5 })).toEqual([]);
			}
			expect((await store.counts()).pending).toBe(2 * 13 * 2);
		});

		it('hands off: stores the deliveries of an event leased to the forwarder that asked, as a claim would return them', async () => {
			const lease = { owner: 'owner-h', until: T0 + 5_000 };
			const stored = await store.insertEvent({
				...storeEvent('S-hand-1', ['http://t1/x', 'http://t2/x'], T0),
				lease,
			});
			expect(stored.deliveries).toBe(2);
			expect(stored.claimed?.map((d) => d.target)).toEqual(['http://t1/x', 'http://t2/x']);
			const listed = await store.listDeliveries({ eventId: stored.eventId, limit: 10 });
			for (const d of stored.claimed ?? []) {
				expect(d).toMatchObject({
					eventId: stored.eventId,
					status: 'delivering',
					attempts: 1,
					leaseUntil: T0 + 5_000,
					budgetStart: T0,
					kind: 'payment',
					receivedAt: T0,
					manual: false,
				});
				expect(d.body).toContain('TrsId=S-hand-1');
				const { kind: _k, contentType: _c, body: _b, receivedAt: _r, ...row } = d;
				expect(listed.find((x) => x.id === d.id)).toEqual(row);
			}
			// A duplicate gets no delivery and no lease.
			const again = await store.insertEvent({
				...storeEvent('S-hand-1', ['http://t1/x'], T0),
				lease,
			});
			expect(again).toEqual({ eventId: stored.eventId, duplicate: true, deliveries: 0 });
			// No other claim takes them while the lease holds; when it expires (the forwarder died), any does.
			expect(await store.claimDue(T0 + 4_999, 10, 5_000, 'owner-x')).toEqual([]);
			const reclaimed = await store.claimDue(T0 + 5_000, 10, 5_000, 'owner-x');
			expect(reclaimed.map((d) => [d.id, d.attempts])).toEqual(
				(stored.claimed ?? []).map((d) => [d.id, 2]),
			);
			// The hand-off owner's late retry is ignored; its success is recorded (the target has the event).
			const [first, second] = stored.claimed ?? [];
			await markRetry(store, first.id, 'owner-h', T0 + 6_000, 500, 'x', timing(1, T0, 5));
			expect(await store.listAttempts([first.id])).toEqual([]);
			await markDelivered(store, second.id, T0 + 5_100, 200, timing(1, T0, 5));
			expect((await store.getDelivery(second.id))?.status).toBe('delivered');
		});

		it('leases claimed deliveries, honours ownership, releases and requeues', async () => {
			for (let i = 0; i < 5; i++)
				await store.insertEvent(storeEvent(`S-lease-${i}`, ['http://t1/x', 'http://t2/x'], T0 + i));
			const now = T0 + 1_000;
			const all = await store.claimDue(now, 1000, 5_000, 'owner-a');
			expect(all).toHaveLength(10);
			expect(all[0]).toMatchObject({
				status: 'delivering',
				attempts: 1,
				kind: 'payment',
				receivedAt: T0,
			});
			expect(all[0].body).toContain('TrsId=S-lease-0');
			// Nothing more is due until the leases expire; then they are claimed again.
			expect(await store.claimDue(now + 4_999, 10, 5_000, 'owner-b')).toHaveLength(0);
			const [reclaimed, ...none] = await store.claimDue(now + 5_000, 1, 5_000, 'owner-b');
			expect(none).toEqual([]);
			expect(reclaimed.attempts).toBe(2);
			// The old owner's retry is ignored and records no attempt: owner-b holds the lease now.
			await markRetry(store, reclaimed.id, 'owner-a', now, 500, 'x', timing(1, now, 5));
			const still = (await store.listDeliveries({ eventId: reclaimed.eventId, limit: 10 })).find(
				(x) => x.id === reclaimed.id,
			);
			expect(still).toMatchObject({ status: 'delivering' });
			expect(await store.listAttempts([reclaimed.id])).toEqual([]);
			await store.releaseLease(reclaimed.id, 'owner-b', now);
			const released = (await store.listDeliveries({ eventId: reclaimed.eventId, limit: 10 })).find(
				(x) => x.id === reclaimed.id,
			)!;
			expect(released).toMatchObject({ status: 'pending', attempts: 1, leaseUntil: null });

			const [toKill, toDeliver] = all.filter((d) => d.id !== reclaimed.id);
			await markDead(store, toKill.id, 'owner-a', 410, 'HTTP 410', timing(1, now, 3));
			await markDelivered(store, toDeliver.id, now, 200, timing(1, now, 4));
			// The released delivery had one attempt: it counts as retrying.
			expect(await store.counts()).toEqual({
				pending: 0,
				retrying: 1,
				delivering: 7,
				delivered: 1,
				dead: 1,
			});
			expect(await store.requeueDead(undefined, now)).toBe(1);
			expect(await store.requeueDead([toKill.id], now)).toBe(0);
			const requeued = (await store.listDeliveries({ status: 'pending', limit: 10 }))
				.map((d) => d.id)
				.sort((x, y) => x - y);
			expect(requeued).toEqual([toKill.id, reclaimed.id].sort((x, y) => x - y));
		});

		it("keeps every attempt with its timing, status, error, outcome, origin, the target's answer and the trigger's receipt", async () => {
			const e = await store.insertEvent(storeEvent('S-att', ['http://t1/x'], T0));
			const [c1] = await store.claimDue(T0 + 10, 10, 60_000, 'w');
			expect(c1).toMatchObject({ manual: false, attemptBase: 0 });
			await markRetry(store, c1.id, 'w', T0 + 100, 503, 'HTTP 503', {
				...timing(1, T0 + 10, 25),
				response: 'busy',
				receipt: 'retry',
			});
			const [c2] = await store.claimDue(T0 + 100, 10, 60_000, 'w');
			expect(c2.attempts).toBe(2);
			const long = `${'x'.repeat(1023)}é and more`;
			await markDead(store, c2.id, 'w', 422, 'HTTP 422', {
				...timing(2, T0 + 100, 1),
				response: long,
				receipt: 'rejected',
			});
			const [dead] = await store.listDeliveries({ status: 'dead', eventId: e.eventId, limit: 1 });
			// At most 1 KiB, never a character cut in two.
			expect(dead).toMatchObject({
				lastError: 'HTTP 422',
				lastResponse: 'x'.repeat(1023),
				lastReceipt: 'rejected',
			});
			await store.requeueDead([c2.id], T0 + 200);
			const [requeued] = await store.listDeliveries({ eventId: e.eventId, limit: 1 });
			expect(requeued).toMatchObject({
				status: 'pending',
				attempts: 2,
				attemptBase: 2,
				manual: true,
				lastError: null,
				lastResponse: null,
			});
			// A requeued delivery is pending, not retrying: its new budget has no attempt yet.
			expect(await store.counts()).toMatchObject({ pending: 1, retrying: 0 });
			const [c3] = await store.claimDue(T0 + 200, 10, 60_000, 'w');
			expect(c3).toMatchObject({ attempts: 3, attemptBase: 2, manual: true });
			// A lease given back does not go below the requeue's base.
			await store.releaseLease(c3.id, 'w', T0 + 200);
			const [c3again] = await store.claimDue(T0 + 200, 10, 60_000, 'w');
			expect(c3again).toMatchObject({ attempts: 3, manual: true });
			await markDelivered(store, c3.id, T0 + 240, 200, {
				...timing(3, T0 + 200, 40),
				origin: 'manual',
				response: 'ok',
				receipt: 'duplicate',
			});
			const attempts = await store.listAttempts([c1.id, 987_654]);
			expect(attempts.map(({ id: _id, ...a }) => a)).toEqual([
				{
					deliveryId: c1.id,
					attempt: 1,
					startedAt: T0 + 10,
					durationMs: 25,
					httpStatus: 503,
					error: 'HTTP 503',
					outcome: 'retry',
					origin: 'scheduled',
					response: 'busy',
					receipt: 'retry',
				},
				{
					deliveryId: c1.id,
					attempt: 2,
					startedAt: T0 + 100,
					durationMs: 1,
					httpStatus: 422,
					error: 'HTTP 422',
					outcome: 'dead',
					origin: 'scheduled',
					response: 'x'.repeat(1023),
					receipt: 'rejected',
				},
				{
					deliveryId: c1.id,
					attempt: 3,
					startedAt: T0 + 200,
					durationMs: 40,
					httpStatus: 200,
					error: null,
					outcome: 'delivered',
					origin: 'manual',
					response: 'ok',
					receipt: 'duplicate',
				},
			]);
			expect(await store.listAttempts([])).toEqual([]);
			const [d] = await store.listDeliveries({ eventId: e.eventId, limit: 1 });
			expect(d).toMatchObject({
				status: 'delivered',
				deliveredAt: T0 + 240,
				lastStatus: 200,
				lastReceipt: 'duplicate',
				lastError: null,
				lastResponse: null,
				manual: false,
			});
		});
		it('refuses input it cannot store before any SQL, with a StoreInputError, and changes nothing', async () => {
			const kept = await store.insertEvent(storeEvent('S-input-ok', ['http://a/'], T0));
			const before = await store.counts();
			const refused = async (call: () => Promise<unknown>) => {
				const error = await call().then(
					() => undefined,
					(e: unknown) => e,
				);
				expect(error).toBeInstanceOf(StoreInputError);
			};
			const nul = 'x\u0000y';
			const huge = 1e20;
			const e = storeEvent('S-input-nul', ['http://a/'], T0);
			await refused(() => store.insertEvent({ ...e, fields: { ...e.fields, InvId: nul } }));
			await refused(() => store.insertEvent({ ...e, body: `TrsId=${nul}` }));
			await refused(() => store.insertEvent({ ...e, dedupeKey: nul }));
			await refused(() => store.insertEvent({ ...e, fields: { ...e.fields, custom: '\ud800' } }));
			await refused(() =>
				store.insertEvent({ ...e, fields: { ...e.fields, custom: 'y'.repeat(20_000) } }),
			);
			await refused(() => store.insertEvent({ ...e, receivedAt: huge }));
			await refused(() => store.listEvents({ trsId: nul, limit: 10 }));
			await refused(() => store.listEvents({ invId: nul, limit: 10 }));
			await refused(() => store.listEvents({ to: huge, limit: 10 }));
			await refused(() => store.listEvents({ before: -1, limit: 10 }));
			await refused(() => store.getEvent(nul));
			await refused(() => store.listDeliveries({ target: nul, limit: 10 }));
			await refused(() => store.listDeliveries({ eventId: nul, limit: 10 }));
			await refused(() => store.listDeliveries({ beforeId: huge, limit: 10 }));
			await refused(() => store.requeueDead([huge], T0));
			await refused(() => store.requeueDead([1.5], T0));
			await refused(() => store.listAttempts([huge]));
			await refused(() => store.eventIdsInRange(0, huge));
			await refused(() => store.replayEvents([nul], { payment: ['http://a/'] }, T0));
			await refused(() => store.activity(0, huge, 1_000));
			await refused(() => store.targetHealth(huge));
			await refused(() => store.prune(huge, 10));
			await refused(() => store.insertEvent({ ...e, pairLimit: { max: 0, since: T0 } }));
			await refused(() => store.insertEvent({ ...e, pairLimit: { max: 2, since: huge } }));
			await refused(() => store.revokeSession(nul, T0, T0));
			await refused(() => store.sessionRevoked(nul));
			expect(await store.counts()).toEqual(before);
			expect(await store.listEvents({ limit: 100 })).toHaveLength(1);
			expect((await store.getEvent(kept.eventId))?.fields.TrsId).toBe('S-input-ok');
		});

		it('refuses an event whose signed pair is full, counting amounts in cents, never a duplicate', async () => {
			const limit = { max: 2, since: T0 - 1 };
			const pair = (trsId: string, outSum: string, invId: string, at: number): NewEvent => ({
				...storeEvent(trsId, ['http://a/'], at),
				fields: { TrsId: trsId, Status: 'SUCCESS', InvId: invId, OutSum: outSum },
				pairLimit: limit,
			});
			// Outside the window, another pair, another kind with the same id: none of them count.
			await store.insertEvent(pair('S-pair-old', '100.50', 'inv-pair', T0 - 10_000));
			await store.insertEvent(pair('S-pair-3', '100.50', 'inv-other', T0 + 2));
			const payout = storeEvent('inv-pair', ['http://a/'], T0, 'payout');
			await store.insertEvent({ ...payout, fields: { TrsId: 'inv-pair', Amount: '100.50' } });
			const first = await store.insertEvent(pair('S-pair-1', '100.5', 'inv-pair', T0));
			const second = await store.insertEvent(pair('S-pair-2', '100.50', 'inv-pair', T0 + 1));
			expect([first.limited, second.limited]).toEqual([undefined, undefined]);
			expect([first.duplicate, second.duplicate]).toEqual([false, false]);
			const before = await store.counts();
			// 100.500 is the same amount in cents: the third event of the pair is refused, nothing stored.
			const third = await store.insertEvent(pair('S-pair-4', '100.500', 'inv-pair', T0 + 3));
			expect(third).toEqual({ eventId: '', duplicate: false, deliveries: 0, limited: true });
			expect(await store.counts()).toEqual(before);
			expect(await store.listEvents({ trsId: 'S-pair-4', limit: 10 })).toEqual([]);
			// The service's retry of a stored event is acknowledged as its duplicate, full pair or not.
			const retry = await store.insertEvent(pair('S-pair-2', '100.50', 'inv-pair', T0 + 4));
			expect(retry).toEqual({ eventId: second.eventId, duplicate: true, deliveries: 0 });
			// Another amount is another pair; without a limit nothing is counted.
			expect(
				(await store.insertEvent(pair('S-pair-5', '100.51', 'inv-pair', T0 + 5))).limited,
			).toBe(undefined);
			const free = { ...pair('S-pair-6', '100.50', 'inv-pair', T0 + 6), pairLimit: undefined };
			expect((await store.insertEvent(free)).duplicate).toBe(false);
			// The window moves on: with `since` after the two first events, the pair has room again.
			const later = await store.insertEvent({
				...pair('S-pair-7', '100.50', 'inv-pair', T0 + 7),
				pairLimit: { max: 2, since: T0 + 6 },
			});
			expect(later.limited).toBe(undefined);
			expect(
				(
					await store.insertEvent({
						...pair('S-pair-8', '100.50', 'inv-pair', T0 + 8),
						pairLimit: { max: 2, since: T0 + 6 },
					})
				).limited,
			).toBe(true);
		});

		resultsContract(() => store);
		readsContract(() => store);
		linksContract(() => store);
		baselineContract(() => store);
		balancesContract(() => store);
	});
}
