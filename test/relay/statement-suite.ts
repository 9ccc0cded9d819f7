// The relay's daily statement against the real sandbox over HTTP, run by statement.test.ts on each
// store (a SQLite file, a PostgreSQL database of its own) and each sandbox profile (`live`,
// `spec`): a day that ties out to unexplained 0, and a closed day with an injected balance change
// and a payment whose postback never came (the catch-up off) in `unexplained`, `notDelivered`,
// the `statement` alert and the metrics; bad days refused with a clear 400.
import { expect, it } from 'vitest';
import { addDays, dateIn } from '../../nodes/shared/dates.ts';
import { midnightIn } from '../../nodes/shared/statement.ts';
import { waitFor } from '../../scripts/harness/wait.ts';
import { consoleReader } from './console-login.ts';
import { ADMIN_TOKEN } from './helpers.ts';
import { catchupSetup } from './catchup-setup.ts';
import type { SuiteStore } from './fresh-store.ts';
import { sandboxMerchant } from './sandbox-merchant.ts';

type Json = Record<string, any>;

export function statementSuite(store: SuiteStore, profile: 'live' | 'spec'): void {
	// The zone the profile writes its times in (UTC in `live`, Moscow time in `spec`): the
	// statement's days must be the days the records are dated in.
	const ZONE = profile === 'live' ? 'UTC' : 'Europe/Moscow';
	/** The relay's clock for its snapshots, statements and baseline: real time plus `offsetMs`. */
	const clock = { offsetMs: 0 };
	const now = () => Date.now() + clock.offsetMs;
	const rig = catchupSetup(store, async () => {
		await rig.control('POST', '/clock', { now: null });
		clock.offsetMs = 0;
	});
	const { alerts, control } = rig;
	const merchant = () => sandboxMerchant(rig.sandboxUrl(), profile, { refunds: true });
	const relay = (token: string, extra: Record<string, string> = {}) =>
		rig.relay(
			token,
			{
				RELAY_STATEMENT_CHECK_S: '3600',
				RELAY_STATEMENT_TIME_ZONE: ZONE,
				RELAY_ALERT_TARGETS: alerts.url('/alerts'),
				...extra,
			},
			{ statementNow: now, catchupNow: now, statementCheckMs: 50 },
		);
	const get = async (r: { url: string }, path: string) => {
		const res = await fetch(`${r.url}/admin${path}`, {
			headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
		});
		const text = await res.text();
		const json = res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
		return { status: res.status, text, json: json as Json, type: res.headers.get('content-type') };
	};
	/** Waits for the relay's first balance snapshot (its first look runs at start). */
	const snapshotted = (r: { url: string }, day: string) =>
		waitFor('the first balance snapshot', async () => {
			const answer = await get(r, `/statement?day=${day}`);
			return answer.status === 200 ? answer.json : undefined;
		});
	const rub = (s: Json) => (s.currencies as Json[]).find((c) => c.currency === 'RUB') as Json;
	const ids = (s: Json) =>
		(s.notDelivered as Json[]).map((m) => `${m.kind} ${m.id} ${m.reason}`).sort();
	const statementAlerts = () =>
		alerts.received.map((a) => JSON.parse(a.body) as Json).filter((a) => a.alert === 'statement');

	it('a day of payments, a refund and a payout ties out to unexplained 0 (spec: unknown, its payout record shows no account_amount); the payment n8n got is not listed, the lost ones are, the one n8n refused is not-delivered; the CSV has a row each', async () => {
		const m = await merchant();
		const today = dateIn(ZONE);
		// The snapshot 2 s early, the statement 2 s late: the service's times are whole seconds.
		clock.offsetMs = -2_000;
		const r = await relay(m.token);
		await snapshotted(r, today);
		clock.offsetMs = 2_000;
		const delivered = await m.pay((await m.bill('100.00')).billId);
		expect((await rig.postback(r, 'payment', delivered.postback)).status).toBe(200);
		await waitFor('forwarded', () => rig.target.received.length >= 1);
		// Received, but n8n refuses it for good (410: the delivery is dead at once).
		rig.target.responder = () => ({ status: 410, receipt: null, body: 'Gone' });
		const refused = await m.pay((await m.bill('10.00')).billId);
		expect((await rig.postback(r, 'payment', refused.postback)).status).toBe(200);
		await waitFor('refused', () => rig.target.received.length >= 2);
		rig.target.responder = () => ({ status: 200 });
		const lost = await m.pay((await m.bill('50.00')).billId);
		const refund = await control('POST', `/payments/${delivered.paymentId}/refund`, {
			amount: '20.00',
		});
		const payout = await m.lostPayout('30.00');

		const s = (await get(r, `/statement?day=${today}`)).json;
		expect(s).toMatchObject({ day: today, timeZone: ZONE, closed: false, unread: [] });
		expect(s.opening.kind).toBe('first-start');
		expect(s.closing.kind).toBe('live');
		expect(rub(s)).toMatchObject({
			totals: { payments: { count: 3 }, refunds: { count: 1, amount: 20 }, payouts: { count: 1 } },
		});
		if (profile === 'live') {
			expect(rub(s).unexplained).toBe(0);
			expect(rub(s).closing.total - rub(s).opening.total).toBeCloseTo(rub(s).effects, 2);
		} else {
			// The interface document's payout record shows no account_amount: what left the
			// balance is not shown, and the statement does not guess it.
			expect(rub(s).unexplained).toBeNull();
			expect(rub(s).unexplainedReason).toMatch(
				`payout ${payout}: the record shows no account_amount`,
			);
		}
		expect(ids(s)).toEqual(
			[
				`payment ${lost.paymentId} not-received`,
				`payment ${refused.paymentId} not-delivered`,
				`payout ${payout} not-received`,
				`refund ${refund.refund.id} not-received`,
			].sort(),
		);
		expect(s.movements).toBe(5);

		const csv = await get(r, `/statement.csv?day=${today}`);
		expect(csv.status).toBe(200);
		expect(csv.type).toMatch(/^text\/csv/);
		const rows = csv.text.trimEnd().split('\r\n');
		expect(rows[0]).toBe(
			'kind,id,createdAt,status,currency,amount,commission,balanceEffect,unknownEffect,orderId,billId,paymentId,delivery',
		);
		expect(rows).toHaveLength(6);
		expect(rows.find((row) => row.includes(refused.paymentId))).toMatch(/,not-delivered$/);
		expect(rows.find((row) => row.includes(lost.paymentId))).toMatch(/,not-received$/);
		expect(rows.find((row) => row.startsWith(`payment,${delivered.paymentId},`))).toMatch(/,$/);
		expect((await get(r, `/statement?day=${today}&format=csv`)).text).toBe(csv.text);
	});

	it('a closed day with an injected balance change and a payment whose postback never came (catch-up off): unexplained and notDelivered say so, in one statement alert and the metrics; bad days get a clear 400', async () => {
		const m = await merchant();
		const day = addDays(dateIn(ZONE), -5);
		const at = (d: string, ms: number) => midnightIn(d, ZONE).getTime() + ms;
		clock.offsetMs = at(day, 30_000) - Date.now();
		const r = await relay(m.token, { RELAY_CATCHUP_INTERVAL_S: '0' });
		await snapshotted(r, day);
		await control('POST', '/clock', { now: new Date(at(day, 10 * 3_600_000)).toISOString() });
		const lost = await m.pay((await m.bill('70.00')).billId);
		await control('POST', `/merchants/${m.merchantId}/balance-adjustment`, {
			currency: 'RUB',
			amount: '12.34',
		});
		await control('POST', '/clock', { now: null });
		// The next day begins: its boundary snapshot closes the day, which is checked.
		clock.offsetMs = at(addDays(day, 1), 30_000) - Date.now();
		const [alert] = await waitFor('the statement alert', () =>
			statementAlerts().length > 0 ? statementAlerts() : undefined,
		);
		expect(alert).toMatchObject({
			day,
			timeZone: ZONE,
			unexplained: { RUB: 12.34 },
			notDeliveredCount: 1,
			notDelivered: [{ kind: 'payment', id: lost.paymentId, reason: 'not-received' }],
		});
		expect(alert.message).toMatch(/does not tie out: RUB balance moved 12.34 more/);

		const s = (await get(r, `/statement?day=${day}`)).json;
		expect(s).toMatchObject({ closed: true, opening: { kind: 'first-start' } });
		expect(s.closing.kind).toBe('boundary');
		expect(rub(s)).toMatchObject({ unexplained: 12.34, totals: { payments: { count: 1 } } });
		expect(ids(s)).toEqual([`payment ${lost.paymentId} not-received`]);
		const metrics = await (await fetch(`${r.url}/metrics`)).text();
		expect(metrics).toMatch(/paypalych_relay_statement_unexplained\{currency="RUB"\} 12.34/);
		expect(metrics).toMatch(/paypalych_relay_statement_not_delivered\{kind="payment"\} 1/);
		// The console's page of the day, and its CSV behind the console's login.
		const console = await consoleReader(r.app);
		const shown = await console(`/admin/console/statement?day=${day}`);
		expect(shown).toContain('data-unexplained="12.34"');
		expect(shown).toContain(lost.paymentId);
		expect(shown).toContain(`href="/admin/console/statement.csv?day=${day}"`);
		const csv = await console(`/admin/console/statement.csv?day=${day}`);
		expect(
			csv.split('\r\n').filter((row) => row.startsWith(`payment,${lost.paymentId},`)),
		).toHaveLength(1);
		// Once per day: the same day read again raises nothing new.
		await get(r, `/statement?day=${day}`);
		expect(statementAlerts()).toHaveLength(1);

		const refused = async (query: string) => {
			const answer = await get(r, `/statement?${query}`);
			expect(answer.status).toBe(400);
			return answer.json.message as string;
		};
		expect(await refused('day=yesterday')).toMatch(/YYYY-MM-DD/);
		expect(await refused('day=2026-02-30')).toMatch(/YYYY-MM-DD/);
		expect(await refused(`day=${addDays(day, 2)}`)).toMatch(/has not begun/);
		expect(await refused(`day=${addDays(day, -1)}`)).toMatch(/recorded no balance before/);
		expect((await get(r, '/statement')).status).toBe(400);
	});
}
