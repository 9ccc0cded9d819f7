/**
 * TrsId names a bill whose payments span several pages of bill/payments: the trigger reads every
 * page (a fake service answering the way some deployments do: error_code form, cursor pages, with
 * `links` and `meta` as objects, or as lists of one object as the service's typed client models
 * them: the bill BILL-LISTS).
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { resetProcessMemory } from '../../dist/nodes/PayPalychTrigger/memory.js';
import { startTrigger, postForm } from '../helpers/trigger-harness.ts';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';

const TOKEN = 'pages|token';
const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex').toUpperCase();
const BILL = 'BILL-PAGES';
/** The bill whose pages give `links` and `meta` as lists of one object. */
const LISTS = 'BILL-LISTS';
/** Five payments of one MULTI link, two a page: the third page holds the fifth. */
const paymentsOf = (bill: string) =>
	[1, 2, 3, 4, 5].map((n) => ({
		id: `${bill}-PAY-${n}`,
		bill_id: bill,
		status: 'SUCCESS',
		amount: 40,
		amount_received: 40,
		currency_in: 'RUB',
	}));
const ORDER: Record<string, string> = { [BILL]: 'link-1', [LISTS]: 'link-2' };

let server: Server;
let base = '';
let h: WebhookHarness;
const asked: string[] = [];

beforeAll(async () => {
	server = createServer((req, res) => {
		const url = new URL(req.url ?? '/', 'http://local');
		asked.push(`${url.pathname}${url.search}`);
		res.setHeader('content-type', 'application/json');
		const id = url.searchParams.get('id');
		if (url.pathname === '/api/v1/payment/status') {
			res.statusCode = 404;
			res.end(
				JSON.stringify({
					success: false,
					error_code: 'api:error.payment_not_found',
					error_message: 'Payment not found',
				}),
			);
			return;
		}
		if (url.pathname === '/api/v1/bill/status' && id !== null && id in ORDER) {
			res.end(
				JSON.stringify({
					success: true,
					id,
					status: 'SUCCESS',
					type: 'MULTI',
					amount: 40,
					order_id: ORDER[id],
				}),
			);
			return;
		}
		if (url.pathname === '/api/v1/bill/payments' && id !== null && id in ORDER) {
			const payments = paymentsOf(id);
			const at = Number(url.searchParams.get('cursor') ?? '0');
			const next = at + 2 < payments.length ? String(at + 2) : null;
			const links = {
				next: next === null ? null : `${base}/api/v1/bill/payments?id=${id}&cursor=${next}`,
			};
			const meta = { next_cursor: next, per_page: 2 };
			res.end(
				JSON.stringify({
					success: true,
					data: payments.slice(at, at + 2),
					links: id === LISTS ? [links] : links,
					meta: id === LISTS ? [meta] : meta,
				}),
			);
			return;
		}
		res.statusCode = 404;
		res.end(JSON.stringify({ success: false, error_code: 'api:error.bill_not_found' }));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	h = await startTrigger({ event: 'payment' }, { apiToken: TOKEN, baseUrl: base });
});
beforeEach(() => resetProcessMemory());
afterAll(async () => {
	await h?.close();
	await new Promise<void>((resolve) => server.close(() => resolve()));
});

it.each([
	['objects', BILL],
	['lists of one object', LISTS],
])(
	'five identical postbacks naming the bill start five executions, the fifth payment found on the third page (links and meta as %s)',
	async (_shape, bill) => {
		const invId = ORDER[bill];
		const before = h.executions.length;
		const postback = {
			InvId: invId,
			OutSum: '40.00',
			TrsId: bill,
			Status: 'SUCCESS',
			CurrencyIn: 'RUB',
			SignatureValue: md5(`40.00:${invId}:${TOKEN}`),
		};
		for (let i = 0; i < 5; i++) expect((await postForm(h.url, postback)).receipt).toBe('accepted');
		expect((await postForm(h.url, postback)).receipt).toBe('duplicate');
		expect(
			h.executions.slice(before).map((e) => (e[0][0].json.payment as { id: string }).id),
		).toEqual(paymentsOf(bill).map((p) => p.id));
		expect(asked.some((path) => path.includes(`id=${bill}&cursor=4`))).toBe(true);
	},
);
