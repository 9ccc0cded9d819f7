import type { DeliveryResult } from './types.ts';

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
