/**
 * A service that sends the bill id as TrsId (the sandbox's `trsId: "bill"` switch): the relay's
 * look-ups confirm such a postback by a payment of that bill (bill/status, every page of
 * bill/payments, chooseBillPayment), and the store is the memory of which payments were stored.
 * Five payments of one MULTI link post five identical postbacks: five events, each forwarded once;
 * the service's retries of them are duplicates. Over the pair limit, and under a stored twin, such a
 * postback is stored as its payment, not refused as an unknown payment. On both stores, on both
 * sandbox profiles, against the real sandbox; the pages of `bill/payments` a look-up reads (and
 * their cap), and a payment the catch-up stored, against a stand-in service.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Source } from '../../relay/src/intake.ts';
import { LOOK_UP_PAYMENT_PAGES } from '../../relay/src/look-ups.ts';
import { freshSqliteStore } from './fresh-store.ts';
import { waitFor } from '../../scripts/harness/wait.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import { PROFILES } from '../helpers/sandbox.ts';
import { Target, form, lookUpIntake, paymentFields } from './helpers.ts';
import { onEveryStoreKind, sandboxCalls, control, sb, type StoreWorld } from './attacks/world.ts';
import { sandboxMerchant } from './sandbox-merchant.ts';

type Row = { id: string; dedupeKey: string | null; fields: Record<string, string> };

/** A relay for a merchant whose TrsId names the bill, forwarding payments to a target of its own. */
async function billWorld(w: StoreWorld, profile: (typeof PROFILES)[number], extra = {}) {
	const m = await sandboxMerchant(sb.url, profile, { trsId: 'bill' });
	const target = await new Target().listen();
	w.cleanups.push(() => target.close());
	const r = await w.relay(
		{ PAYPALYCH_API_TOKEN: m.token, RELAY_PAYOUT_CHECK: 'off', ...extra },
		{ targets: [target.url('/pay')] },
	);
	const events = async (trsId: string) =>
		(
			JSON.parse(
				(await w.admin(r, `/admin/events?limit=100&trsId=${encodeURIComponent(trsId)}`)).body,
			) as { data: Row[] }
		).data;
	const post = async (fields: Record<string, string>) => {
		const answer = await w.post(r, '/postback/payment', fields);
		expect(answer.statusCode, answer.body).toBe(200);
	};
	/** Waits until the target got `n` calls, and a little longer for any more. */
	const forwarded = async (n: number) => {
		await waitFor(`${n} forwards`, async () => (target.received.length >= n ? true : undefined));
		await new Promise((resolve) => setTimeout(resolve, 300));
		return target.received;
	};
	return { m, r, target, events, post, forwarded };
}

/** The service's payment id a bill-payment key names (relay/src/fidelity.ts billPaymentKey). */
const named = (rows: Row[]) =>
	rows.flatMap((row) => {
		const parts = JSON.parse(row.dedupeKey ?? '[]') as string[];
		return parts[3] === 'bill-payment' ? [parts[4]] : [];
	});

const metric = async (r: RunningRelay, line: string) => {
	const text = (await r.app.inject({ method: 'GET', url: '/metrics' })).body;
	const found = text.split('\n').find((l) => l.startsWith(`${line} `));
	return found ? Number(found.slice(line.length + 1)) : 0;
};

onEveryStoreKind('TrsId naming the bill, through the relay', (w) => {
	for (const profile of PROFILES) {
		it(`five identical postbacks of one MULTI link are five events, each forwarded once; their retries are duplicates (${profile})`, async () => {
			// Every retry is looked up too: room for ten look-ups of the link's pair this minute.
			const { m, r, events, post, forwarded } = await billWorld(w, profile, {
				RELAY_PAIR_LIMIT: '20',
			});
			const { billId } = await m.bill('100.00', 'MULTI');
			const paid = [];
			for (let i = 0; i < 5; i++) paid.push(await m.pay(billId));
			// The service posts the same signed fields for each payment: only the service tells them
			// apart (with liveExtras, the payer's card differs; nothing the relay keys on does).
			const signed = ({ InvId, OutSum, TrsId, Status, SignatureValue }: Record<string, string>) =>
				JSON.stringify([InvId, OutSum, TrsId, Status, SignatureValue]);
			expect(new Set(paid.map((p) => signed(p.postback))).size).toBe(1);
			expect(paid[0].postback.TrsId).toBe(billId);
			for (const p of paid) await post(p.postback);
			const rows = await events(billId);
			expect(rows).toHaveLength(5);
			// The first is stored as any postback; each later one as a payment of the bill not stored yet.
			const claimed = named(rows);
			expect(claimed).toHaveLength(4);
			expect(new Set(claimed).size).toBe(4);
			for (const id of claimed) expect(paid.map((p) => p.paymentId)).toContain(id);
			expect(await forwarded(5)).toHaveLength(5);

			// The service's retries of each: duplicates, nothing more stored or forwarded.
			await control('DELETE', 'calls');
			for (const p of paid) await post(p.postback);
			expect(await events(billId)).toHaveLength(5);
			expect(await metric(r, 'paypalych_relay_duplicates_total{kind="payment"}')).toBe(5);
			expect(await forwarded(5)).toHaveLength(5);
			// Each retry asked the service which payments the bill has.
			expect(await sandboxCalls('bill/payments')).toBeGreaterThanOrEqual(5);
		});

		it(`a NORMAL bill's payment is one event, forwarded once; its retry is a duplicate (${profile})`, async () => {
			const { m, events, post, forwarded } = await billWorld(w, profile);
			const { billId } = await m.bill('40.00');
			const { postback } = await m.pay(billId);
			expect(postback.TrsId).toBe(billId);
			await post(postback);
			await post(postback);
			expect(await events(billId)).toHaveLength(1);
			expect(await forwarded(1)).toHaveLength(1);
		});

		it(`over the pair limit, a postback naming the bill is stored as its payment, not refused as unknown (${profile})`, async () => {
			// RELAY_PAIR_LIMIT=1: the link's one signed pair takes one event without a look-up.
			const { m, r, events, post, forwarded } = await billWorld(w, profile, {
				RELAY_PAIR_LIMIT: '1',
			});
			const { billId } = await m.bill('70.00', 'MULTI');
			const failed = (await control('POST', `bills/${billId}/pay`, {
				outcome: 'fail',
				losePostback: true,
			})) as { postback: Record<string, string> };
			expect(failed.postback).toMatchObject({ TrsId: billId, Status: 'FAIL' });
			await post(failed.postback);
			// A SUCCESS of the link: the pair's second event, over the limit: looked up, and stored.
			const paid = await m.pay(billId);
			await post(paid.postback);
			const rows = (await events(billId)).filter((e) => e.fields.Status === 'SUCCESS');
			expect(named(rows)).toEqual([paid.paymentId]);
			expect(
				await metric(r, 'paypalych_relay_rejected_total{kind="payment",reason="unknown_payment"}'),
			).toBe(0);
			expect(await forwarded(2)).toHaveLength(2);
		});

		it(`a postback naming the bill after a forged one under its TrsId (a twin with another signed pair) is stored as its payment, not refused (${profile})`, async () => {
			const { m, r, events, post, forwarded } = await billWorld(w, profile);
			const { billId } = await m.bill('70.00', 'MULTI');
			// The forger's own paid order signs another pair; sent first with the link's TrsId, it is
			// stored as any postback (nothing tells it apart yet; the trigger refuses it).
			const own = await m.pay((await m.bill('10.00')).billId);
			const { InvId, OutSum, SignatureValue } = own.postback;
			const genuine = await m.pay(billId);
			await post({ ...genuine.postback, InvId, OutSum, SignatureValue });
			// The genuine one: a twin under another signed pair, looked up, stored as its payment.
			await post(genuine.postback);
			const rows = await events(billId);
			expect(rows).toHaveLength(2);
			expect(named(rows)).toEqual([genuine.paymentId]);
			expect(
				await metric(r, 'paypalych_relay_rejected_total{kind="payment",reason="unknown_payment"}'),
			).toBe(0);
			expect(await forwarded(2)).toHaveLength(2);
			// Its retry: a duplicate.
			await post(genuine.postback);
			expect(await events(billId)).toHaveLength(2);
		});
	}
});

describe("a look-up of a bill's payments, against a stand-in service", () => {
	const cleanups: Array<() => Promise<void>> = [];
	afterEach(async () => {
		for (const c of cleanups.splice(0).reverse()) await c();
	});

	/**
	 * A service whose `TrsId` B-1 is a bill: `payment/status` does not know it, `bill/payments`
	 * answers one payment a page by `cursor` (`pages` pages; `endless`: always a next one).
	 */
	async function service(pages: number, endless = false) {
		const api = await new Target().listen();
		cleanups.push(() => api.close());
		api.responder = (req) => {
			const url = new URL(req.path, 'http://x');
			const json = (body: unknown, status = 200) => ({ status, body: JSON.stringify(body) });
			if (url.pathname.endsWith('/payment/status'))
				return json({ success: false, message: 'api:error.payment_not_found' }, 404);
			if (url.pathname.endsWith('/bill/status'))
				return json({ success: true, id: 'B-1', status: 'PAID', order_id: 'link-1' });
			const page = Number(url.searchParams.get('cursor') ?? '1');
			const next = endless || page < pages ? String(page + 1) : null;
			const payment = { id: `P-${page}`, bill_id: 'B-1', status: 'SUCCESS', amount: '10.50' };
			return json({ success: true, data: [payment], meta: { next_cursor: next } });
		};
		return api;
	}

	/** `pairMax`: RELAY_PAIR_LIMIT, which is also the pair's look-ups a minute. */
	async function intakeOn(url: string, pairMax: number) {
		const opened = await freshSqliteStore();
		cleanups.push(opened.cleanup);
		const intake = lookUpIntake(opened.store, url, { pairMax });
		return { intake, store: opened.store };
	}

	const sale = paymentFields('B-1', { invId: 'link-1', outSum: '10.50' });
	const postback: Source = {
		via: 'postback',
		body: form(sale),
		contentType: 'application/x-www-form-urlencoded',
		tokenIndex: 0,
	};

	it('reads every page: the third payment of the bill, on page 3, is the third event', async () => {
		const api = await service(3);
		const { intake, store } = await intakeOn(api.url(''), 3);
		for (let i = 0; i < 3; i++) {
			expect(await intake.admit('payment', sale, postback)).toMatchObject({
				outcome: 'stored',
				duplicate: false,
			});
		}
		const keys = (await store.listEvents({ limit: 10 })).map((e) => e.dedupeKey ?? '');
		expect(keys.filter((k) => k.includes('"P-3"'))).toHaveLength(1);
		// A fourth: every payment is stored, a duplicate.
		expect(await intake.admit('payment', sale, postback)).toMatchObject({ duplicate: true });
	});

	it("a payment the catch-up stored under its own id counts as stored; where the bill's first postback may be it, the next postback is stored rather than taken for a retry", async () => {
		const api = await service(2);
		const { intake, store } = await intakeOn(api.url(''), 3);
		// The catch-up found P-2 (its event's TrsId is the payment's id), then the bill's postbacks come.
		const caught = { TrsId: 'P-2', Status: 'SUCCESS', OutSum: '10.50', InvId: 'link-1' };
		await intake.admit('payment', caught, { via: 'catch-up', orderUnknown: false });
		expect(await intake.admit('payment', sale, postback)).toMatchObject({ duplicate: false });
		// The first postback may be P-1's or P-2's: the second is stored as P-1 (the trigger behind
		// the relay starts nothing twice), never answered as a retry while P-1 may be missing.
		expect(await intake.admit('payment', sale, postback)).toMatchObject({ duplicate: false });
		const keys = (await store.listEvents({ limit: 10 })).map((e) => e.dedupeKey ?? '');
		expect(keys.filter((k) => k.includes('"bill-payment","P-1"'))).toHaveLength(1);
		// Every payment is accounted for: a retry is a duplicate.
		expect(await intake.admit('payment', sale, postback)).toMatchObject({ duplicate: true });
	});

	it(`stops at the look-ups' page cap (${LOOK_UP_PAYMENT_PAGES} pages) and asks for a retry, naming it`, async () => {
		const api = await service(0, true);
		// One event of the pair without a look-up: the next one of the link is looked up.
		const { intake } = await intakeOn(api.url(''), 1);
		await intake.admit('payment', sale, postback);
		// Another status of the link: over the pair limit, looked up: the pages never end.
		const failed = { ...sale, Status: 'FAIL' };
		const answer = await intake.admit('payment', failed, { ...postback, body: form(failed) });
		expect(answer).toMatchObject({
			outcome: 'unavailable',
			reason: expect.stringMatching(/not read to the end \(10 pages, the look-ups' cap 10\)/),
		});
		const pagesRead = api.received.filter((r) => r.path.includes('/bill/payments')).length;
		expect(pagesRead).toBe(LOOK_UP_PAYMENT_PAGES);
	});
});
