// The relay's one client of the service (service-api.ts), in both its uses. The catch-up's client
// waits between retries as the forwarder reads Retry-After: one parser, bounded by the client's
// back-off (an empty or zero header must not make it hammer the service), within its call budget
// and overall deadline. The look-ups' client makes one call (the postback's sender is waiting).
// Both read a refusal's error key with the contract's reader.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeApiError } from '../../relay/src/contract.ts';
import { Intake } from '../../relay/src/intake.ts';
import { checkPayout } from '../../relay/src/look-ups.ts';
import { Metrics } from '../../relay/src/metrics.ts';
import {
	ApiError,
	BudgetSpent,
	RunDeadlinePassed,
	ServiceApi,
	lookUpApi,
} from '../../relay/src/service-api.ts';
import type { ServiceApiOptions } from '../../relay/src/service-api.ts';
import { freshSqliteStore } from './fresh-store.ts';
import { Target, freePort, payoutFields } from './helpers.ts';

describe('catch-up API client: Retry-After', () => {
	const service = new Target();
	beforeAll(async () => {
		await service.listen();
	});
	afterAll(async () => {
		await service.close();
	});

	function client(waits: number[]): ServiceApi {
		return new ServiceApi({
			baseUrl: service.url(''),
			token: 't',
			maxCalls: 10,
			retries: 5,
			backoffMs: 100,
			maxBackoffMs: 5_000,
			sleep: async (ms) => {
				waits.push(ms);
			},
		});
	}

	it('waits the back-off for an empty header, never less for 0, the header when readable, at most the cap', async () => {
		const answers = ['', '0', '2', '999999', 'soon'];
		service.received = [];
		service.responder = (_r, n) =>
			n <= answers.length
				? { status: n % 2 ? 429 : 503, headers: { 'retry-after': answers[n - 1] } }
				: { status: 200, body: '{"success":true}' };
		const waits: number[] = [];
		expect(await client(waits).get('/api/v1/x')).toEqual({ success: true });
		// '' reads as absent (back-off 100 * 2^0), '0' as the floor, '2' as 2 s, '999999' as the
		// cap, 'soon' as absent (back-off 100 * 2^4).
		expect(waits).toEqual([100, 100, 2_000, 5_000, 1_600]);
		expect(service.received).toHaveLength(answers.length + 1);
	});

	it('reads an HTTP date as the time until it, within the same bounds', async () => {
		const inThreeSeconds = new Date(Date.now() + 3_000).toUTCString();
		service.received = [];
		service.responder = (_r, n) =>
			n === 1
				? { status: 429, headers: { 'retry-after': inThreeSeconds } }
				: n === 2
					? { status: 429, headers: { 'retry-after': 'Wed, 31 Dec 2025 00:00:00 GMT' } }
					: { status: 200, body: '{}' };
		const waits: number[] = [];
		await client(waits).get('/api/v1/y');
		expect(waits[0]).toBeGreaterThan(1_000);
		expect(waits[0]).toBeLessThanOrEqual(3_000);
		expect(waits[1]).toBe(100);
	});
});

describe("the relay's one client of the service: the catch-up's use", () => {
	const service = new Target();
	beforeAll(async () => {
		await service.listen();
	});
	afterAll(async () => {
		await service.close();
	});

	function client(waits: number[], options: Partial<ServiceApiOptions> = {}): ServiceApi {
		return new ServiceApi({
			baseUrl: service.url(''),
			token: 'run-token',
			maxCalls: 10,
			retries: 3,
			backoffMs: 100,
			maxBackoffMs: 5_000,
			sleep: async (ms) => {
				waits.push(ms);
			},
			...options,
		});
	}

	it('retries 5xx and 429 with a doubling back-off, the Bearer token on every call, and answers the JSON', async () => {
		service.received = [];
		service.responder = (_r, n) =>
			n <= 3 ? { status: n === 2 ? 429 : 502 } : { status: 200, body: '{"data":[]}' };
		const waits: number[] = [];
		const api = client(waits);
		expect(await api.get('/api/v1/bill/search', { page: '2', skipped: undefined })).toEqual({
			data: [],
		});
		expect(waits).toEqual([100, 200, 400]);
		expect(api.calls).toBe(4);
		expect(service.received.map((r) => r.path)).toEqual(
			Array(4).fill('/api/v1/bill/search?page=2'),
		);
		expect(service.received.every((r) => r.headers.authorization === 'Bearer run-token')).toBe(
			true,
		);
	});

	it('gives up after its retries with an ApiError naming the last status', async () => {
		service.received = [];
		service.responder = () => ({ status: 503, body: '{"message":"Server Error"}' });
		const api = client([], { retries: 2 });
		const error = await api.get('/api/v1/payout/search').catch((e: unknown) => e);
		expect(error).toBeInstanceOf(ApiError);
		expect(error).toMatchObject({ status: 503, path: '/api/v1/payout/search', key: 'http_503' });
		expect((error as Error).message).toBe('/api/v1/payout/search answered HTTP 503');
		expect(service.received).toHaveLength(3);
	});

	it("reads a refusal's error key with the contract's reader, and never retries a 4xx", async () => {
		const refusals: Array<[status: number, body: string, key: string]> = [
			[404, '{"success":false,"message":"api:error.bill_not_found"}', 'api:error.bill_not_found'],
			[401, '', 'Unauthenticated'],
			[403, '{"message":"This action is unauthorized."}', 'This action is unauthorized'],
			[422, '{"message":"","errors":{"id":["required"]}}', 'invalid_request_data'],
			[400, '{"message":"api:error.too_many_payments"}', 'api:error.too_many_payments'],
			[400, 'not json', 'http_400'],
		];
		for (const [status, body, key] of refusals) {
			service.received = [];
			service.responder = () => ({ status, body, headers: { 'content-type': 'application/json' } });
			const error = (await client([])
				.billPayments('B-1')
				.catch((e: unknown) => e)) as ApiError;
			expect(error).toBeInstanceOf(ApiError);
			expect(error.key).toBe(key);
			// One reader: whatever the contract reads from an answer (message, error, errors, ...).
			expect(error.key).toBe(describeApiError(status, body).key);
			expect(error.message).toBe(
				`/api/v1/bill/payments answered HTTP ${status}${key === `http_${status}` ? '' : ` ${key}`}`,
			);
			expect(service.received).toHaveLength(1);
		}
		// Keys in other fields of the answer are the contract's to find: the client reads none itself.
		for (const body of [
			'{"error":"api:error.bill_not_found"}',
			'{"error_code":"api:error.bill_not_found"}',
			'{"errors":["api:error.bill_not_found"]}',
			'{"success":false,"error_code":"bill_not_found","error_message":"Bill not found"}',
		]) {
			service.responder = () => ({ status: 404, body });
			const error = (await client([])
				.billStatus('B-1')
				.catch((e: unknown) => e)) as ApiError;
			expect(error.key).toBe(describeApiError(404, body).key);
			expect(error.key).toBe('api:error.bill_not_found');
		}
	});

	it('stops at its call budget, retries included, and makes no call past it', async () => {
		service.received = [];
		service.responder = () => ({ status: 500 });
		const api = client([], { maxCalls: 3, retries: 10 });
		const spent = await api.get('/api/v1/bill/search').catch((e: unknown) => e);
		expect(spent).toBeInstanceOf(BudgetSpent);
		expect(spent).not.toBeInstanceOf(RunDeadlinePassed);
		await expect(api.page(service.url('/api/v1/bill/search?page=2'))).rejects.toBeInstanceOf(
			BudgetSpent,
		);
		expect(api.calls).toBe(3);
		expect(service.received).toHaveLength(3);
	});

	it('a Retry-After past its overall deadline ends the run at once, without waiting', async () => {
		service.received = [];
		service.responder = () => ({ status: 429, headers: { 'retry-after': '60' } });
		const waits: number[] = [];
		const api = client(waits, { runDeadlineMs: 10_000, maxBackoffMs: 120_000 });
		await expect(api.get('/api/v1/payout/search')).rejects.toBeInstanceOf(RunDeadlinePassed);
		expect(waits).toEqual([]);
		expect(service.received).toHaveLength(1);
	});

	it("asks each record at its endpoint, by id, and reads it flat or under 'data'", async () => {
		service.received = [];
		service.responder = (r) =>
			r.path.startsWith('/api/v1/payment/')
				? { status: 200, body: '{"success":true,"data":{"id":"P-1","status":"SUCCESS"}}' }
				: { status: 200, body: '{"success":true,"id":"X-1","status":"SUCCESS"}' };
		const api = client([]);
		expect(await api.paymentStatus('P 1')).toEqual({ id: 'P-1', status: 'SUCCESS' });
		expect(await api.payoutStatus('Q-1')).toMatchObject({ id: 'X-1' });
		expect(await api.billStatus('B-1')).toMatchObject({ id: 'X-1' });
		expect(await api.billPayments('B-1')).toMatchObject({ success: true });
		expect(service.received.map((r) => r.path)).toEqual([
			'/api/v1/payment/status?id=P+1',
			'/api/v1/payout/status?id=Q-1',
			'/api/v1/bill/status?id=B-1',
			'/api/v1/bill/payments?id=B-1',
		]);
	});
});

describe("the relay's one client of the service: the look-ups' use", () => {
	const service = new Target();
	const config = () => ({ apiBaseUrl: service.url(''), deliveryTimeoutMs: 2_000 });
	beforeAll(async () => {
		await service.listen();
	});
	afterAll(async () => {
		await service.close();
	});

	it('makes one call, never waiting for a Retry-After: the postback sender is waiting', async () => {
		service.received = [];
		service.responder = () => ({ status: 503, headers: { 'retry-after': '5' } });
		const api = lookUpApi(config(), 'look-up-token');
		const error = await api.payoutStatus('Q-1').catch((e: unknown) => e);
		expect(error).toMatchObject({ name: 'ApiError', status: 503 });
		expect(service.received).toHaveLength(1);
		expect(service.received[0].headers.authorization).toBe('Bearer look-up-token');
	});

	it('judges the answer: a record the service does not know is refused (403); the network, 5xx, 401, 403, 408 and 429 are 503', async () => {
		const verdicts: Array<[status: number, body: string, code: 403 | 503 | 'ok']> = [
			[200, '{"success":true,"data":{"id":"Q-1","status":"SUCCESS"}}', 'ok'],
			[200, '{"success":true,"id":"Q-2"}', 403],
			[404, '{"message":"api:error.payout_not_found"}', 403],
			[400, '{"message":"api:error.payout_not_found"}', 403],
			[401, '{"message":"Unauthenticated."}', 503],
			[403, '{"message":"This action is unauthorized."}', 503],
			[408, '', 503],
			[429, '', 503],
			[500, '', 503],
			[200, 'not json', 503],
		];
		const api = lookUpApi(config(), 't');
		for (const [status, body, code] of verdicts) {
			service.responder = () => ({ status, body });
			const verdict = await checkPayout(api, payoutFields('Q-1'));
			expect(verdict.ok ? 'ok' : verdict.code, `${status} ${body}`).toBe(code);
		}
		service.responder = () => ({ status: 404, body: '{"message":"api:error.payout_not_found"}' });
		expect(await checkPayout(api, payoutFields('Q-9'))).toEqual({
			ok: false,
			code: 403,
			reason: 'the service does not know payout Q-9',
		});
		// Nothing listening: 503, the service sends the postback again later.
		const nowhere = lookUpApi(
			{ apiBaseUrl: `http://127.0.0.1:${await freePort()}`, deliveryTimeoutMs: 2_000 },
			't',
		);
		expect(await checkPayout(nowhere, payoutFields('Q-1'))).toMatchObject({ ok: false, code: 503 });
	});

	it('asks with the token that verified the postback (a rotation: old and new)', async () => {
		service.received = [];
		service.responder = () => ({ status: 200, body: '{"data":{"id":"Q-5","status":"SUCCESS"}}' });
		const opened = await freshSqliteStore();
		try {
			const intake = new Intake({
				config: {
					pairLimit: { max: 10, windowMs: 3_600_000 },
					payoutCheck: 'service',
					apiBaseUrl: service.url(''),
					apiTokens: ['old-token', 'new-token'],
					deliveryTimeoutMs: 2_000,
				},
				store: opened.store,
				metrics: new Metrics(),
				targets: {
					payment: [],
					payout: ['http://127.0.0.1:9/payout'],
					success: [],
					fail: [],
					refund: [],
					chargeback: [],
				},
			});
			for (const [tokenIndex, trsId] of [
				[1, 'Q-5'],
				[0, 'Q-6'],
			] as const) {
				const fields = payoutFields(trsId);
				const source = { via: 'postback', body: '', contentType: 'x', tokenIndex } as const;
				await intake.admit('payout', fields, source);
			}
		} finally {
			await opened.cleanup();
		}
		expect(service.received.map((r) => r.headers.authorization)).toEqual([
			'Bearer new-token',
			'Bearer old-token',
		]);
	});
});
