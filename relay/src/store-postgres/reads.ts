import { POSTBACK_EVENTS } from '../contract.ts';
import type { PostbackEvent } from '../contract.ts';
import {
	activityBuckets,
	assembleActivity,
	assembleCounts,
	toAttempt,
	toDelivery,
	toEvent,
	toHealth,
} from '../store/rows.ts';
import type { Row } from '../store/rows.ts';
import type {
	ActivityBucket,
	Delivery,
	DeliveryAttempt,
	DeliveryCounts,
	DeliveryFilter,
	EventFilter,
	Housekeeping,
	ReadStore,
	StoredEvent,
	TargetHealth,
} from '../store/types.ts';
import {
	ACTIVITY_QUERIES,
	ATTEMPTS,
	COUNTS,
	DEAD,
	DEAD_OF_TARGET,
	DELIVERIES_OF_EVENTS,
	GET_DELIVERY,
	GET_EVENT,
	OLDEST_UNDELIVERED,
	SESSION_REVOKED,
	TARGET_HEALTH,
	deliveriesQuery,
	eventIdsQuery,
	eventsQuery,
} from './statements.ts';

/** Runs one statement and answers its rows (the store's durable pool). */
export type Read = (sql: string, params?: readonly unknown[]) => Promise<Row[]>;

/** What postgresReads answers: the reads port, and whether a console session was logged out. */
export type PostgresReadsPort = ReadStore & Pick<Housekeeping, 'sessionRevoked'>;

/**
 * The PostgreSQL store's reads, one statement each, over the `read` the store passes in: the store
 * holds this object and hands each read on to it. Input was checked at the store's edge.
 */
export function postgresReads(read: Read): PostgresReadsPort {
	return {
		async listEvents(filter: EventFilter): Promise<StoredEvent[]> {
			const q = eventsQuery(filter);
			return (await read(q.sql, q.params)).map(toEvent);
		},
		async getEvent(id: string): Promise<StoredEvent | undefined> {
			const [row] = await read(GET_EVENT, [id]);
			return row ? toEvent(row) : undefined;
		},
		async listDeliveries(filter: DeliveryFilter): Promise<Delivery[]> {
			const q = deliveriesQuery(filter);
			return (await read(q.sql, q.params)).map(toDelivery);
		},
		async getDelivery(id: number): Promise<Delivery | undefined> {
			const [row] = await read(GET_DELIVERY, [id]);
			return row ? toDelivery(row) : undefined;
		},
		async deliveriesOfEvents(eventIds: readonly string[]): Promise<Delivery[]> {
			if (eventIds.length === 0) return [];
			return (await read(DELIVERIES_OF_EVENTS, [[...eventIds]])).map(toDelivery);
		},
		async deadDeliveries(target?: string): Promise<Delivery[]> {
			const rows = target === undefined ? await read(DEAD) : await read(DEAD_OF_TARGET, [target]);
			return rows.map(toDelivery);
		},
		async eventIdsInRange(from: number, to: number, kind?: PostbackEvent): Promise<string[]> {
			const q = eventIdsQuery(from, to, kind);
			return (await read(q.sql, q.params)).map((r) => String(r.id));
		},
		async counts(): Promise<DeliveryCounts> {
			return assembleCounts(await read(COUNTS));
		},
		async listAttempts(deliveryIds: readonly number[]): Promise<DeliveryAttempt[]> {
			if (deliveryIds.length === 0) return [];
			return (await read(ATTEMPTS, [[...deliveryIds]])).map(toAttempt);
		},
		async activity(from: number, to: number, bucketMs: number): Promise<ActivityBucket[]> {
			const params = [from, bucketMs, from, to];
			const [received, delivered, failed] = await Promise.all(
				[ACTIVITY_QUERIES.received, ACTIVITY_QUERIES.delivered, ACTIVITY_QUERIES.failed].map(
					(sql) => read(sql, params),
				),
			);
			const buckets = activityBuckets(from, to, bucketMs);
			return assembleActivity(
				POSTBACK_EVENTS,
				from,
				bucketMs,
				buckets,
				received,
				delivered,
				failed,
			);
		},
		async targetHealth(since: number): Promise<TargetHealth[]> {
			return (await read(TARGET_HEALTH, [since])).map(toHealth);
		},
		async oldestUndelivered(): Promise<number | null> {
			const [row] = await read(OLDEST_UNDELIVERED);
			return row?.t === null || row?.t === undefined ? null : Number(row.t);
		},
		async sessionRevoked(id: string): Promise<boolean> {
			return (await read(SESSION_REVOKED, [id])).length > 0;
		},
	};
}
