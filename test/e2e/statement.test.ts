/**
 * End-to-end: Statement › Get in a real n8n against the sandbox, on both profiles. The same day as
 * the node suite (payments in two currencies, a partial and a full refund, a chargeback, payouts
 * of every outcome, movements one second either side of midnight in the profile's zone) is made
 * on the stack's merchant for two days, one per profile, and each workflow's output is compared
 * with what the sandbox's own records say (test/helpers/statement-day.ts). Then example 09 runs:
 * the statement of yesterday, the relay's statement, and a message to a person.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
	CREDENTIAL_ID,
	CREDENTIAL_NAME,
	EXAMPLE_IDS,
	configureWorkflow,
	loadExamples,
	withDormantSchedules,
} from '../../scripts/harness/examples.ts';
import { nodeOutput } from '../../scripts/harness/n8n-internals.ts';
import type { WorkflowJson } from '../../scripts/harness/n8n.ts';
import { Phases, freePort } from '../../scripts/harness/proc.ts';
import { startSink, type Sink } from '../../scripts/harness/sink.ts';
import { startStack, type Stack } from '../../scripts/harness/stack.ts';
import { ownerFor } from '../../scripts/harness/suite.ts';
import { PROFILE_TIME_ZONE, type Profile } from '../helpers/sandbox.ts';
import { makeStatementDay } from '../helpers/statement-day.ts';

type Json = Record<string, any>;

const DAYS: Record<Profile, string> = { live: '2025-03-10', spec: '2025-03-20' };
const ID: Record<Profile, string> = { live: 'ppE2EStatementLive', spec: 'ppE2EStatementSpec' };
const ADMIN_TOKEN = randomBytes(16).toString('hex');

const phases = new Phases('e2e statement');
let stack: Stack;
let sink: Sink;
let stateDir: string;

/** Manual Trigger → Statement › Get of `day` in `timeZone`: summary, then movements. */
function statementWorkflow(profile: Profile): WorkflowJson {
	const node = (name: string, output: string, x: number) => ({
		id: `${ID[profile]}-${output}`,
		name,
		type: 'n8n-nodes-paypalych.payPalych',
		typeVersion: 1,
		position: [x, 0],
		parameters: {
			resource: 'statement',
			operation: 'get',
			day: DAYS[profile],
			timeZone: PROFILE_TIME_ZONE[profile],
			output,
		},
		credentials: { payPalychApi: { id: CREDENTIAL_ID, name: CREDENTIAL_NAME } },
	});
	return {
		id: ID[profile],
		name: `E2E statement ${profile}`,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: `${ID[profile]}-go`,
				name: 'Go',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [-240, 0],
				parameters: {},
			},
			// n8n publishes only a workflow with a trigger that can fire by itself (made dormant).
			{
				id: `${ID[profile]}-year`,
				name: 'Once a year',
				type: 'n8n-nodes-base.scheduleTrigger',
				typeVersion: 1.2,
				position: [-240, 200],
				parameters: { rule: { interval: [{ field: 'days' }] } },
			},
			{ ...node('Summary', 'summary', 0), executeOnce: true },
			{ ...node('Movements', 'movements', 240), executeOnce: true },
		],
		connections: {
			Go: { main: [[{ node: 'Summary', type: 'main', index: 0 }]] },
			'Once a year': { main: [[{ node: 'Summary', type: 'main', index: 0 }]] },
			Summary: { main: [[{ node: 'Movements', type: 'main', index: 0 }]] },
		},
	} as unknown as WorkflowJson;
}

beforeAll(async () => {
	stateDir = mkdtempSync(join(tmpdir(), 'paypalych-e2e-statement-'));
	sink = await startSink();
	const relayPort = await freePort();
	const relayUrl = `http://127.0.0.1:${relayPort}`;
	stack = await startStack({
		stateDir,
		shopBackend: sink.url,
		owner: ownerFor('E2E'),
		timeFactor: 0.01,
		ports: { relay: relayPort },
		workflows: (settings) => {
			const example = loadExamples().find((e) => e.workflow.id === EXAMPLE_IDS.dailyStatement);
			const text = JSON.stringify(configureWorkflow(example!.workflow, settings))
				.split('https://relay.example.com')
				.join(relayUrl)
				.split('YOUR_RELAY_ADMIN_TOKEN')
				.join(ADMIN_TOKEN);
			return [
				withDormantSchedules(statementWorkflow('live')),
				withDormantSchedules(statementWorkflow('spec')),
				withDormantSchedules(JSON.parse(text) as WorkflowJson),
			];
		},
		relayEnv: {
			RELAY_ADMIN_TOKEN: ADMIN_TOKEN,
			RELAY_CATCHUP_INTERVAL_S: '3600',
			// No trigger here: the relay forwards the sandbox's postbacks to the sink.
			RELAY_PAYMENT_TARGETS: `${sink.url}/relay/payment`,
		},
		phases,
	});
}, 900_000);

afterAll(async () => {
	await stack?.stop();
	await sink?.close();
	if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe('Statement › Get in a real n8n', () => {
	for (const profile of ['live', 'spec'] as const) {
		it(`gives the exact totals and movements of a sandbox day, profile ${profile}`, async () => {
			const merchant = {
				merchantId: stack.sandbox.merchantId,
				token: stack.sandbox.token,
				shopId: stack.sandbox.shopId,
				payoutAccountId: stack.sandbox.payoutAccountId,
				credential: { apiToken: stack.sandbox.token, baseUrl: stack.sandbox.url },
			};
			const expected = await makeStatementDay(stack.sandbox, profile, {
				merchant,
				day: DAYS[profile],
			});
			phases.mark(`${profile} day made`);
			const run = await stack.n8n.execute(ID[profile]);
			expect(nodeOutput(run, 'Summary')).toEqual(expected.summaries);
			const movements = nodeOutput(run, 'Movements');
			expect(movements.map((m) => `${m.kind}:${m.id}`).sort()).toEqual(expected.movementKeys);
			for (const m of movements)
				expect(m.balanceEffect, `${m.kind}:${m.id}`).toBe(expected.effects[`${m.kind}:${m.id}`]);
			phases.mark(`${profile} statement checked`);
		}, 300_000);
	}

	it('example 09 runs: yesterday’s statement, the relay’s statement, a message to a person', async () => {
		const run = await stack.n8n.execute(EXAMPLE_IDS.dailyStatement);
		expect(run.data.resultData.runData["Yesterday's statement"]).toBeDefined();
		expect(run.data.resultData.runData['Append to the sheet']).toBeUndefined();
		// The relay recorded no balance for yesterday (it started today): the day cannot be tied
		// out, and a person is told so, with the day and what to look at.
		const told = (await sink.waitFor('/api/alerts/statement', 1)).map((r) => r.body as Json);
		expect(told[0]).toMatchObject({ day: expect.any(String), problems: expect.any(Array) });
		expect(told[0].problems.length).toBeGreaterThan(0);
		expect(String(told[0].text)).toMatch(/needs a look/);
	}, 300_000);
});
