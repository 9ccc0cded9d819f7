/**
 * TrsId names a bill whose payments span several pages of bill/payments: the trigger reads every
 * page (a fake service answering the way some deployments do: error_code form, cursor pages).
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
/** Five payments of one MULTI link, two a page: the third page holds the fifth. */
const PAYMENTS = [1, 2, 3, 4, 5].map((n) => ({
	id: `PAY-${n}`,
	bill_id: BILL,
	status: 'SUCCESS',
	amount: 40,
	amount_received: 40,
	currency_in: 'RUB',
}));

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
		if (url.pathname === '/api/v1/bill/status' && id === BILL) {
			res.end(
				JSON.stringify({
					success: true,
					id: BILL,
					status: 'SUCCESS',
					type: 'MULTI',
					amount: 40,
					order_id: 'link-1',
				}),
			);
			return;
		}
		if (url.pathname === '/api/v1/bill/payments' && id === BILL) {
			const at = Number(url.searchParams.get('cursor') ?? '0');
			const next = at + 2 < PAYMENTS.length ? String(at + 2) : null;
			res.end(
				JSON.stringify({
					success: true,
					data: PAYMENTS.slice(at, at + 2),
					links: {
						next: next === null ? null : `${base}/api/v1/bill/payments?id=${BILL}&cursor=${next}`,
					},
					meta: { next_cursor: next, per_page: 2 },
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

it('five identical postbacks naming the bill start five executions, the fifth payment found on the third page', async () => {
	const postback = {
		InvId: 'link-1',
		OutSum: '40.00',
		TrsId: BILL,
		Status: 'SUCCESS',
		CurrencyIn: 'RUB',
		SignatureValue: md5(`40.00:link-1:${TOKEN}`),
	};
	for (let i = 0; i < 5; i++) expect((await postForm(h.url, postback)).receipt).toBe('accepted');
	expect((await postForm(h.url, postback)).receipt).toBe('duplicate');
	expect(h.executions.map((e) => (e[0][0].json.payment as { id: string }).id)).toEqual(
		PAYMENTS.map((p) => p.id),
	);
	expect(asked.some((path) => path.includes('cursor=4'))).toBe(true);
});
