/**
 * A service stand-in whose `TrsId` BILL names a bill (`payment/status` does not know it,
 * `bill/status` does) and whose `bill/payments` answers as the mode says: the pages a hostile or
 * broken service could send. `PAY-OK` is an ordinary payment (`payment/status` knows it), for the
 * postbacks that must not wait behind the bill's. Every request is counted by path.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const BILL = 'BILL-HOSTILE';
export const OK_PAYMENT = 'PAY-OK';

export type PagesMode =
	/** A new cursor and a new row on every page: the list never ends. */
	| 'endless'
	/** The same `next_cursor` on every page: the same page asked again and again. */
	| 'same-cursor'
	/** A new cursor every page, but always the same rows. */
	| 'same-rows'
	/** `links.next` names the URL just read. */
	| 'same-url'
	/** One page of 100,000 rows (about 6 MB), whatever `per_page` asked. */
	| 'rows-100k'
	/** One page of 5 MB in a few rows. */
	| 'bytes-5mb'
	/** A page that sends a byte every 100 ms and never ends. */
	| 'trickle'
	/** Endless cursor pages, each answered after `slowMs`. */
	| 'slow-pages';

export interface HostileBillService {
	url: string;
	mode: PagesMode;
	/** The wait before each page in `slow-pages`, in ms. */
	slowMs: number;
	/** Requests by path (`/api/v1/bill/payments`...). */
	calls: Map<string, number>;
	/** Bytes of the answers to `bill/payments` (written: a reader may stop reading earlier). */
	pageBytes: number;
	close(): Promise<void>;
}

const payment = (n: number, extra: Record<string, unknown> = {}) => ({
	id: `${BILL}-P-${n}`,
	bill_id: BILL,
	status: 'SUCCESS',
	amount: 40,
	amount_received: 40,
	currency_in: 'RUB',
	...extra,
});

/** The text of a hostile page, made once per service (making it is not the reader's time). */
function hugePage(mode: 'rows-100k' | 'bytes-5mb'): string {
	const rows =
		mode === 'rows-100k'
			? Array.from({ length: 100_000 }, (_, n) => payment(n + 1000))
			: [1, 2, 3, 4, 5].map((n) => payment(n + 1000, { comment: 'x'.repeat(1024 * 1024) }));
	return JSON.stringify({ success: true, data: rows, meta: { next_cursor: '1' } });
}

const sendText = (res: ServerResponse, text: string) => {
	res.statusCode = 200;
	res.setHeader('content-type', 'application/json');
	res.end(text);
	return text.length;
};

export async function startHostileBillService(mode: PagesMode): Promise<HostileBillService> {
	const big: Partial<Record<PagesMode, string>> = {};
	if (mode === 'rows-100k' || mode === 'bytes-5mb') big[mode] = hugePage(mode);
	const trickles = new Set<NodeJS.Timeout>();
	const state: HostileBillService = {
		url: '',
		mode,
		slowMs: 0,
		calls: new Map(),
		pageBytes: 0,
		close: async () => {},
	};
	const send = (res: ServerResponse, body: unknown, status = 200) => {
		const text = JSON.stringify(body);
		res.statusCode = status;
		res.setHeader('content-type', 'application/json');
		res.end(text);
		return text.length;
	};
	const server = createServer((req, res) => {
		const url = new URL(req.url ?? '/', 'http://local');
		state.calls.set(url.pathname, (state.calls.get(url.pathname) ?? 0) + 1);
		const id = url.searchParams.get('id');
		if (url.pathname === '/api/v1/payment/status') {
			if (id === OK_PAYMENT)
				return void send(res, {
					success: true,
					id: OK_PAYMENT,
					bill_id: 'BILL-OK',
					order_id: 'order-ok',
					status: 'SUCCESS',
					amount: 10,
					amount_received: 10,
					currency_in: 'RUB',
				});
			return void send(res, { success: false, message: 'api:error.payment_not_found' }, 404);
		}
		if (url.pathname === '/api/v1/bill/status' && id === BILL)
			return void send(res, {
				success: true,
				id: BILL,
				status: 'SUCCESS',
				type: 'MULTI',
				amount: 40,
				order_id: 'link-1',
			});
		if (url.pathname === '/api/v1/bill/status' && id === 'BILL-OK')
			return void send(res, {
				success: true,
				id: 'BILL-OK',
				status: 'SUCCESS',
				order_id: 'order-ok',
			});
		if (url.pathname !== '/api/v1/bill/payments' || id !== BILL)
			return void send(res, { success: false, message: 'api:error.bill_not_found' }, 404);
		const at = Number(url.searchParams.get('cursor') ?? '0') || 0;
		const page = (rows: unknown[], next: string | null) => ({
			success: true,
			data: rows,
			meta: { next_cursor: next },
		});
		switch (state.mode) {
			case 'endless':
				state.pageBytes += send(res, page([payment(at + 1000)], String(at + 1)));
				return;
			case 'same-cursor':
				state.pageBytes += send(res, page([payment(at + 1000)], '7'));
				return;
			case 'same-rows':
				state.pageBytes += send(res, page([payment(1000)], String(at + 1)));
				return;
			case 'same-url':
				state.pageBytes += send(res, {
					success: true,
					data: [payment(at + 1000)],
					links: { next: `${state.url}${req.url ?? ''}` },
				});
				return;
			case 'rows-100k':
			case 'bytes-5mb':
				state.pageBytes += sendText(res, (big[state.mode] ??= hugePage(state.mode)));
				return;
			case 'trickle': {
				res.statusCode = 200;
				res.setHeader('content-type', 'application/json');
				res.write('{"success":true,"data":[');
				const timer = setInterval(() => {
					state.pageBytes += 1;
					res.write(' ');
				}, 100);
				trickles.add(timer);
				res.on('close', () => {
					clearInterval(timer);
					trickles.delete(timer);
				});
				return;
			}
			case 'slow-pages': {
				const timer = setTimeout(() => {
					trickles.delete(timer);
					if (!res.destroyed)
						state.pageBytes += send(res, page([payment(at + 1000)], String(at + 1)));
				}, state.slowMs);
				trickles.add(timer);
				return;
			}
		}
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	state.close = () =>
		new Promise<void>((resolve) => {
			for (const timer of trickles) clearInterval(timer);
			server.closeAllConnections();
			server.close(() => resolve());
		});
	return state;
}
