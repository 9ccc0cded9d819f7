/**
 * A small HTTP server standing in for "the shop's backend": the example workflows call it, and
 * it records every request. `npm start` prints what it receives; the end-to-end suite asserts on it.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { sleep } from './proc.ts';

export interface SinkRequest {
	method: string;
	path: string;
	headers: IncomingHttpHeaders;
	/** The body parsed as JSON when it is JSON, otherwise the text. */
	body: unknown;
	at: number;
	/** What the stand-in answered (JSON). */
	answer: Record<string, unknown>;
}

export interface Sink {
	url: string;
	requests: SinkRequest[];
	/** Requests to one path (exact match, query string ignored). */
	on(path: string): SinkRequest[];
	/**
	 * The distinct `Idempotency-Key` headers of the requests to `path` that `match` keeps (a request
	 * without one counts as a key of its own: a shop could not tell it from a new intent).
	 */
	idempotencyKeys(path: string, match?: (request: SinkRequest) => boolean): Set<string>;
	/** The shop's orders as the stand-in keeps them: `paid`, then `refunded` (by order ID). */
	orders: Map<string, string>;
	/** Orders whose seller's payouts are on hold (a chargeback), with the hold's body. */
	holds: Map<string, unknown>;
	/** Waits until `count` requests to `path` arrived; returns them. */
	waitFor(path: string, count: number, timeoutMs?: number): Promise<SinkRequest[]>;
	close(): Promise<void>;
}

/**
 * What the stand-in does with a call, as a shop would: marks an order paid or refunded, records a
 * chargeback's payout hold and answers whether an order's seller is on hold (example 05 asks
 * before paying). Every other call is answered `{ok: true}`.
 */
function shopAnswer(
	request: SinkRequest,
	query: URLSearchParams,
	orders: Map<string, string>,
	holds: Map<string, unknown>,
): Record<string, unknown> {
	const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as {
		orderId?: unknown;
		paymentAmount?: unknown;
		paymentRefundedAmount?: unknown;
		amount?: unknown;
	};
	const orderId = typeof body.orderId === 'string' ? body.orderId : '';
	// A part refunded: what the payment shows refunded (else this refund) is less than the payment.
	const refunded = body.paymentRefundedAmount ?? body.amount;
	const part =
		body.paymentAmount != null && refunded != null && Number(refunded) < Number(body.paymentAmount);
	const mark = {
		'/api/orders/paid': 'paid',
		'/api/orders/refunded': part ? 'partly refunded' : 'refunded',
	}[request.path];
	if (request.method === 'POST' && mark !== undefined && orderId !== '') {
		orders.set(orderId, mark);
		return { ok: true, orderId, status: mark };
	}
	if (request.path === '/api/payouts/holds') {
		if (request.method === 'POST' && orderId !== '') {
			holds.set(orderId, request.body);
			return { ok: true, orderId, held: true };
		}
		const asked = query.get('orderId') ?? '';
		return { ok: true, orderId: asked, held: holds.has(asked) };
	}
	return { ok: true };
}

export async function startSink(
	options: { port?: number; onRequest?: (request: SinkRequest) => void } = {},
): Promise<Sink> {
	const requests: SinkRequest[] = [];
	const orders = new Map<string, string>();
	const holds = new Map<string, unknown>();
	const server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			const text = Buffer.concat(chunks).toString('utf8');
			let body: unknown = text;
			if (text !== '') {
				try {
					body = JSON.parse(text);
				} catch {
					body = text;
				}
			}
			const url = new URL(req.url ?? '/', 'http://shop');
			const entry: SinkRequest = {
				method: req.method ?? 'GET',
				path: url.pathname,
				headers: req.headers,
				body,
				at: Date.now(),
				answer: { ok: true },
			};
			entry.answer = shopAnswer(entry, url.searchParams, orders, holds);
			requests.push(entry);
			options.onRequest?.(entry);
			res.statusCode = 200;
			res.setHeader('content-type', 'application/json');
			res.end(JSON.stringify(entry.answer));
		});
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
	});
	const address = server.address();
	const port = typeof address === 'object' && address !== null ? address.port : 0;
	const on = (path: string) => requests.filter((r) => r.path === path);
	return {
		url: `http://127.0.0.1:${port}`,
		requests,
		orders,
		holds,
		on,
		idempotencyKeys(path, match = () => true) {
			return new Set(
				on(path)
					.filter(match)
					.map((r, i) => {
						const key = r.headers['idempotency-key'];
						return typeof key === 'string' ? key : `(none #${i})`;
					}),
			);
		},
		async waitFor(path, count, timeoutMs = 60_000) {
			const deadline = Date.now() + timeoutMs;
			while (on(path).length < count) {
				if (Date.now() > deadline) {
					throw new Error(
						`the sink got ${on(path).length} of ${count} expected calls to ${path} in time`,
					);
				}
				await sleep(100);
			}
			return on(path);
		},
		async close() {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}
