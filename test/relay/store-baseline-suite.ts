// The store contract's catch-up baseline (run inside storeContract, on every store): written once,
// never pruned with the marks, moved back (never forward) by a back-fill that forgets the bills read.
import { beforeEach, expect, it } from 'vitest';
import type { Store } from '../../relay/src/store/types.ts';
import { T0, storeEvent } from './store-events.ts';

export function baselineContract(get: () => Store): void {
	let store: Store;
	beforeEach(() => {
		store = get();
	});

	it('baseline: written once at the first call, kept when the marks are pruned', async () => {
		expect(await store.catchupBaseline(T0)).toEqual({ firstStart: T0, since: T0 });
		expect(await store.catchupBaseline(T0 + 5_000)).toEqual({ firstStart: T0, since: T0 });
		// Marks older than a time far ahead are pruned; the baseline is not.
		await store.addCatchupMarks(['bill:B-base:SUCCESS'], T0 + 6_000, T0 + 10 ** 12);
		expect(await store.catchupBaseline(T0 + 7_000)).toEqual({ firstStart: T0, since: T0 });
	});

	it('baseline: instances starting at once all read the one written', async () => {
		const all = await Promise.all(
			Array.from({ length: 6 }, (_, i) => store.catchupBaseline(T0 + i * 1_000)),
		);
		const first = all[0].firstStart;
		expect([T0, T0 + 1_000, T0 + 2_000, T0 + 3_000, T0 + 4_000, T0 + 5_000]).toContain(first);
		for (const b of all) expect(b).toEqual({ firstStart: first, since: first });
	});

	it('baseline: a back-fill moves it back, never forward, and forgets the bills read, not other marks', async () => {
		await store.catchupBaseline(T0);
		await store.addCatchupMarks(['bill:B-fill:SUCCESS', 'operator:1.2.3.4:9'], T0 + 1, 0);
		expect(await store.backfillCatchup(T0 - 86_400_000, T0 + 2)).toEqual({
			firstStart: T0,
			since: T0 - 86_400_000,
		});
		expect(await store.catchupMarks(['bill:B-fill:SUCCESS', 'operator:1.2.3.4:9'])).toEqual([
			'operator:1.2.3.4:9',
		]);
		expect(await store.backfillCatchup(T0 - 1_000, T0 + 3)).toEqual({
			firstStart: T0,
			since: T0 - 86_400_000,
		});
	});

	it('baseline: a store with only marks from before baselines existed starts at its oldest mark', async () => {
		await store.addCatchupMarks(['bill:B-base-old:SUCCESS'], T0 - 70_000, 0);
		await store.addCatchupMarks(['bill:B-base-new:SUCCESS'], T0 - 20_000, 0);
		expect(await store.catchupBaseline(T0)).toEqual({
			firstStart: T0 - 70_000,
			since: T0 - 70_000,
		});
	});

	it('baseline: a store holding events from before baselines existed starts at its oldest event', async () => {
		await store.insertEvent(storeEvent('S-base-old', ['http://t1/x'], T0 - 50_000));
		await store.insertEvent(storeEvent('S-base-new', ['http://t1/x'], T0 - 10_000));
		expect(await store.catchupBaseline(T0)).toEqual({
			firstStart: T0 - 50_000,
			since: T0 - 50_000,
		});
	});
}
