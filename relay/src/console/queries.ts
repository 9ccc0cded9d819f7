import type { PostbackEvent } from '../contract.ts';
import type { Delivery, EventFilter, Store, StoredEvent, TargetsByKind } from '../store/types.ts';

/** The store's largest page (the admin API caps `limit` at it too). */
const CHUNK = 1000;

export interface EventCursor {
	receivedAt: number;
	id: string;
}

/**
 * One page of events, newest first, after `cursor` (the last row of the previous page). The store
 * pages by time only (`before`), so rows that share the cursor's millisecond are fetched again and
 * the ones already shown (ordered by id, descending) are dropped: none is skipped or shown twice.
 */
export async function eventsPage(
	store: Store,
	filter: Omit<EventFilter, 'limit' | 'before'>,
	cursor: EventCursor | undefined,
	size: number,
): Promise<{ events: StoredEvent[]; next: EventCursor | undefined }> {
	let limit = size + 1;
	for (;;) {
		const rows = await store.listEvents({
			...filter,
			before: cursor ? cursor.receivedAt + 1 : undefined,
			limit,
		});
		const fresh = cursor
			? rows.filter((e) => !(e.receivedAt === cursor.receivedAt && e.id >= cursor.id))
			: rows;
		const shownAgain = rows.length - fresh.length;
		if (
			fresh.length > size ||
			rows.length < limit ||
			shownAgain === 0 ||
			limit >= size + 1 + shownAgain
		) {
			const events = fresh.slice(0, size);
			const last = events.at(-1);
			return {
				events,
				next:
					fresh.length > size && last ? { receivedAt: last.receivedAt, id: last.id } : undefined,
			};
		}
		limit = size + 1 + shownAgain;
	}
}

/** One delivery by id (the store lists deliveries below an id, newest first). */
export async function deliveryById(store: Store, id: number): Promise<Delivery | undefined> {
	const [d] = await store.listDeliveries({ beforeId: id + 1, limit: 1 });
	return d?.id === id ? d : undefined;
}

/** Every dead delivery (of one target, or all), read in pages. */
export async function allDead(store: Store, target?: string): Promise<Delivery[]> {
	const out: Delivery[] = [];
	let beforeId: number | undefined;
	for (;;) {
		const page = await store.listDeliveries({ status: 'dead', target, beforeId, limit: CHUNK });
		out.push(...page);
		if (page.length < CHUNK) return out;
		beforeId = page[page.length - 1].id;
	}
}

/** Deliveries of each event, by event id. */
export async function deliveriesOf(
	store: Store,
	events: readonly StoredEvent[],
): Promise<Map<string, Delivery[]>> {
	const lists = await Promise.all(
		events.map((e) => store.listDeliveries({ eventId: e.id, limit: CHUNK })),
	);
	return new Map(events.map((e, i) => [e.id, lists[i]]));
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
