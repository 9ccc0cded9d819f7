// The catch-up's reach against the real sandbox over HTTP, run by catchup-window.test.ts on each
// store (SQLite file, PostgreSQL) and each sandbox profile (`live`, `spec`): a payment found by the
// payment search whatever its bill's age, the chargebacks of old payments
// (RELAY_CATCHUP_CHARGEBACK_DAYS), and what a run could not see said in its coverage, on the
// console's catch-up page and in a `catchup-gap` alert.
import { expect, it } from 'vitest';
import { addDays, dateIn } from '../../nodes/shared/dates.ts';
import { consoleReader } from './console-login.ts';
import type { SuiteStore } from './fresh-store.ts';
import { sandboxMerchant } from './sandbox-merchant.ts';
import { catchupSetup } from './catchup-setup.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Json = Record<string, any>;
const DAY_MS = 86_400_000;

export function catchupWindowSuite(store: SuiteStore, profile: 'live' | 'spec'): void {
	/** The relays' catch-up clock: real time plus `clock.offsetMs`. */
	const clock = { offsetMs: 0 };
	const { target, alerts, sandboxUrl, control, daysAgo, admin, events, ...rig } = catchupSetup(
		store,
		async () => {
			await control('POST', '/clock', { now: null });
			clock.offsetMs = 0;
		},
	);
	const merchant = () => sandboxMerchant(sandboxUrl(), profile);
	/** A relay on a new store whose first start (its baseline) was `daysBack` days ago. */
	const relay = async (token: string, daysBack: number, extra: Record<string, string> = {}) => {
		clock.offsetMs = -daysBack * DAY_MS;
		const r = await rig.relay(
			token,
			{ RELAY_ALERT_TARGETS: alerts.url('/alerts'), ...extra },
			{ catchupNow: () => Date.now() + clock.offsetMs },
		);
		clock.offsetMs = 0;
		return r;
	};
	const postback = async (r: Parameters<typeof admin>[0], fields: Record<string, string>) =>
		(await rig.postback(r, 'payment', fields)).status;
	const trsIds = (run: Json) => (run.found as Json[]).map((f) => `${f.kind} ${f.trsId}`).sort();
	const gapCodes = (run: Json) => (run.gaps as Json[]).map((g) => g.code as string);
	const today = () => dateIn('Europe/Moscow');
	const alerted = () =>
		alerts.received.map((a) => JSON.parse(a.body) as Json).filter((a) => a.alert === 'catchup-gap');

	it('a payment today of a MULTI link made 100 days ago that the relay never saw pay, its postback lost: the payment search finds it in the first run, once, and the link is remembered; the late genuine postback is the same event', async () => {
		const m = await merchant();
		const r = await relay(m.token, 101);
		const link = await daysAgo(100, () => m.bill('70.00', 'MULTI'));
		const paid = await m.pay(link.billId);
		const runs: Json[] = [];
		for (let i = 0; i < 3; i++) runs.push(await admin(r, 'POST', '/catchup', { deep: true }));
		// No bill search reaches the link (RELAY_CATCHUP_BILL_DAYS is 90); the payment search lists
		// its payment: admitted with the link's order ID, read from the bill.
		expect(runs[0]).toMatchObject({
			outcome: 'done',
			deep: true,
			bills: 0,
			paymentSearch: { state: 'read', payments: 1, paymentsLeft: 0, olderBills: 1 },
		});
		expect(runs[0].paymentSearch.oldestBill <= addDays(today(), -99)).toBe(true);
		expect(trsIds(runs[0])).toEqual([`payment ${paid.paymentId}`]);
		expect(gapCodes(runs[0])).toContain('older-bills');
		expect(runs[1].found).toEqual([]);
		expect(runs[2].found).toEqual([]);
		const caught = await events(r, `&trsId=${paid.paymentId}`);
		expect(caught.map((e) => e.source)).toEqual(['catch-up']);
		expect(caught[0].fields.InvId).toBe(profile === 'live' ? link.orderId : '');
		// Remembered (the store's links): every run reads it, though no bill search lists it.
		expect(runs.map((run) => run.billsRead)).toEqual([1, 1, 1]);
		await waitFor('forwarded', () => target.received.length >= 1);
		expect(await postback(r, paid.postback)).toBe(200);
		expect(await events(r)).toHaveLength(1);
		expect(target.received).toHaveLength(1);
	});

	it('a chargeback of a payment made 150 days ago, its postback lost: a deep run finds it (RELAY_CATCHUP_CHARGEBACK_DAYS, 180 by default) and forwards it once; the late genuine postback is the same event; with 120 days it is out of reach, and the coverage says since when', async () => {
		const m = await merchant();
		const r = await relay(m.token, 151);
		const shorter = await relay(m.token, 151, { RELAY_CATCHUP_CHARGEBACK_DAYS: '120' });
		const paid = await daysAgo(150, async () => {
			const bill = await m.bill('100.00', 'NORMAL', undefined, false);
			return await m.pay(bill.billId, false);
		});
		await control('PATCH', `/merchants/${m.merchantId}`, { losePostbacks: true });
		const charged = await control('POST', `/payments/${paid.paymentId}/chargeback`, {});
		await control('PATCH', `/merchants/${m.merchantId}`, { losePostbacks: false });

		const run = await admin(r, 'POST', '/catchup', { deep: true });
		expect(run.outcome).toBe('done');
		expect(run.moneyBack).toMatchObject({
			chargebacksSince: addDays(today(), -180),
			paymentsToCheck: 0,
		});
		expect(trsIds(run)).toEqual([`chargeback ${charged.chargeback.id}`]);
		await waitFor('forwarded', () => target.received.length >= 1);
		expect((await admin(r, 'POST', '/catchup', { deep: true })).found).toEqual([]);
		expect(await postback(r, charged.postback)).toBe(200);
		expect((await events(r, '&kind=chargeback')).map((e) => e.source)).toEqual(['catch-up']);

		const out = await admin(shorter, 'POST', '/catchup', { deep: true });
		expect(out.moneyBack.chargebacksSince).toBe(addDays(today(), -120));
		expect(out.found).toEqual([]);
	});

	it('says what it could not see: the refund API off, and paid payments not looked at for chargebacks (how many, the oldest), in its coverage, on the console and in one catchup-gap alert each', async () => {
		const m = await merchant();
		// 8 calls: the payouts, the bill search and 3 bills; the 2 held back go to the refund search
		// (refused: the refund API is off) and the payment search; none is left for chargebacks.
		const r = await relay(m.token, 3, { RELAY_CATCHUP_MAX_CALLS: '8' });
		await daysAgo(2, async () => m.pay((await m.bill('10.00')).billId));
		for (let i = 0; i < 2; i++) await m.pay((await m.bill(`${20 + i}.00`)).billId);

		const run = await admin(r, 'POST', '/catchup');
		expect(run.found).toHaveLength(3);
		expect(run.moneyBack).toMatchObject({
			refunds: 'refunds_not_enabled',
			chargebacksSince: addDays(today(), -180),
			paymentsChecked: 0,
			paymentsToCheck: 3,
			paymentsNeverChecked: 3,
		});
		expect(run.moneyBack.oldestToCheck <= addDays(today(), -1)).toBe(true);
		expect(run.moneyBack.oldestToCheck >= addDays(today(), -3)).toBe(true);
		expect(gapCodes(run)).toEqual(['refunds-off', 'chargebacks-unchecked']);
		expect(run.gaps[1].message).toMatch(
			/^3 paid payment\(s\) since \S+ were not looked at for chargebacks in this run \(3 never since the relay started\), the oldest from \d{4}-\d{2}-\d{2}/,
		);
		expect((await admin(r, 'GET', '/catchup')).last.gaps).toEqual(run.gaps);

		await waitFor('two catchup-gap alerts', () => alerted().length === 2);
		expect(alerted().map((a) => a.gap)).toEqual(['refunds-off', 'chargebacks-unchecked']);
		expect(alerted()[0].message).toMatch(/refund API is not switched on/);
		expect(alerted()[1].moneyBack).toMatchObject({ paymentsToCheck: 3, paymentsNeverChecked: 3 });
		// The same gaps in the next run: not alerted again.
		const next = await admin(r, 'POST', '/catchup');
		expect(gapCodes(next)).toEqual(gapCodes(run));
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect(alerted()).toHaveLength(2);

		const page = await consoleReader(r.app);
		const catchup = await page('/admin/console/catchup');
		expect(catchup).toContain('What it could not see');
		expect(catchup).toContain('refund API is not switched on for this merchant');
		expect(catchup).toMatch(
			/0 payment\(s\) looked at, 3 not looked at \(3 never\), the oldest from/,
		);
		expect(await page('/admin/console')).toContain('2 thing(s) it could not see');
	});
}
