import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uuidV7 } from '../../relay/src/store/sqlite-engine.ts';
import { SqliteStore } from '../../relay/src/store/sqlite.ts';
import type { NewEvent } from '../../relay/src/store/types.ts';
import { tempDir } from './helpers.ts';

const event = (trsId: string, targets = ['http://t1/x', 'http://t2/x'], receivedAt = Date.now()): NewEvent => ({
	kind: 'payment',
	dedupeKey: `payment:${trsId}:SUCCESS`,
	contentType: 'application/x-www-form-urlencoded',
	body: `TrsId=${trsId}&Status=SUCCESS`,
	fields: { TrsId: trsId, Status: 'SUCCESS' },
	receivedAt,
	targets,
});

for (const mode of ['thread', 'inline'] as const) {
	describe(`SqliteStore (${mode})`, () => {
		const tmp = tempDir();
		const path = join(tmp.dir, 'nested', 'store.sqlite');
		let store: SqliteStore;

		beforeAll(async () => {
			store = await SqliteStore.open(path, { mode });
		});
		afterAll(async () => {
			await store?.close();
			tmp.cleanup();
		});

		it('creates the file in WAL mode and deduplicates on the key', async () => {
			const first = await store.insertEvent(event('S-1'));
			expect(first).toMatchObject({ duplicate: false, deliveries: 2 });
			const again = await store.insertEvent(event('S-1'));
			expect(again).toEqual({ eventId: first.eventId, duplicate: true, deliveries: 0 });
			const redirect = { ...event('S-r'), kind: 'success' as const, dedupeKey: null };
			const r1 = await store.insertEvent(redirect);
			const r2 = await store.insertEvent(redirect);
			expect(r1.eventId).not.toBe(r2.eventId);
			const probe = new DatabaseSync(path, { readOnly: true });
			expect((probe.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe('wal');
			expect(probe.prepare('SELECT COUNT(*) AS n FROM deliveries WHERE event_id = ?').get(first.eventId)).toEqual({ n: 2 });
			probe.close();
		});

		it('commits concurrent calls together, durably', async () => {
			const before = await store.stats();
			const results = await Promise.all(Array.from({ length: 40 }, (_, i) => store.insertEvent(event(`S-batch-${i}`))));
			expect(results.every((r) => !r.duplicate)).toBe(true);
			const after = await store.stats();
			expect(after.calls - before.calls).toBe(41); // the 40 inserts and the first stats() call
			expect(after.commits - before.commits).toBeLessThanOrEqual(2);
			expect(after.syncedCommits - before.syncedCommits).toBe(1); // the inserts' commit is fsynced; the stats() one was not
		});

		it('fails a bad call alone when it shares a batch', async () => {
			const bad = { ...event('S-bad'), contentType: null as unknown as string };
			const results = await Promise.allSettled([store.insertEvent(event('S-good-1')), store.insertEvent(bad), store.insertEvent(event('S-good-2'))]);
			expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
		});

		it('leases claimed deliveries, honours ownership, releases and requeues', async () => {
			const now = Date.now() + 1_000;
			const all = await store.claimDue(now, 1000, 5_000, 'owner-a');
			// two targets each: S-1, two redirects, 40 batched, two good ones
			expect(all.length).toBe(2 * (1 + 2 + 40 + 2));
			const d = all[0];
			expect(d).toMatchObject({ status: 'delivering', attempts: 1, kind: 'payment' });
			expect(d.body).toContain('TrsId=');
			// Nothing more is due until the leases expire; then they are claimed again.
			expect(await store.claimDue(now + 4_999, 10, 5_000, 'owner-b')).toHaveLength(0);
			const reclaimed = await store.claimDue(now + 5_000, 1, 5_000, 'owner-b');
			expect(reclaimed).toHaveLength(1);
			expect(reclaimed[0].attempts).toBe(2);
			// The old owner's retry is ignored: owner-b holds the lease now.
			await store.markRetry(reclaimed[0].id, 'owner-a', now, 500, 'x');
			const [row] = await store.listDeliveries({ eventId: reclaimed[0].eventId, status: 'delivering', limit: 10 });
			expect(row).toBeDefined();
			await store.releaseLease(reclaimed[0].id, 'owner-b', now);
			const released = (await store.listDeliveries({ eventId: reclaimed[0].eventId, limit: 10 })).find((x) => x.id === reclaimed[0].id)!;
			expect(released).toMatchObject({ status: 'pending', attempts: 1, leaseUntil: null });

			await store.markDead(all[1].id, 'owner-a', 410, 'HTTP 410');
			await store.markDelivered(all[2].id, now, 200);
			const counts = await store.counts();
			expect(counts.dead).toBe(1);
			expect(counts.delivered).toBe(1);
			expect(await store.requeueDead(undefined, now)).toBe(1);
			expect((await store.counts()).dead).toBe(0);
		});

		it('replays events to the given targets and lists by time', async () => {
			const t = Date.now() + 60_000;
			const e = await store.insertEvent(event('S-replay', ['http://t1/x'], t));
			expect(await store.eventIdsInRange(t, t + 1)).toEqual([e.eventId]);
			expect(await store.replayEvents([e.eventId, 'missing'], { payment: ['http://a/1', 'http://b/2'] }, t)).toBe(2);
			expect(await store.listDeliveries({ eventId: e.eventId, limit: 10 })).toHaveLength(3);
			const listed = await store.listEvents({ from: t, limit: 5 });
			expect(listed.map((x) => x.id)).toEqual([e.eventId]);
			expect(listed[0].fields).toEqual({ TrsId: 'S-replay', Status: 'SUCCESS' });
		});
	});
}

describe('event ids', () => {
	it('are version-7 UUIDs ordered by time', () => {
		const a = uuidV7(1_700_000_000_000);
		const b = uuidV7(1_700_000_000_001);
		expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
		expect(a < b).toBe(true);
	});
});
