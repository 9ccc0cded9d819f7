import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { targetsByKind } from '../targets.ts';
import type { RelayContext } from '../context.ts';
import { deliveryIdText } from '../operations.ts';
import { html } from './html.ts';
import {
	confirmedReplay,
	deadQuery,
	describeIssues,
	eventsQuery,
	noticeQuery,
	plainForm,
	replayForm,
	targetForm,
} from './input.ts';
import { CONSOLE, LOGIN, inputTime, page, safeReturn, sendPage } from './layout.ts';
import { deadPage, replayConfirmPage, replayErrorPage } from './pages/dead.ts';
import type { TargetDead } from './pages/dead.ts';
import { eventPage, eventsPage } from './pages/events.ts';
import { overviewPage } from './pages/overview.ts';
import { deliveriesOf, eventsPage as loadEventsPage } from './queries.ts';
import type { ConsoleAuth, ConsoleSession } from './session.ts';

const PAGE_SIZE = 50;

export interface PagesOptions {
	ctx: RelayContext;
	auth: ConsoleAuth;
	cookie: string;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** The text of a notice named in the query after an action (fixed sentences, numbers only). */
function noticeText(query: unknown): string | undefined {
	const q = noticeQuery.safeParse(query);
	if (!q.success || !q.data.notice) return undefined;
	const n = q.data.n ?? 0;
	const m = q.data.m ?? 0;
	if (q.data.notice === 'requeued')
		return `Requeued ${plural(n, 'dead delivery', 'dead deliveries')}: pending again, with a fresh retry budget.`;
	return `Replayed ${plural(n, 'event', 'events')}: ${plural(m, 'new delivery', 'new deliveries')}.`;
}

function withNotice(path: string, notice: string, n: number, m?: number): string {
	const url = new URL(path, 'http://relay.invalid');
	url.searchParams.set('notice', notice);
	url.searchParams.set('n', String(n));
	if (m !== undefined) url.searchParams.set('m', String(m));
	return `${url.pathname}${url.search}`;
}

/** The pages and actions behind the login; every POST needs the session's CSRF token. */
export async function consolePages(
	app: FastifyInstance,
	{ ctx, auth, cookie }: PagesOptions,
): Promise<void> {
	const sessions = new WeakMap<FastifyRequest, ConsoleSession>();
	const csrfOf = (request: FastifyRequest) =>
		auth.csrfToken(sessions.get(request) as ConsoleSession);
	const ops = ctx.operations;
	const configured = () => targetsByKind(ctx.config);
	const configuredTargets = ops.configuredTargets;

	/** A refusal page: what was wrong, and that nothing changed. */
	const refuse = (
		request: FastifyRequest,
		reply: FastifyReply,
		code: number,
		title: string,
		errors: readonly string[],
	) =>
		sendPage(
			reply,
			code,
			page(
				{
					title,
					csrf: sessions.has(request) ? csrfOf(request) : undefined,
					errors: [...errors, 'Nothing was changed.'],
				},
				html`<h1>${title}</h1><p><a href="${CONSOLE}">Back to the overview</a></p>`,
			),
		);

	app.addHook('onRequest', async (request, reply) => {
		const session = await auth.check(request.cookies[cookie]);
		if (!session) {
			if (request.method === 'GET' || request.method === 'HEAD') {
				return reply.redirect(
					`${LOGIN}?${new URLSearchParams({ next: request.url }).toString()}`,
					303,
				);
			}
			return refuse(request, reply, 401, 'Not logged in', [
				'Log in first (the login may have expired).',
			]);
		}
		sessions.set(request, session);
		return undefined;
	});

	app.addHook('preHandler', async (request, reply) => {
		if (request.method !== 'POST') return undefined;
		const type = String(request.headers['content-type'] ?? '');
		if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded')) {
			return refuse(request, reply, 415, 'Refused', [
				'Console actions are HTML form posts (application/x-www-form-urlencoded).',
			]);
		}
		const body = (request.body ?? {}) as Record<string, unknown>;
		if (!auth.checkCsrf(sessions.get(request) as ConsoleSession, body._csrf)) {
			request.log.warn({ reason: 'csrf' }, 'console action refused');
			return refuse(request, reply, 403, 'Refused', [
				'The form is missing its CSRF token, or it is not this login’s: reload the page and try again.',
			]);
		}
		return undefined;
	});

	app.setNotFoundHandler((request, reply) =>
		refuse(request, reply, 404, 'Not found', ['There is no such console page.']),
	);

	// Overview
	app.get('/', async (request, reply) => {
		return sendPage(
			reply,
			200,
			await overviewPage(ctx, { csrf: csrfOf(request), now: Date.now() }),
		);
	});

	// Events
	app.get('/events', async (request, reply) => {
		const raw = (request.query ?? {}) as Record<string, unknown>;
		const q = eventsQuery.safeParse(raw);
		if (!q.success) {
			const errors = describeIssues(q.error, {
				from: 'From',
				to: 'To',
				trsId: 'TrsId',
				invId: 'InvId',
				kind: 'Kind',
				status: 'Delivery status',
				before: 'Page',
			});
			return sendPage(
				reply,
				400,
				eventsPage({
					csrf: csrfOf(request),
					query: {},
					raw,
					events: [],
					deliveries: new Map(),
					next: undefined,
					errors,
				}),
			);
		}
		const { before, ...filter } = q.data;
		const { events, next } = await loadEventsPage(ctx.store, filter, before, PAGE_SIZE);
		const deliveries = await deliveriesOf(ctx.store, events);
		return sendPage(
			reply,
			200,
			eventsPage({ csrf: csrfOf(request), query: q.data, raw: {}, events, deliveries, next }),
		);
	});

	app.get<{ Params: { id: string } }>('/events/:id', async (request, reply) => {
		const event = await ctx.store.getEvent(request.params.id);
		if (!event)
			return refuse(request, reply, 404, 'No such event', [`There is no event with this id.`]);
		const deliveries = await ctx.store.listDeliveries({ eventId: event.id, limit: 1000 });
		const attempts = deliveries.length
			? await ctx.store.listAttempts(deliveries.map((d) => d.id))
			: [];
		return sendPage(
			reply,
			200,
			eventPage({
				csrf: csrfOf(request),
				event,
				deliveries,
				attempts,
				replayTargets: configured()[event.kind].length,
				notice: noticeText(request.query),
			}),
		);
	});

	app.post<{ Params: { id: string } }>('/events/:id/replay', async (request, reply) => {
		const form = plainForm.safeParse(request.body);
		const r = await ops.replayEvent(request.params.id);
		if (!r.ok) return refuse(request, reply, r.status, r.title, [r.reason]);
		request.log.info({ eventId: r.eventId, deliveries: r.deliveries }, 'console: event replayed');
		const here = `${CONSOLE}/events/${encodeURIComponent(r.eventId)}`;
		return reply.redirect(
			withNotice(
				safeReturn(form.success ? form.data.back : undefined, here),
				'replayed',
				1,
				r.deliveries,
			),
			303,
		);
	});

	// Dead letters
	app.post<{ Params: { id: string } }>('/deliveries/:id/requeue', async (request, reply) => {
		const form = plainForm.safeParse(request.body);
		const id = deliveryIdText.safeParse(request.params.id);
		if (!id.success)
			return refuse(request, reply, 400, 'Bad delivery id', [
				`“${request.params.id}” is not a delivery id.`,
			]);
		const r = await ops.requeueDelivery(id.data);
		if (!r.ok) return refuse(request, reply, r.status, r.title, [r.reason]);
		request.log.info({ deliveryId: id.data }, 'console: dead delivery requeued');
		const back = safeReturn(form.success ? form.data.back : undefined, `${CONSOLE}/dead`);
		return reply.redirect(withNotice(back, 'requeued', r.requeued), 303);
	});

	app.post('/dead/requeue-target', async (request, reply) => {
		const form = targetForm.safeParse(request.body);
		if (!form.success) {
			const errors = describeIssues(form.error, { target: 'Target' });
			return refuse(request, reply, 400, 'Bad request', errors);
		}
		const r = await ops.requeueDead({ target: form.data.target });
		if (!r.ok) return refuse(request, reply, r.status, r.title, [r.reason]);
		request.log.info({ requeued: r.requeued }, 'console: dead deliveries of a target requeued');
		const back = safeReturn(form.data.back, `${CONSOLE}/dead`);
		return reply.redirect(withNotice(back, 'requeued', r.requeued), 303);
	});

	app.get('/dead', async (request, reply) => {
		const q = deadQuery.safeParse(request.query ?? {});
		const now = Date.now();
		const byTarget = new Map<string, number>(configuredTargets().map((t) => [t, 0]));
		for (const h of await ctx.store.targetHealth(now))
			if (h.dead > 0 || byTarget.has(h.target)) byTarget.set(h.target, h.dead);
		const known = new Set(configuredTargets());
		const targets: TargetDead[] = [...byTarget].map(([target, n]) => ({
			target,
			dead: n,
			configured: known.has(target),
		}));
		targets.sort((a, b) => b.dead - a.dead || a.target.localeCompare(b.target));
		if (!q.success) {
			const errors = describeIssues(q.error, { target: 'Target', beforeId: 'Page' });
			return sendPage(
				reply,
				400,
				deadPage({
					csrf: csrfOf(request),
					targets,
					configuredTargets: configuredTargets(),
					dead: [],
					filterTarget: undefined,
					nextBeforeId: undefined,
					now,
					errors,
				}),
			);
		}
		const list = await ctx.store.listDeliveries({
			status: 'dead',
			target: q.data.target,
			beforeId: q.data.beforeId,
			limit: PAGE_SIZE + 1,
		});
		const shown = list.slice(0, PAGE_SIZE);
		return sendPage(
			reply,
			200,
			deadPage({
				csrf: csrfOf(request),
				targets,
				configuredTargets: configuredTargets(),
				dead: shown,
				filterTarget: q.data.target,
				nextBeforeId: list.length > PAGE_SIZE ? shown[shown.length - 1].id : undefined,
				now,
				notice: noticeText(request.query),
			}),
		);
	});

	/** The replay form's range and target, checked: the target must be configured now. */
	const readReplay = async (input: unknown) => {
		const raw = (input ?? {}) as Record<string, unknown>;
		const values = {
			from: typeof raw.from === 'string' ? raw.from : undefined,
			to: typeof raw.to === 'string' ? raw.to : undefined,
			target: typeof raw.target === 'string' ? raw.target : undefined,
		};
		const r = replayForm.safeParse(raw);
		if (!r.success) {
			const errors = describeIssues(r.error, { from: 'From', to: 'To', target: 'Target' });
			return { ok: false as const, values, errors };
		}
		const range = {
			from: r.data.from,
			to: r.data.to,
			target: r.data.target === '*' ? undefined : r.data.target,
		};
		const p = await ops.plan(range);
		if (!p.ok) return { ok: false as const, values, errors: [p.reason] };
		return {
			ok: true as const,
			range,
			plan: p.plan,
			values: { from: inputTime(r.data.from), to: inputTime(r.data.to), target: r.data.target },
		};
	};

	/** A replay form with bad input: shown again with what was wrong, nothing made. */
	const badReplay = (
		request: FastifyRequest,
		reply: FastifyReply,
		{
			values,
			errors,
		}: Pick<Extract<Awaited<ReturnType<typeof readReplay>>, { ok: false }>, 'values' | 'errors'>,
	) =>
		sendPage(
			reply,
			400,
			replayErrorPage({
				csrf: csrfOf(request),
				configuredTargets: configuredTargets(),
				values,
				errors,
			}),
		);

	app.get('/replay', async (request, reply) => {
		const r = await readReplay(request.query);
		if (!r.ok) return badReplay(request, reply, r);
		const confirm = { csrf: csrfOf(request), ...r.range, plan: r.plan };
		return sendPage(reply, 200, replayConfirmPage(confirm));
	});

	app.post('/replay', async (request, reply) => {
		const r = await readReplay(request.body);
		if (!r.ok) return badReplay(request, reply, r);
		const confirmed = confirmedReplay.safeParse(request.body);
		if (!confirmed.success) {
			return badReplay(request, reply, {
				values: r.values,
				errors: describeIssues(confirmed.error, { deliveries: 'Deliveries' }),
			});
		}
		const done = await ops.replayRange(r.range, confirmed.data.deliveries);
		if (!done.ok && 'changed' in done) {
			// Events arrived (or the targets changed) since the confirmation: confirm the new number.
			const confirm = { csrf: csrfOf(request), ...r.range, plan: done.changed };
			return sendPage(reply, 409, replayConfirmPage({ ...confirm, errors: [done.reason] }));
		}
		if (!done.ok) return refuse(request, reply, done.status, done.title, [done.reason]);
		request.log.info(
			{ events: done.events, deliveries: done.deliveries },
			'console: range replayed',
		);
		const next = withNotice(`${CONSOLE}/dead`, 'replayed', done.events, done.deliveries);
		return reply.redirect(next, 303);
	});
}
