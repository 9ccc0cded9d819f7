import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { RecordedRequest } from './recording-server.ts';

/**
 * A small stand-in for the service that answers the node's calls both ways the live service is
 * seen to answer where the interface document is silent (docs/developer/service.md):
 * - `errorForm`: error keys in `message` (the document) or in `error_code` beside a human
 *   `error_message`;
 * - `paging`: `bill/payments`, `bill/search` and `payment/search` in one answer (`none`, the
 *   document) or cursor-paged (`cursor`: `per_page`, `cursor`, `links` / `meta`);
 * - `requireShopId`: the searches refuse a request without `shop_id` (422);
 * - `newPaymentFields`: payment records without `amount_received`, with `commission`,
 *   `account_amount` and `refunded_amount`.
 * It records every request (like recording-server.ts) and writes nothing it was not asked to.
 */
export interface FakeServiceOptions {
	errorForm?: 'message' | 'error_code';
	paging?: 'none' | 'cursor';
	/** Rows per page when a paged request names no `per_page` (cursor paging only). */
	defaultPerPage?: number;
	/** Most rows per page whatever `per_page` asks (cursor paging only). */
	maxPerPage?: number;
	requireShopId?: boolean;
	newPaymentFields?: boolean;
}

export interface FakePayment {
	id: string;
	bill_id: string;
	shop_id: string;
	amount: number;
	status: string;
	created_at: string;
	[field: string]: unknown;
}

export interface FakeBill {
	id: string;
	shop_id: string;
	amount: number;
	status: string;
	created_at: string;
	[field: string]: unknown;
}

export interface FakeService {
	url: string;
	options: Required<FakeServiceOptions>;
	requests: RecordedRequest[];
	bills: FakeBill[];
	payments: FakePayment[];
	payouts: Array<Record<string, unknown>>;
	/** Adds `count` payments of one bill (amount 10.00 each, created on `day`). */
	addPayments(billId: string, count: number, day?: string, shopId?: string): FakePayment[];
	close(): Promise<void>;
}

/** Every request of `service` to `path` (`/api/v1/...`). */
export const requestsTo = (service: FakeService, path: string) =>
	service.requests.filter((r) => r.path === `/api/v1/${path}`);

export async function startFakeService(options: FakeServiceOptions = {}): Promise<FakeService> {
	const settings: Required<FakeServiceOptions> = {
		errorForm: options.errorForm ?? 'message',
		paging: options.paging ?? 'none',
		defaultPerPage: options.defaultPerPage ?? 15,
		maxPerPage: options.maxPerPage ?? 1000,
		requireShopId: options.requireShopId ?? false,
		newPaymentFields: options.newPaymentFields ?? false,
	};
	let seq = 0;
	const state: FakeService = {
		url: '',
		options: settings,
		requests: [],
		bills: [],
		payments: [],
		payouts: [],
		addPayments(billId, count, day = '2026-11-20', shopId = 'SHOP1') {
			const made: FakePayment[] = [];
			for (let i = 0; i < count; i++) {
				seq += 1;
				const payment: FakePayment = {
					id: `PAY${String(seq).padStart(4, '0')}`,
					bill_id: billId,
					shop_id: shopId,
					amount: 10,
					amount_received: 9.7,
					commission: 0.3,
					currency_in: 'RUB',
					status: 'SUCCESS',
					created_at: `${day} 12:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}`,
				};
				state.payments.push(payment);
				made.push(payment);
			}
			return made;
		},
		close: async () => {},
	};

	const refuse = (status: number, key: string, text: string) => ({
		status,
		body:
			settings.errorForm === 'message'
				? { success: false, message: `api:error.${key}` }
				: { success: false, error_code: `api:error.${key}`, error_message: text },
	});

	const paymentView = (payment: FakePayment): Record<string, unknown> => {
		if (!settings.newPaymentFields) return { ...payment };
		const { amount_received: _dropped, ...rest } = payment;
		return {
			...rest,
			commission: payment.commission ?? 0,
			account_amount: Number(payment.amount) - Number(payment.commission ?? 0),
			account_currency_code: 'RUB',
			refunded_amount: 0,
		};
	};

	const page = (
		url: URL,
		rows: Array<Record<string, unknown>>,
	): { status: number; body: Record<string, unknown> } => {
		if (settings.paging === 'none') return { status: 200, body: { success: true, data: rows } };
		const perPage = Math.min(
			settings.maxPerPage,
			Number(url.searchParams.get('per_page') ?? settings.defaultPerPage),
		);
		const offset = Number(url.searchParams.get('cursor') ?? '0');
		const slice = rows.slice(offset, offset + perPage);
		const nextCursor = offset + perPage < rows.length ? String(offset + perPage) : null;
		let next: string | null = null;
		if (nextCursor !== null) {
			const nextUrl = new URL(url.toString());
			nextUrl.searchParams.set('cursor', nextCursor);
			next = `${state.url}${nextUrl.pathname}${nextUrl.search}`;
		}
		return {
			status: 200,
			body: {
				success: true,
				data: slice,
				links: { next, prev: null },
				meta: { per_page: perPage, next_cursor: nextCursor, prev_cursor: null },
			},
		};
	};

	const inRange = (url: URL, createdAt: string) => {
		const start = url.searchParams.get('start_date') ?? '0000-00-00';
		const finish = url.searchParams.get('finish_date') ?? '9999-99-99';
		const day = createdAt.slice(0, 10);
		return day >= start && day <= finish;
	};

	function answer(
		method: string,
		url: URL,
		form: URLSearchParams,
	): { status: number; body: unknown } {
		const path = url.pathname.replace(/^\/api\/v1\//, '');
		const q = url.searchParams;
		const shopFilter = q.get('shop_id');
		switch (`${method} ${path}`) {
			case 'GET payout/status': {
				const found = state.payouts.find(
					(p) => p.order_id === q.get('order_id') || p.id === q.get('id'),
				);
				return found
					? { status: 200, body: { success: true, ...found } }
					: refuse(422, 'payout_not_found', 'Payout not found');
			}
			case 'POST payout/personal/create': {
				seq += 1;
				const payout = {
					id: `PO${seq}`,
					order_id: form.get('order_id'),
					amount: Number(form.get('amount')),
					account_identifier: 'ACC',
					currency: 'RUB',
					status: 'MODERATING',
					created_at: '2026-11-20 12:00:00',
				};
				state.payouts.push(payout);
				return { status: 200, body: { success: true, data: [payout] } };
			}
			case 'POST bill/create': {
				seq += 1;
				const bill: FakeBill = {
					id: `BILL${seq}`,
					shop_id: form.get('shop_id') ?? '',
					amount: Number(form.get('amount')),
					status: 'NEW',
					created_at: '2026-11-20 12:00:00',
				};
				state.bills.push(bill);
				return {
					status: 200,
					body: {
						success: true,
						bill_id: bill.id,
						link_url: `${state.url}/link/${bill.id}`,
						link_page_url: `${state.url}/transfer/${bill.id}`,
					},
				};
			}
			case 'GET bill/payments': {
				const id = q.get('id');
				if (!state.bills.some((b) => b.id === id) && !state.payments.some((p) => p.bill_id === id))
					return refuse(403, 'bill_not_found', 'Bill not found');
				return page(url, state.payments.filter((p) => p.bill_id === id).map(paymentView));
			}
			case 'GET bill/search':
			case 'GET payment/search': {
				if (settings.requireShopId && !shopFilter) {
					return {
						status: 422,
						body: {
							message: 'The shop id field is required.',
							errors: { shop_id: ['The shop id field is required.'] },
						},
					};
				}
				const rows: Array<Record<string, unknown>> =
					path === 'bill/search' ? state.bills : state.payments.map(paymentView);
				return page(
					url,
					rows.filter(
						(row) =>
							inRange(url, String(row.created_at)) &&
							(shopFilter === null || row.shop_id === shopFilter),
					),
				);
			}
			case 'GET payment/status': {
				const payment = state.payments.find((p) => p.id === q.get('id'));
				if (!payment) return refuse(422, 'payment_not_found', 'Payment not found');
				const body: Record<string, unknown> = { success: true, ...paymentView(payment) };
				if (q.get('refunds') === '1') body.refunds = [{ id: `R-${payment.id}`, amount: 1 }];
				if (q.get('chargeback') === '1') body.chargeback = [];
				return { status: 200, body };
			}
			default:
				return { status: 404, body: { message: `no route ${method} ${path}` } };
		}
	}

	const server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const url = new URL(req.url ?? '/', 'http://local');
			const body = Buffer.concat(chunks).toString('utf8');
			state.requests.push({
				method: req.method ?? '',
				path: url.pathname,
				query: Object.fromEntries(url.searchParams),
				headers: req.headers,
				body,
			});
			const { status, body: out } = answer(req.method ?? '', url, new URLSearchParams(body));
			res.statusCode = status;
			res.setHeader('content-type', 'application/json');
			res.end(JSON.stringify(out));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
	return state;
}
