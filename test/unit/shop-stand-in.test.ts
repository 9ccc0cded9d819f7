/**
 * The demo's and the end-to-end suite's stand-in shop backend (scripts/harness/sink.ts): it keeps
 * each order's state as the example workflows report it (paid, refunded, partly refunded) and the
 * payout holds a chargeback records, which example 05 asks before paying a seller.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type Sink } from '../../scripts/harness/sink.ts';

let sink: Sink;
beforeAll(async () => {
	sink = await startSink();
});
afterAll(async () => {
	await sink.close();
});

async function call(method: string, path: string, body?: unknown) {
	const res = await fetch(`${sink.url}${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	return (await res.json()) as Record<string, unknown>;
}

describe('the stand-in shop backend', () => {
	it('marks an order paid, then refunded; a part refunded is told from the whole', async () => {
		expect(await call('POST', '/api/orders/paid', { orderId: 'A-1' })).toMatchObject({
			status: 'paid',
		});
		expect(sink.orders.get('A-1')).toBe('paid');
		const part = { orderId: 'A-1', amount: 300, paymentAmount: 1000 };
		expect(await call('POST', '/api/orders/refunded', part)).toMatchObject({
			orderId: 'A-1',
			status: 'partly refunded',
		});
		const whole = { ...part, paymentRefundedAmount: 1000 };
		expect(await call('POST', '/api/orders/refunded', whole)).toMatchObject({
			status: 'refunded',
		});
		expect(sink.orders.get('A-1')).toBe('refunded');
	});

	it("records a chargeback's payout hold and answers whether an order's seller is held", async () => {
		expect(await call('GET', '/api/payouts/holds?orderId=mkt-1')).toMatchObject({ held: false });
		await call('POST', '/api/payouts/holds', { orderId: 'mkt-1', reason: 'chargeback' });
		expect(await call('GET', '/api/payouts/holds?orderId=mkt-1&billId=b')).toMatchObject({
			orderId: 'mkt-1',
			held: true,
		});
		expect(await call('GET', '/api/payouts/holds?orderId=mkt-2')).toMatchObject({ held: false });
		// The path is still recorded without its query string.
		expect(sink.on('/api/payouts/holds')).toHaveLength(4);
	});

	it('answers every other call {ok: true}', async () => {
		expect(await call('POST', '/api/anything', { orderId: 'x' })).toEqual({ ok: true });
	});
});
