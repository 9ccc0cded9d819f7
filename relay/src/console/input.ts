import { z } from 'zod';
import { POSTBACK_EVENTS } from '../contract.ts';
import type { PostbackEvent } from '../contract.ts';
import { timeText } from '../routes/input.ts';
import { DELIVERY_STATUSES } from '../store/types.ts';
import type { DeliveryStatus } from '../store/types.ts';

/** Empty form fields count as absent. */
const blank = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/** A time typed into the console: the admin API's one time format (routes/input.ts), UTC unless zoned. */
const optionalTime = z.preprocess(blank, timeText.optional());
const requiredTime = z.preprocess(blank, timeText);

const kind = z.enum(POSTBACK_EVENTS as [PostbackEvent, ...PostbackEvent[]], {
	error: `must be one of ${POSTBACK_EVENTS.join(', ')}`,
});
const status = z.enum(DELIVERY_STATUSES as [DeliveryStatus, ...DeliveryStatus[]], {
	error: `must be one of ${DELIVERY_STATUSES.join(', ')}`,
});
const text = z
	.string({ error: 'must be given once' })
	.trim()
	.max(128, 'is longer than 128 characters');
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(blank, schema.optional());

/** Events page: `before` pages backwards from the last row shown (`<receivedAt>.<id>`). */
export const eventsQuery = z
	.object({
		kind: optional(kind),
		status: optional(status),
		from: optionalTime,
		to: optionalTime,
		trsId: optional(text),
		invId: optional(text),
		before: optional(
			z.string().regex(/^\d{1,15}\.[A-Za-z0-9_-]{1,64}$/, 'is not a page cursor'),
		).transform((v) => {
			if (v === undefined) return undefined;
			const dot = v.indexOf('.');
			return { receivedAt: Number(v.slice(0, dot)), id: v.slice(dot + 1) };
		}),
	})
	.refine((q) => q.from === undefined || q.to === undefined || q.from < q.to, {
		message: 'From must be before To',
		path: ['from'],
	});
export type EventsQuery = z.infer<typeof eventsQuery>;

/** Dead letters page: filter by target, page backwards by delivery id. */
export const deadQuery = z.object({
	target: optional(text),
	beforeId: optional(
		z.coerce
			.number({ error: 'is not a delivery id' })
			.int('is not a delivery id')
			.positive('is not a delivery id'),
	),
});

/** Every console form carries its CSRF token; where to go back to is checked by the route. */
const formBase = { _csrf: z.string().optional(), back: z.string().max(2000).optional() };
export const plainForm = z.object(formBase);
export const targetForm = z.object({
	...formBase,
	target: z.string({ error: 'is required' }).trim().min(1, 'is required'),
});
export const replayForm = z
	.object({
		...formBase,
		from: requiredTime,
		to: requiredTime,
		target: z.string({ error: 'is required' }).trim().min(1, 'is required'),
	})
	.refine((r) => r.from < r.to, { message: 'From must be before To', path: ['from'] });
/** The confirmed replay also carries the number of deliveries the confirmation showed. */
export const confirmedReplay = z.object({
	deliveries: z.coerce
		.number({ error: 'is missing: confirm the replay on its confirmation page' })
		.int()
		.min(1),
});

export const loginForm = z.object({
	token: z.string({ error: 'is required' }).max(4096),
	_csrf: z.string().optional(),
});

/** The messages a redirect after an action may show (only these, by code: nothing from the URL is echoed). */
export const noticeQuery = z.object({
	notice: z.enum(['requeued', 'replayed']).optional().catch(undefined),
	n: z.coerce.number().int().min(0).optional().catch(undefined),
	m: z.coerce.number().int().min(0).optional().catch(undefined),
});

/** Human lines for zod issues: `From: is not a date …`. */
export function describeIssues(error: z.ZodError, labels: Record<string, string> = {}): string[] {
	return error.issues.map((i) => {
		const key = String(i.path[0] ?? '');
		const label = labels[key] ?? key;
		return label ? `${label}: ${i.message}` : i.message;
	});
}
