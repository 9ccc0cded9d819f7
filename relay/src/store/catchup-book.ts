import type { Housekeeping } from './types.ts';

/** The catch-up's bookkeeping: its baseline, its marks (bills read in a final state) and its remembered MULTI links. */
export type CatchupBook = Pick<
	Housekeeping,
	| 'catchupBaseline'
	| 'backfillCatchup'
	| 'catchupMarks'
	| 'addCatchupMarks'
	| 'rememberLinks'
	| 'linksToRead'
	| 'markLinksRead'
>;
