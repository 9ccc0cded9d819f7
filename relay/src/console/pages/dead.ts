import type { Delivery } from '../../store/types.ts';
import { html } from '../html.ts';
import type { Html } from '../html.ts';
import { CONSOLE, formGuard, inputTime, page, utc } from '../layout.ts';
import type { ReplayPlan } from '../queries.ts';

export interface TargetDead {
	target: string;
	dead: number;
	configured: boolean;
}

export function replayForm(
	targets: readonly string[],
	values: { from?: string; to?: string; target?: string },
): Html {
	return html`<form class="filters card" method="get" action="${CONSOLE}/replay">
		<label>From (UTC) <input type="datetime-local" step="1" name="from" value="${values.from ?? ''}" required></label>
		<label>To (UTC) <input type="datetime-local" step="1" name="to" value="${values.to ?? ''}" required></label>
		<label>Target <select name="target">
			<option value="*">every current target</option>
			${targets.map((t) => html`<option value="${t}"${t === values.target ? html` selected` : ''}>${t}</option>`)}
		</select></label>
		<div class="actions"><button type="submit" class="secondary">Count deliveries…</button></div>
	</form>`;
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
			<td data-label="HTTP" class="num">${d.lastStatus ?? '—'}</td>
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

export function replayConfirmPage(opts: {
	csrf: string;
	from: number;
	to: number;
	target: string | undefined;
	plan: ReplayPlan;
	/** Set when the range changed between the confirmation and the replay. */
	errors?: readonly string[];
}): string {
	const { plan } = opts;
	const where = opts.target === undefined ? 'every current target' : opts.target;
	const kinds = Object.entries(plan.targets).map(
		([kind, list]) =>
			html`<li>${kind}: ${list?.length ?? 0} target${list?.length === 1 ? '' : 's'}</li>`,
	);
	return page(
		{ title: 'Confirm replay', section: 'dead', csrf: opts.csrf, errors: opts.errors },
		html`<h1>Confirm replay</h1>
		<div class="card">
			<p>Replay the <b>${plan.events}</b> event${plan.events === 1 ? '' : 's'} received from <b>${utc(opts.from)}</b> to <b>${utc(opts.to)}</b> UTC to <b class="wrap">${where}</b>.</p>
			<p id="replay-count">This makes <b>${plan.deliveries}</b> new deliver${plan.deliveries === 1 ? 'y' : 'ies'}.</p>
			${kinds.length ? html`<ul class="muted">${kinds}</ul>` : html`<p class="muted">No configured target takes these events.</p>`}
			<div class="actions">
				${
					plan.deliveries > 0
						? html`<form method="post" action="${CONSOLE}/replay" class="inline">${formGuard(opts.csrf)}
						<input type="hidden" name="from" value="${opts.from}"><input type="hidden" name="to" value="${opts.to}">
						<input type="hidden" name="target" value="${opts.target ?? '*'}"><input type="hidden" name="deliveries" value="${plan.deliveries}">
						<button type="submit" class="danger">Make ${plan.deliveries} deliver${plan.deliveries === 1 ? 'y' : 'ies'}</button></form>`
						: ''
				}
				<a href="${CONSOLE}/dead">Cancel</a>
			</div>
		</div>`,
	);
}

/** A replay range that cannot be used: the form again with what was typed, and why. */
export function replayErrorPage(opts: {
	csrf: string;
	configuredTargets: readonly string[];
	values: { from?: string; to?: string; target?: string };
	errors: readonly string[];
}): string {
	return page(
		{
			title: 'Replay a time range',
			section: 'dead',
			csrf: opts.csrf,
			errors: [...opts.errors, 'Nothing was replayed.'],
		},
		html`<h1>Replay a time range</h1>${replayForm(opts.configuredTargets, opts.values)}`,
	);
}
