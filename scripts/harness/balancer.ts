/**
 * A round-robin HTTP balancer on a loopback port, standing in for the nginx (or cloud balancer)
 * that merchants put in front of n8n's webhook processes in queue mode: each request goes to the
 * next upstream in turn, body and answer passed through unchanged.
 */
import { createServer, request as httpRequest } from 'node:http';

export interface Balancer {
	url: string;
	close(): Promise<void>;
}

export async function startBalancer(upstreams: string[]): Promise<Balancer> {
	let next = 0;
	const server = createServer((req, res) => {
		const upstream = new URL(upstreams[next++ % upstreams.length]);
		const forward = httpRequest(
			{
				host: upstream.hostname,
				port: upstream.port,
				method: req.method,
				path: req.url,
				headers: { ...req.headers, host: upstream.host },
			},
			(answer) => {
				res.writeHead(answer.statusCode ?? 502, answer.headers);
				answer.pipe(res);
			},
		);
		forward.on('error', () => {
			if (!res.headersSent) res.writeHead(502);
			res.end();
		});
		req.pipe(forward);
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => resolve());
	});
	const address = server.address();
	const port = typeof address === 'object' && address !== null ? address.port : 0;
	return {
		url: `http://127.0.0.1:${port}`,
		async close() {
			server.closeAllConnections();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}
