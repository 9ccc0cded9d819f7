import type { PostbackEvent, Receipt } from '../contract.ts';
import type { BalanceBook } from './balances.ts';
import type { CatchupBaseline } from './baseline-marks.ts';
export type { CatchupBaseline } from './baseline-marks.ts';

/**
 * The relay's durable queue. Every method resolves only after its change is committed, so a
 * caller that answers the service after `insertEvent` resolved never acknowledges a postback the
 * store could lose. Asynchronous so that a networked store (PostgreSQL) fits the same shape.
 */
export type DeliveryStatus = 'pending' | 'delivering' | 'delivered' | 'dead';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = [
	'pending',
	'delivering',
	'delivered',
	'dead',
];

/** Where an event came from: a call to the relay, or the relay's catch-up reading the service. */
export type EventSource = 'postback' | 'catch-up';
export const EVENT_SOURCES: readonly EventSource[] = ['postback', 'catch-up'];

export interface NewEvent {
	kind: PostbackEvent;
	/** 'postback' when not given. */
	source?: EventSource;
	/** TrsId + Status key for postbacks; null for redirects (never deduplicated). */
	dedupeKey: string | null;
	contentType: string;
	/** The body exactly as received (forwarded unchanged). */
	body: string;
	/** Parsed fields without SignatureValue, for the admin API. */
	fields: Record<string, string>;
	receivedAt: number;
	/** One delivery row is created per target. */
	targets: readonly string[];
	/**
	 * The per-signed-pair limit (RELAY_PAIR_LIMIT): a payment or payout event is not stored when
	 * `max` events with its signed pair (see pairKeyOf) were received at or after `since`, unless it
	 * is a duplicate (a duplicate is always acknowledged). Checked in the insert's own transaction.
	 */
	pairLimit?: PairLimit;
	/**
	 * Hand-off: the event's deliveries are stored already claimed by `owner` until `until` (attempt
	 * 1, status delivering) and come back in InsertResult.claimed, so the forwarder that asked sends
	 * them at once, with no claim of its own. If it dies, the lease expires and any instance claims
	 * them as usual.
	 */
	lease?: DeliveryLease;
	/**
	 * One payment, one event (relay/src/fidelity.ts), checked in the insert itself: the event is not
	 * stored when the store holds an event of the same kind with this TrsId (as stored in its fields)
	 * and another dedupe key, a twin; the result then says `twins` and the caller decides with the
	 * twins in hand (a catch-up event of the same payment, a postback under another signed pair).
	 * The common case, no twin, costs the insert one index probe and no read of its own.
	 */
	twinCheck?: string;
}

export interface DeliveryLease {
	owner: string;
	until: number;
}

export interface PairLimit {
	max: number;
	since: number;
}

export interface InsertResult {
	eventId: string;
	duplicate: boolean;
	deliveries: number;
	/** Refused by the pair limit: nothing was stored (eventId is empty). */
	limited?: boolean;
	/** With NewEvent.twinCheck: a twin is stored, nothing was stored (eventId is empty). */
	twins?: boolean;
	/** With NewEvent.lease, when the event was stored: its deliveries, leased, in target order. */
	claimed?: ClaimedDelivery[];
}

export interface StoredEvent {
	id: string;
	kind: PostbackEvent;
	source: EventSource;
	dedupeKey: string | null;
	contentType: string;
	fields: Record<string, string>;
	receivedAt: number;
}

export interface Delivery {
	id: number;
	eventId: string;
	target: string;
	status: DeliveryStatus;
	attempts: number;
	createdAt: number;
	/** Start of the retry budget (creation, replay or requeue). */
	budgetStart: number;
	nextAttemptAt: number;
	leaseUntil: number | null;
	lastStatus: number | null;
	lastError: string | null;
	/** The start of the target's answer to the latest failed attempt (at most 1 KiB), or null. */
	lastResponse: string | null;
	/**
	 * The PayPalych Trigger's receipt on the latest attempt's answer (X-PayPalych-Receipt): what the
	 * workflow did with it. null when the target is not the trigger or gave none.
	 */
	lastReceipt: Receipt | null;
	deliveredAt: number | null;
	/** `attempts` when the delivery was last requeued (0 before): the current budget's attempts are the ones above it. */
	attemptBase: number;
	/** The next attempt was asked for by an operator (a replay or a requeue). */
	manual: boolean;
}

/** A delivery claimed for sending, with what must be sent. */
export interface ClaimedDelivery extends Delivery {
	kind: PostbackEvent;
	contentType: string;
	body: string;
	receivedAt: number;
}

export interface EventFilter {
	kind?: PostbackEvent;
	source?: EventSource;
	/** Exact match on the stored TrsId field. */
	trsId?: string;
	/** Exact match on the stored InvId field. */
	invId?: string;
	/** Events having at least one delivery in this status. */
	status?: DeliveryStatus;
	from?: number;
	to?: number;
	limit: number;
	/** Page backwards: events received strictly before this time. */
	before?: number;
	/** Page backwards: events strictly older than this one in (receivedAt, id) order. */
	cursor?: EventCursor;
}

/** A position in the events' (receivedAt, id) order: the last event of a page. */
export interface EventCursor {
	receivedAt: number;
	id: string;
}

export interface DeliveryFilter {
	status?: DeliveryStatus;
	target?: string;
	eventId?: string;
	from?: number;
	to?: number;
	limit: number;
	/** Page: deliveries with an id below this one. */
	beforeId?: number;
}

export interface DeliveryCounts {
	pending: number;
	retrying: number;
	delivering: number;
	delivered: number;
	dead: number;
}

/** Whether an attempt came from the queue's schedule or from an operator's replay or requeue. */
export type AttemptOrigin = 'scheduled' | 'manual';

/** Most bytes of a target's answer kept with an attempt. */
export const MAX_RESPONSE_BYTES = 1024;

/** One delivery attempt, kept for the operator (the attempts history). */
export interface DeliveryAttempt {
	id: number;
	deliveryId: number;
	/** 1-based, the attempt number sent as X-PayPalych-Delivery-Attempt. */
	attempt: number;
	/** Epoch ms. */
	startedAt: number;
	durationMs: number;
	httpStatus: number | null;
	/** null when delivered. */
	error: string | null;
	outcome: AttemptOutcome;
	origin: AttemptOrigin;
	/** The start of the target's answer (at most MAX_RESPONSE_BYTES), or null when none came. */
	response: string | null;
	/** The trigger's receipt on the answer (X-PayPalych-Receipt), or null when it gave none. */
	receipt: Receipt | null;
}

export type AttemptOutcome = 'delivered' | 'retry' | 'dead';

/** When an attempt started and how long it took (recorded with its outcome). */
export interface AttemptTiming {
	/** 1-based attempt number (the claim's `attempts`). */
	attempt: number;
	startedAt: number;
	durationMs: number;
	/** 'scheduled' when not given. */
	origin?: AttemptOrigin;
	/** The start of the target's answer; cut to MAX_RESPONSE_BYTES by the store. */
	response?: string | null;
	/** The trigger's receipt on the answer (one of RECEIPTS); none when not given. */
	receipt?: Receipt | null;
}

/**
 * The result of one attempt as the forwarder records it (see QueueStore.recordResults). A
 * delivered result is applied whoever holds the lease (the target has the event); a retry or a
 * dead one only while `owner` still holds it.
 */
export type DeliveryResult =
	| (ResultBase & {
			outcome: 'delivered';
			/** Not checked: a delivered attempt is recorded whoever holds the lease. */
			owner?: string;
			httpStatus: number;
	  })
	| (ResultBase & {
			outcome: 'retry';
			owner: string;
			/** When the next attempt is due. */
			nextAttemptAt: number;
			httpStatus: number | null;
			error: string;
	  })
	| (ResultBase & {
			outcome: 'dead';
			owner: string;
			httpStatus: number | null;
			error: string;
	  });

interface ResultBase {
	/** The delivery. */
	id: number;
	/** When the attempt ended: a delivered result's deliveredAt. */
	now: number;
	timing: AttemptTiming;
}

/** Counts of one time bucket and one event kind, for the console's charts. */
export interface ActivityBucket {
	/** Start of the bucket, epoch ms. */
	start: number;
	kind: PostbackEvent;
	/** Events received. */
	received: number;
	/** Deliveries delivered (by deliveredAt). */
	delivered: number;
	/** Attempts that failed (outcome retry or dead). */
	failedAttempts: number;
	/** Deliveries that died (by the start of their dead attempt). */
	died: number;
}

export interface TargetHealth {
	target: string;
	/** Attempts since `since`, and the successful ones among them. */
	attempts: number;
	succeeded: number;
	/** Deliveries to this target now in each state. */
	pending: number;
	delivering: number;
	dead: number;
	/** The latest failed attempt's error and start time (any time), or null. */
	lastError: string | null;
	lastErrorAt: number | null;
}

/** Most buckets one activity() call may ask for. */
export const MAX_ACTIVITY_BUCKETS = 10_000;

export type TargetsByKind = Partial<Record<PostbackEvent, readonly string[]>>;

/**
 * The store's three ports. Each caller gets the one it needs (app.ts wires them): the forwarder,
 * intake and the operations the queue, the reads and the console the reads, retention, readiness,
 * the console's logouts and the catch-up the housekeeping. `Store` is all three, for the opener.
 */

/**
 * The queue port: what the relay stores, claims and records. Every write resolves only after its
 * commit.
 */
export interface QueueStore {
	insertEvent(event: NewEvent): Promise<InsertResult>;
	/** Claims up to `limit` due deliveries (pending and due, or delivering with an expired lease). */
	claimDue(now: number, limit: number, leaseMs: number, owner: string): Promise<ClaimedDelivery[]>;
	/**
	 * The results of many attempts in one commit, applied in order (two results of one delivery: as
	 * two calls in sequence), each attempt recorded with its timing in the same commit as the
	 * delivery's new state. A retry or dead result changes nothing (and records no attempt) when its
	 * owner no longer holds the lease; a delivered attempt is always recorded (the target has the
	 * event).
	 */
	recordResults(results: readonly DeliveryResult[]): Promise<void>;
	/** Gives a claimed delivery back without counting an attempt (graceful shutdown). */
	releaseLease(id: number, owner: string, now: number): Promise<void>;
	/** New delivery rows for the given events, one per target of each event's kind. */
	replayEvents(eventIds: readonly string[], targets: TargetsByKind, now: number): Promise<number>;
	/** Dead deliveries back to pending with a fresh budget; all dead ones when `ids` is undefined. */
	requeueDead(ids: readonly number[] | undefined, now: number): Promise<number>;
	/**
	 * Calls `listener` when new work was stored, by this process or another one sharing the store
	 * (PostgreSQL LISTEN/NOTIFY). Returns the unsubscribe. Absent: only this process stores work.
	 */
	onNewWork?(listener: () => void): () => void;
}

/** The reads port: what the admin API, the console, metrics and alerts read; each method is one query. */
export interface ReadStore {
	/** Newest first; `cursor` pages on (receivedAt, id). */
	listEvents(filter: EventFilter): Promise<StoredEvent[]>;
	getEvent(id: string): Promise<StoredEvent | undefined>;
	getDelivery(id: number): Promise<Delivery | undefined>;
	listDeliveries(filter: DeliveryFilter): Promise<Delivery[]>;
	/** Every delivery of these events, newest first within each event. */
	deliveriesOfEvents(eventIds: readonly string[]): Promise<Delivery[]>;
	/** Every dead delivery, of one target or of all, newest first. */
	deadDeliveries(target?: string): Promise<Delivery[]>;
	eventIdsInRange(from: number, to: number, kind?: PostbackEvent): Promise<string[]>;
	counts(): Promise<DeliveryCounts>;
	/** Every attempt of these deliveries, ordered by deliveryId then attempt. */
	listAttempts(deliveryIds: readonly number[]): Promise<DeliveryAttempt[]>;
	/**
	 * Counts for the console's charts: for each bucket [from + i*bucketMs, from + (i+1)*bucketMs)
	 * and each event kind (zeros included), events received, deliveries delivered (by deliveredAt),
	 * attempts failed (retry or dead outcome) and deliveries that died (by the time of their dead
	 * attempt). Throws on a bad range or more than MAX_ACTIVITY_BUCKETS buckets.
	 */
	activity(from: number, to: number, bucketMs: number): Promise<ActivityBucket[]>;
	/** Per target: attempts and successful attempts since `since`, deliveries now pending/delivering/dead, and the last error with its time. */
	targetHealth(since: number): Promise<TargetHealth[]>;
	/** receivedAt of the oldest event that has a delivery not yet delivered (pending, delivering or dead), or null. */
	oldestUndelivered(): Promise<number | null>;
}

/** The housekeeping port: retention, the console's logouts, the catch-up's marks and lock, the statement's balances, readiness, closing. */
export interface Housekeeping extends BalanceBook {
	/**
	 * Deletes up to `limit` events received before `before` whose deliveries are all delivered or
	 * dead (an event with a pending or delivering delivery is never pruned), with their deliveries
	 * and attempts, oldest first. Returns how many events went. Their dedupe keys go with them: the
	 * caller keeps `before` older than the service's retry window (see retention.ts).
	 */
	prune(before: number, limit: number): Promise<number>;
	/** Records a console logout until the session would have expired (drops expired ones). */
	revokeSession(id: string, expiresAt: number, now: number): Promise<void>;
	/** Whether a console session was logged out (by any instance, before any restart). */
	sessionRevoked(id: string): Promise<boolean>;
	/**
	 * The catch-up's baseline, written once by the first call on a store (`now`, or the time of the
	 * oldest stored event or catch-up mark when the store was used before baselines existed) and read by
	 * every instance after, restarts included. Kept among the marks (never pruned).
	 */
	catchupBaseline(now: number): Promise<CatchupBaseline>;
	/**
	 * An operator's back-fill: moves `since` back to `since` (never forward), and forgets which bills
	 * the catch-up read in a final state (their marks), so that its next run reads them again and
	 * forwards what is missing since then. Written (after the baseline, if none) in one commit.
	 */
	backfillCatchup(since: number, now: number): Promise<CatchupBaseline>;
	/** The catch-up's marks (bills read in a final state) among `marks` that are stored. */
	catchupMarks(marks: readonly string[]): Promise<string[]>;
	/** Stores marks (kept ones get the new time) and deletes marks older than `pruneBefore`. */
	addCatchupMarks(marks: readonly string[], now: number, pruneBefore: number): Promise<void>;
	/**
	 * Remembers MULTI links (bill ids) the catch-up has seen pay, read at `now`: kept whatever their
	 * age, so that the catch-up reads them after its bill search no longer lists them.
	 */
	rememberLinks(ids: readonly string[], now: number): Promise<void>;
	/** Up to `limit` remembered links, least recently read first, but those in `excludeIds`. */
	linksToRead(limit: number, excludeIds?: readonly string[]): Promise<string[]>;
	/** Remembered links read at `now` (an id not remembered is not added). */
	markLinksRead(ids: readonly string[], now: number): Promise<void>;
	/**
	 * Runs `fn` only when no other catch-up holds the lock (PostgreSQL: an advisory lock shared by
	 * every relay on the database; SQLite: this process). Resolves `{ ran: false }` otherwise.
	 */
	withCatchupLock<T>(fn: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }>;
	/** Checks that the store answers and can commit a write (readiness). */
	ping(): Promise<void>;
	close(): Promise<void>;
}

/** The relay's store: the queue, the reads and the housekeeping (what the opener hands app.ts). */
export type Store = QueueStore & ReadStore & Housekeeping;
