// The catch-up of bills that can still be paid, against the real sandbox over HTTP, run by
// catchup-deep.test.ts on each store (SQLite file, PostgreSQL) and each sandbox profile (`live`,
// `spec`: no order_id, numbered pages, Moscow dates, OutSum with the payer's commission): bills
// paid long after they were created, a MULTI link's payments, a bill on page 2, the coverage, the
// budget's shares and resume, a deep run on demand, one payment one event, a record the store
// cannot hold.
import { expect, it } from 'vitest';
import { addDays, dateIn } from '../../nodes/shared/dates.ts';
import { signPayment, signPayout } from '../../nodes/shared/signature.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import { ADMIN_TOKEN } from './helpers.ts';
import type { SuiteStore } from './fresh-store.ts';
import { sandboxMerchant } from './sandbox-merchant.ts';
import { cookieOf, submitLogin } from './console-login.ts';
import { catchupSetup } from './catchup-setup.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Json = Record<string, any>;
const DAY_MS = 86_400_000;

export function catchupDeepSuite(store: SuiteStore, profile: 'live' | 'spec'): void {
	/** The relays' catch-up clock: real time plus `clock.offsetMs`. */
	const clock = { offsetMs: 0 };
	const { target, alerts, sandboxUrl, control, daysAgo, admin, events, ...rig } = catchupSetup(
		store,
		async () => {
			await control('POST', '/clock', { now: null });
			clock.offsetMs = 0;
		},
	);

	const merchant = (extra: Json = {}) => sandboxMerchant(sandboxUrl(), profile, extra);

	/**
	 * A relay on a new store (or `database`). Started before the test's payments: what the service
	 * recorded before a store's first start is behind its baseline (catchup-baseline-suite.ts).
	 */
	const relay = (token: string, extra: Record<string, string> = {}, database?: string) =>
		rig.relay(
			token,
			{ RELAY_ALERT_TARGETS: alerts.url('/alerts'), ...extra },
			{ catchupNow: () => Date.now() + clock.offsetMs },
			database,
		);
	/** Posts a postback; answers its status and body as `status text`. */
	const postback = async (r: RunningRelay, kind: string, fields: Record<string, string>) => {
		const res = await rig.postback(r, kind, fields);
		return `${res.status} ${(await res.text()).slice(0, 200)}`;
	};
	const trsIds = (run: Json) => (run.found as Json[]).map((f) => f.trsId as string).sort();
	const today = () => dateIn('Europe/Moscow');

	it('a NORMAL bill created 10 days ago and paid today, its postback lost: the first run is deep and catches it up; an ordinary run does not search that far, {"deep":true} does; a payment of its own old date is left alone', async () => {
		const m = await merchant();
		// The relay's store from 11 days ago: the payments below are after its baseline.
		clock.offsetMs = -11 * DAY_MS;
		const r = await relay(m.token);
		clock.offsetMs = 0;
		const old = await daysAgo(10, () => m.bill('120.00'));
		const paid = await m.pay(old.billId);
		// Created and paid 10 days ago: outside RELAY_CATCHUP_DAYS by its own date.
		const stale = await daysAgo(10, async () => m.pay((await m.bill('30.00')).billId));
		expect((await admin(r, 'GET', '/catchup')).last).toBeNull();

		const first = await admin(r, 'POST', '/catchup');
		expect(first).toMatchObject({ outcome: 'done', deep: true, billsSince: addDays(today(), -90) });
		expect(trsIds(first)).toEqual([paid.paymentId]);
		expect(first.oldestBillDate <= addDays(today(), -9)).toBe(true);
		expect(first.bills).toBe(2);
		const caught = await events(r, `&trsId=${paid.paymentId}`);
		expect(caught.map((e) => e.source)).toEqual(['catch-up']);
		if (profile === 'live') expect(caught[0].fields.InvId).toBe(old.orderId);
		expect(await events(r, `&trsId=${stale.paymentId}`)).toEqual([]);

		// Another old bill paid today: the ordinary run (3 days of bills) does not see it.
		const later = await daysAgo(10, () => m.bill('75.00'));
		const laterPaid = await m.pay(later.billId);
		const ordinary = await admin(r, 'POST', '/catchup');
		expect(ordinary).toMatchObject({
			outcome: 'done',
			deep: false,
			billsSince: addDays(today(), -3),
		});
		expect(ordinary.found).toEqual([]);
		const deep = await admin(r, 'POST', '/catchup', { deep: true });
		expect(deep).toMatchObject({ outcome: 'done', deep: true });
		expect(trsIds(deep)).toEqual([laterPaid.paymentId]);
		// The first bill is marked read: the deep run read only the new one.
		expect(deep.billsRead).toBe(1);
		expect(deep.payments).toBe(1);

		// Coverage: the last run and the last deep run.
		await admin(r, 'POST', '/catchup');
		const coverage = await admin(r, 'GET', '/catchup');
		expect(coverage).toMatchObject({ billDays: 90, deepIntervalS: 21_600 });
		expect(coverage.last.deep).toBe(false);
		expect(coverage.lastDeep).toMatchObject({
			deep: true,
			billsSince: addDays(today(), -90),
			bills: 3,
			payments: 1,
			toRead: { bills: 0, multiBills: 0, billPages: false, payouts: false },
		});
		expect(coverage.lastDeep.oldestBillDate <= addDays(today(), -9)).toBe(true);
		expect(coverage.lastDeep.calls).toBeGreaterThanOrEqual(3);

		// The console's overview shows the same coverage.
		const login = await submitLogin(r.app, { token: ADMIN_TOKEN });
		const cookie = cookieOf(login, 'relay_console') ?? '';
		const overview = await r.app.inject({ url: '/admin/console', headers: { cookie } });
		expect(overview.body).toMatch(
			new RegExp(
				`Last deep catch-up: .* done; bills from ${addDays(today(), -90)} \\(oldest read \\d{4}-\\d{2}-\\d{2}\\), 3 bill\\(s\\) listed, \\d+ read, 1 payment\\(s\\), \\d+ API call\\(s\\); nothing left to read`,
			),
		);

		// A body that is not {"deep": boolean} is refused.
		expect((await admin(r, 'POST', '/catchup', { deep: 'yes' })).status).toBe(400);
	});

	it('15 payments today of a MULTI link created 20 days ago, every postback lost: 15 events, once; the late genuine postback is the same event', async () => {
		const m = await merchant();
		const r = await relay(m.token);
		const link = await daysAgo(20, () => m.bill('500.00', 'MULTI'));
		const paid = [];
		for (let i = 0; i < 15; i++) paid.push(await m.pay(link.billId));
		const run = await admin(r, 'POST', '/catchup');
		expect(run).toMatchObject({ outcome: 'done', deep: true, payments: 15 });
		expect(trsIds(run)).toEqual(paid.map((p) => p.paymentId).sort());
		await waitFor('the 15 forwarded', () => target.received.length >= 15);

		// The MULTI link is read again (it can take more payments): nothing new.
		const again = await admin(r, 'POST', '/catchup', { deep: true });
		expect(again.found).toEqual([]);
		expect(again.billsRead).toBe(1);

		// The genuine postback, late (in `spec` OutSum includes the payer's commission, the API's
		// amount does not): the catch-up's event, not a second one.
		const late = paid[3].postback;
		if (profile === 'spec') expect(Number(late.OutSum)).toBeGreaterThan(500);
		expect(await postback(r, 'payment', late)).toMatch(/^200 /);
		expect(await events(r)).toHaveLength(15);
	});

	it('a MULTI link created 100 days ago that the relay saw pay while it was younger, paid today with its postback lost: found within one run (the remembered links, in rotation)', async () => {
		const m = await merchant();
		// The relay's store from 100 days ago.
		clock.offsetMs = -100 * DAY_MS;
		const r = await relay(m.token);
		const link = await daysAgo(100, () => m.bill('70.00', 'MULTI'));
		const first = await daysAgo(99, () => m.pay(link.billId));
		// A run 99 days ago: the link is a day old, in the bill search; its payment is read.
		clock.offsetMs = -99 * DAY_MS;
		const young = await admin(r, 'POST', '/catchup');
		expect(trsIds(young)).toEqual([first.paymentId]);
		// Today: the link is older than RELAY_CATCHUP_BILL_DAYS (90), in no bill search.
		clock.offsetMs = 0;
		const paid = await m.pay(link.billId);
		const run = await admin(r, 'POST', '/catchup', { deep: true });
		expect(run.outcome).toBe('done');
		expect(trsIds(run)).toEqual([paid.paymentId]);
		await waitFor('both forwarded', () => target.received.length >= 2);
		// Read once a run: the next run finds nothing new.
		expect((await admin(r, 'POST', '/catchup')).found).toEqual([]);
	});

	it('a MULTI link with 25 payments over three pages of bill/payments: catch-up finds the lost payments on page 3', async () => {
		const m = await merchant({ paymentsPageSize: 10 });
		const r = await relay(m.token);
		const link = await m.bill('30.00', 'MULTI');
		const paid = [];
		for (let i = 0; i < 25; i++) paid.push(await m.pay(link.billId));
		const run = await admin(r, 'POST', '/catchup');
		expect(run).toMatchObject({ outcome: 'done', payments: 25 });
		expect(trsIds(run)).toEqual(paid.map((p) => p.paymentId).sort());
		// The last five are on page 3.
		for (const p of paid.slice(20)) expect(trsIds(run)).toContain(p.paymentId);
	});

	it("36.1 a forged postback under a lost payment's TrsId, its amount made up with an unsigned Commission, never passes for the payment: catch-up forwards the genuine one", async () => {
		const m = await merchant();
		const r = await relay(m.token);
		// Another order's 1000.00 bill: its redirect gives anyone who opened it a valid signature.
		const victim = await m.bill('1000.00');
		// The payer's own 100.00 payment (the merchant pays the commission), its postback lost.
		const own = await m.bill('100.00', 'NORMAL', undefined, false);
		const paid = await m.pay(own.billId);
		const forged = {
			InvId: victim.orderId,
			OutSum: '1000.00',
			Commission: '900.00',
			CurrencyIn: 'RUB',
			TrsId: paid.paymentId,
			Status: 'SUCCESS',
			SignatureValue: signPayment('1000.00', victim.orderId, m.token),
		};
		// The relay can only check the signature: it stores the call (every trigger refuses it).
		expect(await postback(r, 'payment', forged)).toMatch(/^200 /);
		// Before: 100.00 + the forgery's own Commission 900.00 made its 1000.00, the run took it for
		// the payment and never forwarded the genuine one.
		const run = await admin(r, 'POST', '/catchup');
		expect(trsIds(run)).toEqual([paid.paymentId]);
	});

	it('36.3 the newest first: a backlog of old unread bills never delays a payment lost today by more than one run', async () => {
		const m = await merchant();
		// 8 calls: the payouts, the search of the last days, today's bill, then the backlog's share.
		// The relay's store from 21 days ago: the backlog is after its baseline.
		clock.offsetMs = -21 * DAY_MS;
		const r = await relay(m.token, { RELAY_CATCHUP_MAX_CALLS: '8' });
		clock.offsetMs = 0;
		// 12 NORMAL bills made and paid 20 days ago, never read: a backlog of 12 bill/payments calls.
		await daysAgo(20, async () => {
			for (let i = 0; i < 12; i++) await m.pay((await m.bill(`${200 + i}.00`)).billId);
		});
		const today = await m.pay((await m.bill('77.00')).billId);
		const first = await admin(r, 'POST', '/catchup');
		expect(first).toMatchObject({ outcome: 'partial', deep: true });
		expect(trsIds(first)).toEqual([today.paymentId]);
		expect(first.toRead.bills).toBeGreaterThan(0);
	});

	it('catch-up reads a bill on page 2 of the search', async () => {
		const m = await merchant({ searchPageSize: 2 });
		const r = await relay(m.token);
		const paid = [];
		for (let i = 0; i < 5; i++) paid.push(await m.pay((await m.bill(`${10 + i}.00`)).billId));
		// `live` pages only on a cursor it is asked for; catch-up asks per_page=100: one page. The
		// page-numbered `spec` answer has 2 rows a page: bills on pages 2 and 3.
		const run = await admin(r, 'POST', '/catchup');
		expect(run).toMatchObject({ outcome: 'done', bills: 5, billsRead: 5 });
		expect(trsIds(run)).toEqual(paid.map((p) => p.paymentId).sort());
	});

	it('the budget is shared: payouts first, NORMAL and MULTI bills in turns; a run stopped at its budget resumes where it stopped; partial for longer than a deep interval raises catchup-failed once', async () => {
		const m = await merchant();
		// 6 calls: 1 for the payouts, 1 for the bill search, 2 bills, and 2 held for refunds and
		// chargebacks (their two searches).
		const r = await relay(m.token, {
			RELAY_CATCHUP_MAX_CALLS: '6',
			RELAY_CATCHUP_DEEP_INTERVAL_S: '60',
		});
		// The first run after start is deep and, with nothing to read, done: the next deep run is
		// due in 60 s, or now when asked.
		expect(await admin(r, 'POST', '/catchup')).toMatchObject({ outcome: 'done', deep: true });
		expect(await admin(r, 'POST', '/catchup')).toMatchObject({ outcome: 'done', deep: false });
		const normal: { paymentId: string }[] = [];
		for (let i = 0; i < 3; i++) normal.push(await m.pay((await m.bill(`${20 + i}.00`)).billId));
		const multi: { paymentId: string }[] = [];
		for (let i = 0; i < 3; i++)
			multi.push(await m.pay((await m.bill(`${40 + i}.00`, 'MULTI')).billId));
		const payoutId = await m.lostPayout('300.00');
		const found = (run: Json) => (run.found as Json[]).map((f) => f.trsId as string);
		const isNormal = (id: string) => normal.some((p) => p.paymentId === id);
		const isMulti = (id: string) => multi.some((p) => p.paymentId === id);

		const first = await admin(r, 'POST', '/catchup', { deep: true });
		expect(first).toMatchObject({ outcome: 'partial', calls: 6, deep: true });
		expect(found(first)).toContain(payoutId);
		expect(found(first).filter(isNormal)).toHaveLength(1);
		expect(found(first).filter(isMulti)).toHaveLength(1);
		expect(first.toRead).toMatchObject({ bills: 2, multiBills: 2 });

		// A partial deep run stays due: the next run is deep and goes on with what it did not read.
		const second = await admin(r, 'POST', '/catchup');
		expect(second).toMatchObject({ outcome: 'partial', deep: true });
		expect(found(second).filter(isNormal)).toHaveLength(1);
		expect(found(second).filter(isMulti)).toHaveLength(1);
		const third = await admin(r, 'POST', '/catchup');
		expect(found(third).filter(isNormal)).toHaveLength(1);
		expect(found(third).filter(isMulti)).toHaveLength(1);
		const all = [first, second, third].flatMap(found).sort();
		expect(all).toEqual(
			[payoutId, ...normal.map((p) => p.paymentId), ...multi.map((p) => p.paymentId)].sort(),
		);
		// Every NORMAL bill read; the MULTI links are read every run, least recently read first:
		// 3 links and 1 call left for them, so the runs stay partial.
		expect(third.toRead).toMatchObject({ bills: 0, multiBills: 2 });
		const partialAlerts = () =>
			alerts.received.filter(
				(a) => a.body.includes('catchup-failed') && a.body.includes('has not finished'),
			);
		expect(partialAlerts()).toEqual([]);

		// Partial for longer than RELAY_CATCHUP_DEEP_INTERVAL_S (60 s): catchup-failed, once.
		clock.offsetMs = 61_000;
		expect((await admin(r, 'POST', '/catchup')).outcome).toBe('partial');
		await waitFor('the partial-for-long alert', () => partialAlerts().length === 1);
		clock.offsetMs = 90_000;
		expect((await admin(r, 'POST', '/catchup')).outcome).toBe('partial');
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect(partialAlerts()).toHaveLength(1);
	});

	it('payouts never take the whole budget, and a search cut at its share resumes at its next page (`spec`: one row a page)', async () => {
		if (profile === 'live') return; // `live` pages only on the cursor it is asked for, 100 rows.
		const m = await merchant({ searchPageSize: 1 });
		// 6 calls: 1 payout page (a quarter), 1 bill page (half of the 3 left), 1 bill/payments, and
		// 2 held for refunds and chargebacks (their two searches).
		const r = await relay(m.token, { RELAY_CATCHUP_MAX_CALLS: '6' });
		const bills = [];
		for (let i = 0; i < 3; i++) bills.push(await m.pay((await m.bill(`${60 + i}.00`)).billId));
		const payouts = [];
		for (let i = 0; i < 3; i++) payouts.push(await m.lostPayout(`${100 + i}.00`));
		const runs = [];
		for (let i = 0; i < 3; i++) runs.push(await admin(r, 'POST', '/catchup'));
		// Each run reads one payout and one bill; the third reads their last pages: nothing of them
		// left to read. (Every run stays partial: the payment search of the chargebacks, one row a
		// page here, is cut at its share of 2 calls.)
		expect(runs.map((run) => `${run.outcome} ${run.deep}`)).toEqual([
			'partial true',
			'partial true',
			'partial true',
		]);
		expect(runs.map((run) => run.toRead)).toEqual([
			{ bills: 0, multiBills: 0, billPages: true, payouts: true },
			{ bills: 0, multiBills: 0, billPages: true, payouts: true },
			{ bills: 0, multiBills: 0, billPages: false, payouts: false },
		]);
		for (const run of runs) {
			const found = (run.found as Json[]).map((f) => f.kind as string).sort();
			expect(found).toEqual(['payment', 'payout']);
		}
		expect(
			runs.flatMap((run) => (run.found as Json[]).map((f) => f.trsId as string)).sort(),
		).toEqual([...bills.map((p) => p.paymentId), ...payouts].sort());
	});

	it('one payment, one event: a forged postback never shadows the genuine one, and the catch-up and the genuine postback are one event whatever the amount says', async () => {
		const m = await merchant();
		const r = await relay(m.token);
		const a = await m.bill('100.00');
		const aPaid = await m.pay(a.billId);
		const b = await m.bill('7.00');
		const bPaid = await m.pay(b.billId);
		// The genuine postback of A first, then a forged one with A's TrsId and B's signed pair: the
		// relay looks it up (another pair under a stored postback's TrsId), the service disagrees.
		expect(await postback(r, 'payment', aPaid.postback)).toMatch(/^200 /);
		const forgedA = { ...bPaid.postback, TrsId: aPaid.paymentId };
		expect(await postback(r, 'payment', forgedA)).toMatch(/^403 /);
		// A forged one FIRST with the TrsId of C (whose postback is lost), B's pair.
		const c = await m.bill('33.00');
		const cPaid = await m.pay(c.billId);
		const forgedC = { ...bPaid.postback, TrsId: cPaid.paymentId };
		expect(await postback(r, 'payment', forgedC)).toMatch(/^200 /);

		const run = await admin(r, 'POST', '/catchup');
		// A: the genuine postback agrees with the service's record (in `spec` its OutSum carries the
		// payer's commission): nothing new. B: its postback was never sent, so it is caught up. C:
		// the forged event does not agree: the genuine one is stored and forwarded.
		expect(trsIds(run)).toEqual([bPaid.paymentId, cPaid.paymentId].sort());
		const ofA = await events(r, `&trsId=${aPaid.paymentId}`);
		expect(ofA.map((e) => `${e.source} ${e.fields.InvId}`)).toEqual([
			`postback ${aPaid.postback.InvId}`,
		]);
		const ofC = await events(r, `&trsId=${cPaid.paymentId}`);
		expect(ofC.map((e) => e.source).sort()).toEqual(['catch-up', 'postback']);
		const genuineC = ofC.find((e) => e.source === 'catch-up')!;
		await waitFor('the genuine C forwarded', () =>
			target.received.some((x) => {
				const body = new URLSearchParams(x.body);
				return (
					body.get('TrsId') === cPaid.paymentId && body.get('OutSum') === genuineC.fields.OutSum
				);
			}),
		);

		// After the catch-up event, the late genuine postback of B and a forged one with its TrsId
		// are both that event: nothing more stored.
		const before = (await events(r)).length;
		expect(await postback(r, 'payment', bPaid.postback)).toMatch(/^200 /);
		const forgedB = { ...aPaid.postback, TrsId: bPaid.paymentId };
		expect(await postback(r, 'payment', forgedB)).toMatch(/^200 /);
		expect(await events(r)).toHaveLength(before);
	});

	it("one payment, one event: a forged postback first with the genuine TrsId and amount but another bill's order ID never shadows the genuine one", async () => {
		// `spec` shows no order ID: only the amount can be compared there.
		if (profile === 'spec') return;
		const m = await merchant();
		const r = await relay(m.token);
		const d = await m.bill('44.00');
		const dPaid = await m.pay(d.billId);
		const e = await m.bill('44.00');
		const ePaid = await m.pay(e.billId);
		// E's signed pair (the same amount, another order ID) with D's TrsId, before the catch-up.
		const forgedD = { ...ePaid.postback, TrsId: dPaid.paymentId };
		expect(ePaid.postback.OutSum).toBe(dPaid.postback.OutSum);
		expect(ePaid.postback.InvId).not.toBe(d.orderId);
		expect(await postback(r, 'payment', forgedD)).toMatch(/^200 /);

		const run = await admin(r, 'POST', '/catchup');
		expect(trsIds(run)).toEqual([dPaid.paymentId, ePaid.paymentId].sort());
		const ofD = await events(r, `&trsId=${dPaid.paymentId}`);
		expect(ofD.map((x) => x.source).sort()).toEqual(['catch-up', 'postback']);
		expect(ofD.find((x) => x.source === 'catch-up')!.fields.InvId).toBe(d.orderId);
	});

	it("one payout, one event: a payout postback whose Amount leaves out the commission is the catch-up's event; one with another amount never shadows the catch-up's", async () => {
		const m = await merchant();
		const r = await relay(m.token);
		const plain = await m.lostPayout('300.00');
		const other = await m.lostPayout('200.00');
		const signed = (trsId: string, amount: string) => ({
			TrsId: trsId,
			Amount: amount,
			Status: 'SUCCESS',
			Currency: 'RUB',
			SignatureValue: signPayout(amount, trsId, m.token),
		});
		// The payout's own amount, without its commission: a spelling the service's record agrees with.
		expect(await postback(r, 'payout', signed(plain, '300.00'))).toMatch(/^200 /);
		// Another amount with the other payout's TrsId: not what the service's record says.
		expect(await postback(r, 'payout', signed(other, '999.00'))).toMatch(/^200 /);

		const run = await admin(r, 'POST', '/catchup');
		expect(trsIds(run)).toEqual([other]);
		expect((await events(r, `&trsId=${plain}`)).map((x) => x.source)).toEqual(['postback']);
		const ofOther = await events(r, `&trsId=${other}`);
		expect(ofOther.map((x) => x.source).sort()).toEqual(['catch-up', 'postback']);
	});

	it('a record the store cannot hold (a NUL in its order ID) is skipped and reported, the run goes on, and catchup-failed is raised once', async () => {
		if (profile === 'spec') {
			// `spec` shows no order_id: the NUL never reaches the relay. The TrsId path is the same.
			return;
		}
		const m = await merchant();
		const r = await relay(m.token);
		const bad = await m.bill('11.00', 'NORMAL', 'bad\u0000order');
		await m.pay(bad.billId);
		const good = await m.pay((await m.bill('12.00')).billId);
		const payoutId = await m.lostPayout('50.00');
		const run = await admin(r, 'POST', '/catchup');
		expect(run.outcome).toBe('done');
		expect(trsIds(run)).toEqual([good.paymentId, payoutId].sort());
		expect(run.skippedRecords).toHaveLength(1);
		expect(run.skippedRecords[0].reason).toMatch(/NUL/);
		await waitFor('the catchup-failed alert', () =>
			alerts.received.some((a) => a.body.includes('catchup-failed')),
		);
		// Its bill is marked read like any other: the next run does not stop on it again, and
		// nothing is alerted twice.
		const again = await admin(r, 'POST', '/catchup', { deep: true });
		expect(again).toMatchObject({ outcome: 'done', skippedRecords: [] });
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect(alerts.received.filter((a) => a.body.includes('catchup-failed'))).toHaveLength(1);
	});

	it('a failed run raises catchup-failed once per cause', async () => {
		const m = await merchant();
		const r = await relay(m.token);
		await control('POST', '/faults', { kind: '500', count: 8, path: '/api/v1/payout/search' });
		const failed = await admin(r, 'POST', '/catchup');
		expect(failed.outcome).toBe('failed');
		const failedAgain = await admin(r, 'POST', '/catchup');
		expect(failedAgain.outcome).toBe('failed');
		await waitFor('the catchup-failed alert', () =>
			alerts.received.some((a) => a.body.includes('catchup-failed')),
		);
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect(alerts.received.filter((a) => a.body.includes('catchup-failed'))).toHaveLength(1);
		await control('DELETE', '/faults');
		expect((await admin(r, 'POST', '/catchup')).outcome).toBe('done');
	});
	it('a deployment that requires shop_id on bill/search: catch-up works with PAYPALYCH_SHOP_ID, and without it fails with catchup-failed naming the setting', async () => {
		const m = await merchant({ requireShopId: true });
		const database = await store.database();
		const without = await relay(m.token, {}, database);
		const paid = await m.pay((await m.bill('64.00')).billId);
		const failed = await admin(without, 'POST', '/catchup');
		expect(failed.outcome).toBe('failed');
		expect(failed.error).toMatch(/bill\/search answered HTTP 422.*set PAYPALYCH_SHOP_ID/);
		await waitFor('the catchup-failed alert naming PAYPALYCH_SHOP_ID', () =>
			alerts.received.some(
				(a) => a.body.includes('catchup-failed') && a.body.includes('PAYPALYCH_SHOP_ID'),
			),
		);
		await without.close();
		// The setting fixed, the relay restarted on its store.
		const withShop = await relay(m.token, { PAYPALYCH_SHOP_ID: m.shopId }, database);
		const run = await admin(withShop, 'POST', '/catchup');
		expect(run.outcome).toBe('done');
		expect(trsIds(run)).toEqual([paid.paymentId]);
	});
}
