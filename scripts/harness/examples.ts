/**
 * The example workflows in examples/: loading them and filling in the placeholders a merchant
 * would edit by hand (shop ID, payout account ID, the shop backend's address).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, type CredentialJson, type WorkflowJson } from './n8n.ts';

export const EXAMPLES_DIR = join(REPO_ROOT, 'examples');

/** The credential every example refers to; the scripts import it under this id. */
export const CREDENTIAL_ID = 'paypalychSandbox';
export const CREDENTIAL_NAME = 'PayPalych account';

export const EXAMPLE_IDS = {
	paymentPaid: 'ppExPaymentPaid01',
	payoutSweep: 'ppExPayoutSweep02',
	reconciliation: 'ppExReconcile03',
	paymentLink: 'ppExPaymentLink04',
	sellerPayout: 'ppExSellerPay05',
	payoutApproval: 'ppExPayoutApproval06',
	refundMarks: 'ppExRefundMarks07',
	chargebackHold: 'ppExChargebackHold08',
	dailyStatement: 'ppExStatement09',
} as const;

/** Placeholders as they appear in the example files. */
export const PLACEHOLDERS = {
	shopId: 'YOUR_SHOP_ID',
	payoutAccountId: 'YOUR_PAYOUT_ACCOUNT_ID',
	shopBackend: 'https://shop.example.com',
} as const;

export interface ExampleSettings {
	shopId: string;
	payoutAccountId: string;
	/** Base URL of the shop's backend the workflows call (no trailing slash). */
	shopBackend: string;
}

export function loadExamples(): Array<{ file: string; workflow: WorkflowJson }> {
	return readdirSync(EXAMPLES_DIR)
		.filter((f) => f.endsWith('.json'))
		.sort()
		.map((file) => ({
			file,
			workflow: JSON.parse(readFileSync(join(EXAMPLES_DIR, file), 'utf8')) as WorkflowJson,
		}));
}

function replaceDeep(value: unknown, replace: (text: string) => string): unknown {
	if (typeof value === 'string') return replace(value);
	if (Array.isArray(value)) return value.map((v) => replaceDeep(v, replace));
	if (value !== null && typeof value === 'object') {
		return Object.fromEntries(
			Object.entries(value as Record<string, unknown>).map(([k, v]) => [
				k,
				replaceDeep(v, replace),
			]),
		);
	}
	return value;
}

/** A copy of the workflow with the placeholders in node parameters replaced. */
export function configureWorkflow(workflow: WorkflowJson, settings: ExampleSettings): WorkflowJson {
	const backend = settings.shopBackend.replace(/\/+$/, '');
	const replace = (text: string) =>
		text
			.split(PLACEHOLDERS.shopId)
			.join(settings.shopId)
			.split(PLACEHOLDERS.payoutAccountId)
			.join(settings.payoutAccountId)
			.split(PLACEHOLDERS.shopBackend)
			.join(backend);
	return {
		...workflow,
		nodes: workflow.nodes.map((node) => ({
			...node,
			parameters: replaceDeep(node.parameters, replace) as Record<string, unknown>,
		})),
	};
}

/** Trigger nodes of the given workflows, with the event each listens for. */
export function triggersOf(
	workflows: WorkflowJson[],
): Array<{ workflowId: string; node: string; event: string }> {
	const out: Array<{ workflowId: string; node: string; event: string }> = [];
	for (const workflow of workflows) {
		for (const node of workflow.nodes) {
			if (!node.type.endsWith('.payPalychTrigger')) continue;
			const event = typeof node.parameters.event === 'string' ? node.parameters.event : 'payment';
			out.push({ workflowId: workflow.id, node: node.name, event });
		}
	}
	return out;
}

/**
 * The workflow with its schedules moved to once a year, 12 hours from now: published and armed,
 * but never firing while a test suite runs (a suite runs them itself through their "Run now"
 * trigger).
 */
export function withDormantSchedules(workflow: WorkflowJson): WorkflowJson {
	const at = new Date(Date.now() + 12 * 3_600_000);
	const cron = `${at.getUTCMinutes()} ${at.getUTCHours()} ${at.getUTCDate()} ${at.getUTCMonth() + 1} *`;
	return {
		...workflow,
		nodes: workflow.nodes.map((node) =>
			node.type === 'n8n-nodes-base.scheduleTrigger'
				? {
						...node,
						parameters: { rule: { interval: [{ field: 'cronExpression', expression: cron }] } },
					}
				: node,
		),
	};
}

/** What the examples need to know of the sandbox merchant they run against. */
export interface ExampleSandbox {
	url: string;
	token: string;
	shopId: string;
	payoutAccountId: string;
}

/** The workflows (all examples by default) with the placeholders filled in for the sandbox. */
export function workflowsFor(
	sandbox: ExampleSandbox,
	shopBackend: string,
	workflows?: (settings: ExampleSettings) => WorkflowJson[],
): WorkflowJson[] {
	const settings: ExampleSettings = {
		shopId: sandbox.shopId,
		payoutAccountId: sandbox.payoutAccountId,
		shopBackend,
	};
	return workflows
		? workflows(settings)
		: loadExamples().map((e) => configureWorkflow(e.workflow, settings));
}

/**
 * The PayPalych credential every example uses, for the sandbox's merchant, with its shop's ID:
 * a bill built from scratch in the editor needs one (Bill › Create reads the credential's).
 */
export function sandboxCredential(sandbox: ExampleSandbox): CredentialJson {
	return {
		id: CREDENTIAL_ID,
		name: CREDENTIAL_NAME,
		type: 'payPalychApi',
		data: { apiToken: sandbox.token, baseUrl: sandbox.url, shopId: sandbox.shopId },
	};
}
