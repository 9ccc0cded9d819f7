// The catch-up against a service answering in the shapes its public reference shows (the typed
// client's records, docs/developer/service.md), on both stores: refund records that name their
// payment as `entity_type`/`entity_id` and show no bill, chargebacks listed under the singular
// `chargeback` without an amount, and `links`/`meta` as one-element lists on the searches (page 2
// of payment/search is read). The sandbox's profiles answer in their own shapes; this small stand-in
// answers in these, so the catch-up is held to both.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { start } from '../../relay/src/server.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import { ADMIN_TOKEN, TOKEN, Target, baseEnv, form, md5, tempDir } from './helpers.ts';
import { onEveryStore } from './fresh-store.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Json = Record<string, any>;
const DAY_MS = 86_400_000;

/** A service of two paid payments of old bills, a refund and a chargeback of the first one. */
function publicShapes() {
	// Every record is made when the relay asks (after its baseline), the bills 100 days earlier.
	const at = (daysAgo = 0) => new Date(Date.now() - daysAgo * DAY_MS).toISOString();
	const bills: Record<string, Json> = {
		B1: { id: 'B1', status: 'SUCCESS', type: 'NORMAL', order_id: 'o-1', amount: 100 },
		B2: { id: 'B2', status: 'SUCCESS', type: 'MULTI', order_id: 'o-2', amount: 50 },
	};
	const payment = (id: string, bill: string, amount: number) => ({
		id,
		bill_id: bill,
		status: 'SUCCESS',
		amount,
		commission: 0,
		currency_in: 'RUB',
		created_at: at(),
	});
	const chargeback = () => [{ id: 'C1', payment_id: 'P1', status: 'SUCCESS', created_at: at() }];
	const list = (data: unknown[], next: string | null) => ({
		success: true,
		data,
		links: [{ first: null, last: null, prev: null, next }],
		meta: [{ path: '', per_page: 1, next_cursor: next === null ? null : 'c2', prev_cursor: null }],
	});
	const answer = (url: URL): Json => {
		const path = url.pathname.replace('/api/v1/', '');
		const id = url.searchParams.get('id') ?? '';
		if (path === 'payout/search' || path === 'bill/search') return list([], null);
		if (path === 'payment/search')
			return url.searchParams.get('cursor') === 'c2'
				? list([payment('P2', 'B2', 50)], null)
				: list([payment('P1', 'B1', 100)], `${url.origin}${url.pathname}?${nextQuery(url)}`);
		if (path === 'refund/search')
			return {
				success: true,
				data: [
					{
						id: 'R1',
						status: 'SUCCESS',
						amount: 20,
						currency: 'RUB',
						entity_type: 'payment',
						entity_id: 'P1',
						created_at: at(),
					},
				],
				links: { next: null },
				meta: { next_cursor: null },
			};
		if (path === 'bill/status' && bills[id])
			return { success: true, ...bills[id], created_at: at(100) };
		if (path === 'payment/status' && (id === 'P1' || id === 'P2')) {
			const record = id === 'P1' ? payment('P1', 'B1', 100) : payment('P2', 'B2', 50);
			return {
				success: true,
				...record,
				...(url.searchParams.get('chargeback')
					? { chargeback: id === 'P1' ? chargeback() : [] }
					: {}),
			};
		}
		if (path === 'bill/payments') return list([], null);
		return { success: false, message: 'api:error.not_found' };
	};
	const nextQuery = (url: URL) => {
		const q = new URLSearchParams(url.search);
		q.set('cursor', 'c2');
		return q.toString();
	};
	const asked: string[] = [];
	const server: Server = createServer((req, res) => {
		const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
		asked.push(url.pathname.replace('/api/v1/', ''));
		const body = answer(url);
		res.writeHead(body.success === false ? 404 : 200, { 'content-type': 'application/json' });
		res.end(JSON.stringify(body));
	});
	return { server, asked };
}

onEveryStore('catch-up in the public record shapes', (store) => {
	const tmp = tempDir();
	const target = new Target();
	let service: ReturnType<typeof publicShapes>;
	let url = '';
	let relay: RunningRelay | undefined;

	beforeAll(async () => {
		await target.listen();
		service = publicShapes();
		await new Promise<void>((resolve) => service.server.listen(0, '127.0.0.1', resolve));
		url = `http://127.0.0.1:${(service.server.address() as AddressInfo).port}`;
	});
	afterAll(async () => {
		await relay?.close();
		await new Promise((resolve) => service.server.close(resolve));
		await target.close();
		await store.cleanup();
		tmp.cleanup();
	});

	const admin = async (method: string, path: string, body?: unknown) => {
		const res = await fetch(`${relay!.url}/admin${path}`, {
			method,
			headers: {
				authorization: `Bearer ${ADMIN_TOKEN}`,
				...(body === undefined ? {} : { 'content-type': 'application/json' }),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		return (await res.json()) as Json;
	};

	it('finds the payments of old bills (page 2 of payment/search through a one-element links list), the refund that names its payment by entity_id, and the chargeback listed under `chargeback` without an amount, each once; the late genuine chargeback postback is the same event', async () => {
		relay = await start(
			baseEnv(
				tmp.dir,
				{ payment: [target.url('/n8n')] },
				{
					PAYPALYCH_API_BASE_URL: url,
					RELAY_DATABASE: await store.database(),
					RELAY_CATCHUP_INTERVAL_S: '3600',
					LOG_LEVEL: 'silent',
				},
			),
			{ deps: { catchupBackoffMs: 5, alertCheckMs: 50 } },
		);
		const run = await admin('POST', '/catchup');
		expect(run).toMatchObject({
			outcome: 'done',
			paymentSearch: { state: 'read', listed: 2, payments: 2, olderBills: 2 },
			moneyBack: { refunds: 'read', refundsListed: 1, paymentsChecked: 2, paymentsToCheck: 0 },
			unread: [],
		});
		expect(run.found.map((f: Json) => `${f.kind} ${f.trsId}`).sort()).toEqual([
			'chargeback C1',
			'payment P1',
			'payment P2',
			'refund R1',
		]);
		await waitFor('four forwarded', () => target.received.length >= 4);
		const bodies = target.received.map((x) => Object.fromEntries(new URLSearchParams(x.body)));
		const refund = bodies.find((b) => b.Id === 'R1')!;
		expect(refund).toMatchObject({
			Amount: '20.00',
			Currency: 'RUB',
			BillId: 'B1',
			PaymentId: 'P1',
			InvId: 'o-1',
			Status: 'SUCCESS',
		});
		expect(refund.SignatureValue).toBe(md5(`20.00:RUB:B1:P1:R1:${TOKEN}`));
		const chargeback = bodies.find((b) => b.Id === 'C1')!;
		expect(chargeback).toMatchObject({ BillId: 'B1', PaymentId: 'P1', InvId: 'o-1' });
		expect(chargeback.Amount).toBeUndefined();
		expect(chargeback.SignatureValue).toBe(md5(`B1:P1:C1:${TOKEN}`));
		expect(bodies.find((b) => b.TrsId === 'P2')).toMatchObject({ InvId: 'o-2', OutSum: '50.00' });
		// Both bills read with bill/status, once; the MULTI one remembered and read by the next run.
		expect(service.asked.filter((p) => p === 'bill/status')).toHaveLength(2);

		const again = await admin('POST', '/catchup');
		expect(again.found).toEqual([]);
		expect(again.billsRead).toBe(1);
		const late = await fetch(`${relay.url}/postback/payment`, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body: form({ ...chargeback }),
		});
		expect(late.status).toBe(200);
		const stored = (await admin('GET', '/events?limit=100')).data as Json[];
		expect(stored.map((e) => `${e.kind} ${e.source}`).sort()).toEqual([
			'chargeback catch-up',
			'payment catch-up',
			'payment catch-up',
			'refund catch-up',
		]);
	});
});
