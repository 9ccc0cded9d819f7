import { snapshotOf, traceOf } from '../store/balances.ts';
import type { BalanceBook } from '../store/balances.ts';
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

const KEEP_SNAPSHOT = `INSERT INTO balance_snapshots (time_zone, day, kind, taken_at, balances_json)
	VALUES ($1, $2, $3, $4, $5::jsonb) ON CONFLICT (time_zone, day, kind) DO NOTHING RETURNING day`;
const SNAPSHOTS = `SELECT time_zone, day, kind, taken_at, balances_json FROM balance_snapshots
	WHERE time_zone = $1 AND day >= $2 AND day <= $3 ORDER BY day, kind`;
const FIRST_SNAPSHOT = 'SELECT MIN(day) AS day FROM balance_snapshots WHERE time_zone = $1';
const TRACES = `SELECT e.kind, e.fields_json ->> 'TrsId' AS trs_id, e.dedupe_key,
		COUNT(d.id) AS deliveries, COUNT(d.id) FILTER (WHERE d.status = 'delivered') AS delivered
	FROM events e LEFT JOIN deliveries d ON d.event_id = e.id
	WHERE (e.fields_json ->> 'TrsId') = ANY($1::text[]) OR e.dedupe_key = ANY($2::text[])
	GROUP BY e.id`;

/**
 * The statement's bookkeeping (store/balances.ts), one statement each, over the store's durable
 * `run`: balance snapshots, and what the store holds of the movements a statement looks for.
 */
export function postgresBalanceBook(run: Read): BalanceBook {
	return {
		async keepBalanceSnapshot(s) {
			const params = [s.timeZone, s.day, s.kind, s.takenAt, JSON.stringify(s.balances)];
			return (await run(KEEP_SNAPSHOT, params)).length > 0;
		},
		async balanceSnapshots(timeZone, from, to) {
			return (await run(SNAPSHOTS, [timeZone, from, to])).map(snapshotOf);
		},
		async firstSnapshotDay(timeZone) {
			const day = (await run(FIRST_SNAPSHOT, [timeZone]))[0]?.day;
			return day === null || day === undefined ? null : String(day);
		},
		async movementTraces(trsIds, dedupeKeys) {
			if (trsIds.length === 0 && dedupeKeys.length === 0) return [];
			return (await run(TRACES, [[...trsIds], [...dedupeKeys]])).map(traceOf);
		},
	};
}
