/**
 * Where the catch-up forwards from (relay/src/catchup/baseline.ts): what the service recorded
 * before `since` is counted, not forwarded, and raises no alert. Epoch ms.
 */
export interface CatchupBaseline {
	/** When the relay first started on this store (never moves). */
	firstStart: number;
	/** firstStart, or earlier after a back-fill. */
	since: number;
}

/** The marks that hold the baseline: never pruned with the others, never a bill's mark. */
export const BASELINE_MARKS = { firstStart: 'baseline:first-start', since: 'baseline:since' };
