// What the store suites share: how a suite opens a store, a postback's event, a fixed clock.
import type { AttemptTiming, NewEvent, Store } from '../../relay/src/store/types.ts';

export interface OpenedStore {
	store: Store;
	/** Closes the store and removes what it created (file, database or schema). */
	cleanup: () => Promise<void>;
}

type Kind = NewEvent['kind'];

export const storeEvent = (
	trsId: string,
	targets: string[] = ['http://t1/x', 'http://t2/x'],
	receivedAt = Date.now(),
	kind: Kind = 'payment',
): NewEvent => ({
	kind,
	dedupeKey: kind === 'success' || kind === 'fail' ? null : `${kind}:${trsId}:SUCCESS`,
	contentType: 'application/x-www-form-urlencoded',
	body: `TrsId=${trsId}&Status=SUCCESS`,
	fields: { TrsId: trsId, Status: 'SUCCESS', InvId: `inv-${trsId}` },
	receivedAt,
	targets,
});

export const timing = (attempt: number, startedAt: number, durationMs: number): AttemptTiming => ({
	attempt,
	startedAt,
	durationMs,
});

/** A fixed time far from the wall clock, so that each test chooses what is due. */
export const T0 = 2_000_000_000_000;
