import type { Housekeeping } from '../store/types.ts';
import type { Read } from './reads.ts';
import {
	ADD_CATCHUP_MARKS,
	CATCHUP_MARKS,
	LINKS_TO_READ,
	MARK_LINKS_READ,
	REMEMBER_LINKS,
} from './statements.ts';

/** The catch-up's bookkeeping: its marks (bills read in a final state) and its remembered MULTI links. */
export type CatchupBook = Pick<
	Housekeeping,
	'catchupMarks' | 'addCatchupMarks' | 'rememberLinks' | 'linksToRead' | 'markLinksRead'
>;

/**
 * The PostgreSQL store's catch-up bookkeeping, one statement each, over the `run` the store passes
 * in (its durable pool: each write is committed when it resolves). Input was checked at the edge.
 */
export function postgresCatchupBook(run: Read): CatchupBook {
	return {
		async catchupMarks(marks) {
			if (marks.length === 0) return [];
			return (await run(CATCHUP_MARKS, [[...marks]])).map((r) => String(r.mark));
		},
		async addCatchupMarks(marks, now, pruneBefore) {
			await run(ADD_CATCHUP_MARKS, [[...marks], now, pruneBefore]);
		},
		async rememberLinks(ids, now) {
			if (ids.length > 0) await run(REMEMBER_LINKS, [[...ids], now]);
		},
		async linksToRead(limit, excludeIds = []) {
			return (await run(LINKS_TO_READ, [[...excludeIds], limit])).map((r) => String(r.bill_id));
		},
		async markLinksRead(ids, now) {
			if (ids.length > 0) await run(MARK_LINKS_READ, [[...ids], now]);
		},
	};
}
