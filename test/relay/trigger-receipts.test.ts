/**
 * What the workflow said, through a real PayPalych Trigger behind the relay: each delivery keeps
 * the trigger's receipt (X-PayPalych-Receipt), and the admin API and the console show it beside
 * the HTTP status. A postback the trigger had already received straight (before the relay was put
 * in front of it) is delivered "200 · duplicate", not shown as one the workflow ran.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../sandbox/src/index.ts';
import { start, type RunningRelay } from '../../relay/src/server.ts';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';
import { PROFILES } from '../helpers/sandbox.ts';
import { postForm, startTrigger } from '../helpers/trigger-harness.ts';
import { ADMIN_TOKEN, TOKEN, Target, baseEnv, form, tempDir } from './helpers.ts';
import { cookieOf, submitLogin } from './console-login.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
type Row = Record<string, unknown>;

for (const profile of PROFILES) {
	describe(`the trigger's receipt, kept and shown by the relay (${profile} profile)`, () => {
		let sb: Sandbox;
		let sink: Target;
		let trigger: WebhookHarness;
		let relay: RunningRelay;
		let tmp: ReturnType<typeof tempDir>;

		beforeAll(async () => {
			sb = await startSandbox({ port: 0, token: TOKEN, timeFactor: 0.001, profile });
			// The shop's own postbacks go nowhere: the test sends each one where it means to.
			sink = await new Target().listen();
			await fetch(`${sb.url}/_sandbox/shops/${sb.shopId}`, {
				method: 'PATCH',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ resultUrl: sink.url('/result') }),
			});
			// Bill ID Only: the same on both profiles, whether the service shows order IDs or not.
			trigger = await startTrigger(
				{ event: 'payment', orderCheck: 'billId', paymentStatuses: ['SUCCESS'] },
				{ apiToken: TOKEN, baseUrl: sb.url },
			);
			tmp = tempDir();
			relay = await start(baseEnv(tmp.dir, { payment: [trigger.url] }, { LOG_LEVEL: 'warn' }));
		});
		afterAll(async () => {
			await relay?.close();
			await trigger?.close();
			await sink?.close();
			await sb?.close();
			tmp?.cleanup();
		});

		const admin = async (url: string) =>
			JSON.parse(
				(await relay.app.inject({ url, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).body,
			) as Row;

		/** A bill of the sandbox's shop paid with `outcome`: the postback the service sent. */
		async function paid(outcome: 'full' | 'fail'): Promise<Record<string, string>> {
			const created = (await (
				await fetch(`${sb.url}/api/v1/bill/create`, {
					method: 'POST',
					headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' },
					body: new URLSearchParams({ amount: '120.00', shop_id: sb.shopId, order_id: 'o-1' }),
				})
			).json()) as { bill_id: string };
			const res = await fetch(`${sb.url}/_sandbox/bills/${created.bill_id}/pay`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ outcome }),
			});
			return ((await res.json()) as { postback: Record<string, string> }).postback;
		}

		/** The postback through the relay, and its one delivery once the trigger answered. */
		async function delivered(postback: Record<string, string>): Promise<Row> {
			const stored = await relay.app.inject({
				method: 'POST',
				url: '/postback/payment',
				headers: { 'content-type': 'application/x-www-form-urlencoded' },
				payload: form(postback),
			});
			expect(stored.statusCode).toBe(200);
			return await waitFor(`the delivery of ${postback.TrsId}`, async () => {
				const events = (await admin(`/admin/events?trsId=${postback.TrsId}`)).data as Row[];
				const detail = events[0] && (await admin(`/admin/events/${String(events[0].id)}`));
				const delivery = (detail?.deliveries as Row[] | undefined)?.[0];
				return delivery?.status === 'delivered' ? delivery : undefined;
			});
		}

		it('keeps accepted, duplicate and ignored with each delivery, in the admin API', async () => {
			const first = await paid('full');
			const accepted = await delivered(first);
			expect(accepted).toMatchObject({ lastStatus: 200, lastReceipt: 'accepted' });
			expect(accepted.attemptHistory).toMatchObject([{ httpStatus: 200, receipt: 'accepted' }]);
			expect(trigger.executions).toHaveLength(1);

			// Received straight by the trigger before the relay: the relay's delivery is a duplicate.
			const straight = await paid('full');
			expect((await postForm(trigger.url, straight)).receipt).toBe('accepted');
			const duplicate = await delivered(straight);
			expect(duplicate).toMatchObject({ lastStatus: 200, lastReceipt: 'duplicate' });
			expect(trigger.executions).toHaveLength(2);
			const attempts = await admin(`/admin/deliveries/${String(duplicate.id)}/attempts`);
			expect(attempts.delivery).toMatchObject({ lastReceipt: 'duplicate' });
			expect(attempts.data).toMatchObject([{ httpStatus: 200, receipt: 'duplicate' }]);

			// A FAIL payment, a status the trigger does not start for.
			const ignored = await delivered(await paid('fail'));
			expect(ignored).toMatchObject({ lastStatus: 200, lastReceipt: 'ignored' });
			expect(trigger.executions).toHaveLength(2);

			const listed = (await admin('/admin/deliveries?limit=10')).data as Row[];
			expect(listed.map((d) => d.lastReceipt).sort()).toEqual(['accepted', 'duplicate', 'ignored']);
		});

		it('shows the receipt beside the HTTP status in the console', async () => {
			const straight = await paid('full');
			await postForm(trigger.url, straight);
			const duplicate = await delivered(straight);
			const login = await submitLogin(relay.app, { token: ADMIN_TOKEN });
			const cookie = cookieOf(login, 'relay_console') ?? '';
			const page = await relay.app.inject({
				url: `/admin/console/events/${String(duplicate.eventId)}`,
				headers: { cookie },
			});
			expect(page.statusCode).toBe(200);
			expect(page.body).toMatch(/200 · <span class="receipt duplicate"[^>]*>duplicate<\/span>/);
			expect(page.body).toContain("<dt>Trigger's receipt</dt><dd>duplicate</dd>");
			const list = await relay.app.inject({
				url: `/admin/console/events?trsId=${straight.TrsId}`,
				headers: { cookie },
			});
			expect(list.body).toContain('1 delivered · duplicate');
		});
	});
}
