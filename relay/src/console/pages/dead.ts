import type { FastifyInstance } from 'fastify';
import { RelayError } from '../../errors.ts';
import { deliveryIdText } from '../../routes/input.ts';
import type { Delivery } from '../../store/types.ts';
import { html } from '../html.ts';
import { deadQuery, describeIssues, plainForm, targetForm } from '../input.ts';
import { sendRefusal } from '../refusal.ts';
import {
	CONSOLE,
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
import { replayForm } from './replay.ts';

export interface TargetDead {
	target: string;
	dead: number;
	configured: boolean;
}

export function deadPage(opts: {
	csrf: string;
	targets: readonly TargetDead[];
	configuredTargets: readonly string[];
	dead: readonly Delivery[];
	filterTarget: string | undefined;
	nextBeforeId: number | undefined;
	now: number;
	notice?: string;
	errors?: readonly string[];
}): string {
	const { csrf } = opts;
	const back = `${CONSOLE}/dead${opts.filterTarget ? `?target=${encodeURIComponent(opts.filterTarget)}` : ''}`;
	const summary = opts.targets.map(
		(t) => html`<tr>
			<td data-label="Target" class="wrap mono"><a href="${CONSOLE}/dead?target=${encodeURIComponent(t.target)}">${t.target}</a>${t.configured ? '' : html` <span class="muted">(no longer configured)</span>`}</td>
			<td data-label="Dead" class="num">${t.dead}</td>
			<td data-label="">${
				t.dead > 0
					? html`<form method="post" action="${CONSOLE}/dead/requeue-target" class="inline">${formGuard(csrf, back)}<input type="hidden" name="target" value="${t.target}"><button type="submit">Requeue all ${t.dead}</button></form>`
					: ''
			}</td>
		</tr>`,
	);
	const rows = opts.dead.map(
		(d) => html`<tr>
			<td data-label="Id" class="num">${d.id}</td>
			<td data-label="Created"><a href="${CONSOLE}/events/${encodeURIComponent(d.eventId)}#delivery-${d.id}">${utc(d.createdAt)}</a></td>
			<td data-label="Target" class="wrap mono">${d.target}</td>
			<td data-label="Attempts" class="num">${d.attempts}</td>
			<td data-label="HTTP" class="num">${statusWithReceipt(d.lastStatus, d.lastReceipt)}</td>
			<td data-label="Last error" class="wrap">${d.lastError ?? ''}${d.lastResponse ? html`<pre class="response" title="The target's answer">${d.lastResponse}</pre>` : ''}</td>
			<td data-label=""><form method="post" action="${CONSOLE}/deliveries/${d.id}/requeue" class="inline">${formGuard(csrf, back)}<button type="submit" aria-label="Requeue delivery ${d.id}">Requeue</button></form></td>
		</tr>`,
	);
	const dayAgo = inputTime(opts.now - 86_400_000);
	return page(
		{ title: 'Dead letters', section: 'dead', csrf, notice: opts.notice, errors: opts.errors },
		html`<h1>Dead letters</h1>
		<p class="muted">A dead delivery was refused for good (a 4xx other than 404/408/429) or ran out of its retry budget. Fix the target, then requeue: it gets a fresh budget.</p>
		<h2>By target</h2>
		<div class="scroll"><table class="cards">
			<thead><tr><th>Target</th><th class="num">Dead</th><th></th></tr></thead>
			<tbody>${summary.length ? summary : html`<tr><td colspan="3" class="muted">No target.</td></tr>`}</tbody>
		</table></div>
		<h2>${opts.filterTarget ? html`Dead deliveries to <span class="mono">${opts.filterTarget}</span> · <a href="${CONSOLE}/dead">all targets</a>` : 'Dead deliveries'}</h2>
		<div class="scroll"><table class="cards">
			<thead><tr><th class="num">Id</th><th>Created (UTC)</th><th>Target</th><th class="num">Attempts</th><th class="num">HTTP</th><th>Last error and the target's answer</th><th></th></tr></thead>
			<tbody>${rows.length ? rows : html`<tr><td colspan="7" class="muted">No dead delivery.</td></tr>`}</tbody>
		</table></div>
		${
			opts.nextBeforeId
				? html`<div class="pager"><span></span><a rel="next" href="${CONSOLE}/dead?${new URLSearchParams({ ...(opts.filterTarget ? { target: opts.filterTarget } : {}), beforeId: String(opts.nextBeforeId) }).toString()}">Older →</a></div>`
				: ''
		}
		<h2>Replay a time range</h2>
		<p class="muted">Sends every event received in the range again, as new deliveries, to one target (after it was fixed or added) or to every current target. You confirm on the next page, which says how many deliveries it makes.</p>
		${replayForm(opts.configuredTargets, { from: dayAgo, to: inputTime(opts.now) })}`,
	);
}

/** The dead deliveries per target: every configured target (even at 0), and any other with some. */
async function deadByTarget({ ctx }: PageDeps, now: number): Promise<TargetDead[]> {
	const configured = ctx.operations.configuredTargets();
	const byTarget = new Map<string, number>(configured.map((t) => [t, 0]));
	for (const h of await ctx.reads.targetHealth(now))
		if (h.dead > 0 || byTarget.has(h.target)) byTarget.set(h.target, h.dead);
	const known = new Set(configured);
	const targets = [...byTarget].map(([target, n]) => ({
		target,
		dead: n,
		configured: known.has(target),
	}));
	return targets.sort((a, b) => b.dead - a.dead || a.target.localeCompare(b.target));
}

/** The dead-letter page, and requeueing one dead delivery or those of a target. */
export function deadRoutes(app: FastifyInstance, deps: PageDeps): void {
	const { ctx, csrfOf } = deps;

	app.get('/dead', async (request, reply) => {
		const q = deadQuery.safeParse(request.query ?? {});
		const now = Date.now();
		const shown = {
			csrf: csrfOf(request),
			targets: await deadByTarget(deps, now),
			configuredTargets: ctx.operations.configuredTargets(),
			now,
		};
		if (!q.success) {
			const errors = describeIssues(q.error, { target: 'Target', beforeId: 'Page' });
			const none = { dead: [], filterTarget: undefined, nextBeforeId: undefined };
			return sendPage(reply, 400, deadPage({ ...shown, ...none, errors }));
		}
		const { target, beforeId } = q.data;
		const list = await ctx.reads.deliveriesPage({ status: 'dead', target, beforeId }, PAGE_SIZE);
		return sendPage(
			reply,
			200,
			deadPage({
				...shown,
				dead: list.deliveries,
				filterTarget: target,
				nextBeforeId: list.next,
				notice: noticeText(request.query),
			}),
		);
	});

	app.post<{ Params: { id: string } }>('/deliveries/:id/requeue', async (request, reply) => {
		const form = plainForm.safeParse(request.body);
		const id = deliveryIdText.safeParse(request.params.id);
		if (!id.success)
			throw new RelayError(400, 'Bad delivery id', `“${request.params.id}” is not a delivery id.`);
		const r = await ctx.operations.requeueDelivery(id.data);
		request.log.info({ deliveryId: id.data }, 'console: dead delivery requeued');
		const back = safeReturn(form.success ? form.data.back : undefined, `${CONSOLE}/dead`);
		return reply.redirect(withNotice(back, 'requeued', r.requeued), 303);
	});

	app.post('/dead/requeue-target', async (request, reply) => {
		const form = targetForm.safeParse(request.body);
		if (!form.success) {
			const errors = describeIssues(form.error, { target: 'Target' });
			return sendRefusal(reply, 400, 'Bad request', errors, csrfOf(request));
		}
		const r = await ctx.operations.requeueDead({ target: form.data.target });
		request.log.info({ requeued: r.requeued }, 'console: dead deliveries of a target requeued');
		const back = safeReturn(form.data.back, `${CONSOLE}/dead`);
		return reply.redirect(withNotice(back, 'requeued', r.requeued), 303);
	});
}
