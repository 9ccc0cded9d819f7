import { afterAll, beforeAll, expect } from 'vitest';
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { startSandbox, type SandboxOptions } from '../../sandbox/src/index.ts';

export type Running = Awaited<ReturnType<typeof startSandbox>>;

export interface Answer {
	status: number;
	body: any;
	text: string;
	headers: Headers;
}

/** Upper-case MD5, written out here independently of the sandbox. */
export const md5 = (text: string) =>
	createHash('md5').update(text, 'utf8').digest('hex').toUpperCase();

export const today = () => new Date().toISOString().slice(0, 10);

export async function read(response: Response): Promise<Answer> {
	const text = await response.text();
	let body: unknown = undefined;
	try {
		body = JSON.parse(text);
	} catch {
		body = undefined;
	}
	return { status: response.status, body, text, headers: response.headers };
}

export interface Harness {
	sb: Running;
	token: string;
	/** Calls /api/v1: GET params go in the query string, POST params as form fields. */
	api(
		method: 'GET' | 'POST',
		path: string,
		params?: Record<string, string>,
		token?: string | null,
	): Promise<Answer>;
	/** Calls /_sandbox with a JSON body. */
	control(method: string, path: string, body?: unknown): Promise<Answer>;
	/** A fresh merchant (with its shop and payout account) made through the control API. */
	merchant(
		fields?: Record<string, unknown>,
	): Promise<{ merchantId: string; token: string; shopId: string; payoutAccountId: string }>;
	close(): Promise<void>;
}

export async function harness(options: SandboxOptions = {}): Promise<Harness> {
	const sb = await startSandbox({ port: 0, timeFactor: 0.001, ...options });
	const api: Harness['api'] = async (method, path, params = {}, token = sb.token) => {
		const headers: Record<string, string> = { accept: 'application/json' };
		if (token !== null) headers['authorization'] = `Bearer ${token}`;
		const query = new URLSearchParams(params).toString();
		if (method === 'GET') {
			return read(await fetch(`${sb.url}/api/v1/${path}${query ? `?${query}` : ''}`, { headers }));
		}
		return read(
			await fetch(`${sb.url}/api/v1/${path}`, {
				method,
				headers,
				body: new URLSearchParams(params),
			}),
		);
	};
	const control: Harness['control'] = async (method, path, body) => {
		const init: RequestInit = { method };
		if (body !== undefined) {
			init.headers = { 'content-type': 'application/json' };
			init.body = JSON.stringify(body);
		}
		return read(await fetch(`${sb.url}/_sandbox/${path}`, init));
	};
	return {
		sb,
		token: sb.token,
		api,
		control,
		merchant: async (fields = {}) => {
			const answer = await control('POST', 'merchants', fields);
			if (answer.status !== 201) throw new Error(`merchant create failed: ${answer.text}`);
			return answer.body;
		},
		close: () => sb.close(),
	};
}

export interface Received {
	path: string;
	method: string;
	headers: IncomingHttpHeaders;
	raw: string;
	fields: Record<string, string>;
}

/** A local listener that records requests and answers with the status `respond` picks. */
export async function listener(respond: (index: number, request: Received) => number = () => 200) {
	const received: Received[] = [];
	const server: Server = createServer((request, response) => {
		const chunks: Buffer[] = [];
		request.on('data', (chunk: Buffer) => chunks.push(chunk));
		request.on('end', () => {
			const raw = Buffer.concat(chunks).toString('utf8');
			const entry: Received = {
				path: request.url ?? '',
				method: request.method ?? '',
				headers: request.headers,
				raw,
				fields: Object.fromEntries(new URLSearchParams(raw)),
			};
			received.push(entry);
			response.statusCode = respond(received.length - 1, entry);
			response.end('OK');
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const address = server.address();
	const port = typeof address === 'object' && address ? address.port : 0;
	return {
		url: `http://127.0.0.1:${port}`,
		received,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

/** Parses the hidden inputs and action of the redirect page's auto-submitting form. */
export function parseRedirectForm(html: string): {
	action: string;
	method: string;
	fields: Record<string, string>;
} {
	const unescape = (text: string) =>
		text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
	const form = /<form[^>]*method="([^"]+)"[^>]*action="([^"]+)"/.exec(html);
	const fields: Record<string, string> = {};
	for (const match of html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)) {
		fields[unescape(match[1] ?? '')] = unescape(match[2] ?? '');
	}
	return { method: form?.[1] ?? '', action: unescape(form?.[2] ?? ''), fields };
}

export type Listener = Awaited<ReturnType<typeof listener>>;

/**
 * A test file's sandbox harness and shop listener: both start in beforeAll (then `started` gets
 * them, to keep and to set up) and close in afterAll.
 */
export function harnessAndListener(started: (h: Harness, shop: Listener) => void | Promise<void>) {
	let h: Harness;
	let shop: Listener;
	beforeAll(async () => {
		h = await harness();
		shop = await listener();
		await started(h, shop);
	});
	afterAll(async () => {
		await h.close();
		await shop.close();
	});
}

/**
 * Merchants of one profile whose Result URL is the `shop` listener's `/result/<shopId>`, and a bill
 * of 100.00 in one of their shops. `get` is read when called (the harness starts in beforeAll).
 */
export function shopMerchants(get: () => { h: Harness; shop: Listener }) {
	async function merchantIn(profile: 'live' | 'spec', fields: Record<string, unknown> = {}) {
		const { h, shop } = get();
		const m = await h.merchant({ profile, ...fields });
		await h.control('PATCH', `shops/${m.shopId}`, { resultUrl: `${shop.url}/result/${m.shopId}` });
		return m;
	}
	async function bill(token: string, shopId: string, params: Record<string, string> = {}) {
		const created = await get().h.api(
			'POST',
			'bill/create',
			{ amount: '100.00', shop_id: shopId, ...params },
			token,
		);
		expect(created.status, created.text).toBe(200);
		return created.body.bill_id as string;
	}
	return { merchantIn, bill };
}

/** Everything a child process writes (stdout and stderr together) and its exit code. */
export async function outputOf(
	child: import('node:child_process').ChildProcess,
): Promise<{ code: number | null; text: string }> {
	let text = '';
	child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
	child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
	const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
	return { code, text };
}
