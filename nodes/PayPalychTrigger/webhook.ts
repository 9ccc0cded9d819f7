import type { IDataObject, IWebhookDescription } from 'n8n-workflow';

/**
 * The trigger's webhook. Its path is the node's Event (`={{$parameter["event"]}}`, the template
 * every n8n version reads), and n8n resolves that template for every call it receives. n8n 2.x
 * resolves a template natively, without its expression engine, when the description says how
 * under this key (the form of n8n-workflow's `fromParameter`) and the node's parameters hold no
 * expression; otherwise, under the `vm` engine with lazy acquisition, the template alone would
 * build an isolate for every call. Versions that do not know the key ignore it (a symbol is never
 * serialised with the description) and evaluate the template as before.
 */
export const WEBHOOK_RESOLVERS = Symbol.for('n8n.webhookDescriptionResolvers');

const PATH = '={{$parameter["event"]}}';

/** What `$parameter["event"]` is when the parameters are plain values. */
function eventOf(parameters: IDataObject | undefined): unknown {
	return parameters?.event;
}

export const WEBHOOKS: IWebhookDescription[] = [
	{
		name: 'default',
		httpMethod: 'POST',
		responseMode: 'onReceived',
		path: PATH,
		[WEBHOOK_RESOLVERS]: { path: { template: PATH, resolve: eventOf } },
	} as IWebhookDescription,
];
