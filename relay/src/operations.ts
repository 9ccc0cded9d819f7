import { z } from 'zod';
import { allDead, deliveryById, replayPlan } from './console/queries.ts';
import type { ReplayPlan } from './console/queries.ts';
import type { PostbackEvent } from './contract.ts';
import type { RelayConfig } from './config.ts';
import type { Store } from './store/types.ts';
import { targetsByKind } from './targets.ts';

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
 * A value the store itself refuses (a NUL byte, a number beyond 2^53) throws StoreInputError,
 * which each surface's error handler answers with 400. Nothing changes on any refusal.
 */

/** A delivery id as text (a path segment or a form field): a positive safe integer. */
export const deliveryIdText = z
	.string()
	.regex(/^\d{1,16}$/, 'is not a delivery id')
	.transform(Number)
	.refine((n) => n > 0 && Number.isSafeInteger(n), 'is not a delivery id');

export interface Refusal {
	ok: false;
	status: 400 | 404 | 409;
	/** A short title (the console's page heading). */
	title: string;
	/** One sentence for the operator. */
	reason: string;
}
export type Outcome<T> = ({ ok: true } & T) | Refusal;

const refuse = (status: Refusal['status'], title: string, reason: string): Refusal => ({
	ok: false,
	status,
	title,
	reason,
});

export interface RangeRequest {
	from: number;
	to: number;
	kind?: PostbackEvent;
	/** One configured target URL; every current target when absent. */
	target?: string;
}

export type Operations = ReturnType<typeof operations>;

export function operations(ctx: { store: Store; config: RelayConfig; kick: () => void }) {
	const configured = () => targetsByKind(ctx.config);
	const configuredTargets = () => [...new Set(Object.values(configured()).flat())];

	/** The replay plan of a range: the same computation for a confirmation and for the replay. */
	async function plan(r: RangeRequest): Promise<Outcome<{ plan: ReplayPlan }>> {
		if (r.target !== undefined && !configuredTargets().includes(r.target))
			return refuse(400, 'Bad request', 'Target: is not one of the configured targets.');
		const all = configured();
		const kinds = r.kind
			? ({ [r.kind]: all[r.kind] } as Record<PostbackEvent, readonly string[]>)
			: all;
		return { ok: true, plan: await replayPlan(ctx.store, kinds, r.from, r.to, r.target) };
	}

	return {
		configuredTargets,
		plan,

		async replayEvent(id: string): Promise<Outcome<{ eventId: string; deliveries: number }>> {
			const event = await ctx.store.getEvent(id);
			if (!event) return refuse(404, 'No such event', 'There is no event with this id.');
			if (configured()[event.kind].length === 0)
				return refuse(
					409,
					'Nothing to replay to',
					`No target is configured for ${event.kind} events: the replay would make no delivery.`,
				);
			const deliveries = await ctx.store.replayEvents([event.id], configured(), Date.now());
			ctx.kick();
			return { ok: true, eventId: event.id, deliveries };
		},

		/**
		 * Replays the events of [from, to). With `expected` (the number a confirmation showed), a
		 * plan that now makes another number of deliveries is refused (409, `changed`).
		 */
		async replayRange(
			r: RangeRequest,
			expected?: number,
		): Promise<
			Outcome<{ events: number; deliveries: number }> | (Refusal & { changed: ReplayPlan })
		> {
			const p = await plan(r);
			if (!p.ok) return p;
			if (p.plan.deliveries === 0)
				return refuse(
					409,
					'Nothing to replay',
					'No event in this range goes to this target. The replay would make no delivery.',
				);
			if (expected !== undefined && p.plan.deliveries !== expected)
				return {
					...refuse(
						409,
						'Confirm again',
						`The range now makes ${p.plan.deliveries} deliveries, not the ${expected} you confirmed. Nothing was replayed: confirm again.`,
					),
					changed: p.plan,
				};
			const deliveries = await ctx.store.replayEvents(p.plan.eventIds, p.plan.targets, Date.now());
			ctx.kick();
			return { ok: true, events: p.plan.events, deliveries };
		},

		async requeueDelivery(id: number): Promise<Outcome<{ requeued: number }>> {
			const delivery = await deliveryById(ctx.store, id);
			if (!delivery) return refuse(404, 'No such delivery', `There is no delivery ${id}.`);
			if (delivery.status !== 'dead')
				return refuse(
					409,
					'Not a dead delivery',
					`Delivery ${id} is ${delivery.status}, not dead: only dead deliveries can be requeued.`,
				);
			const requeued = await ctx.store.requeueDead([id], Date.now());
			if (requeued === 0)
				return refuse(
					409,
					'Not a dead delivery',
					`Delivery ${id} is no longer dead (someone requeued it).`,
				);
			ctx.kick();
			return { ok: true, requeued };
		},

		/** Requeues the dead deliveries among `ids`, or those of `target`, or all of them. */
		async requeueDead(
			only: { ids?: number[]; target?: string } = {},
		): Promise<Outcome<{ requeued: number }>> {
			const ids =
				only.ids ??
				(only.target === undefined
					? undefined
					: (await allDead(ctx.store, only.target)).map((d) => d.id));
			const requeued = ids?.length === 0 ? 0 : await ctx.store.requeueDead(ids, Date.now());
			if (requeued === 0)
				return refuse(
					409,
					'No dead delivery',
					only.target === undefined
						? 'There is no dead delivery to requeue.'
						: `No dead delivery goes to ${only.target}.`,
				);
			ctx.kick();
			return { ok: true, requeued };
		},
	};
}
