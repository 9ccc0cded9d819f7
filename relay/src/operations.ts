import type { PostbackEvent } from './contract.ts';
import { OperationRefused } from './errors.ts';
import type { Reads, ReplayPlan } from './reads.ts';
import type { QueueStore } from './store/types.ts';

/**
 * The operator's write operations (replay one event, replay a time range, requeue one dead
 * delivery, requeue dead deliveries), with one set of rules for the admin API and the console:
 *
 * - bad input (an id that is not a delivery id, a target that is not configured): 400;
 * - an event or a delivery that does not exist: 404;
 * - an operation that would change nothing (a replay that makes no delivery, a requeue that finds
 *   no dead delivery, a delivery that is not dead): 409 with the reason;
 * - otherwise the store changes and the forwarder is woken.
 *
 * The operations take plain values: each surface parses its input first (routes/input.ts holds
 * what both read alike). A refusal throws an OperationRefused (errors.ts), a confirmed range that
 * changed since its confirmation a ReplayChanged (below), and a value the store itself refuses (a
 * NUL byte, a number beyond 2^53) a StoreInputError: each surface maps them once (routes/errors.ts:
 * JSON for the admin API, a page for the console). Nothing changes on any refusal.
 */

/**
 * A confirmed range replay whose plan changed since the confirmation (events arrived, targets
 * changed): 409, nothing replayed; `plan` is the new one to confirm.
 */
export class ReplayChanged extends OperationRefused {
	/** The plan as it is now, to confirm again. */
	readonly plan: ReplayPlan;

	constructor(plan: ReplayPlan, message: string) {
		super(409, 'Confirm again', message);
		this.plan = plan;
	}
}

const refuse = (status: 400 | 404 | 409, title: string, reason: string) =>
	new OperationRefused(status, title, reason);

export interface RangeRequest {
	from: number;
	to: number;
	kind?: PostbackEvent;
	/** One configured target URL; every current target when absent. */
	target?: string;
}

export interface OperationsDeps {
	/** The targets each kind fans out to now (the configuration's). */
	targets: () => Record<PostbackEvent, readonly string[]>;
	reads: Reads;
	/** The writes (replay, requeue). */
	store: Pick<QueueStore, 'replayEvents' | 'requeueDead'>;
	/** Wakes the forwarder after a change. */
	kick: () => void;
}

/** The operations over the shared reads and the store's writes (see the top of this file). */
export class Operations {
	readonly #deps: OperationsDeps;

	constructor(deps: OperationsDeps) {
		this.#deps = deps;
	}

	/** Every configured target, once. */
	configuredTargets(): string[] {
		return [...new Set(Object.values(this.#deps.targets()).flat())];
	}

	/** How many targets an event of `kind` is replayed to now. */
	targetsOf(kind: PostbackEvent): number {
		return this.#deps.targets()[kind].length;
	}

	/** The replay plan of a range: the same computation for a confirmation and for the replay. */
	async plan(r: RangeRequest): Promise<ReplayPlan> {
		if (r.target !== undefined && !this.configuredTargets().includes(r.target))
			throw refuse(400, 'Bad request', 'Target: is not one of the configured targets.');
		const all = this.#deps.targets();
		const kinds = r.kind
			? ({ [r.kind]: all[r.kind] } as Record<PostbackEvent, readonly string[]>)
			: all;
		return this.#deps.reads.replayPlan(kinds, r.from, r.to, r.target);
	}

	async replayEvent(id: string): Promise<{ eventId: string; deliveries: number }> {
		const { reads, store, targets } = this.#deps;
		const event = await reads.event(id);
		if (!event) throw refuse(404, 'No such event', 'There is no event with this id.');
		if (targets()[event.kind].length === 0)
			throw refuse(
				409,
				'Nothing to replay to',
				`No target is configured for ${event.kind} events: the replay would make no delivery.`,
			);
		const deliveries = await store.replayEvents([event.id], targets(), Date.now());
		this.#deps.kick();
		return { eventId: event.id, deliveries };
	}

	/**
	 * Replays the events of [from, to). With `expected` (the number a confirmation showed), a
	 * plan that now makes another number of deliveries is refused (ReplayChanged, 409).
	 */
	async replayRange(
		r: RangeRequest,
		expected?: number,
	): Promise<{ events: number; deliveries: number }> {
		const p = await this.plan(r);
		if (p.deliveries === 0)
			throw refuse(
				409,
				'Nothing to replay',
				'No event in this range goes to this target. The replay would make no delivery.',
			);
		if (expected !== undefined && p.deliveries !== expected)
			throw new ReplayChanged(
				p,
				`The range now makes ${p.deliveries} deliveries, not the ${expected} you confirmed. Nothing was replayed: confirm again.`,
			);
		const deliveries = await this.#deps.store.replayEvents(p.eventIds, p.targets, Date.now());
		this.#deps.kick();
		return { events: p.events, deliveries };
	}

	async requeueDelivery(id: number): Promise<{ requeued: number }> {
		const delivery = await this.#deps.reads.delivery(id);
		if (!delivery) throw refuse(404, 'No such delivery', `There is no delivery ${id}.`);
		if (delivery.status !== 'dead')
			throw refuse(
				409,
				'Not a dead delivery',
				`Delivery ${id} is ${delivery.status}, not dead: only dead deliveries can be requeued.`,
			);
		const requeued = await this.#deps.store.requeueDead([id], Date.now());
		if (requeued === 0)
			throw refuse(
				409,
				'Not a dead delivery',
				`Delivery ${id} is no longer dead (someone requeued it).`,
			);
		this.#deps.kick();
		return { requeued };
	}

	/** Requeues the dead deliveries among `ids`, or those of `target`, or all of them. */
	async requeueDead(only: { ids?: number[]; target?: string } = {}): Promise<{ requeued: number }> {
		const { reads, store } = this.#deps;
		const ids =
			only.ids ??
			(only.target === undefined ? undefined : (await reads.dead(only.target)).map((d) => d.id));
		const requeued = ids?.length === 0 ? 0 : await store.requeueDead(ids, Date.now());
		if (requeued === 0)
			throw refuse(
				409,
				'No dead delivery',
				only.target === undefined
					? 'There is no dead delivery to requeue.'
					: `No dead delivery goes to ${only.target}.`,
			);
		this.#deps.kick();
		return { requeued };
	}
}
