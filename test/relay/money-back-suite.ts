// Refund and chargeback postbacks through the relay, against the real sandbox over HTTP, run on
// each store and each sandbox profile by money-back.test.ts: their routes and /postback/payment
// (one URL pasted into the Result, Refund and Chargeback URL fields), their targets and event
// header, their signatures, their look-ups with the service, their dedupe, and the catch-up of
// those the service lost.
import { expect, it } from 'vitest';
import { consoleReader } from './console-login.ts';
import { md5 } from './helpers.ts';
import type { SuiteStore } from './fresh-store.ts';
import { sandboxMerchant } from './sandbox-merchant.ts';
import { catchupSetup } from './catchup-setup.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Json = Record<string, any>;
type Fields = Record<string, string>;

const refundSignature = (f: Fields, token: string) =>
	md5(`${f.Amount}:${f.Currency}:${f.BillId}:${f.PaymentId}:${f.Id}:${token}`);
const chargebackSignature = (f: Fields, token: string) =>
	md5(`${f.BillId}:${f.PaymentId}:${f.Id}:${token}`);

export function moneyBackSuite(store: SuiteStore, profile: 'live' | 'spec'): void {
	const { target, sandboxUrl, control, admin, events, postback, relay } = catchupSetup(
		store,
		async () => {
			target.responder = () => ({ status: 200 });
		},
	);

	/**
	 * A merchant of its own with the refund API switched on, and a payment of `amount` made (after
	 * `before`: a relay started there has its baseline before the payment, whatever the clock).
	 */
	const paidMerchant = async (amount = '100.00', before?: (token: string) => Promise<void>) => {
		const m = await sandboxMerchant(sandboxUrl(), profile);
		await control('PATCH', `/merchants/${m.merchantId}`, { refunds: true });
		await before?.(m.token);
		const bill = await m.bill(amount, 'NORMAL', undefined, false);
		const paid = await m.pay(bill.billId, true);
		return { m, bill, paymentId: paid.paymentId };
	};
	/** What the targets received, as `<path> <event header> <Id or TrsId>`. */
	const received = () =>
		target.received.map((x) => {
			const body: Json = x.body.startsWith('{')
				? JSON.parse(x.body)
				: Object.fromEntries(new URLSearchParams(x.body));
			return `${x.path} ${String(x.headers['x-paypalych-event'])} ${body.Id ?? body.TrsId}`;
		});
	const kinds = async (r: Parameters<typeof events>[0]) =>
		(await events(r)).map((e) => `${e.kind} ${e.source}`).sort();

	it('takes refunds and chargebacks posted to /postback/payment as their kind, forwards them once to the payment targets with their event header, and a replay in another spelling is a duplicate', async () => {
		const { m, paymentId } = await paidMerchant();
		const r = await relay(m.token);
		// One URL in all three fields: the Refund and Chargeback URLs default to the Result URL.
		await control('PATCH', `/shops/${m.shopId}`, { resultUrl: `${r.url}/postback/payment` });
		const refund = await m.api('POST', '/refund/partial/create', {
			payment_id: paymentId,
			amount: '30.00',
		});
		const charged = await control('POST', `/payments/${paymentId}/chargeback`, {});
		await waitFor('the refund and the chargeback forwarded', () => target.received.length >= 2);
		expect(await kinds(r)).toEqual(['chargeback postback', 'refund postback']);
		expect(received().sort()).toEqual(
			[
				`/n8n/payment chargeback ${charged.chargeback.id}`,
				`/n8n/payment refund ${refund.id}`,
			].sort(),
		);

		// The service's retry, and a copy in another spelling (Status in lower case with spaces,
		// white space around the Id, signed over it): the same event.
		const deliveries = (await control('GET', `/deliveries?kind=refund&trsId=${refund.id}`)).data;
		const sent = deliveries[0].body as Fields | string;
		const fields: Fields =
			typeof sent === 'string' ? Object.fromEntries(new URLSearchParams(sent)) : sent;
		expect((await postback(r, 'payment', fields)).status).toBe(200);
		const respelled: Fields = { ...fields, Id: ` ${fields.Id} `, Status: ' success ' };
		respelled.SignatureValue = refundSignature(respelled, m.token);
		expect((await postback(r, 'payment', respelled)).status).toBe(200);
		const cb = charged.postback as Fields;
		const cbRespelled = { ...cb, Status: 'Success', Amount: `${cb.Amount}0` };
		expect((await postback(r, 'chargeback', cbRespelled)).status).toBe(200);
		expect(await kinds(r)).toEqual(['chargeback postback', 'refund postback']);
		const metrics = await (await fetch(`${r.url}/metrics`)).text();
		expect(metrics).toMatch(/paypalych_relay_duplicates_total\{kind="refund"\} 2/);
		expect(metrics).toMatch(/paypalych_relay_duplicates_total\{kind="chargeback"\} 1/);
		expect(target.received).toHaveLength(2);
	});

	it('takes them at /postback/refund and /postback/chargeback and forwards them to RELAY_REFUND_TARGETS and RELAY_CHARGEBACK_TARGETS', async () => {
		const { m, paymentId } = await paidMerchant();
		const r = await relay(m.token, {
			RELAY_REFUND_TARGETS: target.url('/n8n/refund'),
			RELAY_CHARGEBACK_TARGETS: target.url('/n8n/chargeback'),
			RELAY_RETRY_BUDGET_MS: '0',
		});
		// The chargeback target refuses for good: its delivery is a dead letter, as a payment's.
		target.responder = (x) => ({ status: x.path === '/n8n/chargeback' ? 410 : 200 });
		await control('PATCH', `/shops/${m.shopId}`, {
			resultUrl: `${r.url}/postback/payment`,
			refundUrl: `${r.url}/postback/refund`,
			chargebackUrl: `${r.url}/postback/chargeback`,
		});
		const refund = await control('POST', `/payments/${paymentId}/refund`, { amount: '10.00' });
		const charged = await control('POST', `/payments/${paymentId}/chargeback`, {});
		await waitFor('both forwarded', () => target.received.length >= 2);
		expect(received().sort()).toEqual([
			`/n8n/chargeback chargeback ${charged.chargeback.id}`,
			`/n8n/refund refund ${refund.refund.id}`,
		]);
		expect(await kinds(r)).toEqual(['chargeback postback', 'refund postback']);
		await waitFor('the dead letter', async () => {
			const dead = (await admin(r, 'GET', '/events?status=dead')).data as Json[];
			return dead.length === 1 && dead[0].kind === 'chargeback';
		});

		// The console shows them as it shows payments: the kind, the Id, the dead letter.
		const page = await consoleReader(r.app);
		const list = await page('/admin/console/events?kind=refund');
		expect(list).toContain(refund.refund.id);
		expect(list).not.toContain(charged.chargeback.id);
		expect(await page('/admin/console/dead')).toContain('/n8n/chargeback');
	});

	it('refuses a forged signature, a payment signature on a refund and the other way round, and a refund or chargeback the service does not know or shows for another bill', async () => {
		const { m, bill, paymentId } = await paidMerchant();
		const other = await m.bill('5.00', 'NORMAL', undefined, false);
		await m.pay(other.billId, true);
		const r = await relay(m.token);
		const made = await control('POST', `/payments/${paymentId}/refund`, { amount: '10.00' });
		const genuine = made.postback as Fields;
		const signed = (f: Fields) => ({ ...f, SignatureValue: refundSignature(f, m.token) });
		const status = async (route: string, f: Fields) => (await postback(r, route, f)).status;

		// Forged, and signed as the other kind of call.
		expect(await status('refund', { ...genuine, SignatureValue: md5('forged') })).toBe(401);
		const paymentSigned = md5(`${genuine.Amount}:${genuine.InvId}:${m.token}`);
		expect(await status('payment', { ...genuine, SignatureValue: paymentSigned })).toBe(401);
		const payment = { OutSum: '100.00', InvId: bill.orderId, TrsId: paymentId, Status: 'SUCCESS' };
		const refundSigned = refundSignature(genuine, m.token);
		expect(await status('payment', { ...payment, SignatureValue: refundSigned })).toBe(401);

		// Signed with the token, but for a refund the service does not know, or another bill: the
		// look-up refuses it (refund/status; with the refund API off, payment/status&refunds=1).
		const unknown = signed({ ...genuine, Id: `${genuine.Id}x` });
		expect(await status('refund', unknown)).toBe(403);
		// Within the one look-up budget: the same call again is refused without asking the service.
		expect(await status('refund', unknown)).toBe(403);
		expect(await status('payment', signed({ ...genuine, BillId: other.billId }))).toBe(403);
		await control('PATCH', `/merchants/${m.merchantId}`, { refunds: false });
		expect(await status('payment', signed({ ...genuine, Id: `${genuine.Id}y` }))).toBe(403);
		expect(await status('refund', signed({ ...genuine, Status: 'FAIL' }))).toBe(403);
		const chargeback: Fields = { ...genuine, Id: 'cb-unknown' };
		chargeback.SignatureValue = chargebackSignature(chargeback, m.token);
		expect(await status('chargeback', chargeback)).toBe(403);
		expect(await events(r)).toEqual([]);
		const metrics = await (await fetch(`${r.url}/metrics`)).text();
		expect(metrics).toMatch(
			/paypalych_relay_rejected_total\{kind="refund",reason="unknown_refund"\} 5/,
		);
		expect(metrics).toMatch(
			/paypalych_relay_lookups_total\{kind="refund",outcome="remembered"\} 1/,
		);
		expect(metrics).toMatch(/paypalych_relay_lookups_total\{kind="refund",outcome="refused"\} 4/);

		// The genuine one, with the refund API still off, is confirmed through the payment's refunds.
		expect(await status('refund', genuine)).toBe(200);
		expect(await kinds(r)).toEqual(['refund postback']);
	});

	it('M-1/M-2: a genuine refund replayed without its Status, or re-cut as a chargeback, is refused (400) and stored nowhere; only the genuine one is forwarded', async () => {
		const { m, paymentId } = await paidMerchant();
		const r = await relay(m.token, {
			RELAY_REFUND_TARGETS: target.url('/n8n/refund'),
			RELAY_CHARGEBACK_TARGETS: target.url('/n8n/chargeback'),
		});
		const made = await control('POST', `/payments/${paymentId}/refund`, { amount: '10.00' });
		const genuine = made.postback as Fields;
		const status = async (route: string, f: Fields) => (await postback(r, route, f)).status;
		expect(await status('refund', genuine)).toBe(200);
		const { Status: _status, ...noStatus } = genuine;
		for (const route of ['refund', 'payment']) {
			expect(await status(route, noStatus)).toBe(400);
			expect(await status(route, { ...genuine, Status: '' })).toBe(400);
		}
		const recut: Fields = {
			Id: genuine.Id,
			Status: genuine.Status,
			InvId: genuine.InvId,
			BillId: `${genuine.Amount}:${genuine.Currency}:${genuine.BillId}`,
			PaymentId: genuine.PaymentId,
			SignatureValue: genuine.SignatureValue,
		};
		expect(chargebackSignature(recut, m.token)).toBe(genuine.SignatureValue);
		expect(await status('chargeback', recut)).toBe(400);
		expect(await status('payment', recut)).toBe(400);
		expect(await kinds(r)).toEqual(['refund postback']);
		await waitFor('the refund forwarded', () => target.received.length >= 1);
		expect(received()).toEqual([`/n8n/refund refund ${genuine.Id}`]);
		const metrics = await (await fetch(`${r.url}/metrics`)).text();
		expect(metrics).toMatch(
			/paypalych_relay_rejected_total\{kind="refund",reason="missing_field"\} 1/,
		);
		expect(metrics).toMatch(
			/paypalych_relay_rejected_total\{kind="refund",reason="empty_field"\} 1/,
		);
		expect(metrics).toMatch(
			/paypalych_relay_rejected_total\{kind="chargeback",reason="separator_in_field"\} 1/,
		);
	});

	it('D-1: a P2P deal posted to the Result URL or the payout webhook is answered OK, stored nowhere, forwarded nowhere, and the console says what it was; a forged one is refused', async () => {
		const { m } = await paidMerchant();
		const r = await relay(m.token, { RELAY_PAYOUT_TARGETS: target.url('/n8n/payout') });
		const deal: Fields = {
			TrsId: 'DEAL-1',
			InvId: 'deal-1',
			Status: 'SUCCESS',
			Amount: '700.00',
			Currency: 'RUB',
			BalanceAmount: '690.00',
			BalanceCurrency: 'RUB',
			'Payment[0][id]': 'p-1',
			'Payout[0][id]': 'po-1',
		};
		deal.SignatureValue = md5(`${deal.Amount}:${deal.TrsId}:${m.token}`);
		for (const route of ['payment', 'payout']) {
			const answer = await postback(r, route, deal);
			expect(answer.status, route).toBe(200);
		}
		expect((await postback(r, 'payout', { ...deal, SignatureValue: md5('x') })).status).toBe(401);
		expect(await events(r)).toEqual([]);
		expect(target.received).toEqual([]);
		const metrics = await (await fetch(`${r.url}/metrics`)).text();
		expect(metrics).toMatch(/paypalych_relay_p2p_deals_total\{route="payout"\} 1/);
		expect(metrics).toMatch(/paypalych_relay_p2p_deals_total\{route="payment"\} 1/);
		const page = await consoleReader(r.app);
		expect(await page('/admin/console')).toContain('2 P2P deal postback(s)');
	});

	it('catch-up finds a refund and a chargeback whose postbacks were lost and forwards each once; the late genuine postbacks are duplicates', async () => {
		// The relay first: its baseline (a new store) is then before the payment it is to find.
		let r!: Awaited<ReturnType<typeof relay>>;
		const { m, paymentId } = await paidMerchant('100.00', async (token) => {
			r = await relay(token);
		});
		await control('PATCH', `/merchants/${m.merchantId}`, { losePostbacks: true });
		const refund = await control('POST', `/payments/${paymentId}/refund`, { amount: '20.00' });
		const charged = await control('POST', `/payments/${paymentId}/chargeback`, {});
		await control('PATCH', `/merchants/${m.merchantId}`, { losePostbacks: false });

		const run = await admin(r, 'POST', '/catchup');
		expect(run.outcome).toBe('done');
		expect(run.moneyBack).toMatchObject({ refunds: 'read', refundsListed: 1, paymentsToCheck: 0 });
		expect(run.found.map((f: Json) => `${f.kind} ${f.trsId} ${f.status}`).sort()).toEqual([
			`chargeback ${charged.chargeback.id} SUCCESS`,
			`payment ${paymentId} SUCCESS`,
			`refund ${refund.refund.id} SUCCESS`,
		]);
		await waitFor('three forwarded', () => target.received.length >= 3);
		expect(received().sort()).toEqual(
			[
				`/n8n/payment chargeback ${charged.chargeback.id}`,
				`/n8n/payment payment ${paymentId}`,
				`/n8n/payment refund ${refund.refund.id}`,
			].sort(),
		);
		// Rebuilt as the service would have sent them: the same signed values, so the trigger
		// verifies them (and confirms them with the service).
		const caught = (await events(r, '&kind=refund'))[0].fields as Fields;
		for (const field of ['Id', 'Amount', 'Currency', 'BillId', 'PaymentId', 'Status'])
			expect(caught[field], field).toBe(refund.postback[field]);
		expect(caught.InvId).toBe(profile === 'spec' ? '' : refund.postback.InvId);

		// The next run finds nothing; the late genuine postbacks are the catch-up's events.
		const again = await admin(r, 'POST', '/catchup');
		expect(again.found).toEqual([]);
		expect((await postback(r, 'payment', refund.postback)).status).toBe(200);
		expect((await postback(r, 'payment', charged.postback)).status).toBe(200);
		expect(await kinds(r)).toEqual(['chargeback catch-up', 'payment catch-up', 'refund catch-up']);
		expect(target.received).toHaveLength(3);
	});

	it('catch-up says in its coverage when the refund API is not switched on, and still finds chargebacks', async () => {
		let r!: Awaited<ReturnType<typeof relay>>;
		const { m, paymentId } = await paidMerchant('100.00', async (token) => {
			r = await relay(token);
		});
		await control('PATCH', `/merchants/${m.merchantId}`, { refunds: false, losePostbacks: true });
		const charged = await control('POST', `/payments/${paymentId}/chargeback`, {});
		const run = await admin(r, 'POST', '/catchup');
		expect(run.outcome).toBe('done');
		expect(run.moneyBack.refunds).toBe('refunds_not_enabled');
		expect(
			run.found.filter((f: Json) => f.kind === 'chargeback').map((f: Json) => f.trsId),
		).toEqual([charged.chargeback.id]);
		// Remembered until the next deep run: the runs between ask no refund/search.
		const next = await admin(r, 'POST', '/catchup');
		expect(next).toMatchObject({ outcome: 'done', deep: false });
		expect(next.moneyBack).toMatchObject({
			refunds: 'refunds_not_enabled',
			refundsRemembered: true,
		});
		const asked = async () =>
			(await (await fetch(`${r.url}/metrics`)).text()).match(
				/paypalych_relay_catchup_api_calls_total\{endpoint="refund\/search"\} (\d+)/,
			)?.[1];
		expect(await asked()).toBe('1');
		// A deep run asks again.
		expect((await admin(r, 'POST', '/catchup', { deep: true })).moneyBack.refunds).toBe(
			'refunds_not_enabled',
		);
		expect(await asked()).toBe('2');
	});

	it('a backlog of bills never keeps a lost refund from being found: refunds and chargebacks keep their share of every run, and the refund is forwarded once', async () => {
		const m = await sandboxMerchant(sandboxUrl(), profile);
		await control('PATCH', `/merchants/${m.merchantId}`, { refunds: true, losePostbacks: true });
		// 8 calls: 2 (a quarter, at least one for each kind) held for refunds and chargebacks; the
		// payouts, the bill search and 4 bills take the other 6, and 11 unread paid bills remain.
		const r = await relay(m.token, { RELAY_CATCHUP_MAX_CALLS: '8' });
		for (let i = 0; i < 10; i++)
			await m.pay((await m.bill(`${10 + i}.00`, 'NORMAL', undefined, false)).billId);
		const bill = await m.bill('100.00', 'NORMAL', undefined, false);
		const { paymentId } = await m.pay(bill.billId);
		const refund = await control('POST', `/payments/${paymentId}/refund`, { amount: '20.00' });
		const refunds = () => received().filter((x) => x.includes(' refund '));

		// The run is cut by the bills, and still reads the refunds: the lost one is found.
		const first = await admin(r, 'POST', '/catchup');
		expect(first.outcome).toBe('partial');
		expect(first.calls).toBe(8);
		expect(first.toRead.bills).toBeGreaterThan(0);
		expect(first.moneyBack).toMatchObject({ refunds: 'read', refundsListed: 1 });
		const found = (first.found as Json[]).map((f) => `${f.kind} ${f.trsId}`);
		expect(found.filter((f) => f.startsWith('payment '))).toHaveLength(4);
		expect(found.filter((f) => f.startsWith('refund '))).toEqual([`refund ${refund.refund.id}`]);
		await waitFor('the refund forwarded', () => refunds().length === 1);

		// The backlog's next runs read the bills left and never the refund again.
		for (let i = 0; i < 4 && (await admin(r, 'POST', '/catchup')).outcome !== 'done'; i++);
		const last = await admin(r, 'POST', '/catchup');
		expect(last).toMatchObject({ outcome: 'done', found: [] });
		expect((await events(r, '&kind=payment&source=catch-up')).length).toBe(11);
		expect((await postback(r, 'payment', refund.postback)).status).toBe(200);
		expect(await kinds(r)).toContain('refund catch-up');
		expect((await events(r, '&kind=refund')).length).toBe(1);
		expect(refunds()).toEqual([`/n8n/payment refund ${refund.refund.id}`]);
	});
}
