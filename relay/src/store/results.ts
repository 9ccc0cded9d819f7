// The single marks as results (both stores record them through recordResults: one code path).
import type { AttemptTiming, DeliveryResult } from './types.ts';

/** When an attempt ended, for the marks that are not given it (nothing stores it but delivered). */
const endOf = (t: AttemptTiming) => t.startedAt + t.durationMs;

export const deliveredResult = (
	id: number,
	now: number,
	httpStatus: number,
	timing: AttemptTiming,
): DeliveryResult => ({ outcome: 'delivered', id, now, httpStatus, timing });

export const retryResult = (
	id: number,
	owner: string,
	nextAttemptAt: number,
	httpStatus: number | null,
	error: string,
	timing: AttemptTiming,
): DeliveryResult => ({
	outcome: 'retry',
	id,
	owner,
	now: endOf(timing),
	nextAttemptAt,
	httpStatus,
	error,
	timing,
});

export const deadResult = (
	id: number,
	owner: string,
	httpStatus: number | null,
	error: string,
	timing: AttemptTiming,
): DeliveryResult => ({
	outcome: 'dead',
	id,
	owner,
	now: endOf(timing),
	httpStatus,
	error,
	timing,
});

/**
 * The results cut into consecutive runs in which no delivery comes twice (one statement can
 * update a row only once): the runs applied in order are the results applied one by one.
 */
export function runsWithoutRepeats(results: readonly DeliveryResult[]): DeliveryResult[][] {
	const runs: DeliveryResult[][] = [];
	let run: DeliveryResult[] = [];
	let ids = new Set<number>();
	for (const r of results) {
		if (ids.has(r.id)) {
			runs.push(run);
			run = [];
			ids = new Set();
		}
		run.push(r);
		ids.add(r.id);
	}
	if (run.length > 0) runs.push(run);
	return runs;
}
