import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OperationRefused } from '../../errors.ts';
import { ReplayChanged } from '../../operations.ts';
import type { RangeRequest } from '../../operations.ts';
import type { ReplayPlan } from '../../reads.ts';
import { html } from '../html.ts';
import type { Html } from '../html.ts';
import { confirmedReplay, describeIssues, replayForm as replayInput } from '../input.ts';
import { CONSOLE, formGuard, inputTime, page, sendPage, utc } from '../layout.ts';
import { withNotice } from './common.ts';
import type { PageDeps } from './common.ts';

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

/** A range as the form gives it: `target` undefined for every current target. */
type Range = Required<Pick<RangeRequest, 'from' | 'to'>> & { target: string | undefined };
type FormValues = { from?: string; to?: string; target?: string };
type ReadReplay =
	| { ok: true; range: Range; plan: ReplayPlan; values: FormValues }
	| { ok: false; values: FormValues; errors: string[] };

/** Replaying a time range: the confirmation (GET, counts) and the replay (POST, confirmed). */
export function replayRoutes(app: FastifyInstance, { ctx, csrfOf }: PageDeps): void {
	const ops = ctx.operations;

	/** The replay form's range and target, checked: the target must be configured now. */
	const readReplay = async (input: unknown): Promise<ReadReplay> => {
		const raw = (input ?? {}) as Record<string, unknown>;
		const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
		const values = { from: text(raw.from), to: text(raw.to), target: text(raw.target) };
		const r = replayInput.safeParse(raw);
		if (!r.success) {
			const errors = describeIssues(r.error, { from: 'From', to: 'To', target: 'Target' });
			return { ok: false, values, errors };
		}
		const { from, to } = r.data;
		const range: Range = { from, to, target: r.data.target === '*' ? undefined : r.data.target };
		try {
			const plan = await ops.plan(range);
			const shown = { from: inputTime(from), to: inputTime(to), target: r.data.target };
			return { ok: true, range, plan, values: shown };
		} catch (error) {
			if (!(error instanceof OperationRefused)) throw error;
			return { ok: false, values, errors: [error.message] };
		}
	};

	/** A replay form with bad input: shown again with what was wrong, nothing made. */
	const badReplay = (
		request: FastifyRequest,
		reply: FastifyReply,
		{ values, errors }: { values: FormValues; errors: readonly string[] },
	) =>
		sendPage(
			reply,
			400,
			replayErrorPage({
				csrf: csrfOf(request),
				configuredTargets: ops.configuredTargets(),
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
			const errors = describeIssues(confirmed.error, { deliveries: 'Deliveries' });
			return badReplay(request, reply, { values: r.values, errors });
		}
		try {
			const done = await ops.replayRange(r.range, confirmed.data.deliveries);
			request.log.info(
				{ events: done.events, deliveries: done.deliveries },
				'console: range replayed',
			);
			const next = withNotice(`${CONSOLE}/dead`, 'replayed', done.events, done.deliveries);
			return reply.redirect(next, 303);
		} catch (error) {
			if (!(error instanceof ReplayChanged)) throw error;
			// Events arrived (or the targets changed) since the confirmation: confirm the new number.
			const confirm = { csrf: csrfOf(request), ...r.range, plan: error.plan };
			return sendPage(reply, 409, replayConfirmPage({ ...confirm, errors: [error.message] }));
		}
	});
}
