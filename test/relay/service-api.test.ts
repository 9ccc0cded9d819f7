// The catch-up's API client waits between retries as the forwarder reads Retry-After: one parser,
// bounded by the client's back-off (an empty or zero header must not make it hammer the service).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceApi } from '../../relay/src/catchup/api.ts';
import { Target } from './helpers.ts';

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
