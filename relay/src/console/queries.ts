import type { PostbackEvent } from '../contract.ts';
import type {
	Delivery,
	EventCursor,
	EventFilter,
	Store,
	StoredEvent,
	TargetsByKind,
} from '../store/types.ts';

export type { EventCursor } from '../store/types.ts';

/** One page of events, newest first, after `cursor` (the last row of the previous page). */
export async function eventsPage(
	store: Store,
	filter: Omit<EventFilter, 'limit' | 'before' | 'cursor'>,
	cursor: EventCursor | undefined,
	size: number,
): Promise<{ events: StoredEvent[]; next: EventCursor | undefined }> {
	const rows = await store.listEvents({ ...filter, cursor, limit: size + 1 });
	const events = rows.slice(0, size);
	const last = events.at(-1);
	return {
		events,
		next: rows.length > size && last ? { receivedAt: last.receivedAt, id: last.id } : undefined,
	};
}

/** One delivery by id. */
export function deliveryById(store: Store, id: number): Promise<Delivery | undefined> {
	return store.getDelivery(id);
}

/** Every dead delivery (of one target, or all). */
export function allDead(store: Store, target?: string): Promise<Delivery[]> {
	return store.deadDeliveries(target);
}

/** Deliveries of each event, by event id (one query). */
export async function deliveriesOf(
	store: Store,
	events: readonly StoredEvent[],
): Promise<Map<string, Delivery[]>> {
	const byEvent = new Map<string, Delivery[]>(events.map((e) => [e.id, []]));
	if (events.length === 0) return byEvent;
	for (const d of await store.deliveriesOfEvents(events.map((e) => e.id))) {
		byEvent.get(d.eventId)?.push(d);
	}
	return byEvent;
}

export interface ReplayPlan {
	/** The targets each kind is replayed to (only kinds with at least one). */
	targets: TargetsByKind;
	eventIds: string[];
	events: number;
	deliveries: number;
}

/**
 * What replaying the events received in [from, to) to `target` (one configured URL, or every
 * current target when undefined) would make: the same computation for the confirmation and for
 * the replay itself.
 */
export async function replayPlan(
	store: Store,
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
		const ids = await store.eventIdsInRange(from, to, kind);
		plan.targets[kind] = targets;
		plan.eventIds.push(...ids);
		plan.events += ids.length;
		plan.deliveries += ids.length * targets.length;
	}
	return plan;
}
