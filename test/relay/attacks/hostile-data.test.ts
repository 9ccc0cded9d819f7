/**
 * The relay on the open internet. NUL bytes and invalid UTF-8 in postbacks, admin filters and targets' answers, a huge answer of
 * the service, a bill whose order ID the store refuses.
 * Each case replays an attack of the security review on both stores; cases that fixed a finding
 * say in a `Before:` comment what the relay did before.
 */
import { expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../relay/src/config.ts';
import { start } from '../../../relay/src/server.ts';
import { cookieOf, submitLogin } from '../console-login.ts';
import { ADMIN_TOKEN, Target, baseEnv, paymentFields, redirectFields } from '../helpers.ts';
import { sandboxMerchant } from '../sandbox-merchant.ts';
import { sb, sink, ownServer, onEveryStoreKind } from './world.ts';
import { waitFor } from '../../../scripts/harness/wait.ts';

onEveryStoreKind(
	'hostile data: input, answers and records the relay cannot hold',
	({ cleanups, database, relay, post, admin, events }) => {
		// Security review, finding 5.
		it('input a store cannot hold is refused with 400 and changes nothing', async () => {
			const r = await relay();
			const nul = (s: string) => `${s}\u0000x`;
			const bad = paymentFields('nul-1', { invId: nul('order') });
			expect((await post(r, '/postback/payment', bad)).statusCode).toBe(400);
			const badTrs = paymentFields(nul('trs'));
			expect((await post(r, '/postback/payment', badTrs)).statusCode).toBe(400);
			const badRedirect = redirectFields(nul('order-r'));
			expect((await post(r, '/redirect/success', badRedirect)).statusCode).toBe(400);
			expect((await post(r, '/postback/payment', paymentFields('kept-1'))).statusCode).toBe(200);
			for (const url of [
				`/admin/events?trsId=${encodeURIComponent(nul('a'))}`,
				`/admin/events?invId=${encodeURIComponent(nul('a'))}`,
				'/admin/events?to=99999999999999999999',
				'/admin/deliveries?beforeId=99999999999999999999',
				`/admin/deliveries?eventId=${encodeURIComponent(nul('a'))}`,
				`/admin/deliveries?target=${encodeURIComponent(nul('a'))}`,
				`/admin/events/${encodeURIComponent(nul('a'))}`,
			]) {
				const res = await admin(r, url);
				expect([url, res.statusCode]).toEqual([url, 400]);
				expect(res.body).not.toMatch(/bigint|syntax|invalid byte|0x00/i);
			}
			for (const [url, body] of [
				['/admin/dead/requeue', { ids: [1e20] }],
				['/admin/replay', { from: 0, to: 1e20 }],
			] as const) {
				const res = await admin(r, url, 'POST', body);
				expect([url, res.statusCode]).toEqual([url, 400]);
			}
			// The console's filters too (signed in).
			const login = await submitLogin(r.app, { token: ADMIN_TOKEN });
			const cookie = cookieOf(login, 'relay_console') ?? '';
			const page = await r.app.inject({
				url: `/admin/console/events?trsId=${encodeURIComponent(nul('a'))}`,
				headers: { cookie },
			});
			expect(page.statusCode).toBe(400);
			expect(page.body).not.toMatch(/bigint|invalid byte|0x00/i);
			expect(await events(r)).toBe(1);
		});

		// Security review, finding 9.
		it('whatever a target answers (NUL bytes, invalid UTF-8), the attempt is recorded the same on both stores and nothing is sent again', async () => {
			// Before: on PostgreSQL the result with a NUL was never recorded (text cannot hold one):
			// the delivery stayed `delivering` and was sent again every lease; a 422 never went dead.
			const hits = new Map<string, number>();
			const answer = Buffer.concat([
				Buffer.from('ok\u0000 '),
				Buffer.from([0xff, 0xfe, 0xc3]),
				Buffer.from(' ünd\u0000'),
			]);
			const base = await ownServer(cleanups, (req, res) => {
				req.resume();
				req.on('end', () => {
					const path = req.url ?? '';
					hits.set(path, (hits.get(path) ?? 0) + 1);
					const status = path === '/refuse' ? 422 : 200;
					res.writeHead(status, {
						'content-type': 'text/plain',
						...(status === 200 ? { 'x-paypalych-receipt': 'accepted' } : {}),
					});
					res.end(answer);
				});
			});
			const r = await relay(
				{ RELAY_LEASE_MS: '1500', RELAY_DELIVERY_TIMEOUT_MS: '1000' },
				{ targets: [`${base}/ok`, `${base}/refuse`] },
			);
			expect((await post(r, '/postback/payment', paymentFields('nul-answer'))).statusCode).toBe(
				200,
			);
			const list = async (status: string) =>
				(
					JSON.parse((await admin(r, `/admin/deliveries?status=${status}&limit=10`)).body) as {
						data: Array<{ id: number; target: string; lastResponse: string | null }>;
					}
				).data;
			await waitFor('one delivered and one dead', async () =>
				(await list('delivered')).length === 1 && (await list('dead')).length === 1
					? true
					: undefined,
			);
			// Two leases later, still one request each: no redelivery.
			await new Promise((res) => setTimeout(res, 3_200));
			expect(Object.fromEntries(hits)).toEqual({ '/ok': 1, '/refuse': 1 });
			const expected = 'ok\\u0000 \uFFFD\uFFFD\uFFFD ünd\\u0000';
			const [dead] = await list('dead');
			expect(dead.lastResponse).toBe(expected);
			for (const d of [...(await list('delivered')), dead]) {
				const attempts = JSON.parse(
					(await admin(r, `/admin/deliveries/${d.id}/attempts`)).body,
				) as { data: Array<{ response: string | null; outcome: string }> };
				expect(attempts.data).toHaveLength(1);
				expect(attempts.data[0].response).toBe(expected);
			}
		});

		// Security review, finding 12.
		it("the service's API: a huge answer ends the catch-up at the size limit; plain http and a hop count above 10 are refused at start", async () => {
			// Before: a 300 MB answer took the relay from 120 MB to 1.35 GB; http:// and 99999 were accepted.
			const hostile = await ownServer(cleanups, (_req, res) => {
				res.writeHead(200, { 'content-type': 'application/json' });
				const chunk = Buffer.alloc(64 * 1024, 0x20);
				let sent = 0;
				const pump = () => {
					while (sent < 300e6 && res.write(chunk)) sent += chunk.length;
					if (sent < 300e6) res.once('drain', pump);
					else res.end();
				};
				res.write('{"data":[');
				pump();
			});
			const r = await relay({
				PAYPALYCH_API_BASE_URL: hostile,
				RELAY_CATCHUP_INTERVAL_S: '3600',
			});
			const before = process.memoryUsage().rss;
			const started = Date.now();
			const run = await admin(r, '/admin/catchup', 'POST');
			expect(Date.now() - started).toBeLessThan(15_000);
			expect(JSON.parse(run.body)).toMatchObject({ outcome: 'failed' });
			expect(JSON.parse(run.body).error).toMatch(/more than \d+ bytes/);
			expect(process.memoryUsage().rss - before).toBeLessThan(200e6);
			const env = (extra: Record<string, string>) =>
				baseEnv('/unused', { payment: ['https://n8n.example/w'] }, extra);
			for (const [extra, variable] of [
				[
					{ PAYPALYCH_API_BASE_URL: 'http://pal24.pro', RELAY_ALLOW_PLAIN_HTTP_API: '' },
					'PAYPALYCH_API_BASE_URL',
				],
				[{ RELAY_TRUST_PROXY: '99999' }, 'RELAY_TRUST_PROXY'],
			] as const) {
				let error: unknown;
				try {
					loadConfig(env(extra));
				} catch (e) {
					error = e;
				}
				expect(error).toBeInstanceOf(ConfigError);
				expect((error as ConfigError).variables).toEqual([variable]);
			}
		});

		// Security review, finding 16.
		it('one bad bill does not stop catch-up: a bill whose order ID the store refuses is skipped and reported, the genuine lost payments around it are stored, and catchup-failed is raised once', async () => {
			// Before: the store's refusal of one bill ended every run at the same place, for ever.
			const alerts = await new Target().listen();
			cleanups.push(() => alerts.close());
			const m = await sandboxMerchant(sb.url, 'live');
			const r = await start(
				baseEnv(
					'/unused',
					{ payment: [sink.url('/pay')], payout: [sink.url('/payout')] },
					{
						RELAY_DATABASE: await database(),
						PAYPALYCH_API_TOKEN: m.token,
						PAYPALYCH_API_BASE_URL: sb.url,
						RELAY_CATCHUP_INTERVAL_S: '3600',
						RELAY_ALERT_TARGETS: alerts.url('/alerts'),
						LOG_LEVEL: 'silent',
					},
				),
				{ deps: { catchupBackoffMs: 5, alertCheckMs: 50 } },
			);
			cleanups.push(() => r.close());
			// Paid after the relay's first start (before it, they are behind its baseline).
			const early = await m.pay((await m.bill('10.00')).billId);
			const nul = await m.pay((await m.bill('11.00', 'NORMAL', 'bad\u0000order')).billId);
			const late = await m.pay((await m.bill('12.00')).billId);
			const run = JSON.parse((await admin(r, '/admin/catchup', 'POST')).body);
			expect(run.outcome).toBe('done');
			expect(run.found.map((f: { trsId: string }) => f.trsId).sort()).toEqual(
				[early.paymentId, late.paymentId].sort(),
			);
			// The service takes order IDs up to 255 characters (the store holds 16 384): a NUL is the one
			// the store refuses.
			expect(run.skippedRecords).toEqual([
				{ kind: 'payment', trsId: nul.paymentId, reason: expect.stringMatching(/NUL/) },
			]);
			const alerted = () => alerts.received.filter((a) => a.body.includes('catchup-failed'));
			await waitFor('the catchup-failed alert', async () =>
				alerted().length > 0 ? true : undefined,
			);
			// A later lost payment is caught up by the next run; the bad bills are not read again and
			// nothing is alerted twice.
			const later = await m.pay((await m.bill('13.00')).billId);
			const again = JSON.parse((await admin(r, '/admin/catchup', 'POST', { deep: true })).body);
			expect(again).toMatchObject({ outcome: 'done', skippedRecords: [] });
			expect(again.found.map((f: { trsId: string }) => f.trsId)).toEqual([later.paymentId]);
			await new Promise((resolve) => setTimeout(resolve, 300));
			expect(alerted()).toHaveLength(1);
			expect(alerted()[0].body).toContain(nul.paymentId);
		});
	},
);
