import { POSTBACK_EVENTS } from '../contract.ts';
import type { PostbackEvent } from '../contract.ts';
import { toAttempt, toDelivery, toEvent } from './rows.ts';
import {
	ACTIVITY_QUERIES,
	COUNTS,
	GET_DELIVERY,
	GET_EVENT,
	OLDEST_UNDELIVERED,
	TARGET_HEALTH,
	activityParams,
	assembleActivity,
	assembleCounts,
	attemptsQuery,
	checkActivityRange,
	deadDeliveriesQuery,
	deliveriesOfEventsQuery,
	deliveriesQuery,
	eventIdsQuery,
	eventsQuery,
	numbered,
	SESSION_REVOKED,
	toHealth,
} from './sql.ts';
import type { FieldExpr, Param, Row } from './sql.ts';
import type {
	ActivityBucket,
	Delivery,
	DeliveryAttempt,
	DeliveryCounts,
	DeliveryFilter,
	EventFilter,
	ReadStore,
	StoredEvent,
	TargetHealth,
} from './types.ts';

/** The stored field as PostgreSQL reads it (the same expression as the events_trs_id / events_inv_id indexes). */
export const field: FieldExpr = (name) => `(fields_json ->> '${name}')`;

/** The PostgreSQL store's reads (one query each); the store gives them its durable pool. */
export abstract class PostgresReads implements ReadStore {
	protected abstract read(sql: string, params?: Param[] | unknown[]): Promise<Row[]>;

	async listEvents(filter: EventFilter): Promise<StoredEvent[]> {
		const q = eventsQuery(filter, field);
		return (await this.read(numbered(q.sql), q.params)).map(toEvent);
	}

	async getEvent(id: string): Promise<StoredEvent | undefined> {
		const [row] = await this.read(numbered(GET_EVENT), [id]);
		return row ? toEvent(row) : undefined;
	}

	async listDeliveries(filter: DeliveryFilter): Promise<Delivery[]> {
		const q = deliveriesQuery(filter);
		return (await this.read(numbered(q.sql), q.params)).map(toDelivery);
	}

	async eventIdsInRange(from: number, to: number, kind?: PostbackEvent): Promise<string[]> {
		const q = eventIdsQuery(from, to, kind);
		return (await this.read(numbered(q.sql), q.params)).map((r) => String(r.id));
	}

	async counts(): Promise<DeliveryCounts> {
		return assembleCounts(await this.read(COUNTS));
	}

	async listAttempts(deliveryIds: readonly number[]): Promise<DeliveryAttempt[]> {
		if (deliveryIds.length === 0) return [];
		const q = attemptsQuery(deliveryIds);
		return (await this.read(numbered(q.sql), q.params)).map(toAttempt);
	}

	async activity(from: number, to: number, bucketMs: number): Promise<ActivityBucket[]> {
		const buckets = checkActivityRange(from, to, bucketMs);
		const params = activityParams(from, to, bucketMs);
		const [received, delivered, failed] = await Promise.all(
			[ACTIVITY_QUERIES.received, ACTIVITY_QUERIES.delivered, ACTIVITY_QUERIES.failed].map((sql) =>
				this.read(numbered(sql), params),
			),
		);
		return assembleActivity(POSTBACK_EVENTS, from, bucketMs, buckets, received, delivered, failed);
	}

	async targetHealth(since: number): Promise<TargetHealth[]> {
		return (await this.read(numbered(TARGET_HEALTH), [since])).map(toHealth);
	}

	async getDelivery(id: number): Promise<Delivery | undefined> {
		const [row] = await this.read(numbered(GET_DELIVERY), [id]);
		return row ? toDelivery(row) : undefined;
	}

	async deliveriesOfEvents(eventIds: readonly string[]): Promise<Delivery[]> {
		if (eventIds.length === 0) return [];
		const q = deliveriesOfEventsQuery(eventIds);
		return (await this.read(numbered(q.sql), q.params)).map(toDelivery);
	}

	async deadDeliveries(target?: string): Promise<Delivery[]> {
		const q = deadDeliveriesQuery(target);
		return (await this.read(numbered(q.sql), q.params)).map(toDelivery);
	}

	async oldestUndelivered(): Promise<number | null> {
		const [row] = await this.read(OLDEST_UNDELIVERED);
		return row?.t === null || row?.t === undefined ? null : Number(row.t);
	}

	async sessionRevoked(id: string): Promise<boolean> {
		return (await this.read(numbered(SESSION_REVOKED), [id])).length > 0;
	}
}
