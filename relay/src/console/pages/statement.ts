import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { RelayContext } from '../../context.ts';
import { addDays, dateIn } from '../../contract.ts';
import { RelayError } from '../../errors.ts';
import { ApiError, BudgetSpent } from '../../service-api.ts';
import { statementCsv } from '../../statement/csv.ts';
import type { BalanceFigure, CurrencyLedger } from '../../statement/ledger.ts';
import type { Statement } from '../../statement/statements.ts';
import { html } from '../html.ts';
import type { Html } from '../html.ts';
import { CONSOLE, page, sendPage } from '../layout.ts';
import type { PageDeps } from './common.ts';

/**
 * The statement page: a day chosen in a form (yesterday by default), its ledger per currency
 * (opening and closing balance, the day's totals, what the movements do not explain), the
 * movements n8n never got, and the day's movements as CSV (behind the console's login, like the
 * page). The admin API's GET /admin/statement answers the same in JSON.
 */

const dayQuery = z.object({ day: z.string().max(32).optional() });

const num = (n: number | null | undefined) => (n === null || n === undefined ? '—' : n.toFixed(2));
const figure = (f: BalanceFigure | null) =>
	f === null
		? '—'
		: `${num(f.total)} (available ${num(f.available)}, locked ${num(f.locked)}, hold ${num(f.hold)})`;

function currencyRows(c: CurrencyLedger): Html {
	const t = c.totals;
	const cell = (label: string, value: string) =>
		html`<tr><th scope="row">${label}</th><td>${value}</td></tr>`;
	return html`<section class="statement-currency"><h2>${c.currency}</h2>
		<table class="facts"><tbody>
		${cell('Opening', figure(c.opening))}
		${cell('Closing', figure(c.closing))}
		${cell('Payments', t ? `${t.payments.count}: ${num(t.payments.amount)} paid, ${num(t.payments.commission)} commission, ${num(t.payments.credited)} credited` : '0')}
		${cell('Refunds', t ? `${t.refunds.count}: ${num(t.refunds.amount)}` : '0')}
		${cell('Chargebacks', t ? `${t.chargebacks.count}${t.chargebacks.amount === undefined ? '' : `: ${num(t.chargebacks.amount)}`}` : '0')}
		${cell('Payouts', t ? `${t.payouts.count}: ${num(t.payouts.amount)} paid out, ${num(t.payouts.commission)} commission, ${num(t.payouts.debited)} debited` : '0')}
		${cell('Pending payouts', t ? `${t.pendingPayouts.count}: ${num(t.pendingPayouts.amount)}` : '0')}
		${cell('Net', t ? num(t.net) : '0.00')}
		${cell('Balance effects', num(c.effects))}
		</tbody></table>
		<p class="${c.unexplained === 0 ? 'muted' : 'error'}" data-unexplained="${c.unexplained === null ? '' : String(c.unexplained)}">Unexplained: ${c.unexplained === null ? `unknown: ${c.unexplainedReason ?? ''}` : num(c.unexplained)}</p>
		</section>`;
}

function notDelivered(s: Statement): Html {
	if (s.notDelivered === null) return html`<p class="muted">${s.notDeliveredReason ?? ''}</p>`;
	if (s.notDelivered.length === 0)
		return html`<p class="muted">n8n got every payment, refund, chargeback and payout the service lists for the day.</p>`;
	const rows = s.notDelivered
		.slice(0, 200)
		.map(
			(m) =>
				html`<tr><td>${m.kind}</td><td><code>${m.id}</code></td><td>${m.status}</td><td>${m.createdAt}</td><td>${num(m.amount)} ${m.currency}</td><td>${m.orderId ?? ''}</td><td>${m.reason}</td></tr>`,
		);
	return html`<table class="not-delivered"><thead><tr><th>Kind</th><th>Id</th><th>Status</th><th>Created</th><th>Amount</th><th>Order</th><th>Why</th></tr></thead><tbody>${rows}</tbody></table>
		${s.notDelivered.length > 200 ? html`<p class="muted">The first 200 of ${s.notDelivered.length}; the CSV has them all.</p>` : ''}`;
}

function statementBody(s: Statement): Html {
	const csv = `${CONSOLE}/statement.csv?day=${encodeURIComponent(s.day)}`;
	return html`<p>${s.day} in ${s.timeZone}, ${s.closed ? 'closed' : 'not over yet (closing: the balance now)'}; ${s.movements.length} movement(s), ${s.calls} API call(s). <a href="${csv}" download>Movements as CSV</a></p>
		${s.currencies.length === 0 ? html`<p class="muted">No movement and no change of the balance.</p>` : s.currencies.map(currencyRows)}
		<h2>Not delivered to n8n</h2>${notDelivered(s)}`;
}

/** The statement, or the refusal's or the service's reason as the page's error. */
async function read(ctx: RelayContext, day: string): Promise<Statement | string> {
	try {
		if (!ctx.statements) return 'the statement is not available';
		return await ctx.statements.statement(day);
	} catch (error) {
		if (error instanceof RelayError) return error.message;
		if (error instanceof ApiError || error instanceof BudgetSpent)
			return `the service could not be read: ${error.message}`;
		throw error;
	}
}

export function statementRoutes(app: FastifyInstance, { ctx, csrfOf }: PageDeps): void {
	const zone = ctx.statements?.timeZone ?? 'Europe/Moscow';
	app.get('/statement', async (request, reply) => {
		const q = dayQuery.safeParse(request.query);
		const day = (q.success ? q.data.day : undefined) || addDays(dateIn(zone), -1);
		const got = await read(ctx, day);
		const form = html`<form method="get" action="${CONSOLE}/statement" class="filters"><label>Day <input type="date" name="day" value="${day}"></label> <button type="submit">Show</button></form>`;
		return sendPage(
			reply,
			typeof got === 'string' ? 400 : 200,
			page(
				{
					title: 'Statement',
					section: 'statement',
					csrf: csrfOf(request),
					errors: typeof got === 'string' ? [got] : undefined,
				},
				html`<h1>Statement</h1>${form}${typeof got === 'string' ? '' : statementBody(got)}`,
			),
		);
	});
	app.get('/statement.csv', async (request, reply: FastifyReply) => {
		const q = dayQuery.safeParse(request.query);
		const day = (q.success ? q.data.day : undefined) ?? '';
		const got = await read(ctx, day);
		if (typeof got === 'string') return reply.code(400).type('text/plain; charset=utf-8').send(got);
		return reply
			.header('content-type', 'text/csv; charset=utf-8')
			.header('content-disposition', `attachment; filename="statement-${got.day}.csv"`)
			.send(statementCsv(got));
	});
}
