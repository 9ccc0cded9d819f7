/**
 * The PayPalych Trigger (the class from dist/) in the webhook harness, as n8n would run it, and a
 * form POST to it: what the trigger and relay suites start and send, written once.
 */
import { PayPalychTrigger } from '../../dist/nodes/PayPalychTrigger/PayPalychTrigger.node.js';
import {
	startWebhookHarness,
	type HarnessOptions,
	type WebhookHarness,
} from './webhook-harness.ts';

/** The trigger's n8n type name. */
export const TRIGGER_TYPE_NAME = 'n8n-nodes-paypalych.payPalychTrigger';

/** A PayPalych Trigger with these parameters and the credential's token and base URL. */
export async function startTrigger(
	parameters: Record<string, unknown>,
	credentials: { apiToken: string; baseUrl: string },
	extra: Partial<HarnessOptions> = {},
): Promise<WebhookHarness> {
	return await startWebhookHarness({
		nodeType: new PayPalychTrigger(),
		typeName: TRIGGER_TYPE_NAME,
		parameters: parameters as never,
		credentialType: 'payPalychApi',
		credentials,
		...extra,
	});
}

/** POSTs form fields as the service does (no redirect followed); what the trigger answered. */
export async function postForm(url: string, fields: Record<string, string>) {
	const res = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/x-www-form-urlencoded' },
		body: new URLSearchParams(fields).toString(),
		redirect: 'manual',
	});
	return {
		status: res.status,
		text: await res.text(),
		receipt: res.headers.get('x-paypalych-receipt'),
		retryAfter: res.headers.get('retry-after'),
		location: res.headers.get('location'),
	};
}
