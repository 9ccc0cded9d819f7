import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
	method: string;
	path: string;
	query: Record<string, string>;
	headers: Record<string, string | string[] | undefined>;
	body: string;
}

export interface RecordingServer {
	url: string;
	requests: RecordedRequest[];
	/** The next answers, in order; when empty, every request gets `fallback`. */
	answers: Array<{ status: number; body: unknown }>;
	fallback: { status: number; body: unknown };
	close(): Promise<void>;
}

/** A local HTTP server that records every request it gets and answers JSON. */
export async function startRecordingServer(): Promise<RecordingServer> {
	const state: RecordingServer = {
		url: '',
		requests: [],
		answers: [],
		fallback: { status: 200, body: { success: true } },
		close: async () => {},
	};
	const server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (chunk: Buffer) => chunks.push(chunk));
		req.on('end', () => {
			const url = new URL(req.url ?? '/', 'http://local');
			state.requests.push({
				method: req.method ?? '',
				path: url.pathname,
				query: Object.fromEntries(url.searchParams),
				headers: req.headers,
				body: Buffer.concat(chunks).toString('utf8'),
			});
			const answer = state.answers.shift() ?? state.fallback;
			res.statusCode = answer.status;
			res.setHeader('content-type', 'application/json');
			res.end(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
	return state;
}
