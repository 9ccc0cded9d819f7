import type { PostbackEvent } from './contract.ts';
import type {
	ActivityBucket,
	Delivery,
	DeliveryCounts,
	DeliveryAttempt,
	DeliveryFilter,
	EventCursor,
	EventFilter,
	ReadStore,
	StoredEvent,
	TargetHealth,
	TargetsByKind,
} from './store/types.ts';

/**
 * Every read the admin API and the console share, one way each: an event with its deliveries and
 * attempts, a delivery by id with its attempts, the lists and their pages, the replay plan and the
 * overview's figures. They take plain values: each surface parses its input first (the times and
 * ids both read alike are in routes/input.ts). Reads only: the writes are the operations'
 * (operations.ts).
 */

/** An event with its deliveries and, for each, its attempts. */
export interface EventDetail {
	event: StoredEvent;
	deliveries: Delivery[];
	attempts: DeliveryAttempt[];
}

export interface ReplayPlan {
	/** The targets each kind is replayed to (only kinds with at least one). */
	targets: TargetsByKind;
	eventIds: string[];
	events: number;
	deliveries: number;
}

/** The most deliveries of one event a read returns (an event fans out to a few targets). */
const DELIVERIES_PER_EVENT = 1000;

/** The shared reads over one store (see the top of this file). */
export class Reads {
	readonly #store: ReadStore;

	constructor(store: ReadStore) {
		this.#store = store;
	}

	event(id: string): Promise<StoredEvent | undefined> {
		return this.#store.getEvent(id);
	}

	/** An event with its deliveries and their attempts; undefined when there is no such event. */
	async eventDetail(id: string): Promise<EventDetail | undefined> {
		const event = await this.#store.getEvent(id);
		if (!event) return undefined;
		const deliveries = await this.#store.listDeliveries({
			eventId: event.id,
			limit: DELIVERIES_PER_EVENT,
		});
		const attempts = deliveries.length
			? await this.#store.listAttempts(deliveries.map((d) => d.id))
			: [];
		return { event, deliveries, attempts };
	}

	delivery(id: number): Promise<Delivery | undefined> {
		return this.#store.getDelivery(id);
	}

	/** A delivery with its attempts; undefined when there is no such delivery. */
	async deliveryAttempts(
		id: number,
	): Promise<{ delivery: Delivery; attempts: DeliveryAttempt[] } | undefined> {
		const delivery = await this.#store.getDelivery(id);
		if (!delivery) return undefined;
		return { delivery, attempts: await this.#store.listAttempts([id]) };
	}

	events(filter: EventFilter): Promise<StoredEvent[]> {
		return this.#store.listEvents(filter);
	}

	/** One page of events, newest first, after `cursor` (the last row of the previous page). */
	async eventsPage(
		filter: Omit<EventFilter, 'limit' | 'before' | 'cursor'>,
		cursor: EventCursor | undefined,
		size: number,
	): Promise<{ events: StoredEvent[]; next: EventCursor | undefined }> {
		const rows = await this.#store.listEvents({ ...filter, cursor, limit: size + 1 });
		const events = rows.slice(0, size);
		const last = events.at(-1);
		const more = rows.length > size && last;
		return { events, next: more ? { receivedAt: last.receivedAt, id: last.id } : undefined };
	}

	deliveries(filter: DeliveryFilter): Promise<Delivery[]> {
		return this.#store.listDeliveries(filter);
	}

	/** One page of deliveries, newest first, below `filter.beforeId`; `next` pages on. */
	async deliveriesPage(
		filter: Omit<DeliveryFilter, 'limit'>,
		size: number,
	): Promise<{ deliveries: Delivery[]; next: number | undefined }> {
		const rows = await this.#store.listDeliveries({ ...filter, limit: size + 1 });
		const deliveries = rows.slice(0, size);
		const more = rows.length > size && deliveries.length > 0;
		return { deliveries, next: more ? deliveries[deliveries.length - 1].id : undefined };
	}

	/** Deliveries of each event, by event id (one query). */
	async deliveriesOf(events: readonly StoredEvent[]): Promise<Map<string, Delivery[]>> {
		const byEvent = new Map<string, Delivery[]>(events.map((e) => [e.id, []]));
		if (events.length === 0) return byEvent;
		for (const d of await this.#store.deliveriesOfEvents(events.map((e) => e.id)))
			byEvent.get(d.eventId)?.push(d);
		return byEvent;
	}

	/** Every dead delivery (of one target, or all). */
	dead(target?: string): Promise<Delivery[]> {
		return this.#store.deadDeliveries(target);
	}

	/**
	 * What replaying the events received in [from, to) to `target` (one configured URL, or every
	 * target of `configured` when undefined) would make: the same computation for a confirmation
	 * and for the replay itself.
	 */
	async replayPlan(
		configured: Record<PostbackEvent, readonly string[]>,
		from: number,
		to: number,
		target: string | undefined,
	): Promise<ReplayPlan> {
		const plan: ReplayPlan = { targets: {}, eventIds: [], events: 0, deliveries: 0 };
		for (const [kind, list] of Object.entries(configured) as Array<
			[PostbackEvent, readonly string[]]
		>) {
			const targets = target === undefined ? list : list.filter((t) => t === target);
			if (targets.length === 0) continue;
			const ids = await this.#store.eventIdsInRange(from, to, kind);
			plan.targets[kind] = targets;
			plan.eventIds.push(...ids);
			plan.events += ids.length;
			plan.deliveries += ids.length * targets.length;
		}
		return plan;
	}

	// The overview's figures.
	counts(): Promise<DeliveryCounts> {
		return this.#store.counts();
	}

	oldestUndelivered(): Promise<number | null> {
		return this.#store.oldestUndelivered();
	}

	targetHealth(since: number): Promise<TargetHealth[]> {
		return this.#store.targetHealth(since);
	}

	activity(from: number, to: number, bucketMs: number): Promise<ActivityBucket[]> {
		return this.#store.activity(from, to, bucketMs);
	}
}
