import type { FastifyInstance } from 'fastify';
import { POSTBACK_EVENTS } from '../../contract.ts';
import type { PostbackEvent } from '../../contract.ts';
import { targetsByKind } from '../../targets.ts';
import type { RelayContext } from '../../context.ts';
import type { ActivityBucket, TargetHealth } from '../../store/types.ts';
import { barChart } from '../charts.ts';
import { html } from '../html.ts';
import type { Html } from '../html.ts';
import { CONSOLE, badge, duration, page, sendPage, utc } from '../layout.ts';
import type { PageDeps } from './common.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The two windows the overview charts: the last hour in 5-minute buckets, the last day in hours. */
const WINDOWS = [
	{ title: 'Last hour', bucketMs: 5 * MINUTE, buckets: 12 },
	{ title: 'Last 24 hours', bucketMs: HOUR, buckets: 24 },
] as const;

function windowCharts(
	title: string,
	starts: readonly number[],
	buckets: readonly ActivityBucket[],
	kinds: readonly PostbackEvent[],
): Html {
	const index = new Map(starts.map((s, i) => [s, i]));
	const charts = kinds.map((kind) => {
		const zero = () => starts.map(() => 0);
		const received = zero();
		const delivered = zero();
		const retrying = zero();
		const dead = zero();
		for (const b of buckets) {
			const i = index.get(b.start);
			if (b.kind !== kind || i === undefined) continue;
			received[i] += b.received;
			delivered[i] += b.delivered;
			retrying[i] += Math.max(0, b.failedAttempts - b.died);
			dead[i] += b.died;
		}
		return html`<div class="card"><h3>${kind}</h3>${barChart(
			`${kind} events, ${title.toLowerCase()}`,
			starts,
			[
				{ name: 'received', cls: 'c-received', values: received },
				{ name: 'delivered', cls: 'c-delivered', values: delivered },
				{ name: 'failed, retrying', cls: 'c-retrying', values: retrying },
				{ name: 'dead', cls: 'c-dead', values: dead },
			],
		)}</div>`;
	});
	return html`<h2>${title}</h2><div class="grid">${charts}</div>`;
}

function targetsTable(
	health: readonly TargetHealth[],
	kindsOf: Map<string, PostbackEvent[]>,
): Html {
	const targets = [...new Set([...kindsOf.keys(), ...health.map((h) => h.target)])];
	const byTarget = new Map(health.map((h) => [h.target, h]));
	const rows = targets.map((target) => {
		const h = byTarget.get(target);
		const kinds = kindsOf.get(target);
		const rate = h && h.attempts > 0 ? `${((100 * h.succeeded) / h.attempts).toFixed(1)} %` : '—';
		return html`<tr>
			<td data-label="Target" class="wrap mono">${target}${kinds ? '' : html` <span class="muted">(no longer configured)</span>`}</td>
			<td data-label="Events">${kinds?.join(', ') ?? ''}</td>
			<td data-label="Success 24 h" class="num">${rate} <span class="muted">(${h ? `${h.succeeded}/${h.attempts}` : '0/0'})</span></td>
			<td data-label="Pending" class="num">${h?.pending ?? 0}</td>
			<td data-label="Dead" class="num">${h?.dead ? html`<a href="${CONSOLE}/dead?target=${encodeURIComponent(target)}">${h.dead}</a>` : 0}</td>
			<td data-label="Last error" class="wrap">${h?.lastError ? html`${h.lastError}<br><span class="muted">${utc(h.lastErrorAt)}</span>` : html`<span class="muted">none</span>`}</td>
		</tr>`;
	});
	return html`<div class="scroll"><table class="cards">
		<thead><tr><th>Target</th><th>Events</th><th class="num">Success (24 h)</th><th class="num">Pending</th><th class="num">Dead</th><th>Last error</th></tr></thead>
		<tbody>${rows.length ? rows : html`<tr><td colspan="6" class="muted">No target.</td></tr>`}</tbody>
	</table></div>`;
}

/** The alerts this relay raised (the ones RELAY_ALERT_TARGETS receive), newest first. */
function alertsSection(ctx: RelayContext): Html | string {
	const alerts = ctx.alerter?.recent ?? [];
	const last = ctx.catchup?.last;
	const deep = ctx.catchup?.lastDeep;
	const toRead = (r: NonNullable<typeof deep>) =>
		r.toRead.bills + r.toRead.multiBills > 0 || r.toRead.billPages || r.toRead.payouts
			? `still to read: ${r.toRead.bills} bill(s), ${r.toRead.multiBills} MULTI link(s)${r.toRead.billPages ? ', more bill pages' : ''}${r.toRead.payouts ? ', more payout pages' : ''}`
			: 'nothing left to read';
	const catchup = last
		? html`<p class="muted">Last catch-up: ${utc(last.startedAt)} UTC, ${last.deep ? 'deep, ' : ''}${last.outcome}, ${last.calls} API call(s), ${last.found.length} event(s) found${last.beforeBaseline > 0 ? `, ${last.beforeBaseline} recorded before the relay's baseline (${utc(last.baseline?.since ?? 0)} UTC), not forwarded` : ''}.</p>${
				deep
					? html`<p class="muted">Last deep catch-up: ${utc(deep.startedAt)} UTC, ${deep.outcome}; bills from ${deep.billsSince ?? '—'} (oldest read ${deep.oldestBillDate ?? '—'}), ${deep.bills} bill(s) listed, ${deep.billsRead} read, ${deep.payments} payment(s), ${deep.calls} API call(s); ${toRead(deep)}.</p>`
					: ''
			}`
		: '';
	if (alerts.length === 0) return catchup;
	const rows = alerts.map(
		(a) => html`<tr>
			<td data-label="Raised">${utc(a.at)}</td>
			<td data-label="Alert">${badge(a.kind === 'catch-up' ? 'catch-up' : 'dead', a.kind)}</td>
			<td data-label="Message" class="wrap">${a.message}</td>
		</tr>`,
	);
	return html`<section class="alerts" id="alerts"><h2>Alerts</h2>
		<div class="scroll"><table class="cards">
			<thead><tr><th>Raised (UTC)</th><th>Alert</th><th>Message</th></tr></thead>
			<tbody>${rows}</tbody>
		</table></div>${catchup}</section>`;
}

/** The P2P deals this process answered: verified, never stored, so the event lists never show them. */
async function p2pDealsLine(ctx: RelayContext): Promise<Html | string> {
	const { values } = await ctx.metrics.p2pDeals.get();
	const count = values.reduce((sum, v) => sum + v.value, 0);
	if (count === 0) return '';
	return html`<p id="p2p-deals">${count} P2P deal postback(s) since this relay started: verified and answered OK, not stored or forwarded. A deal of the service's P2P product is neither a payment nor a payout of the shop, and no workflow takes it.</p>`;
}

export async function overviewPage(
	ctx: RelayContext,
	opts: { csrf: string; now: number },
): Promise<string> {
	const { now } = opts;
	const windows = WINDOWS.map((w) => {
		// Buckets aligned to their size, the last one holding `now`.
		const end = Math.floor(now / w.bucketMs) * w.bucketMs + w.bucketMs;
		const from = end - w.buckets * w.bucketMs;
		return {
			...w,
			from,
			end,
			starts: Array.from({ length: w.buckets }, (_, i) => from + i * w.bucketMs),
		};
	});
	const [deals, counts, oldest, health, ...activity] = await Promise.all([
		p2pDealsLine(ctx),
		ctx.reads.counts(),
		ctx.reads.oldestUndelivered(),
		ctx.reads.targetHealth(now - 24 * HOUR),
		...windows.map((w) => ctx.reads.activity(w.from, w.end, w.bucketMs)),
	]);
	const configured = targetsByKind(ctx.config);
	const kindsOf = new Map<string, PostbackEvent[]>();
	for (const kind of POSTBACK_EVENTS)
		for (const t of configured[kind]) kindsOf.set(t, [...(kindsOf.get(t) ?? []), kind]);
	// Kinds that have a target now or saw anything in the last day.
	const active = new Set<PostbackEvent>(POSTBACK_EVENTS.filter((k) => configured[k].length > 0));
	for (const b of activity[1])
		if (b.received || b.delivered || b.failedAttempts) active.add(b.kind);
	const kinds = POSTBACK_EVENTS.filter((k) => active.has(k));
	const stat = (value: Html | string | number, label: string) =>
		html`<div class="stat"><b>${value}</b><span>${label}</span></div>`;
	return page(
		{ title: 'Overview', section: 'overview', csrf: opts.csrf },
		html`<h1>Overview</h1>
		<div class="stats">
			${stat(counts.pending, 'pending (new)')}
			${stat(counts.retrying, 'retrying')}
			${stat(counts.delivering, 'being delivered')}
			${stat(counts.delivered, 'delivered')}
			${stat(counts.dead ? html`<a href="${CONSOLE}/dead">${counts.dead}</a>` : 0, 'dead')}
			${stat(oldest === null ? 'none' : duration(now - oldest), oldest === null ? 'undelivered event' : `oldest undelivered (since ${utc(oldest)} UTC)`)}
		</div>
		${alertsSection(ctx)}
		${deals}
		${counts.dead ? html`<p>${badge('dead', `${counts.dead} dead`)} <a href="${CONSOLE}/dead">Open the dead letters</a> to requeue them once their target is fixed.</p>` : ''}
		<h2>Targets</h2>
		${targetsTable(health, kindsOf)}
		${windows.map((w, i) => windowCharts(w.title, w.starts, activity[i] as ActivityBucket[], kinds))}
		<p class="muted">Times in UTC. Failed, retrying: attempts that failed and will be tried again; dead: deliveries that gave up.</p>`,
	);
}

export function overviewRoutes(app: FastifyInstance, { ctx, csrfOf }: PageDeps): void {
	app.get('/', async (request, reply) =>
		sendPage(reply, 200, await overviewPage(ctx, { csrf: csrfOf(request), now: Date.now() })),
	);
}
