import type { FastifyInstance } from 'fastify';
import { POSTBACK_EVENTS } from '../../contract.ts';
import { RelayError } from '../../errors.ts';
import { DELIVERY_STATUSES } from '../../store/types.ts';
import type { Delivery, DeliveryAttempt, EventCursor, StoredEvent } from '../../store/types.ts';
import { html } from '../html.ts';
import type { Html } from '../html.ts';
import { describeIssues, eventsQuery, plainForm } from '../input.ts';
import type { EventsQuery } from '../input.ts';
import {
	CONSOLE,
	badge,
	formGuard,
	inputTime,
	page,
	safeReturn,
	sendPage,
	statusWithReceipt,
	utc,
} from '../layout.ts';
import { PAGE_SIZE, noticeText, withNotice } from './common.ts';
import type { PageDeps } from './common.ts';

export const EVENT_REFRESH_SECONDS = 5;

/** Never shown, whatever a field list holds (the store already drops SignatureValue). */
export const isSecretField = (name: string) => /signature/i.test(name);

const amountOf = (e: StoredEvent) => e.fields.OutSum ?? e.fields.Amount ?? '';

/**
 * Counts by status, and by the trigger's receipt within a status ("1 delivered · duplicate"): a
 * delivery the workflow answered as a duplicate or ignored is not shown as one it ran.
 */
function deliverySummary(deliveries: readonly Delivery[]): Html {
	if (deliveries.length === 0) return html`<span class="muted">none</span>`;
	return html`${DELIVERY_STATUSES.map((s) => {
		const inStatus = deliveries.filter((d) => d.status === s);
		const receipts = [...new Set(inStatus.map((d) => d.lastReceipt))];
		return receipts.map((r) => {
			const n = inStatus.filter((d) => d.lastReceipt === r).length;
			return html`${badge(s, r ? `${n} ${s} · ${r}` : `${n} ${s}`)} `;
		});
	})}`;
}

export function eventsQueryString(q: Partial<EventsQuery>, before?: EventCursor): string {
	const p = new URLSearchParams();
	if (q.kind) p.set('kind', q.kind);
	if (q.status) p.set('status', q.status);
	if (q.from !== undefined) p.set('from', inputTime(q.from));
	if (q.to !== undefined) p.set('to', inputTime(q.to));
	if (q.trsId) p.set('trsId', q.trsId);
	if (q.invId) p.set('invId', q.invId);
	if (before) p.set('before', `${before.receivedAt}.${before.id}`);
	const s = p.toString();
	return s ? `?${s}` : '';
}

function filters(q: Partial<EventsQuery>, raw: Record<string, unknown>): Html {
	// After a bad input the form shows what was typed, so that it can be corrected.
	const value = (key: 'from' | 'to' | 'trsId' | 'invId') => {
		const typed = raw[key];
		if (typeof typed === 'string') return typed;
		const v = q[key];
		return typeof v === 'number' ? inputTime(v) : (v ?? '');
	};
	const option = (v: string, current: string | undefined) =>
		html`<option value="${v}"${v === current ? html` selected` : ''}>${v}</option>`;
	return html`<form class="filters card" method="get" action="${CONSOLE}/events">
		<label>Kind <select name="kind"><option value="">any</option>${POSTBACK_EVENTS.map((k) => option(k, q.kind))}</select></label>
		<label>Delivery status <select name="status"><option value="">any</option>${DELIVERY_STATUSES.map((s) => option(s, q.status))}</select></label>
		<label>From (UTC) <input type="datetime-local" step="1" name="from" value="${value('from')}"></label>
		<label>To (UTC) <input type="datetime-local" step="1" name="to" value="${value('to')}"></label>
		<label>TrsId <input name="trsId" value="${value('trsId')}" autocomplete="off"></label>
		<label>InvId <input name="invId" value="${value('invId')}" autocomplete="off"></label>
		<div class="actions"><button type="submit">Filter</button><a href="${CONSOLE}/events">Clear</a></div>
	</form>`;
}

export function eventsPage(opts: {
	csrf: string;
	query: Partial<EventsQuery>;
	raw: Record<string, unknown>;
	events: readonly StoredEvent[];
	deliveries: Map<string, Delivery[]>;
	next: EventCursor | undefined;
	errors?: readonly string[];
}): string {
	const { query, events } = opts;
	const rows = events.map(
		(e) => html`<tr>
			<td data-label="Received"><a href="${CONSOLE}/events/${encodeURIComponent(e.id)}">${utc(e.receivedAt)}</a></td>
			<td data-label="Kind">${e.kind}${e.source === 'catch-up' ? html` ${badge('catch-up', 'catch-up')}` : ''}</td>
			<td data-label="InvId" class="wrap">${e.fields.InvId ?? ''}</td>
			<td data-label="TrsId / Id" class="wrap">${e.fields.TrsId ?? e.fields.Id ?? ''}</td>
			<td data-label="Status">${e.fields.Status ?? ''}</td>
			<td data-label="Amount" class="num">${amountOf(e)}</td>
			<td data-label="Deliveries">${deliverySummary(opts.deliveries.get(e.id) ?? [])}</td>
		</tr>`,
	);
	return page(
		{ title: 'Events', section: 'events', csrf: opts.csrf, errors: opts.errors },
		html`<h1>Events</h1>
		${filters(query, opts.raw)}
		${
			opts.errors?.length
				? ''
				: html`<div class="scroll"><table class="cards">
				<thead><tr><th>Received (UTC)</th><th>Kind</th><th>InvId</th><th title="a refund's or chargeback's Id">TrsId / Id</th><th>Status</th><th class="num">Amount</th><th>Deliveries</th></tr></thead>
				<tbody>${rows.length ? rows : html`<tr><td colspan="7" class="muted">No event matches.</td></tr>`}</tbody>
			</table></div>
			<div class="pager">
				${query.before ? html`<a href="${CONSOLE}/events${eventsQueryString({ ...query, before: undefined })}">← Newest</a>` : html`<span></span>`}
				${opts.next ? html`<a href="${CONSOLE}/events${eventsQueryString(query, opts.next)}" rel="next">Older →</a>` : ''}
			</div>`
		}`,
	);
}

function attemptsTable(attempts: readonly DeliveryAttempt[]): Html {
	if (attempts.length === 0) return html`<p class="muted">No attempt yet.</p>`;
	return html`<div class="scroll"><table class="cards">
		<thead><tr><th class="num">#</th><th>Started (UTC)</th><th class="num">Took</th><th class="num">HTTP</th><th>Outcome</th><th>Error</th><th>Target's answer</th></tr></thead>
		<tbody>${attempts.map(
			(a) => html`<tr>
				<td data-label="#" class="num">${a.attempt}${a.origin === 'manual' ? html` <span class="origin muted" title="asked for by an operator (replay or requeue)">manual</span>` : ''}</td><td data-label="Started">${utc(a.startedAt)}</td><td data-label="Took" class="num">${a.durationMs} ms</td>
				<td data-label="HTTP" class="num">${statusWithReceipt(a.httpStatus, a.receipt)}</td><td data-label="Outcome">${badge(a.outcome)}</td><td data-label="Error" class="wrap">${a.error ?? ''}</td>
				<td data-label="Target's answer" class="wrap">${a.response ? html`<pre class="response">${a.response}</pre>` : ''}</td>
			</tr>`,
		)}</tbody>
	</table></div>`;
}

export function eventPage(opts: {
	csrf: string;
	event: StoredEvent;
	deliveries: readonly Delivery[];
	attempts: readonly DeliveryAttempt[];
	replayTargets: number;
	notice?: string;
}): string {
	const { event, csrf } = opts;
	const here = `${CONSOLE}/events/${encodeURIComponent(event.id)}`;
	const fields = Object.entries(event.fields).filter(([name]) => !isSecretField(name));
	// While a delivery is on its way the page reloads itself, so that the operator sees it land.
	const inFlight = opts.deliveries.some((d) => d.status === 'pending' || d.status === 'delivering');
	const deliveries = opts.deliveries.map(
		(d) => html`<section class="card" id="delivery-${d.id}">
			<div class="actions"><b>Delivery ${d.id}</b> ${badge(d.status)} <span class="wrap mono">${d.target}</span></div>
			<dl class="fields">
				<dt>Attempts</dt><dd>${d.attempts}</dd>
				<dt>Created</dt><dd>${utc(d.createdAt)}</dd>
				${d.status === 'pending' ? html`<dt>Next attempt</dt><dd>${utc(d.nextAttemptAt)}</dd>` : ''}
				${d.deliveredAt ? html`<dt>Delivered</dt><dd>${utc(d.deliveredAt)}</dd>` : ''}
				${d.lastStatus !== null ? html`<dt>Last HTTP status</dt><dd>${statusWithReceipt(d.lastStatus, d.lastReceipt)}</dd>` : ''}
				${d.lastStatus !== null ? html`<dt>Trigger's receipt</dt><dd>${d.lastReceipt ?? html`<span class="muted">— (none: the target is not the PayPalych Trigger, or gave no receipt)</span>`}</dd>` : ''}
				${d.lastError ? html`<dt>Last error</dt><dd>${d.lastError}</dd>` : ''}
				${d.lastResponse ? html`<dt>Target's answer</dt><dd><pre class="response">${d.lastResponse}</pre></dd>` : ''}
			</dl>
			${
				d.status === 'dead'
					? html`<form method="post" action="${CONSOLE}/deliveries/${d.id}/requeue" class="actions">${formGuard(csrf, here)}<button type="submit">Requeue delivery ${d.id}</button></form>`
					: ''
			}
			<h3 class="muted">Attempts</h3>
			${attemptsTable(opts.attempts.filter((a) => a.deliveryId === d.id))}
		</section>`,
	);
	return page(
		{
			title: `Event ${event.id}`,
			section: 'events',
			csrf,
			notice: opts.notice,
			refreshSeconds: inFlight ? EVENT_REFRESH_SECONDS : undefined,
		},
		html`<h1>${event.kind} event <span class="mono muted">${event.id}</span></h1>
		<div class="grid">
			<div class="card"><h2>Event</h2><dl class="fields">
				<dt>Received</dt><dd>${utc(event.receivedAt)} UTC</dd>
				<dt>Kind</dt><dd>${event.kind}</dd>
				<dt>Source</dt><dd>${event.source === 'catch-up' ? html`${badge('catch-up', 'catch-up')} found by the relay's catch-up in the service's records (no postback brought it)` : 'postback'}</dd>
				<dt>Duplicate key</dt><dd>${event.dedupeKey ?? '— (redirects are never deduplicated)'}</dd>
				<dt>Content type</dt><dd>${event.contentType}</dd>
			</dl></div>
			<div class="card"><h2>Fields</h2><dl class="fields">${fields.map(([name, value]) => html`<dt>${name}</dt><dd>${value}</dd>`)}</dl>
			<p class="muted">The signature and the raw body are never shown.</p></div>
		</div>
		<div class="actions card">
			${
				opts.replayTargets > 0
					? html`<form method="post" action="${here}/replay" class="inline">${formGuard(csrf, here)}<button type="submit" class="secondary">Replay to its ${opts.replayTargets} current target${opts.replayTargets === 1 ? '' : 's'}</button></form>`
					: html`<span class="muted">No target is configured for ${event.kind} events now: nothing to replay to.</span>`
			}
		</div>
		<h2>Deliveries (${opts.deliveries.length})</h2>
		${inFlight ? html`<p class="muted">A delivery is pending: this page reloads every ${EVENT_REFRESH_SECONDS} s.</p>` : ''}
		${deliveries.length ? deliveries : html`<p class="muted">No delivery.</p>`}`,
	);
}

const FILTER_LABELS = {
	from: 'From',
	to: 'To',
	trsId: 'TrsId',
	invId: 'InvId',
	kind: 'Kind',
	status: 'Delivery status',
	before: 'Page',
};

/** The events list (filtered, paged), one event with its deliveries, and replaying one event. */
export function eventRoutes(app: FastifyInstance, { ctx, csrfOf }: PageDeps): void {
	app.get('/events', async (request, reply) => {
		const raw = (request.query ?? {}) as Record<string, unknown>;
		const csrf = csrfOf(request);
		const q = eventsQuery.safeParse(raw);
		if (!q.success) {
			const errors = describeIssues(q.error, FILTER_LABELS);
			const none = { events: [], deliveries: new Map(), next: undefined };
			return sendPage(reply, 400, eventsPage({ csrf, query: {}, raw, ...none, errors }));
		}
		const { before, ...filter } = q.data;
		const { events, next } = await ctx.reads.eventsPage(filter, before, PAGE_SIZE);
		const deliveries = await ctx.reads.deliveriesOf(events);
		const shown = { csrf, query: q.data, raw: {}, events, deliveries, next };
		return sendPage(reply, 200, eventsPage(shown));
	});

	app.get<{ Params: { id: string } }>('/events/:id', async (request, reply) => {
		const detail = await ctx.reads.eventDetail(request.params.id);
		if (!detail) throw new RelayError(404, 'No such event', 'There is no event with this id.');
		const replayTargets = ctx.operations.targetsOf(detail.event.kind);
		const notice = noticeText(request.query);
		return sendPage(
			reply,
			200,
			eventPage({ csrf: csrfOf(request), ...detail, replayTargets, notice }),
		);
	});

	app.post<{ Params: { id: string } }>('/events/:id/replay', async (request, reply) => {
		const form = plainForm.safeParse(request.body);
		const r = await ctx.operations.replayEvent(request.params.id);
		request.log.info({ eventId: r.eventId, deliveries: r.deliveries }, 'console: event replayed');
		const here = `${CONSOLE}/events/${encodeURIComponent(r.eventId)}`;
		const back = safeReturn(form.success ? form.data.back : undefined, here);
		return reply.redirect(withNotice(back, 'replayed', 1, r.deliveries), 303);
	});
}
