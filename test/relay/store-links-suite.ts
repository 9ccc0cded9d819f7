// The store contract's list of MULTI links the catch-up has seen pay (run inside storeContract, on
// every store): remembered whatever their age, read in rotation, least recently read first.
import { beforeEach, expect, it } from 'vitest';
import { StoreInputError } from '../../relay/src/store/input.ts';
import type { Store } from '../../relay/src/store/types.ts';
import { T0 } from './store-events.ts';

export function linksContract(get: () => Store): void {
	let store: Store;
	beforeEach(() => {
		store = get();
	});

	it('links: remembered MULTI links come back least recently read first, without the excluded ones', async () => {
		const t = T0 + 900_000;
		await store.rememberLinks(['L-links-a', 'L-links-b'], t);
		await store.rememberLinks(['L-links-c'], t - 10);
		// Remembered again: the new time, one row.
		await store.rememberLinks(['L-links-a'], t + 5);
		const mine = (ids: string[]) => ids.filter((id) => id.startsWith('L-links-'));
		expect(mine(await store.linksToRead(10_000))).toEqual(['L-links-c', 'L-links-b', 'L-links-a']);
		expect(mine(await store.linksToRead(10_000, ['L-links-b']))).toEqual([
			'L-links-c',
			'L-links-a',
		]);
		// Read now: it goes to the end of the rotation.
		await store.markLinksRead(['L-links-c'], t + 10);
		expect(mine(await store.linksToRead(10_000))).toEqual(['L-links-b', 'L-links-a', 'L-links-c']);
		// A link never remembered is not added by a read.
		await store.markLinksRead(['L-links-never'], t + 20);
		expect(await store.linksToRead(10_000)).not.toContain('L-links-never');
		// At most `limit`.
		expect(await store.linksToRead(1)).toHaveLength(1);
		await store.rememberLinks([], t);
		await store.markLinksRead([], t);
	});

	it('links: bad input is refused at the edge with a StoreInputError', async () => {
		await expect(store.rememberLinks(['bad\u0000id'], T0)).rejects.toBeInstanceOf(StoreInputError);
		await expect(store.rememberLinks(['x'.repeat(257)], T0)).rejects.toBeInstanceOf(
			StoreInputError,
		);
		await expect(store.linksToRead(0)).rejects.toBeInstanceOf(StoreInputError);
		await expect(store.linksToRead(5, [42 as unknown as string])).rejects.toBeInstanceOf(
			StoreInputError,
		);
		await expect(store.markLinksRead(['ok'], -1)).rejects.toBeInstanceOf(StoreInputError);
	});
}
