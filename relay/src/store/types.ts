import type { PostbackEvent } from '../contract.ts';

/**
 * The relay's durable queue. Every method resolves only after its change is committed, so a
 * caller that answers the service after `insertEvent` resolved never acknowledges a postback the
 * store could lose. Asynchronous so that a networked store (PostgreSQL) fits the same shape.
 */
export type DeliveryStatus = 'pending' | 'delivering' | 'delivered' | 'dead';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivering', 'delivered', 'dead'];

export interface NewEvent {
	kind: PostbackEvent;
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
}

export interface InsertResult {
	eventId: string;
	duplicate: boolean;
	deliveries: number;
}

export interface StoredEvent {
	id: string;
	kind: PostbackEvent;
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
	deliveredAt: number | null;
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
	from?: number;
	to?: number;
	limit: number;
	/** Page backwards: events received strictly before this time. */
	before?: number;
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

export type TargetsByKind = Partial<Record<PostbackEvent, readonly string[]>>;

export interface Store {
	insertEvent(event: NewEvent): Promise<InsertResult>;
	/** Claims up to `limit` due deliveries (pending and due, or delivering with an expired lease). */
	claimDue(now: number, limit: number, leaseMs: number, owner: string): Promise<ClaimedDelivery[]>;
	markDelivered(id: number, now: number, httpStatus: number): Promise<void>;
	/** Schedules another attempt; ignored if this owner no longer holds the lease. */
	markRetry(id: number, owner: string, nextAttemptAt: number, httpStatus: number | null, error: string): Promise<void>;
	markDead(id: number, owner: string, httpStatus: number | null, error: string): Promise<void>;
	/** Gives a claimed delivery back without counting an attempt (graceful shutdown). */
	releaseLease(id: number, owner: string, now: number): Promise<void>;
	listEvents(filter: EventFilter): Promise<StoredEvent[]>;
	getEvent(id: string): Promise<StoredEvent | undefined>;
	listDeliveries(filter: DeliveryFilter): Promise<Delivery[]>;
	/** New delivery rows for the given events, one per target of each event's kind. */
	replayEvents(eventIds: readonly string[], targets: TargetsByKind, now: number): Promise<number>;
	eventIdsInRange(from: number, to: number, kind?: PostbackEvent): Promise<string[]>;
	/** Dead deliveries back to pending with a fresh budget; all dead ones when `ids` is undefined. */
	requeueDead(ids: readonly number[] | undefined, now: number): Promise<number>;
	counts(): Promise<DeliveryCounts>;
	ping(): Promise<void>;
	close(): Promise<void>;
}
