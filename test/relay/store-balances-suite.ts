// The store contract's statement bookkeeping (run inside storeContract, on every store): balance
// snapshots kept once per zone, day and kind, read by day range, and the movement traces (what the
// store holds of a payment or payout by TrsId, of a refund or chargeback by its dedupe key).
import { beforeEach, expect, it } from 'vitest';
import type { BalanceSnapshot } from '../../relay/src/store/balances.ts';
import { StoreInputError } from '../../relay/src/store/input.ts';
import type { Store } from '../../relay/src/store/types.ts';
import { markDelivered } from './marks.ts';
import { T0, storeEvent, timing } from './store-events.ts';

const snap = (day: string, kind: BalanceSnapshot['kind'], at: number, rub = '100.00000000') => ({
	timeZone: 'Europe/Moscow',
	day,
	kind,
	takenAt: at,
	balances: [
		{ currency: 'RUB', available: rub, locked: '0.00000000', hold: '1.50000000' },
		{ currency: 'USD', available: '2.00000000', locked: '0.10000000', hold: '0.00000000' },
	],
});

export function balancesContract(get: () => Store): void {
	let store: Store;
	beforeEach(() => {
		store = get();
	});

	it('balances: a snapshot is kept once per zone, day and kind (the first stays), read back by day range, in day order', async () => {
		expect(await store.firstSnapshotDay('Europe/Moscow')).toBeNull();
		expect(await store.keepBalanceSnapshot(snap('2026-03-11', 'boundary', T0 + 2))).toBe(true);
		expect(await store.keepBalanceSnapshot(snap('2026-03-10', 'first-start', T0))).toBe(true);
		expect(await store.keepBalanceSnapshot(snap('2026-03-10', 'boundary', T0 + 1))).toBe(true);
		// Another instance's later read of the same boundary: not kept, the first stays.
		expect(await store.keepBalanceSnapshot(snap('2026-03-11', 'boundary', T0 + 9, '5.00'))).toBe(
			false,
		);
		// Another zone is another book.
		expect(
			await store.keepBalanceSnapshot({ ...snap('2026-03-09', 'boundary', T0), timeZone: 'UTC' }),
		).toBe(true);
		const read = await store.balanceSnapshots('Europe/Moscow', '2026-03-10', '2026-03-11');
		expect(read.map((s) => `${s.day} ${s.kind} ${s.takenAt - T0}`)).toEqual([
			'2026-03-10 boundary 1',
			'2026-03-10 first-start 0',
			'2026-03-11 boundary 2',
		]);
		expect(read[2]).toEqual(snap('2026-03-11', 'boundary', T0 + 2));
		expect(await store.balanceSnapshots('Europe/Moscow', '2026-03-12', '2026-03-20')).toEqual([]);
		expect(await store.firstSnapshotDay('Europe/Moscow')).toBe('2026-03-10');
		expect(await store.firstSnapshotDay('UTC')).toBe('2026-03-09');
	});

	it('balances: movement traces find payments and payouts by TrsId and refunds by dedupe key, with their delivered deliveries', async () => {
		const paid = await store.insertEvent(storeEvent('TR-pay', ['http://t1/x'], T0));
		await store.insertEvent(storeEvent('TR-out', ['http://t1/x', 'http://t2/x'], T0, 'payout'));
		const refund = {
			...storeEvent('TR-ref', ['http://t1/x'], T0, 'refund'),
			dedupeKey: '["refund","R-1","SUCCESS"]',
			fields: { Id: 'R-1', Status: 'SUCCESS' },
		};
		await store.insertEvent(refund);
		const [claimed] = await store.claimDue(T0 + 1, 1, 60_000, 'w');
		expect(claimed.eventId).toBe(paid.eventId);
		await markDelivered(store, claimed.id, T0 + 2, 200, timing(1, T0 + 1, 1));
		const traces = await store.movementTraces(
			['TR-pay', 'TR-out', 'TR-none'],
			['["refund","R-1","SUCCESS"]', '["refund","R-2","SUCCESS"]'],
		);
		const seen = traces
			.map((t) => `${t.kind} ${t.trsId ?? t.dedupeKey} ${t.delivered}/${t.deliveries}`)
			.sort();
		expect(seen).toEqual([
			'payment TR-pay 1/1',
			'payout TR-out 0/2',
			'refund ["refund","R-1","SUCCESS"] 0/1',
		]);
		expect(await store.movementTraces([], [])).toEqual([]);
	});

	it('balances: bad input is refused at the edge with a StoreInputError', async () => {
		const bad = [
			store.keepBalanceSnapshot({ ...snap('2026-3-1', 'boundary', T0) }),
			store.keepBalanceSnapshot({ ...snap('2026-03-01', 'boundary', -1) }),
			store.keepBalanceSnapshot({ ...snap('2026-03-01', 'other' as 'boundary', T0) }),
			store.balanceSnapshots('Europe/Moscow', 'yesterday', '2026-03-01'),
			store.firstSnapshotDay('bad\u0000zone'),
			store.movementTraces(['bad\u0000id'], []),
		];
		for (const call of bad) await expect(call).rejects.toBeInstanceOf(StoreInputError);
	});
}
