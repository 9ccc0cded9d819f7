/**
 * One catch-up run's memory: rows are never spread into a call (a list of 200,000 rows), and the
 * rows held are counted across every page of the run (RELAY_CATCHUP_MAX_BYTES): an API that keeps
 * paging stops the run partial at the ceiling, raises catchup-failed, and the next run goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeldRows, MemoryCeilingReached, readList } from '../../relay/src/catchup/lists.ts';
import { start } from '../../relay/src/server.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import { ADMIN_TOKEN, Target, baseEnv, tempDir } from './helpers.ts';

const ROOT = 'https://api.example/api/v1/';
const LIST = `${ROOT}bill/search`;

/** A list of `perPage` rows a page that never ends (`links.next` to the page after). */
const endless = (perPage: number, pad = 0, calls: string[] = []) => {
	return async (url: string) => {
		calls.push(url);
		const page = Number(new URL(url).searchParams.get('page') ?? '1');
		const data = Array.from({ length: perPage }, (_, i) => ({
			id: `B-${page}-${i}`,
			pad: 'x'.repeat(pad),
		}));
		return {
			data,
			links: { next: `${LIST}?page=${page + 1}` },
			meta: { current_page: page, last_page: 1_000_000 },
		};
	};
};

describe('readList', () => {
	// Security review, round 4, finding 5 (36.5): `rows.push(...rows)` overflowed the stack.
	it('keeps a list of 200,000 rows without spreading it into a call', async () => {
		const fetchPage = async () => ({
			data: Array.from({ length: 200_000 }, (_, i) => ({ id: i })),
		});
		const listed = await readList(fetchPage, LIST, ROOT, 5, () => true);
		expect(listed.rows.length).toBe(200_000);
		expect(listed.stopped).toBeUndefined();
	});

	it('keeps 200,000 rows read over many pages', async () => {
		const calls: string[] = [];
		const listed = await readList(endless(10_000, 0, calls), LIST, ROOT, 20, () => true);
		expect(listed.rows.length).toBe(200_000);
		expect(listed.stopped?.name).toBe('BudgetSpent');
		expect(listed.next).toBe(`${LIST}?page=21`);
	});

	// Security review, round 4, finding 5 (36.5): 99 pages of 3.9 MB took the relay to 1,086 MB.
	it('counts the rows held across pages and lists, and stops after the page that crosses the ceiling', async () => {
		const held = new HeldRows(100_000);
		const calls: string[] = [];
		// About 20 KB a page: the 6th page crosses 100,000 bytes.
		const first = await readList(endless(10, 2_000, calls), LIST, ROOT, 1_000, () => true, held);
		expect(first.stopped).toBeInstanceOf(MemoryCeilingReached);
		expect(first.stopped?.message).toMatch(/RELAY_CATCHUP_MAX_BYTES/);
		expect(calls.length).toBe(5);
		expect(first.rows.length).toBe(50);
		expect(first.next).toBe(`${LIST}?page=6`);
		expect(held.rows).toBe(50);
		// A second list of the same run: already over, it stops after its first page.
		const second = await readList(
			endless(10, 2_000),
			`${LIST}?page=1`,
			ROOT,
			1_000,
			() => true,
			held,
		);
		expect(second.stopped).toBeInstanceOf(MemoryCeilingReached);
		expect(second.rows.length).toBe(10);
	});

	it('counts only the rows it keeps', async () => {
		const held = new HeldRows(100_000);
		const calls: string[] = [];
		const listed = await readList(endless(10, 2_000, calls), LIST, ROOT, 30, () => false, held);
		expect(listed.stopped?.name).toBe('BudgetSpent');
		expect(calls.length).toBe(30);
		expect(held.bytes).toBe(0);
	});
});

describe('a catch-up run against an API that keeps paging', () => {
	const tmp = tempDir();
	const api = new Target();
	const alerts = new Target();
	const asked: string[] = [];
	let relay: RunningRelay;

	beforeAll(async () => {
		await api.listen();
		await alerts.listen();
		// bill/search: 100 bills of about 5 KB a page, created today, never final, page after page.
		api.responder = (req) => {
			const url = new URL(req.path, api.url(''));
			asked.push(`${url.pathname}?page=${url.searchParams.get('page') ?? '1'}`);
			// No refund and no paid payment: the searches of the share held for them answer empty.
			if (/\/(refund|payment)\/search$/.test(url.pathname))
				return { status: 200, body: '{"success":true,"data":[]}' };
			if (!url.pathname.endsWith('/bill/search'))
				return { status: 404, body: '{"success":false,"message":"not found"}' };
			const page = Number(url.searchParams.get('page') ?? '1');
			const next = new URL(url);
			next.searchParams.set('page', String(page + 1));
			const data = Array.from({ length: 100 }, (_, i) => ({
				id: `B-${page}-${i}`,
				status: 'NEW',
				type: 'NORMAL',
				amount: '100.00',
				created_at: new Date().toISOString(),
				description: 'x'.repeat(5_000),
			}));
			return {
				status: 200,
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({
					success: true,
					data,
					links: { next: next.href },
					meta: { current_page: page, last_page: 1_000_000 },
				}),
			};
		};
		relay = await start(
			baseEnv(
				tmp.dir,
				{ payment: ['http://127.0.0.1:9/pay'] },
				{
					PAYPALYCH_API_BASE_URL: api.url(''),
					RELAY_CATCHUP_INTERVAL_S: '3600',
					RELAY_CATCHUP_MAX_BYTES: String(2 * 1_048_576),
					RELAY_ALERT_TARGETS: alerts.url('/alerts'),
					LOG_LEVEL: 'silent',
				},
			),
			{ deps: { catchupBackoffMs: 5, alertCheckMs: 50 } },
		);
	});
	afterAll(async () => {
		await relay?.close();
		await api.close();
		await alerts.close();
		tmp.cleanup();
	});

	const run = async () => {
		const res = await fetch(`${relay.url}/admin/catchup`, {
			method: 'POST',
			headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
		});
		return (await res.json()) as Record<string, any>;
	};

	it('stops partial at RELAY_CATCHUP_MAX_BYTES, raises catchup-failed, and the next run goes on', async () => {
		const first = await run();
		expect(first.outcome).toBe('partial');
		expect(first.ceiling).toMatch(/over its ceiling of 2097152 bytes \(RELAY_CATCHUP_MAX_BYTES\)/);
		// About 0.5 MB a page: the 5th page crosses 2 MiB, long before the call budget (200); then
		// the refund and payment searches of the share held for refunds and chargebacks (2 calls).
		expect(first.calls).toBe(7);
		expect(first.moneyBack).toMatchObject({ refunds: 'read' });
		expect(first.bills).toBe(500);
		expect(asked.filter((a) => a.includes('/bill/search')).at(-1)).toMatch(/page=5$/);
		const alert = alerts.received.map((r) => JSON.parse(r.body) as Record<string, any>);
		expect(alert.map((a) => a.alert)).toContain('catchup-failed');
		expect(alert.find((a) => a.alert === 'catchup-failed')?.message).toMatch(/memory ceiling/);

		asked.length = 0;
		const second = await run();
		expect(second.outcome).toBe('partial');
		expect(asked[0]).toMatch(/page=6$/);
	});
});
