import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { PostbackEvent } from '../contract.ts';
import { uuidV7 } from '../store/ids.ts';
import type { KeylessEvent } from '../store/pair-key.ts';
import {
	activityBuckets,
	assembleActivity,
	assembleCounts,
	clipResponse,
	leasedDelivery,
	storableResult,
	toAttempt,
	toClaimed,
	toDelivery,
	toEvent,
	toHealth,
} from '../store/rows.ts';
import type { Row } from '../store/rows.ts';
import { BASELINE_MARKS } from '../store/baseline-marks.ts';
import type {
	ActivityBucket,
	AttemptOutcome,
	CatchupBaseline,
	AttemptTiming,
	ClaimedDelivery,
	Delivery,
	DeliveryAttempt,
	DeliveryCounts,
	DeliveryFilter,
	DeliveryResult,
	EventFilter,
	InsertResult,
	NewEvent,
	PairLimit,
	StoredEvent,
	TargetHealth,
	TargetsByKind,
} from '../store/types.ts';
import {
	ACTIVITY_QUERIES,
	ADD_CATCHUP_MARK,
	LINKS_TO_READ,
	MARK_LINK_READ,
	REMEMBER_LINK,
	CATCHUP_MARK,
	CLAIMED_EVENT,
	COUNTS,
	DEAD,
	DEAD_OF_TARGET,
	DEDUPE_LOOKUP,
	DROP_EXPIRED_REVOCATIONS,
	DROP_OLD_CATCHUP_MARKS,
	FORGET_BILL_MARKS,
	KEEP_BASELINE_MARK,
	MARK_TIME,
	MOVE_BASELINE_MARK_BACK,
	OLDEST_TRACE,
	EVENT_KIND,
	EVENTS_WITHOUT_PAIR_KEY,
	GET_DELIVERY,
	GET_EVENT,
	HEARTBEAT,
	INSERT_ATTEMPT,
	INSERT_DELIVERY,
	INSERT_EVENT,
	INSERT_LEASED_DELIVERY,
	MARK_DEAD,
	MARK_DELIVERED,
	MARK_RETRY,
	OLDEST_UNDELIVERED,
	PAIR_COUNT,
	PRUNABLE,
	RELEASE,
	REQUEUE_DEAD,
	REQUEUE_ONE,
	REVOKE_SESSION,
	SESSION_REVOKED,
	SET_PAIR_KEY,
	SQLITE_CLAIM,
	TARGET_HEALTH,
	TWIN_LOOKUP,
	attemptsQuery,
	deliveriesOfEventsQuery,
	deliveriesQuery,
	eventIdsQuery,
	eventsQuery,
	pruneStatements,
} from './statements.ts';

/**
 * The store's operations on one open SQLite connection, synchronous, each inside the transaction
 * the engine opened around its batch (see SqliteEngine): each runs its statements (statements.ts),
 * prepared once and cached. Input was checked at the store's edge before it came to the thread.
 */
export class SqliteQueries {
	#db: DatabaseSync;
	#stmts: Record<string, StatementSync> = {};

	constructor(db: DatabaseSync) {
		this.#db = db;
	}

	#stmt(sql: string): StatementSync {
		let s = this.#stmts[sql];
		if (!s) {
			s = this.#db.prepare(sql);
			this.#stmts[sql] = s;
		}
		return s;
	}

	/** `pairKey`: pairKeyOf the event, computed by the calling thread (see SqliteStore). */
	insertEvent(event: NewEvent, pairKey: string | null = null): InsertResult {
		if (
			event.twinCheck !== undefined &&
			this.#stmt(TWIN_LOOKUP).get(event.twinCheck, event.kind, event.dedupeKey) !== undefined
		) {
			return { eventId: '', duplicate: false, deliveries: 0, twins: true };
		}
		if (event.pairLimit && pairKey !== null && this.#pairFull(event, pairKey, event.pairLimit)) {
			return { eventId: '', duplicate: false, deliveries: 0, limited: true };
		}
		const id = uuidV7(event.receivedAt);
		const inserted = this.#stmt(INSERT_EVENT).run(
			id,
			event.kind,
			event.source ?? 'postback',
			event.dedupeKey,
			event.contentType,
			event.body,
			JSON.stringify(event.fields),
			event.receivedAt,
			pairKey,
		);
		if (inserted.changes === 0) {
			const existing = this.#stmt(DEDUPE_LOOKUP).get(event.dedupeKey) as Row;
			return { eventId: String(existing.id), duplicate: true, deliveries: 0 };
		}
		const { lease } = event;
		if (!lease) {
			for (const target of event.targets) this.#insertDelivery(id, target, event.receivedAt, false);
			return { eventId: id, duplicate: false, deliveries: event.targets.length };
		}
		const leased = this.#stmt(INSERT_LEASED_DELIVERY);
		const claimed = event.targets.map((target) => {
			const row = leased.run(id, target, event.receivedAt, lease.until, lease.owner);
			return leasedDelivery(event, id, Number(row.lastInsertRowid), target, lease);
		});
		return { eventId: id, duplicate: false, deliveries: claimed.length, claimed };
	}

	/** The pair already has `max` events since `since`, and this one is not a duplicate of one. */
	#pairFull(event: NewEvent, pairKey: string, { max, since }: PairLimit): boolean {
		// The count first: it reads the pair index and nearly always finds room.
		if (this.#stmt(PAIR_COUNT).all(pairKey, since, max).length < max) return false;
		return event.dedupeKey === null || this.#stmt(DEDUPE_LOOKUP).get(event.dedupeKey) === undefined;
	}

	#insertDelivery(eventId: string, target: string, now: number, manual: boolean): void {
		this.#stmt(INSERT_DELIVERY).run(eventId, target, now, now, now, manual ? 1 : 0);
	}

	/** The claim reads the due index in order (SQLITE_CLAIM), then each claimed delivery's event. */
	claimDue(now: number, limit: number, leaseMs: number, owner: string): ClaimedDelivery[] {
		const until = now + leaseMs;
		const rows = this.#stmt(SQLITE_CLAIM).all(until, owner, until, now, limit) as Row[];
		const eventStmt = this.#stmt(CLAIMED_EVENT);
		return rows.map((row) => toClaimed(row, eventStmt.get(row.event_id as string) as Row));
	}

	#recordAttempt(
		id: number,
		t: AttemptTiming,
		httpStatus: number | null,
		error: string | null,
		outcome: AttemptOutcome,
	): void {
		this.#stmt(INSERT_ATTEMPT).run(
			t.attempt,
			t.startedAt,
			t.durationMs,
			httpStatus,
			error,
			outcome,
			t.origin ?? 'scheduled',
			clipResponse(t.response),
			t.receipt ?? null,
			id,
		);
	}

	/** Each result as its own call would apply it, in order, inside the batch's transaction. */
	recordResults(results: readonly DeliveryResult[]): void {
		for (const r of results.map(storableResult)) {
			const receipt = r.timing.receipt ?? null;
			if (r.outcome === 'delivered') {
				this.#stmt(MARK_DELIVERED).run(r.now, r.httpStatus, receipt, r.id);
				this.#recordAttempt(r.id, r.timing, r.httpStatus, null, 'delivered');
				continue;
			}
			const response = clipResponse(r.timing.response);
			const { changes } =
				r.outcome === 'retry'
					? this.#stmt(MARK_RETRY).run(
							r.nextAttemptAt,
							r.httpStatus,
							receipt,
							r.error,
							response,
							r.id,
							r.owner,
						)
					: this.#stmt(MARK_DEAD).run(r.httpStatus, receipt, r.error, response, r.id, r.owner);
			// Only while this owner held the lease.
			if (Number(changes) > 0)
				this.#recordAttempt(r.id, r.timing, r.httpStatus, r.error, r.outcome);
		}
	}

	releaseLease(id: number, owner: string, now: number): void {
		this.#stmt(RELEASE).run(now, id, owner);
	}

	catchupMarks(marks: string[]): string[] {
		const stmt = this.#stmt(CATCHUP_MARK);
		return marks.filter((mark) => stmt.get(mark) !== undefined);
	}

	catchupBaseline(now: number): CatchupBaseline {
		const oldest = (this.#stmt(OLDEST_TRACE).get() as { at: number | null }).at;
		const start = oldest === null ? now : Math.min(now, Number(oldest));
		const keep = this.#stmt(KEEP_BASELINE_MARK);
		for (const mark of Object.values(BASELINE_MARKS)) keep.run(mark, start);
		const at = (mark: string) => Number((this.#stmt(MARK_TIME).get(mark) as { at: number }).at);
		return { firstStart: at(BASELINE_MARKS.firstStart), since: at(BASELINE_MARKS.since) };
	}

	backfillCatchup(since: number, now: number): CatchupBaseline {
		this.catchupBaseline(now);
		this.#stmt(MOVE_BASELINE_MARK_BACK).run(since, BASELINE_MARKS.since);
		this.#stmt(FORGET_BILL_MARKS).run();
		return this.catchupBaseline(now);
	}

	addCatchupMarks(marks: string[], now: number, pruneBefore: number): void {
		const stmt = this.#stmt(ADD_CATCHUP_MARK);
		for (const mark of marks) stmt.run(mark, now);
		this.#stmt(DROP_OLD_CATCHUP_MARKS).run(pruneBefore);
	}

	rememberLinks(ids: string[], now: number): void {
		const stmt = this.#stmt(REMEMBER_LINK);
		for (const id of ids) stmt.run(id, now);
	}

	linksToRead(limit: number, excludeIds: string[]): string[] {
		const rows = this.#stmt(LINKS_TO_READ).all(JSON.stringify(excludeIds), limit) as {
			bill_id: string;
		}[];
		return rows.map((r) => r.bill_id);
	}

	markLinksRead(ids: string[], now: number): void {
		const stmt = this.#stmt(MARK_LINK_READ);
		for (const id of ids) stmt.run(now, id);
	}

	listEvents(filter: EventFilter): StoredEvent[] {
		const q = eventsQuery(filter);
		return (this.#db.prepare(q.sql).all(...q.params) as Row[]).map(toEvent);
	}

	getEvent(id: string): StoredEvent | undefined {
		const row = this.#stmt(GET_EVENT).get(id) as Row | undefined;
		return row ? toEvent(row) : undefined;
	}

	listDeliveries(filter: DeliveryFilter): Delivery[] {
		const q = deliveriesQuery(filter);
		return (this.#db.prepare(q.sql).all(...q.params) as Row[]).map(toDelivery);
	}

	replayEvents(eventIds: readonly string[], targets: TargetsByKind, now: number): number {
		let created = 0;
		const kindStmt = this.#stmt(EVENT_KIND);
		for (const id of eventIds) {
			const row = kindStmt.get(id) as Row | undefined;
			if (!row) continue;
			for (const target of targets[row.kind as PostbackEvent] ?? []) {
				this.#insertDelivery(id, target, now, true);
				created += 1;
			}
		}
		return created;
	}

	eventIdsInRange(from: number, to: number, kind?: PostbackEvent): string[] {
		const q = eventIdsQuery(from, to, kind);
		return (this.#stmt(q.sql).all(...q.params) as Row[]).map((r) => String(r.id));
	}

	requeueDead(ids: readonly number[] | undefined, now: number): number {
		if (ids === undefined) return Number(this.#stmt(REQUEUE_DEAD).run(now, now).changes);
		let n = 0;
		const one = this.#stmt(REQUEUE_ONE);
		for (const id of ids) n += Number(one.run(now, now, id).changes);
		return n;
	}

	counts(): DeliveryCounts {
		return assembleCounts(this.#stmt(COUNTS).all() as Row[]);
	}

	listAttempts(deliveryIds: readonly number[]): DeliveryAttempt[] {
		if (deliveryIds.length === 0) return [];
		const q = attemptsQuery(deliveryIds);
		return (this.#db.prepare(q.sql).all(...q.params) as Row[]).map(toAttempt);
	}

	activity(
		from: number,
		to: number,
		bucketMs: number,
		kinds: readonly PostbackEvent[],
	): ActivityBucket[] {
		const buckets = activityBuckets(from, to, bucketMs);
		const params = [from, bucketMs, from, to];
		const run = (sql: string) => this.#stmt(sql).all(...params) as Row[];
		return assembleActivity(
			kinds,
			from,
			bucketMs,
			buckets,
			run(ACTIVITY_QUERIES.received),
			run(ACTIVITY_QUERIES.delivered),
			run(ACTIVITY_QUERIES.failed),
		);
	}

	targetHealth(since: number): TargetHealth[] {
		return (this.#stmt(TARGET_HEALTH).all(since) as Row[]).map(toHealth);
	}

	getDelivery(id: number): Delivery | undefined {
		const row = this.#stmt(GET_DELIVERY).get(id) as Row | undefined;
		return row ? toDelivery(row) : undefined;
	}

	deliveriesOfEvents(eventIds: readonly string[]): Delivery[] {
		if (eventIds.length === 0) return [];
		const q = deliveriesOfEventsQuery(eventIds);
		return (this.#db.prepare(q.sql).all(...q.params) as Row[]).map(toDelivery);
	}

	deadDeliveries(target?: string): Delivery[] {
		const rows =
			target === undefined ? this.#stmt(DEAD).all() : this.#stmt(DEAD_OF_TARGET).all(target);
		return (rows as Row[]).map(toDelivery);
	}

	oldestUndelivered(): number | null {
		const row = this.#stmt(OLDEST_UNDELIVERED).get() as Row | undefined;
		return row?.t === null || row?.t === undefined ? null : Number(row.t);
	}

	prune(before: number, limit: number): number {
		const ids = (this.#stmt(PRUNABLE).all(before, limit) as Row[]).map((r) => String(r.id));
		if (ids.length === 0) return 0;
		for (const q of pruneStatements(ids)) this.#db.prepare(q.sql).run(...q.params);
		return ids.length;
	}

	/** Payment and payout events received since `since` stored without a pair key (before version 6). */
	eventsWithoutPairKey(since: number, limit: number): KeylessEvent[] {
		return (this.#stmt(EVENTS_WITHOUT_PAIR_KEY).all(since, limit) as Row[]).map((r) => ({
			id: String(r.id),
			kind: r.kind as PostbackEvent,
			fields: JSON.parse(String(r.fields_json)) as Record<string, string>,
		}));
	}

	setPairKeys(ids: readonly string[], keys: readonly string[]): void {
		const update = this.#stmt(SET_PAIR_KEY);
		ids.forEach((id, i) => update.run(keys[i], id));
	}

	revokeSession(id: string, expiresAt: number, now: number): void {
		this.#stmt(DROP_EXPIRED_REVOCATIONS).run(now);
		this.#stmt(REVOKE_SESSION).run(id, expiresAt);
	}

	sessionRevoked(id: string): boolean {
		return this.#stmt(SESSION_REVOKED).get(id) !== undefined;
	}

	/** A committed write, not only a read: readiness fails when the file cannot be written. */
	ping(now: number): void {
		this.#stmt(HEARTBEAT).run(now);
	}
}
