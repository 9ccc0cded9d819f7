/**
 * Statement › Get over a day of 10,000 movements (4,000 payments, 1,000 refunds, 5,000 payouts),
 * from a stand-in service that makes its pages on request (cursor pages of 100 rows, each row
 * padded as a busy record would be): every page is read, the totals are exact, and in summary mode
 * the node keeps only the totals while it reads. The heap the run grew by is printed for
 * docs/merchant/statement.md (not asserted: a heap is no test of behaviour).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runNode } from '../helpers/n8n-context.ts';

const DAY = '2025-03-10';
const COUNTS = { payment: 4000, refund: 1000, payout: 5000 };
const PAD = 'x'.repeat(1500);

/** Row i of a list: on the day, except every 10th (the day before, from the widened search). */
function rowOf(kind: keyof typeof COUNTS, i: number): Record<string, unknown> {
	const created = i % 10 === 9 ? '2025-03-09 23:59:59' : `${DAY} 12:00:00`;
	const base = { id: `${kind}-${i}`, created_at: created, pad: PAD };
	if (kind === 'payment')
		return {
			...base,
			bill_id: `b-${i}`,
			status: i % 7 === 0 ? 'FAIL' : 'SUCCESS',
			amount: 100.1,
			commission: 3.01,
			account_amount: 97.09,
			account_currency_code: 'RUB',
			currency_in: 'RUB',
		};
	if (kind === 'refund')
		return {
			...base,
			status: 'SUCCESS',
			amount: 10.05,
			currency: 'RUB',
			entity_type: 'payment',
			entity_id: `payment-${i}`,
		};
	return {
		...base,
		status: i % 5 === 0 ? 'MODERATING' : 'SUCCESS',
		amount: 50,
		commission: 11,
		account_amount: 61,
		currency: 'RUB',
		account_currency: 'RUB',
	};
}

describe('Statement › Get over 10,000 movements', () => {
	let server: Server;
	let url: string;
	const calls: Record<string, number> = {};
	let peak = 0;

	beforeAll(async () => {
		server = createServer((request, response) => {
			const u = new URL(request.url ?? '/', 'http://x');
			const path = u.pathname.replace('/api/v1/', '');
			calls[path] = (calls[path] ?? 0) + 1;
			// With --expose-gc, what is still held every 100 calls; without, an upper bound.
			if (global.gc && Object.values(calls).reduce((a, b) => a + b, 0) % 100 === 0) global.gc();
			peak = Math.max(peak, process.memoryUsage().heapUsed);
			let body: unknown;
			if (path === 'payment/status')
				body = { success: true, id: u.searchParams.get('id'), chargeback: [] };
			else if (path === 'merchant/balance') body = { success: true, balances: [] };
			else {
				const kind = path.split('/')[0] as keyof typeof COUNTS;
				const perPage = Number(u.searchParams.get('per_page') ?? '100');
				const from = Number(u.searchParams.get('cursor') ?? '0');
				const to = Math.min(COUNTS[kind], from + perPage);
				const data = [];
				for (let i = from; i < to; i++) data.push(rowOf(kind, i));
				body = {
					data,
					links: { next: null },
					meta: { next_cursor: to < COUNTS[kind] ? String(to) : null },
				};
			}
			response.setHeader('content-type', 'application/json');
			response.end(JSON.stringify(body));
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});
	afterAll(async () => {
		await new Promise((resolve) => server.close(resolve));
	});

	it('reads every page and sums exactly, keeping only the totals in summary mode', async () => {
		const onDay = (n: number) => Math.floor(n / 10) * 9 + Math.min(n % 10, 9);
		const paid = [...Array(COUNTS.payment).keys()].filter(
			(i) => i % 10 !== 9 && i % 7 !== 0,
		).length;
		const paidOut = [...Array(COUNTS.payout).keys()].filter(
			(i) => i % 10 !== 9 && i % 5 !== 0,
		).length;
		const waiting = [...Array(COUNTS.payout).keys()].filter(
			(i) => i % 10 !== 9 && i % 5 === 0,
		).length;
		global.gc?.();
		const before = process.memoryUsage().heapUsed;
		peak = before;
		const [summary, ...rest] = (
			await runNode({
				credential: { apiToken: 't', baseUrl: url },
				parameters: {
					resource: 'statement',
					operation: 'get',
					day: DAY,
					timeZone: 'Europe/Moscow',
				},
			})
		).map((item) => item.json);
		expect(rest).toEqual([]);
		expect(summary).toMatchObject({
			currency: 'RUB',
			payments: {
				count: paid,
				amount: (paid * 10010) / 100,
				commission: (paid * 301) / 100,
				credited: (paid * 9709) / 100,
			},
			refunds: { count: onDay(COUNTS.refund), amount: (onDay(COUNTS.refund) * 1005) / 100 },
			payouts: {
				count: paidOut,
				amount: paidOut * 50,
				commission: paidOut * 11,
				debited: paidOut * 61,
			},
			pendingPayouts: { count: waiting, amount: waiting * 50 },
			net: (paid * 9709 - onDay(COUNTS.refund) * 1005 - paidOut * 6100) / 100,
		});
		// One payment/status per paid payment of the day (its chargebacks), one call per page.
		expect(calls['payment/status']).toBe(paid);
		expect(calls['payment/search']).toBe(COUNTS.payment / 100);
		expect(calls['payout/search']).toBe(COUNTS.payout / 100);
		console.log(
			`statement of ${COUNTS.payment + COUNTS.refund + COUNTS.payout} rows, ${Object.values(calls).reduce((a, b) => a + b, 0)} calls: heap held at most ${((peak - before) / 1e6).toFixed(1)} MB`,
		);
	}, 120_000);
});
