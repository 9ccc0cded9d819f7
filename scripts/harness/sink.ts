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
	/** Waits until `count` requests to `path` arrived; returns them. */
	waitFor(path: string, count: number, timeoutMs?: number): Promise<SinkRequest[]>;
	close(): Promise<void>;
}

export async function startSink(
	options: { port?: number; onRequest?: (request: SinkRequest) => void } = {},
): Promise<Sink> {
	const requests: SinkRequest[] = [];
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
			const entry: SinkRequest = {
				method: req.method ?? 'GET',
				path: (req.url ?? '/').split('?')[0],
				headers: req.headers,
				body,
				at: Date.now(),
			};
			requests.push(entry);
			options.onRequest?.(entry);
			res.statusCode = 200;
			res.setHeader('content-type', 'application/json');
			res.end(JSON.stringify({ ok: true }));
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
