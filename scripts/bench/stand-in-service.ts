// The service of the trigger's benchmark (trigger.bench.ts): a stand-in for PayPalych answering
// `payment/status` and `bill/status` at once, in its own process (so neither the load generator
// nor a bill database shares its CPU), in the live service's shapes. Its records follow from the
// ids asked for, so nothing is prepared per postback:
//   payment `P<n>` (the order ID not shown on the payment: the InvId check asks its bill) and
//   payment `S<n>` (the payment shows its order ID: one call) belong to bill `B<n>`, whose order
//   ID is `order-<n>`, amount 100.00 RUB, status SUCCESS.
// Any other id is answered as the service answers an unknown one (404, payment_not_found or
// bill_not_found). `GET /_calls` answers the API calls counted so far.
//
// Started by startStandIn() below (a child process that prints its port), or run alone:
// `node scripts/bench/stand-in-service.ts` (STAND_IN_PORT, default a free one).
import { spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';

const CREATED_AT = '2026-12-01 10:00:00';

/** The stand-in's payment record for `id`, or undefined when the id is not one of its payments. */
export function paymentRecord(id: string): Record<string, unknown> | undefined {
	const m = /^([PS])(.+)$/.exec(id);
	if (!m) return undefined;
	return {
		success: true,
		id,
		bill_id: `B${m[2]}`,
		status: 'SUCCESS',
		amount: 100,
		amount_received: 97,
		from_card: '553691******2346',
		currency_in: 'RUB',
		created_at: CREATED_AT,
		commission: 3,
		...(m[1] === 'S' ? { order_id: `order-${m[2]}` } : {}),
	};
}

export function billRecord(id: string): Record<string, unknown> | undefined {
	const m = /^B(.+)$/.exec(id);
	if (!m) return undefined;
	return {
		success: true,
		id,
		status: 'SUCCESS',
		amount: 100,
		type: 'NORMAL',
		currency_in: 'RUB',
		created_at: CREATED_AT,
		order_id: `order-${m[1]}`,
		active: true,
	};
}

function answer(res: ServerResponse, status: number, body: unknown): void {
	const text = JSON.stringify(body);
	res.writeHead(status, {
		'content-type': 'application/json; charset=utf-8',
		'content-length': Buffer.byteLength(text),
	});
	res.end(text);
}

/** The stand-in's HTTP server, listening on `port` (0: a free one); resolves to the port. */
export function serveStandIn(port: number): Promise<number> {
	let calls = 0;
	const server = createServer((req, res) => {
		const url = new URL(req.url ?? '/', 'http://stand-in');
		if (url.pathname === '/_calls') return answer(res, 200, { calls });
		calls++;
		const id = url.searchParams.get('id') ?? '';
		if (url.pathname === '/api/v1/payment/status') {
			const record = paymentRecord(id);
			if (record) return answer(res, 200, record);
			return answer(res, 404, { success: false, message: 'api:error.payment_not_found' });
		}
		if (url.pathname === '/api/v1/bill/status') {
			const record = billRecord(id);
			if (record) return answer(res, 200, record);
			return answer(res, 404, { success: false, message: 'api:error.bill_not_found' });
		}
		answer(res, 404, { success: false, message: 'api:error.not_found' });
	});
	server.keepAliveTimeout = 60_000;
	return new Promise((resolve) => {
		server.listen(port, '127.0.0.1', () => {
			const address = server.address();
			resolve(typeof address === 'object' && address ? address.port : port);
		});
	});
}

export interface StandIn {
	url: string;
	/** The API calls answered so far. */
	calls(): Promise<number>;
	close(): void;
}

/** Starts the stand-in as a child process of this one. */
export async function startStandIn(): Promise<StandIn> {
	const child = spawn(process.execPath, [import.meta.filename], {
		stdio: ['ignore', 'pipe', 'inherit'],
	});
	const port = await new Promise<number>((resolve, reject) => {
		let out = '';
		child.stdout.on('data', (chunk: Buffer) => {
			out += chunk.toString();
			const m = /listening on (\d+)/.exec(out);
			if (m) resolve(Number(m[1]));
		});
		child.once('exit', (code) => reject(new Error(`the stand-in service exited (${code})`)));
	});
	const url = `http://127.0.0.1:${port}`;
	return {
		url,
		async calls() {
			const res = await fetch(`${url}/_calls`);
			return ((await res.json()) as { calls: number }).calls;
		},
		close() {
			child.kill();
		},
	};
}

if (process.argv[1] === import.meta.filename) {
	const port = await serveStandIn(Number(process.env.STAND_IN_PORT ?? 0));
	console.log(`stand-in service listening on ${port}`);
}
