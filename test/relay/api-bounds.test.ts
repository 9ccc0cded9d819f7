/**
 * Every call to the service's API has a largest answer and an overall deadline (not only idle
 * timeouts), and a catch-up run has one: a hostile or broken answer (huge, trickled, endless)
 * ends in bounded time and memory.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
	API_MAX_ANSWER_BYTES,
	AnswerTooLarge,
	ApiError,
	DeadlinePassed,
	LOOK_UP_MAX_ANSWER_BYTES,
	RunDeadlinePassed,
	ServiceApi,
	boundedRequest,
	lookUpApi,
} from '../../relay/src/service-api.ts';

const servers: Server[] = [];
afterEach(async () => {
	for (const s of servers.splice(0)) {
		s.closeAllConnections();
		await new Promise((r) => s.close(r));
	}
});

async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
	const server = createServer(handler);
	servers.push(server);
	await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
	return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An answer that never ends: 64 KiB chunks as fast as the client reads (300 MB and more). */
const endless: Parameters<typeof createServer>[1] = (_req, res) => {
	res.writeHead(200, { 'content-type': 'application/json' });
	const chunk = Buffer.alloc(64 * 1024, 0x20);
	let sent = 0;
	const pump = () => {
		while (sent < 300 * 1024 * 1024 && res.write(chunk)) sent += chunk.length;
		if (sent < 300 * 1024 * 1024) res.once('drain', pump);
		else res.end();
	};
	res.write('{"data":[');
	pump();
	res.on('close', () => res.removeAllListeners('drain'));
};

/** One byte every 100 ms: never idle, never done. */
const trickle: Parameters<typeof createServer>[1] = (_req, res) => {
	res.writeHead(200, { 'content-type': 'application/json' });
	const timer = setInterval(() => res.write(' '), 100);
	res.on('close', () => clearInterval(timer));
};

describe("calls to the service's API", () => {
	it('stop reading a 300 MB answer at the size limit, without holding it in memory', async () => {
		const url = await serve(endless);
		const before = process.memoryUsage().rss;
		const started = Date.now();
		await expect(boundedRequest(url)).rejects.toBeInstanceOf(AnswerTooLarge);
		expect(Date.now() - started).toBeLessThan(10_000);
		expect(process.memoryUsage().rss - before).toBeLessThan(4 * API_MAX_ANSWER_BYTES + 64e6);
		// A declared Content-Length above the limit is refused before reading.
		const declared = await serve((_req, res) => {
			res.writeHead(200, { 'content-length': String(API_MAX_ANSWER_BYTES + 1) });
			res.write('{');
		});
		await expect(boundedRequest(declared)).rejects.toBeInstanceOf(AnswerTooLarge);
		// ServiceApi reports it as a refusal of the call, never retried.
		let calls = 0;
		const api = new ServiceApi({
			baseUrl: url,
			token: 't',
			maxCalls: 10,
			sleep: async () => undefined,
			onCall: () => (calls += 1),
		});
		await expect(api.get('/api/v1/bill/search')).rejects.toBeInstanceOf(ApiError);
		expect(calls).toBe(1);
	});

	it('end a trickled answer at the overall deadline, although it is never idle', async () => {
		const url = await serve(trickle);
		const started = Date.now();
		await expect(boundedRequest(url, { deadlineMs: 800, idleMs: 5_000 })).rejects.toBeInstanceOf(
			DeadlinePassed,
		);
		const took = Date.now() - started;
		expect(took).toBeGreaterThanOrEqual(700);
		expect(took).toBeLessThan(2_500);
	});

	it('a run ends at its own deadline, whatever the calls and retries would take', async () => {
		const url = await serve(trickle);
		const api = new ServiceApi({
			baseUrl: url,
			token: 't',
			maxCalls: 1000,
			retries: 100,
			backoffMs: 10,
			callDeadlineMs: 500,
			runDeadlineMs: 1_500,
		});
		const started = Date.now();
		await expect(api.get('/api/v1/bill/search', {})).rejects.toBeInstanceOf(RunDeadlinePassed);
		const took = Date.now() - started;
		expect(took).toBeLessThan(3_000);
		expect(api.calls).toBeGreaterThanOrEqual(2);
		expect(api.calls).toBeLessThanOrEqual(4);
	});

	it('a well-formed answer is read as before', async () => {
		const url = await serve((_req, res) => {
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(JSON.stringify({ data: [{ id: 1 }], meta: {} }));
		});
		const api = new ServiceApi({ baseUrl: url, token: 't', maxCalls: 5 });
		expect((await api.page(`${url}/api/v1/bill/search?page=1`)).data).toEqual([{ id: 1 }]);
	});

	it("a look-up reads at most a record's size (64 KiB) of answer, where a catch-up page may be larger", async () => {
		const record = JSON.stringify({
			data: { id: 'Q-1', note: 'x'.repeat(LOOK_UP_MAX_ANSWER_BYTES) },
		});
		let calls = 0;
		const url = await serve((_req, res) => {
			calls += 1;
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(record);
		});
		const lookUp = lookUpApi({ apiBaseUrl: url, deliveryTimeoutMs: 5_000 }, 't');
		const error = await lookUp.payoutStatus('Q-1').catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ApiError);
		expect(error).toMatchObject({ status: null });
		expect((error as Error).message).toMatch(/answered more than 65536 bytes/);
		expect(calls).toBe(1);
		const run = new ServiceApi({ baseUrl: url, token: 't', maxCalls: 5 });
		expect(await run.payoutStatus('Q-1')).toMatchObject({ id: 'Q-1' });
	});

	it('a look-up ends a trickled answer at RELAY_DELIVERY_TIMEOUT_MS, once, without a retry', async () => {
		let calls = 0;
		const url = await serve((req, res) => {
			calls += 1;
			trickle(req, res);
		});
		const lookUp = lookUpApi({ apiBaseUrl: url, deliveryTimeoutMs: 800 }, 't');
		const error = await lookUp.paymentStatus('P-1').catch((e: unknown) => e);
		expect(error).toMatchObject({ name: 'ApiError', status: null });
		// The overall deadline's own error: the trickle is never idle.
		expect((error as Error).message).toMatch(/no whole answer within 800 ms/);
		expect(calls).toBe(1);
	});
});
