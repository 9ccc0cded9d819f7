import { BASELINE_MARKS } from '../store/baseline-marks.ts';
import type { CatchupBaseline } from '../store/baseline-marks.ts';
import type { CatchupBook } from '../store/catchup-book.ts';
import type { Read } from './reads.ts';
import {
	ADD_CATCHUP_MARKS,
	BACKFILL_CATCHUP,
	CATCHUP_MARKS,
	KEEP_BASELINE,
	MARK_TIMES,
	LINKS_TO_READ,
	MARK_LINKS_READ,
	REMEMBER_LINKS,
} from './statements.ts';

const BASELINE_KEYS = [BASELINE_MARKS.firstStart, BASELINE_MARKS.since];

/**
 * The PostgreSQL store's catch-up bookkeeping, one statement each, over the `run` the store passes
 * in (its durable pool: each write is committed when it resolves). Input was checked at the edge.
 */
export function postgresCatchupBook(run: Read): CatchupBook {
	const baseline = async (now: number): Promise<CatchupBaseline> => {
		let rows = await run(KEEP_BASELINE, [now, BASELINE_KEYS]);
		// Another instance wrote them in the same instant: committed now, read them.
		if (rows.length < BASELINE_KEYS.length) rows = await run(MARK_TIMES, [BASELINE_KEYS]);
		const at = (mark: string) => Number(rows.find((r) => r.mark === mark)?.at);
		return { firstStart: at(BASELINE_MARKS.firstStart), since: at(BASELINE_MARKS.since) };
	};
	return {
		catchupBaseline: baseline,
		async backfillCatchup(since, now) {
			await baseline(now);
			await run(BACKFILL_CATCHUP, [since, BASELINE_MARKS.since]);
			return await baseline(now);
		},
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
