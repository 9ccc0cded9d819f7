// One attempt's result recorded through recordResults (what the forwarder calls), for tests that
// set up a delivery's state one result at a time.
import type { AttemptTiming, DeliveryResult, Store } from '../../relay/src/store/types.ts';

/** When an attempt ended: the `now` of a retry or dead result. */
const endOf = (t: AttemptTiming) => t.startedAt + t.durationMs;

const one = (store: Store, result: DeliveryResult) => store.recordResults([result]);

export const markDelivered = (
	store: Store,
	id: number,
	now: number,
	httpStatus: number,
	timing: AttemptTiming,
): Promise<void> => one(store, { outcome: 'delivered', id, now, httpStatus, timing });

/** Schedules another attempt; ignored by the store if `owner` no longer holds the lease. */
export const markRetry = (
	store: Store,
	id: number,
	owner: string,
	nextAttemptAt: number,
	httpStatus: number | null,
	error: string,
	timing: AttemptTiming,
): Promise<void> =>
	one(store, {
		outcome: 'retry',
		id,
		owner,
		now: endOf(timing),
		nextAttemptAt,
		httpStatus,
		error,
		timing,
	});

/** Dead at once; ignored by the store if `owner` no longer holds the lease. */
export const markDead = (
	store: Store,
	id: number,
	owner: string,
	httpStatus: number | null,
	error: string,
	timing: AttemptTiming,
): Promise<void> =>
	one(store, { outcome: 'dead', id, owner, now: endOf(timing), httpStatus, error, timing });
