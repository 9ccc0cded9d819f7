// The SQLite store's hand-off to its writer thread: the calls made while the writer commits wait
// on the calling thread and go in one message when it answers, so a burst spread over many turns
// of the loop costs one message per commit (each message wakes the writer), not one per turn.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../relay/src/store-sqlite/store.ts';
import { tempDir } from './helpers.ts';

const event = (n: number) => ({
	kind: 'payment' as const,
	dedupeKey: `payment:H-${n}:SUCCESS`,
	fields: { TrsId: `H-${n}`, InvId: `o-${n}`, OutSum: '10.00', Status: 'SUCCESS' },
	contentType: 'application/x-www-form-urlencoded',
	body: `TrsId=H-${n}`,
	receivedAt: Date.now(),
	targets: ['http://target.invalid/hook'],
});

describe('SQLite store: one message to the writer thread per commit', () => {
	const tmp = tempDir();
	afterAll(() => tmp.cleanup());

	it('a burst over 40 turns of the loop is stored whole, in as many messages as commits', async () => {
		const store = await SqliteStore.open(join(tmp.dir, 'handoff.sqlite'));
		try {
			const before = await store.stats();
			const calls: Array<Promise<unknown>> = [];
			for (let turn = 0; turn < 40; turn++) {
				for (let i = 0; i < 5; i++) calls.push(store.insertEvent(event(turn * 5 + i)));
				await new Promise((resolve) => setImmediate(resolve));
			}
			const results = (await Promise.all(calls)) as Array<{ duplicate: boolean }>;
			expect(results.filter((r) => !r.duplicate)).toHaveLength(200);
			const after = await store.stats();
			const commits = after.commits - before.commits;
			const messages = after.messages - before.messages;
			expect(after.calls - before.calls).toBeGreaterThanOrEqual(200);
			// The stats call itself is one message and one commit more.
			expect(messages).toBeLessThanOrEqual(commits);
			expect(messages).toBeLessThan(40);
		} finally {
			await store.close();
		}
	});
});
