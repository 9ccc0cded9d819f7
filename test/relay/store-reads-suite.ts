// The store contract's reads and housekeeping (run inside storeContract, on every store):
// deliveries and events by id, cursor and search, activity counts, replay, pruning, logouts.
import { beforeEach, expect, it } from 'vitest';
import { StoreInputError } from '../../relay/src/store/input.ts';
import type { Store } from '../../relay/src/store/types.ts';
import { markDead, markDelivered, markRetry } from './marks.ts';
import { T0, storeEvent, timing } from './store-events.ts';

export function readsContract(get: () => Store): void {
	let store: Store;
	beforeEach(() => {
		store = get();
	});

	it('reads: a delivery by id, deliveries of many events, dead ones by target, events by a (receivedAt, id) cursor', async () => {
		const t = T0 + 500_000;
		// Five events in two milliseconds: pages must neither skip nor repeat the ties.
		const ids: string[] = [];
		for (let i = 0; i < 5; i++) {
			const r = await store.insertEvent(
				storeEvent(`S-read-${i}`, ['http://ra/', 'http://rb/'], t + (i < 3 ? 0 : 1)),
			);
			ids.push(r.eventId);
		}
		const seen: string[] = [];
		let cursor: { receivedAt: number; id: string } | undefined;
		for (let pages = 0; pages < 10; pages++) {
			const page = await store.listEvents({ from: t, limit: 2, cursor });
			seen.push(...page.map((e) => e.id));
			if (page.length < 2) break;
			cursor = { receivedAt: page[1].receivedAt, id: page[1].id };
		}
		const newestFirst = [...ids].sort((a, b) => (a < b ? 1 : -1));
		expect(seen).toEqual(newestFirst);

		const of = await store.deliveriesOfEvents([ids[0], ids[4], 'missing']);
		expect(of).toHaveLength(4);
		expect(new Set(of.map((d) => d.eventId))).toEqual(new Set([ids[0], ids[4]]));
		expect(await store.deliveriesOfEvents([])).toEqual([]);

		const [one] = await store.listDeliveries({ eventId: ids[2], limit: 1 });
		expect(await store.getDelivery(one.id)).toEqual(one);
		expect(await store.getDelivery(987_654_321)).toBeUndefined();

		const claimed = await store.claimDue(t + 1, 100, 60_000, 'w');
		for (const c of claimed.filter((c) => c.target === 'http://rb/' && c.eventId !== ids[4]))
			await markDead(store, c.id, 'w', 410, 'HTTP 410', timing(1, t, 1));
		const deadB = await store.deadDeliveries('http://rb/');
		expect(deadB).toHaveLength(4);
		expect(deadB.every((d) => d.status === 'dead' && d.target === 'http://rb/')).toBe(true);
		expect(deadB.map((d) => d.id)).toEqual([...deadB.map((d) => d.id)].sort((a, b) => b - a));
		expect(await store.deadDeliveries('http://ra/')).toEqual([]);
		expect((await store.deadDeliveries()).length).toBeGreaterThanOrEqual(4);
		await expect(store.getDelivery(1.5)).rejects.toThrow(StoreInputError);
	});

	it('replays events to the given targets and lists by time', async () => {
		const t = T0 + 60_000;
		const e = await store.insertEvent(storeEvent('S-replay', ['http://t1/x'], t));
		await store.insertEvent(storeEvent('S-before', ['http://t1/x'], t - 1));
		expect(await store.eventIdsInRange(t, t + 1)).toEqual([e.eventId]);
		expect(await store.eventIdsInRange(t, t + 1, 'payout')).toEqual([]);
		expect(
			await store.replayEvents(
				[e.eventId, 'missing'],
				{ payment: ['http://a/1', 'http://b/2'] },
				t,
			),
		).toBe(2);
		const all = await store.listDeliveries({ eventId: e.eventId, limit: 10 });
		expect(all).toHaveLength(3);
		// A replay's deliveries are an operator's: their first attempt is a manual one.
		expect(all.map((d) => d.manual).sort()).toEqual([false, true, true]);
		const listed = await store.listEvents({ from: t, limit: 5 });
		expect(listed.map((x) => x.id)).toEqual([e.eventId]);
		expect(listed[0]).toMatchObject({
			kind: 'payment',
			receivedAt: t,
			dedupeKey: 'payment:S-replay:SUCCESS',
		});
		expect(listed[0].fields).toEqual({
			TrsId: 'S-replay',
			Status: 'SUCCESS',
			InvId: 'inv-S-replay',
		});
		expect((await store.listEvents({ before: t, limit: 5 })).map((x) => x.fields.TrsId)).toEqual([
			'S-before',
		]);
		expect(await store.getEvent(e.eventId)).toEqual(listed[0]);
		expect(await store.getEvent('missing')).toBeUndefined();
	});

	it('finds events by TrsId, InvId and delivery status', async () => {
		const a = await store.insertEvent(storeEvent('S-find-a', ['http://t1/x'], T0));
		const b = await store.insertEvent(
			storeEvent('S-find-b', ['http://t1/x', 'http://t2/x'], T0 + 1),
		);
		await store.insertEvent(storeEvent('S-find-b2', ['http://t1/x'], T0 + 2, 'payout'));
		expect((await store.listEvents({ trsId: 'S-find-b', limit: 10 })).map((x) => x.id)).toEqual([
			b.eventId,
		]);
		expect(await store.listEvents({ trsId: 'S-find', limit: 10 })).toEqual([]);
		expect((await store.listEvents({ invId: 'inv-S-find-a', limit: 10 })).map((x) => x.id)).toEqual(
			[a.eventId],
		);
		expect(
			(await store.listEvents({ trsId: 'S-find-b2', kind: 'payment', limit: 10 })).map((x) => x.id),
		).toEqual([]);
		const claimed = await store.claimDue(T0 + 1, 10, 60_000, 'w');
		const bToT2 = claimed.find((d) => d.eventId === b.eventId && d.target === 'http://t2/x')!;
		await markDead(store, bToT2.id, 'w', 400, 'HTTP 400', timing(1, T0 + 1, 2));
		expect((await store.listEvents({ status: 'dead', limit: 10 })).map((x) => x.id)).toEqual([
			b.eventId,
		]);
		expect(
			(await store.listEvents({ status: 'delivering', limit: 10 })).map((x) => x.id).sort(),
		).toEqual([a.eventId, b.eventId].sort());
		expect(
			(await store.listEvents({ status: 'pending', limit: 10 })).map((x) => x.fields.TrsId),
		).toEqual(['S-find-b2']);
		expect(await store.listEvents({ status: 'delivered', limit: 10 })).toEqual([]);
	});

	it('counts activity per bucket and kind, target health and the oldest undelivered event', async () => {
		expect(await store.oldestUndelivered()).toBeNull();
		await store.insertEvent(storeEvent('S-act-out-early', [], T0 - 1));
		const e1 = await store.insertEvent(storeEvent('S-act-1', ['http://a/'], T0 + 100));
		const e2 = await store.insertEvent(
			storeEvent('S-act-2', ['http://a/', 'http://b/'], T0 + 1_500),
		);
		const claim1 = await store.claimDue(T0 + 1_600, 10, 60_000, 'w');
		expect(claim1).toHaveLength(3);
		const find = (list: typeof claim1, eventId: string, target: string) =>
			list.find((d) => d.eventId === eventId && d.target === target)!;
		await markDelivered(
			store,
			find(claim1, e1.eventId, 'http://a/').id,
			T0 + 1_700,
			200,
			timing(1, T0 + 1_650, 50),
		);
		await markRetry(
			store,
			find(claim1, e2.eventId, 'http://a/').id,
			'w',
			T0 + 2_200,
			503,
			'HTTP 503',
			timing(1, T0 + 1_650, 20),
		);
		await markDead(
			store,
			find(claim1, e2.eventId, 'http://b/').id,
			'w',
			410,
			'HTTP 410',
			timing(1, T0 + 1_660, 5),
		);
		const e3 = await store.insertEvent(storeEvent('S-act-3', ['http://a/'], T0 + 2_500, 'payout'));
		await store.insertEvent(storeEvent('S-act-out-late', ['http://a/'], T0 + 3_000));
		const claim2 = await store.claimDue(T0 + 2_600, 10, 60_000, 'w');
		expect(claim2).toHaveLength(2);
		await markDead(
			store,
			find(claim2, e2.eventId, 'http://a/').id,
			'w',
			504,
			'HTTP 504',
			timing(2, T0 + 2_600, 10),
		);
		await markDelivered(
			store,
			find(claim2, e3.eventId, 'http://a/').id,
			T0 + 2_650,
			200,
			timing(1, T0 + 2_600, 30),
		);

		const activity = await store.activity(T0, T0 + 3_000, 1_000);
		const kinds = ['payment', 'payout', 'success', 'fail', 'refund', 'chargeback'];
		expect(activity).toHaveLength(3 * kinds.length);
		for (let i = 0; i < 3; i++) {
			for (const kind of kinds)
				expect(activity.filter((b) => b.start === T0 + i * 1_000 && b.kind === kind)).toHaveLength(
					1,
				);
		}
		const nonZero = activity.filter(
			(b) => b.received + b.delivered + b.failedAttempts + b.died > 0,
		);
		expect(nonZero).toEqual([
			{ start: T0, kind: 'payment', received: 1, delivered: 0, failedAttempts: 0, died: 0 },
			{
				start: T0 + 1_000,
				kind: 'payment',
				received: 1,
				delivered: 1,
				failedAttempts: 2,
				died: 1,
			},
			{
				start: T0 + 2_000,
				kind: 'payment',
				received: 0,
				delivered: 0,
				failedAttempts: 1,
				died: 1,
			},
			{
				start: T0 + 2_000,
				kind: 'payout',
				received: 1,
				delivered: 1,
				failedAttempts: 0,
				died: 0,
			},
		]);
		// A last, partial bucket is counted up to `to`.
		const partial = await store.activity(T0 + 1_000, T0 + 2_550, 1_000);
		expect(partial.filter((b) => b.kind === 'payout').map((b) => b.received)).toEqual([0, 1]);

		const health = await store.targetHealth(T0 + 2_000);
		expect(health).toEqual([
			{
				target: 'http://a/',
				attempts: 2,
				succeeded: 1,
				pending: 1,
				delivering: 0,
				dead: 1,
				lastError: 'HTTP 504',
				lastErrorAt: T0 + 2_600,
			},
			{
				target: 'http://b/',
				attempts: 0,
				succeeded: 0,
				pending: 0,
				delivering: 0,
				dead: 1,
				lastError: 'HTTP 410',
				lastErrorAt: T0 + 1_660,
			},
		]);
		expect((await store.targetHealth(0)).map((h) => [h.target, h.attempts, h.succeeded])).toEqual([
			['http://a/', 4, 2],
			['http://b/', 1, 0],
		]);
		expect(await store.oldestUndelivered()).toBe(T0 + 1_500);
	});
	it('prunes old events whose deliveries are all delivered or dead, with their deliveries and attempts', async () => {
		const old = T0 - 10_000;
		const done = await store.insertEvent(
			storeEvent('S-prune-done', ['http://a/', 'http://b/'], old),
		);
		const none = await store.insertEvent(storeEvent('S-prune-none', [], old + 1));
		const dead = await store.insertEvent(
			storeEvent('S-prune-dead', ['http://a/', 'http://b/'], old + 2),
		);
		const pending = await store.insertEvent(storeEvent('S-prune-pending', ['http://a/'], old + 3));
		const recent = await store.insertEvent(storeEvent('S-prune-recent', ['http://a/'], T0));
		const claimed = await store.claimDue(T0, 10, 60_000, 'w');
		const deliveryIds = claimed.filter((d) => d.eventId === done.eventId).map((d) => d.id);
		const deadIds = claimed.filter((d) => d.eventId === dead.eventId).map((d) => d.id);
		for (const d of claimed) {
			if (d.eventId === pending.eventId) await store.releaseLease(d.id, 'w', T0 + 60_000);
			else if (d.eventId === dead.eventId && d.target === 'http://b/')
				await markDead(store, d.id, 'w', 410, 'HTTP 410', timing(1, T0, 1));
			else await markDelivered(store, d.id, T0, 200, timing(1, T0, 1));
		}
		expect(await store.listAttempts(deliveryIds)).toHaveLength(2);
		// Until retention ends, a dead event is kept (the console shows it, an operator may requeue).
		expect(await store.getEvent(dead.eventId)).toBeDefined();

		expect(await store.prune(T0, 1)).toBe(1);
		expect(await store.prune(T0, 100)).toBe(2);
		expect(await store.prune(T0, 100)).toBe(0);
		for (const gone of [done, none, dead])
			expect(await store.getEvent(gone.eventId)).toBeUndefined();
		expect(await store.listDeliveries({ eventId: done.eventId, limit: 10 })).toEqual([]);
		expect(await store.listDeliveries({ eventId: dead.eventId, limit: 10 })).toEqual([]);
		expect(await store.listAttempts([...deliveryIds, ...deadIds])).toEqual([]);
		for (const kept of [pending, recent]) expect(await store.getEvent(kept.eventId)).toBeDefined();
		// A kept event still stops its duplicates; a pruned one's key went with it (retention.ts says why that is safe).
		expect(
			(await store.insertEvent(storeEvent('S-prune-pending', ['http://a/'], T0 + 1))).duplicate,
		).toBe(true);
		expect(
			(await store.insertEvent(storeEvent('S-prune-done', ['http://a/'], T0 + 1))).duplicate,
		).toBe(false);
	});

	it('keeps console logouts until the session would have expired', async () => {
		expect(await store.sessionRevoked('session-a')).toBe(false);
		await store.revokeSession('session-a', T0 + 1_000, T0);
		await store.revokeSession('session-a', T0 + 1_000, T0);
		await store.revokeSession('session-b', T0 + 5_000, T0);
		expect(await store.sessionRevoked('session-a')).toBe(true);
		expect(await store.sessionRevoked('session-c')).toBe(false);
		// Expired revocations go when the next one is recorded.
		await store.revokeSession('session-c', T0 + 9_000, T0 + 2_000);
		expect(await store.sessionRevoked('session-a')).toBe(false);
		expect(await store.sessionRevoked('session-b')).toBe(true);
	});

	it('refuses a bad activity range with a clear error', async () => {
		await expect(store.activity(T0, T0, 1_000)).rejects.toThrow(/from must be before to/);
		await expect(store.activity(T0, T0 + 1_000, 0)).rejects.toThrow(/bucketMs must be positive/);
		await expect(store.activity(T0, T0 + 1_000, 0.5)).rejects.toThrow(
			/bucketMs must be an integer/,
		);
		await expect(store.activity(0, T0, 1)).rejects.toThrow(/at most 10000/);
	});
}
