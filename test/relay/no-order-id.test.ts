/**
 * Where the service shows no order ID for bills (the sandbox's spec profile), the trigger's
 * default Order Check refuses every payment. The refusal is loud: the relay dead-letters the
 * delivery and keeps the start of the trigger's answer, which names the fix, and its `dead` alert
 * (posted to RELAY_ALERT_TARGETS and logged) carries that answer too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox } from '../../sandbox/src/index.ts';
import { start, type RunningRelay } from '../../relay/src/server.ts';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';
import { startTrigger } from '../helpers/trigger-harness.ts';
import { ADMIN_TOKEN, LogSink, TOKEN, Target, baseEnv, form, tempDir } from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;

const FIX =
	'this service shows no order ID for bills: set Order Check to Bill ID Only and find the order by bill_id';

let sb: Sandbox;
let sink: Target;
let alerts: Target;
const log = new LogSink();
let trigger: WebhookHarness;
let relay: RunningRelay;
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
	sb = await startSandbox({ port: 0, token: TOKEN, timeFactor: 0.001, profile: 'spec' });
	sink = await new Target().listen();
	await fetch(`${sb.url}/_sandbox/shops/${sb.shopId}`, {
		method: 'PATCH',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ resultUrl: sink.url('/result') }),
	});
	trigger = await startTrigger({ event: 'payment' }, { apiToken: TOKEN, baseUrl: sb.url });
	alerts = await new Target().listen();
	tmp = tempDir();
	relay = await start(
		baseEnv(
			tmp.dir,
			{ payment: [trigger.url] },
			{ LOG_LEVEL: 'warn', RELAY_ALERT_TARGETS: alerts.url('/alerts') },
		),
		{ deps: { logStream: log, alertCheckMs: 50 } },
	);
});
afterAll(async () => {
	await relay?.close();
	await trigger?.close();
	await alerts?.close();
	await sink?.close();
	await sb?.close();
	tmp?.cleanup();
});

describe('a payment on a service without order IDs, through the relay to a default trigger', () => {
	it("is dead-lettered with the trigger's answer naming the fix, and the dead alert carries it", async () => {
		const created = (await (
			await fetch(`${sb.url}/api/v1/bill/create`, {
				method: 'POST',
				headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' },
				body: new URLSearchParams({ amount: '250.00', shop_id: sb.shopId, order_id: 'ord-9' }),
			})
		).json()) as { bill_id: string };
		const paid = (await (
			await fetch(`${sb.url}/_sandbox/bills/${created.bill_id}/pay`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ outcome: 'full' }),
			})
		).json()) as { postback: Record<string, string> };
		const stored = await relay.app.inject({
			method: 'POST',
			url: '/postback/payment',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			payload: form(paid.postback),
		});
		expect(stored.statusCode).toBe(200);
		const dead = await waitFor('the dead letter', async () => {
			const answer = await relay.app.inject({
				method: 'GET',
				url: '/admin/dead?limit=10',
				headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
			});
			const data = (JSON.parse(answer.body) as { data: Array<Record<string, unknown>> }).data;
			return data[0];
		});
		expect(dead).toMatchObject({ lastStatus: 422, lastReceipt: 'rejected' });
		expect(dead.lastResponse).toBe(
			`Not confirmed by the service: ${FIX} (bill ${created.bill_id})`,
		);
		expect(trigger.executions).toHaveLength(0);
		expect(trigger.logs.map((l) => l.message)).toContainEqual(expect.stringContaining(FIX));

		// The relay's alert: posted to the alert target and logged, with the start of the answer.
		const alert = await waitFor('the dead alert', async () => {
			const posted = alerts.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
			return posted.find((a) => a.alert === 'dead');
		});
		expect(alert.deliveries).toEqual([
			{
				id: dead.id,
				eventId: dead.eventId,
				target: trigger.url,
				status: 422,
				error: 'HTTP 422',
				response: dead.lastResponse,
			},
		]);
		expect(JSON.stringify(alert)).toContain(FIX);
		const logged = await waitFor(
			'the dead alert in the log',
			async () =>
				log.text
					.split('\n')
					.filter((line) => line.includes('"alert":"dead"'))
					.map((line) => JSON.parse(line) as { deliveries?: Array<{ response: string }> })[0],
		);
		expect(logged.deliveries?.[0].response).toContain(FIX);
	});
});
