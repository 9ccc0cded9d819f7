// The relay's first start is quiet and honest. Run by catchup-baseline.test.ts on each store
// (SQLite file, PostgreSQL) and each sandbox profile (`live`: UTC times; `spec`: Moscow times, no
// order_id): a new store in front of an n8n that already received the last days' postbacks forwards
// nothing old and raises no alert; a back-fill forwards them when asked, once; a payment lost after
// the baseline is still found; the baseline is the store's, across restarts.
import { expect, it } from 'vitest';
import type { RunningRelay } from '../../relay/src/server.ts';
import type { SuiteStore } from './fresh-store.ts';
import { sandboxMerchant } from './sandbox-merchant.ts';
import { catchupSetup } from './catchup-setup.ts';
import { waitFor } from '../../scripts/harness/wait.ts';
import { cookieOf, submitLogin } from './console-login.ts';
import { ADMIN_TOKEN } from './helpers.ts';

type Json = Record<string, any>;
const DAY_MS = 86_400_000;

export function catchupBaselineSuite(store: SuiteStore, profile: 'live' | 'spec'): void {
	const { target, alerts, sandboxUrl, control, daysAgo, admin, events, ...rig } = catchupSetup(
		store,
		async () => {
			await control('POST', '/clock', { now: null });
		},
	);
	const relay = (token: string, database?: string) =>
		rig.relay(token, { RELAY_ALERT_TARGETS: alerts.url('/alerts') }, {}, database);
	const trsIds = (run: Json) => (run.found as Json[]).map((f) => f.trsId as string).sort();
	const catchupAlerts = () =>
		alerts.received.filter((a) => JSON.parse(a.body).alert === 'catch-up');

	/**
	 * Before the relay exists: a merchant whose n8n received two days of postbacks straight (two
	 * payments, one payout), and one payment whose postback was lost then. Answers the merchant and
	 * the TrsIds the service recorded.
	 */
	const history = async () => {
		const m = await sandboxMerchant(sandboxUrl(), profile);
		await control('PATCH', `/shops/${m.shopId}`, { resultUrl: target.url('/n8n/payment') });
		await control('PATCH', `/merchants/${m.merchantId}`, {
			payoutWebhookUrl: target.url('/n8n/payout'),
		});
		const trsIds = await daysAgo(2, async () => {
			const a = await m.pay((await m.bill('100.00')).billId, false);
			const payout = await m.api('POST', '/payout/personal/create', {
				amount: '300.00',
				payout_account_id: m.payoutAccountId,
				order_id: 'po-old',
			});
			const payoutId = payout.data[0].id as string;
			await control('POST', `/payouts/${payoutId}/advance`, { status: 'SUCCESS' });
			return [a.paymentId, payoutId];
		});
		const b = await daysAgo(1, async () => m.pay((await m.bill('50.00')).billId, false));
		const lost = await daysAgo(1, async () => m.pay((await m.bill('7.00')).billId, true));
		await waitFor('n8n received them straight', () => target.received.length >= 3);
		target.received = [];
		return { m, old: [...trsIds, b.paymentId, lost.paymentId].sort() };
	};

	it("a new store in front of an n8n that already received the last days' postbacks forwards nothing old and raises no alert; it counts them", async () => {
		const { m, old } = await history();
		const r = await relay(m.token);
		const run = await admin(r, 'POST', '/catchup');
		expect(run.outcome).toBe('done');
		expect(run.found).toEqual([]);
		expect(run.beforeBaseline).toBe(old.length);
		expect(run.payments + run.payouts).toBe(old.length);
		expect(await events(r)).toEqual([]);
		expect(catchupAlerts()).toEqual([]);
		// Nothing hidden: the console's overview says how many, and from when.
		const login = await submitLogin(r.app, { token: ADMIN_TOKEN });
		const cookie = cookieOf(login, 'relay_console') ?? '';
		const overview = await r.app.inject({ url: '/admin/console', headers: { cookie } });
		expect(overview.body).toContain(`${old.length} recorded before the relay&#39;s baseline (`);
		// A deep run too.
		const deep = await admin(r, 'POST', '/catchup', { deep: true });
		expect(deep.found).toEqual([]);
		expect(await events(r)).toEqual([]);
		expect(catchupAlerts()).toEqual([]);
	});

	it('the back-fill forwards them when asked, each once and with no alert; a second run forwards nothing more', async () => {
		const { m, old } = await history();
		const r = await relay(m.token);
		expect((await admin(r, 'POST', '/catchup')).found).toEqual([]);
		const since = new Date(Date.now() - 3 * DAY_MS).toISOString();
		const asked = await admin(r, 'POST', '/catchup/backfill', { since });
		expect(asked.status).toBe(200);
		expect(asked.baseline.since).toBe(since);
		const run = await admin(r, 'POST', '/catchup');
		expect(trsIds(run)).toEqual(old);
		expect(run.found.every((f: Json) => f.backfill === true)).toBe(true);
		expect(run.beforeBaseline).toBe(0);
		await waitFor('each forwarded', () => target.received.length >= old.length);
		expect(target.received.map((x) => new URLSearchParams(x.body).get('TrsId')).sort()).toEqual(
			old,
		);
		expect(catchupAlerts()).toEqual([]);
		const again = await admin(r, 'POST', '/catchup');
		expect(again.found).toEqual([]);
		expect(await events(r)).toHaveLength(old.length);
		// Refused: the future, or further back than the catch-up reads; and without the token.
		const future = await admin(r, 'POST', '/catchup/backfill', {
			since: new Date(Date.now() + DAY_MS).toISOString(),
		});
		expect(future.status).toBe(400);
		const far = await admin(r, 'POST', '/catchup/backfill', {
			since: new Date(Date.now() - 30 * DAY_MS).toISOString(),
		});
		expect(far.status).toBe(400);
		const anonymous = await fetch(`${r.url}/admin/catchup/backfill`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ since }),
		});
		expect(anonymous.status).toBe(401);
	});

	it('a payment lost after the baseline is still found, forwarded and alerted', async () => {
		const { m, old } = await history();
		const r = await relay(m.token);
		const lost = await m.pay((await m.bill('42.00')).billId, true);
		const run = await admin(r, 'POST', '/catchup');
		expect(trsIds(run)).toEqual([lost.paymentId]);
		expect(run.found[0].backfill).toBeUndefined();
		expect(run.beforeBaseline).toBe(old.length);
		await waitFor('forwarded', () => target.received.length >= 1);
		expect(new URLSearchParams(target.received[0].body).get('TrsId')).toBe(lost.paymentId);
		expect(catchupAlerts()).toHaveLength(1);
	});

	it("the baseline is the store's: a second relay on the same store, after a restart, keeps it, and keeps a back-fill", async () => {
		const { m, old } = await history();
		const database = await store.database();
		const first = await relay(m.token, database);
		const baseline = (await admin(first, 'GET', '/catchup')).baseline;
		expect(baseline.since).toBe(baseline.firstStart);
		await first.close();

		const second: RunningRelay = await relay(m.token, database);
		expect((await admin(second, 'GET', '/catchup')).baseline).toEqual(baseline);
		const run = await admin(second, 'POST', '/catchup');
		expect(run.found).toEqual([]);
		expect(run.beforeBaseline).toBe(old.length);
		const since = new Date(Date.now() - 3 * DAY_MS).toISOString();
		await admin(second, 'POST', '/catchup/backfill', { since });
		await second.close();

		const third = await relay(m.token, database);
		expect((await admin(third, 'GET', '/catchup')).baseline).toEqual({
			firstStart: baseline.firstStart,
			since,
		});
		expect(trsIds(await admin(third, 'POST', '/catchup'))).toEqual(old);
	});
}
