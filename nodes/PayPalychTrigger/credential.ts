import type { IWebhookFunctions } from 'n8n-workflow';

import { CREDENTIAL_NAME, type ApiCredential } from '../PayPalych/transport';

/**
 * The credential of the call a context serves, read once: n8n builds a context for each webhook
 * call, and every read of a credential goes to its database and through its expression sandbox.
 * The signature check and the service calls of one postback share this read.
 */
const reads = new WeakMap<IWebhookFunctions, Promise<ApiCredential>>();

export async function credentialOf(context: IWebhookFunctions): Promise<ApiCredential> {
	let read = reads.get(context);
	if (read === undefined) {
		read = context.getCredentials(CREDENTIAL_NAME);
		reads.set(context, read);
	}
	return await read;
}
