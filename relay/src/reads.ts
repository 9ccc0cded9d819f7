import { z } from 'zod';
import type { PostbackEvent } from './contract.ts';
import type {
	ActivityBucket,
	Delivery,
	DeliveryCounts,
	DeliveryAttempt,
	DeliveryFilter,
	EventCursor,
	EventFilter,
	Store,
	StoredEvent,
	TargetHealth,
	TargetsByKind,
} from './store/types.ts';

/**
 * Every read the admin API and the console share, one way each: an event with its deliveries and
 * attempts, a delivery by id with its attempts, the lists and their pages, the replay plan and the
 * overview's figures. Times in a filter or a range are written one way for both surfaces
 * (`parseTime`). Reads only: the writes are the operations' (operations.ts).
 */

/** The one time format of the admin API and the console, as a refusal says it. */
export const TIME_FORMAT =
	'epoch milliseconds, or an ISO 8601 date-time such as 2026-01-31T12:00 (UTC unless it names a zone)';
const NOT_A_TIME = `is not a date and time (${TIME_FORMAT})`;

const ISO =
	/^(\d{4})-(\d\d)-(\d\d)(?:[T ]([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,3})?)?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?$/i;

/**
 * A time as the admin API and the console accept it: epoch milliseconds (a number or digits), or
 * an ISO 8601 date-time (`YYYY-MM-DD`, then optionally `THH:MM[:SS[.mmm]]` — a space for the `T`
 * will do — and a zone `Z` or `±HH:MM`; without a zone it is UTC, which is what the console
 * shows). Undefined for anything else, a day that does not exist, or a time beyond 2^53 ms.
 */
export function parseTime(value: string | number): number | undefined {
	if (typeof value === 'number')
		return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
	const v = value.trim();
	if (/^\d{1,16}$/.test(v)) return parseTime(Number(v));
	const m = ISO.exec(v);
	if (!m) return undefined;
	const [, y, mo, d] = m.map(Number);
	const day = new Date(Date.UTC(y, mo - 1, d));
	if (day.getUTCFullYear() !== y || day.getUTCMonth() !== mo - 1 || day.getUTCDate() !== d)
		return undefined;
	const time = v.slice(11).replace(/(Z|[+-]\d\d:?\d\d)$/i, '');
	const zone = (m[7] ?? 'Z').toUpperCase().replace(/^([+-]\d\d)(\d\d)$/, '$1:$2');
	const ms = Date.parse(`${v.slice(0, 10)}T${time || '00:00'}${zone}`);
	return Number.isFinite(ms) ? parseTime(ms) : undefined;
}

const toTime = (v: string | number, ctx: z.RefinementCtx) => {
	const ms = parseTime(v);
	if (ms === undefined) {
		ctx.addIssue({ code: 'custom', message: NOT_A_TIME });
		return z.NEVER;
	}
	return ms;
};

/** A time field of a query or a JSON body (a number or text), checked by `parseTime`. */
export const timeField = z.union([z.number(), z.string()]).transform(toTime);

/** A time field of a form (text), checked by `parseTime`. */
export const timeText = z.string({ error: 'is required' }).transform(toTime);

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
	readonly #store: Store;

	constructor(store: Store) {
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
