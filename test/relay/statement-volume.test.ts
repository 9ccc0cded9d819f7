/**
 * A day of 10,000 movements (2,000 payments, 4,000 refunds, 4,000 payouts) read by the relay's
 * statement from a service over real HTTP that allows 250 calls a second and answers 429 with
 * Retry-After above it: the statement paces itself (RELAY_STATEMENT_CALLS_PER_S), is never refused,
 * ties out to unexplained 0, and the relay's heap grows by a bounded amount while it reads (the
 * figure in docs/operator/statement.md comes from this test's log line).
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addDays, dateIn } from '../../nodes/shared/dates.ts';
import { midnightIn } from '../../nodes/shared/statement.ts';
import { start } from '../../relay/src/server.ts';
import { waitFor } from '../../scripts/harness/wait.ts';
import { ADMIN_TOKEN, Target, baseEnv, tempDir } from './helpers.ts';

const ZONE = 'UTC';
const DAY = addDays(dateIn(ZONE), -3);
const COUNTS = { payment: 2_000, refund: 4_000, payout: 4_000 };
const PER_PAGE = 100;
const LIMIT_PER_S = 250;

/** The service: rows made on the fly (never held), a rate limit, and the balance before or after the day. */
function fakeService() {
	const seen = { calls: 0, refused: 0, after: false };
	let windowStart = 0;
	let inWindow = 0;
	const at = (i: number) =>
		new Date(midnightIn(DAY, ZONE).getTime() + 3_600_000 + i * 7_000)
			.toISOString()
			.replace('T', ' ')
			.slice(0, 19);
	const row = (kind: keyof typeof COUNTS, i: number) => {
		const created_at = at(i);
		if (kind === 'payment')
			return {
				id: `P${i}`,
				bill_id: `B${i}`,
				status: 'SUCCESS',
				amount: 10.3,
				commission: 0.3,
				account_amount: 10,
				account_currency_code: 'RUB',
				currency_in: 'RUB',
				created_at,
			};
		if (kind === 'refund')
			return {
				id: `R${i}`,
				payment_id: `P${i % COUNTS.payment}`,
				bill_id: `B${i % COUNTS.payment}`,
				status: 'SUCCESS',
				amount: 1,
				currency: 'RUB',
				created_at,
			};
		return {
			id: `O${i}`,
			status: 'SUCCESS',
			amount: 2,
			commission: 0,
			account_amount: 2,
			account_currency: 'RUB',
			currency: 'RUB',
			created_at,
		};
	};
	const server: Server = createServer((req, res) => {
		const url = new URL(req.url ?? '/', 'http://x');
		const now = Date.now();
		if (now - windowStart >= 1000) {
			windowStart = now;
			inWindow = 0;
		}
		seen.calls += 1;
		if (++inWindow > LIMIT_PER_S) {
			seen.refused += 1;
			res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' });
			return res.end('{"message":"Too Many Attempts."}');
		}
		const send = (body: unknown) => {
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(JSON.stringify(body));
		};
		const path = url.pathname.replace('/api/v1/', '');
		if (path === 'merchant/balance') {
			const rub = seen.after ? '1008000.00000000' : '1000000.00000000';
			return send({
				success: 'true',
				balances: [
					{
						currency: 'RUB',
						balance_available: rub,
						balance_locked: '0.00000000',
						balance_hold: '0.00000000',
					},
				],
			});
		}
		if (path === 'payment/status')
			return send({
				success: true,
				data: { ...row('payment', Number(url.searchParams.get('id')?.slice(1))), chargebacks: [] },
			});
		const kind = (
			{ 'payment/search': 'payment', 'refund/search': 'refund', 'payout/search': 'payout' } as const
		)[path];
		if (kind === undefined) return send({ success: true, data: [] });
		const page = Number(url.searchParams.get('page') ?? '1');
		const last = Math.ceil(COUNTS[kind] / PER_PAGE);
		const data = [];
		for (let i = (page - 1) * PER_PAGE; i < Math.min(COUNTS[kind], page * PER_PAGE); i++)
			data.push(row(kind, i));
		const next = new URL(
			url.href.replace(
				'http://x',
				`http://127.0.0.1:${(server.address() as { port: number }).port}`,
			),
		);
		next.searchParams.set('page', String(page + 1));
		return send({
			data,
			links: { next: page < last ? next.href : null },
			meta: { current_page: page, last_page: last },
		});
	});
	return { server, seen };
}

const service = fakeService();
const target = new Target();
const alerts = new Target();
const tmp = tempDir();
beforeAll(async () => {
	await new Promise<void>((resolve) => service.server.listen(0, '127.0.0.1', resolve));
	await target.listen();
	await alerts.listen();
});
afterAll(async () => {
	await new Promise((resolve) => service.server.close(resolve));
	await target.close();
	await alerts.close();
	tmp.cleanup();
});

it(
	'a day of 10,000 movements: read within the rate limit, tied out, in bounded memory',
	{ timeout: 240_000 },
	async () => {
		const clock = { at: midnightIn(DAY, ZONE).getTime() + 30_000 };
		const port = (service.server.address() as { port: number }).port;
		const r = await start(
			baseEnv(
				tmp.dir,
				{ payment: [target.url('/n8n')], payout: [target.url('/n8n')] },
				{
					PAYPALYCH_API_BASE_URL: `http://127.0.0.1:${port}`,
					RELAY_CATCHUP_INTERVAL_S: '0',
					RELAY_ALERT_TARGETS: alerts.url('/alerts'),
					RELAY_STATEMENT_CHECK_S: '3600',
					RELAY_STATEMENT_TIME_ZONE: ZONE,
					RELAY_STATEMENT_CALLS_PER_S: '200',
					LOG_LEVEL: 'silent',
				},
			),
			{ deps: { statementNow: () => clock.at, catchupNow: () => clock.at, statementCheckMs: 50 } },
		);
		try {
			const kept = /paypalych_relay_balance_snapshots_total\{kind="first-start",outcome="kept"\} 1/;
			await waitFor('the first snapshot', async () =>
				kept.test(await (await fetch(`${r.url}/metrics`)).text()),
			);
			service.seen.after = true;
			clock.at = midnightIn(addDays(DAY, 1), ZONE).getTime() + 30_000;
			// The closing snapshot, and the day's check that follows it: 10,000 movements n8n never got.
			const [alert] = await waitFor(
				'the statement alert',
				() => alerts.received.length > 0 && alerts.received,
				{ timeoutMs: 60_000 },
			);
			expect(JSON.parse(alert.body)).toMatchObject({
				alert: 'statement',
				notDeliveredCount: 10_000,
			});
			const callsBefore = service.seen.calls;
			const heapBefore = process.memoryUsage().heapUsed;
			let peak = heapBefore;
			const sampler = setInterval(() => {
				peak = Math.max(peak, process.memoryUsage().heapUsed);
			}, 5);
			const started = Date.now();
			const res = await fetch(`${r.url}/admin/statement?day=${DAY}`, {
				headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
			});
			const seconds = (Date.now() - started) / 1000;
			clearInterval(sampler);
			const s = (await res.json()) as Record<string, any>;
			expect(res.status).toBe(200);
			expect(s.unread).toEqual([]);
			expect(s.movements).toBe(10_000);
			expect(s.currencies[0]).toMatchObject({
				currency: 'RUB',
				unexplained: 0,
				totals: {
					payments: { count: 2_000 },
					refunds: { count: 4_000 },
					payouts: { count: 4_000 },
				},
			});
			expect(s.notDelivered).toHaveLength(10_000);
			expect(service.seen.refused).toBe(0);
			const calls = service.seen.calls - callsBefore;
			// 100 pages of lists (widened day), 2,000 payments' chargebacks.
			expect(calls).toBeLessThan(2_200);
			const grownMb = (peak - heapBefore) / 1_048_576;
			console.log(
				`statement of 10,000 movements: ${calls} calls in ${seconds.toFixed(1)} s, heap grew ${grownMb.toFixed(1)} MB at its peak`,
			);
			expect(grownMb).toBeLessThan(128);
		} finally {
			await r.close();
		}
	},
);
