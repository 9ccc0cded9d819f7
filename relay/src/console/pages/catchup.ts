import type { FastifyInstance } from 'fastify';
import type { CatchupResult } from '../../catchup/result.ts';
import type { RelayContext } from '../../context.ts';
import { html } from '../html.ts';
import type { Html } from '../html.ts';
import { page, sendPage, utc } from '../layout.ts';
import type { PageDeps } from './common.ts';

/**
 * The catch-up page: what the last run and the last deep run read (windows, lists, bills,
 * payments, refunds, chargebacks) and, first, what they could not see (their gaps, the ones the
 * `catchup-gap` alert says). The admin API's GET /admin/catchup answers the same in JSON.
 */

const row = (label: string, value: Html | string | number) =>
	html`<tr><th scope="row">${label}</th><td>${value}</td></tr>`;

function gapList(run: CatchupResult): Html {
	if (run.gaps.length === 0)
		return html`<p class="muted">Nothing it could not see: every list was read to its end.</p>`;
	return html`<ul class="gaps">${run.gaps.map((g) => html`<li>${g.message}</li>`)}</ul>`;
}

function runTable(run: CatchupResult): Html {
	const money = run.moneyBack;
	const search = run.paymentSearch;
	const rows: Html[] = [
		row(
			'Run',
			`${utc(run.startedAt)} UTC, ${run.deep ? 'deep, ' : ''}${run.outcome}, ${run.calls} API call(s), ${run.found.length} event(s) found${run.error ? `: ${run.error}` : ''}`,
		),
		row(
			'Bills',
			`created since ${run.billsSince ?? '—'} (oldest read ${run.oldestBillDate ?? '—'}): ${run.bills} listed, ${run.billsRead} read, ${run.payments} payment(s) in them; still to read ${run.toRead.bills} bill(s), ${run.toRead.multiBills} MULTI link(s)${run.toRead.billPages ? ', more pages' : ''}`,
		),
		row(
			'Payment search',
			search
				? `${search.state}${search.refusal ? ` (${search.refusal})` : ''}, payments since ${search.since ?? '—'}: ${search.listed} listed, ${search.payments} payment(s) of bills no bill search held${search.paymentsLeft ? `, ${search.paymentsLeft} left for the next run` : ''}${search.olderBills ? `; ${search.olderBills} of bills older than RELAY_CATCHUP_BILL_DAYS (oldest created ${search.oldestBill ?? '—'})` : ''}`
				: 'not read',
		),
		row(
			'Refunds',
			money
				? `${money.refunds}${money.refundsRefusal ? ` (${money.refundsRefusal})` : ''}${money.refundsRemembered ? ', remembered until the next deep run' : ''}, ${money.refundsListed} listed`
				: 'not read',
		),
		row(
			'Chargebacks',
			money?.chargebacksSince
				? `of payments since ${money.chargebacksSince}: ${money.paymentsChecked} payment(s) looked at, ${money.paymentsToCheck} not looked at (${money.paymentsNeverChecked} never), the oldest from ${money.oldestToCheck ?? '—'}`
				: 'not read',
		),
		row(
			'Payouts',
			`${run.payouts} in the window${run.toRead.payouts ? ', more pages to read' : ''}`,
		),
	];
	if (run.beforeBaseline > 0)
		rows.push(
			row(
				'Before the baseline',
				`${run.beforeBaseline} record(s) from before ${utc(run.baseline?.since ?? 0)} UTC, not forwarded`,
			),
		);
	if (run.unread.length > 0)
		rows.push(
			row(
				'Not read to the end',
				run.unread
					.map((u) => `${u.list} (${u.reason}${u.count > 1 ? `, ${u.count}×` : ''})`)
					.join(', '),
			),
		);
	return html`<table class="facts"><tbody>${rows}</tbody></table>`;
}

function section(title: string, run: CatchupResult | undefined): Html | string {
	if (!run) return '';
	return html`<section class="catchup-run"><h2>${title}</h2>
		<h3>What it could not see</h3>${gapList(run)}
		${runTable(run)}</section>`;
}

export function catchupPage(ctx: RelayContext, opts: { csrf: string }): string {
	const c = ctx.config.catchup;
	const last = ctx.catchup?.last;
	const deep = ctx.catchup?.lastDeep;
	const settings = html`<p class="muted">Every ${c.intervalS} s (0: off), ${c.days} day(s) of payments, payouts and refunds; a deep run every ${c.deepIntervalS} s reads bills of ${c.billDays} days and the chargebacks of payments of ${c.chargebackDays} days; at most ${c.maxCalls} API calls a run.</p>`;
	const body = !ctx.catchup?.enabled
		? html`<p>The catch-up is off (RELAY_CATCHUP_INTERVAL_S=0): nothing looks for postbacks the service did not deliver.</p>`
		: !last
			? html`<p>No catch-up run yet.</p>`
			: html`${section('Last run', last)}${deep && deep !== last ? section('Last deep run', deep) : ''}`;
	return page(
		{ title: 'Catch-up', section: 'catchup', csrf: opts.csrf },
		html`<h1>Catch-up</h1>${settings}${body}`,
	);
}

export function catchupRoutes(app: FastifyInstance, { ctx, csrfOf }: PageDeps): void {
	app.get('/catchup', async (request, reply) =>
		sendPage(reply, 200, catchupPage(ctx, { csrf: csrfOf(request) })),
	);
}
