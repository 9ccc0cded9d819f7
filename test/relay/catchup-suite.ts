// The relay's catch-up against the real sandbox over HTTP, run on each store (SQLite file and
// PostgreSQL) and each sandbox profile (`live`; `spec`: no order_id, numbered pages, Moscow dates)
// by catchup.test.ts: final payments and payouts no postback brought become events of source
// catch-up, forwarded like postbacks; a late genuine postback after them is the same event.
import { expect, it } from 'vitest';
import { consoleReader } from './console-login.ts';
import { md5 } from './helpers.ts';
import type { SuiteStore } from './fresh-store.ts';
import { sandboxMerchant } from './sandbox-merchant.ts';
import { catchupSetup } from './catchup-setup.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Json = Record<string, any>;

export function catchupSuite(store: SuiteStore, profile: 'live' | 'spec' = 'live'): void {
	const { target, alerts, sandboxUrl, control, admin, events, postback, ...rig } = catchupSetup(
		store,
		async () => {
			await control('DELETE', '/faults');
			target.responder = () => ({ status: 200 });
		},
	);

	/** A merchant of its own (so each test sees only its bills) whose bills the merchant pays the commission of. */
	const merchant = async () => {
		const m = await sandboxMerchant(sandboxUrl(), profile);
		/** A bill paid in full; `lose`: the service gives its postback up without sending it. */
		const payBill = async (amount: string, lose: boolean, orderId?: string) => {
			const bill = await m.bill(amount, 'NORMAL', orderId, false);
			return { ...bill, ...(await m.pay(bill.billId, lose)) };
		};
		return Object.assign(m, { payBill });
	};

	const relay = (token: string, extra: Record<string, string> = {}, database?: string) =>
		rig.relay(token, extra, {}, database);

	it('stores a final payment and payout no postback brought, signed so the trigger verifies them; the late genuine postback is the same event', async () => {
		const m = await merchant();
		const r = await relay(m.token);
		await control('PATCH', `/shops/${m.shopId}`, { resultUrl: `${r.url}/postback/payment` });
		await control('PATCH', `/merchants/${m.merchantId}`, {
			payoutWebhookUrl: `${r.url}/postback/payout`,
		});
		const lost = await m.payBill('100.50', true);
		const brought = await m.payBill('250.00', false);
		await waitFor('the one postback brought', async () => (await events(r)).length === 1);

		// A payout whose postback the service loses.
		await control('PATCH', `/merchants/${m.merchantId}`, { losePostbacks: true });
		const created = await m.api('POST', '/payout/personal/create', {
			amount: '300.00',
			payout_account_id: m.payoutAccountId,
			order_id: 'po-1',
		});
		const payoutId = created.data[0].id as string;
		await control('POST', `/payouts/${payoutId}/advance`, { status: 'SUCCESS' });
		await control('PATCH', `/merchants/${m.merchantId}`, { losePostbacks: false });

		const run = await admin(r, 'POST', '/catchup');
		expect(run.outcome).toBe('done');
		expect(run.found.map((f: Json) => `${f.kind} ${f.status}`).sort()).toEqual([
			'payment SUCCESS',
			'payout SUCCESS',
		]);
		const all = await events(r);
		expect(all).toHaveLength(3);
		const caught = all.filter((e) => e.source === 'catch-up');
		expect(caught.map((e) => e.fields.TrsId).sort()).toEqual(
			[lost.postback.TrsId, payoutId].sort(),
		);
		expect(all.find((e) => e.fields.TrsId === brought.postback.TrsId)?.source).toBe('postback');

		// Forwarded as the service's own postback: the same fields, a signature that verifies. Where
		// the service shows no order ID (spec), InvId is empty and signed so.
		await waitFor('three deliveries', () => target.received.length >= 3);
		const forwarded = target.received.find((x) => x.body.includes(lost.postback.TrsId))!;
		const body = Object.fromEntries(new URLSearchParams(forwarded.body));
		const invId = profile === 'spec' ? '' : lost.orderId;
		for (const field of ['OutSum', 'TrsId', 'Status', 'CurrencyIn', 'Currency', 'Commission'])
			expect(body[field], field).toBe(lost.postback[field]);
		expect(body.InvId).toBe(invId);
		expect(body.SignatureValue).toBe(md5(`${body.OutSum}:${invId}:${m.token}`));
		const payoutBody = Object.fromEntries(
			new URLSearchParams(target.received.find((x) => x.path === '/n8n/payout')!.body),
		);
		expect(payoutBody.SignatureValue).toBe(md5(`${payoutBody.Amount}:${payoutId}:${m.token}`));

		// The genuine postback arrives late, once as sent and once with OutSum spelled 100.5
		// (signed by the service over that spelling): both are the catch-up's event.
		expect((await postback(r, 'payment', lost.postback)).status).toBe(200);
		const respelled = {
			...lost.postback,
			OutSum: '100.5',
			SignatureValue: md5(`100.5:${lost.orderId}:${m.token}`),
		};
		expect((await postback(r, 'payment', respelled)).status).toBe(200);
		expect(await events(r)).toHaveLength(3);

		// A forged call sent first, with the TrsId of a payment whose postback was lost and another
		// bill's signed pair (250.00 and its order ID), cannot shadow it: the catch-up still stores
		// the genuine one.
		const other = await m.payBill('1.00', true);
		const forged = { ...brought.postback, TrsId: other.paymentId };
		expect((await postback(r, 'payment', forged)).status).toBe(200);
		const again = await admin(r, 'POST', '/catchup');
		expect(again.found.map((f: Json) => f.trsId)).toEqual([other.paymentId]);
		const both = await events(r, `&trsId=${other.paymentId}`);
		expect(both.map((e) => `${e.source} ${e.fields.OutSum} ${e.fields.InvId}`).sort()).toEqual([
			`catch-up 1.00 ${profile === 'spec' ? '' : other.orderId}`,
			`postback 250.00 ${brought.orderId}`,
		]);

		// Runs after it find nothing new and read no bill twice.
		const third = await admin(r, 'POST', '/catchup');
		expect(third.found).toEqual([]);
		expect(third.billsRead).toBe(0);
		expect(await events(r, '&source=catch-up')).toHaveLength(3);
		const metrics = await (await fetch(`${r.url}/metrics`)).text();
		expect(metrics).toMatch(/paypalych_relay_catchup_events_total\{kind="payment"\} 2/);
		expect(metrics).toMatch(/paypalych_relay_catchup_events_total\{kind="payout"\} 1/);
	});

	it('backs off on 429 and 5xx, stays within its call budget, and a failed run is retried next time', async () => {
		const m = await merchant();
		// 8 calls: 2 of them (a quarter, one for each kind) held for refunds and chargebacks.
		const r = await relay(m.token, { RELAY_CATCHUP_MAX_CALLS: '8' });
		for (let i = 0; i < 4; i++) await m.payBill(`${10 + i}.00`, true);

		// 429 twice, then a 500 on bill/payments: the run waits and goes on.
		await control('POST', '/faults', { kind: '429', count: 2, path: '/api/v1/bill/search' });
		await control('POST', '/faults', { kind: '500', count: 1, path: '/api/v1/bill/payments' });
		const first = await admin(r, 'POST', '/catchup');
		// 1 call for the payouts (first, their share), 3 for the bill search (two 429), then 2 for
		// one bill/payments (a 500, then its payments): the 6 calls not held back are spent, 3 bills
		// still to read; then the 2 held back: the refund search and the payment search.
		expect(first.outcome).toBe('partial');
		expect(first.calls).toBe(8);
		expect(first.moneyBack.refunds).not.toBe('not_read');
		expect(first.found).toHaveLength(1);
		expect(first.toRead).toMatchObject({ bills: 3, multiBills: 0 });
		expect((await control('GET', '/faults')).faults).toEqual([]);

		// The next run resumes with the 3 bills it did not read (the first one is marked read): 1
		// call for the payouts, 1 for the search of the last days' bills, 3 bills, 2 for the refund
		// and payment searches, and (the run is deep: the first one was cut short) 1 for the search
		// of the older bills.
		const second = await admin(r, 'POST', '/catchup');
		expect(second.outcome).toBe('done');
		expect(second.calls).toBe(8);
		expect(second.found).toHaveLength(3);
		expect(second.toRead).toMatchObject({ bills: 0, multiBills: 0 });

		// A service failing past the retries: the run fails, the relay carries on, the next run works.
		const n = await m.payBill('99.00', true);
		await control('POST', '/faults', { kind: '500', count: 4, path: '/api/v1/bill/search' });
		const failed = await admin(r, 'POST', '/catchup');
		expect(failed.outcome).toBe('failed');
		expect(failed.error).toMatch(/HTTP 500/);
		expect((await fetch(`${r.url}/healthz`)).status).toBe(200);
		const retried = await admin(r, 'POST', '/catchup');
		expect(retried.outcome).toBe('done');
		expect(retried.found.map((f: Json) => f.trsId)).toEqual([n.paymentId]);
		expect(await events(r, '&source=catch-up')).toHaveLength(5);
		const metrics = await (await fetch(`${r.url}/metrics`)).text();
		expect(metrics).toMatch(/paypalych_relay_catchup_runs_total\{outcome="failed"\} 1/);
	});

	it('alerts once per cause: events a catch-up found, a dead delivery, a backlog', async () => {
		const m = await merchant();
		const r = await relay(m.token, {
			RELAY_ALERT_TARGETS: alerts.url('/alert'),
			RELAY_ALERT_BACKLOG_S: '1',
			RELAY_RETRY_BUDGET_MS: '0',
		});
		// The target refuses for good: the delivery goes dead.
		target.responder = () => ({ status: 500 });
		await m.payBill('42.00', true);
		const run = await admin(r, 'POST', '/catchup');
		expect(run.found).toHaveLength(1);
		const kinds = () => alerts.received.map((a) => JSON.parse(a.body).alert as string);
		await waitFor(
			'the catch-up and dead alerts',
			() => kinds().includes('catch-up') && kinds().includes('dead'),
		);
		await waitFor('the backlog alert', () => kinds().includes('backlog'), { timeoutMs: 5_000 });
		const first = JSON.parse(alerts.received.find((a) => a.body.includes('"catch-up"'))!.body);
		expect(first.message).toMatch(/no postback brought/);
		expect(first.events[0].trsId).toBe(run.found[0].trsId);
		// A second run finds the same payment (a duplicate): no new alert; more checks: no new alert.
		await admin(r, 'POST', '/catchup');
		const seen = alerts.received.length;
		await new Promise((resolve) => setTimeout(resolve, 400));
		expect(alerts.received.length).toBe(seen);
		// And what the catch-up cannot see: this merchant's refund API is off (catchup-gap, once).
		expect(kinds().sort()).toEqual(['backlog', 'catch-up', 'catchup-gap', 'dead']);
		const gap = JSON.parse(alerts.received.find((a) => a.body.includes('"catchup-gap"'))!.body);
		expect(gap.message).toMatch(/refund API is not switched on/);
		const listed = await admin(r, 'GET', '/alerts');
		expect(listed.data.map((a: Json) => a.kind).sort()).toEqual([
			'backlog',
			'catch-up',
			'catchup-gap',
			'dead',
		]);

		// The console shows the same: alerts on the overview, the source in the event list and page.
		const page = await consoleReader(r.app);
		const overview = await page('/admin/console');
		expect(overview).toContain('<h2>Alerts</h2>');
		expect(overview).toContain('no postback brought');
		expect(overview).toContain('went dead');
		expect(overview).toMatch(/Last catch-up: .* done, \d+ API call/);
		expect(await page('/admin/console/events')).toContain(
			'<span class="badge catch-up">catch-up</span>',
		);
		expect(await page(`/admin/console/events/${run.found[0].eventId}`)).toContain(
			"found by the relay's catch-up",
		);
	});

	it('with RELAY_CATCHUP_INTERVAL_S=0 the catch-up is off: no run, not even through the admin API', async () => {
		const m = await merchant();
		const r = await relay(m.token, { RELAY_CATCHUP_INTERVAL_S: '0' });
		await m.payBill('12.00', true);
		const run = await admin(r, 'POST', '/catchup');
		expect(run.status).toBe(409);
		expect(run.message).toMatch(/RELAY_CATCHUP_INTERVAL_S=0/);
		expect((await admin(r, 'GET', '/catchup')).enabled).toBe(false);
		expect(await events(r)).toEqual([]);
	});

	it('two relays on one store run one catch-up at a time', async () => {
		const m = await merchant();
		const database = await store.database();
		const a = await relay(m.token, {}, database);
		const b = database.startsWith('postgres') ? await relay(m.token, {}, database) : a;
		for (let i = 0; i < 3; i++) await m.payBill(`${20 + i}.00`, true);
		await control('POST', '/faults', {
			kind: 'delay',
			delayMs: 500,
			count: 1,
			path: '/api/v1/bill/search',
		});
		const [x, y] = await Promise.all([
			admin(a, 'POST', '/catchup'),
			new Promise<Json>((resolve) => setTimeout(() => resolve(admin(b, 'POST', '/catchup')), 100)),
		]);
		const outcomes = [x.outcome, y.outcome];
		if (a === b) {
			// One process: the second call joins the run under way.
			expect(outcomes).toEqual(['done', 'done']);
			expect(x).toEqual(y);
		} else {
			expect(outcomes.sort()).toEqual(['done', 'skipped']);
			expect([x.status, y.status].sort()).toEqual([200, 409]);
		}
		expect(await events(a, '&source=catch-up')).toHaveLength(3);
	});
}
