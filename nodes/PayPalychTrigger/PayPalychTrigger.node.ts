import {
	NodeOperationError,
	type IHookFunctions,
	type INodeType,
	type INodeTypeDescription,
	type IWebhookFunctions,
	type IWebhookResponseData,
} from 'n8n-workflow';
import { MAIN_CONNECTION } from '../compat';
import { isPostbackEvent, isRedirectEvent } from '../shared';
import { send, type PlainResponse } from './answer';
import { PASTE_TARGET, SUBTITLE, properties, triggerPanel } from './description';
import { itemOfVersion } from './item';
import { receive, type N8nRequest } from './pipeline';
import { WEBHOOKS } from './webhook';

export class PayPalychTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'PayPalych Trigger',
		name: 'payPalychTrigger',
		icon: { light: 'file:../../icons/paypalych.svg', dark: 'file:../../icons/paypalych.dark.svg' },
		group: ['trigger'],
		// 2: the default Statuses of a payment trigger are the paid ones (version 1: every status),
		// and the item puts what a workflow uses first at the top, the raw postback under
		// `postback` (item.ts); version 1 keeps its item as it was.
		version: [1, 2],
		defaultVersion: 2,
		subtitle: SUBTITLE,
		description:
			'Starts the workflow when PayPalych reports a payment, a payout, a refund or a chargeback, or a customer returns after paying',
		defaults: { name: 'PayPalych Trigger' },
		inputs: [],
		// Not NodeConnectionTypes.Main: n8n 1.x before 1.85 lacks that export (see ../compat). A
		// second output, Refused, only when Output Refused Calls is on (outputs by expression).
		outputs: `={{ $parameter["refusedOutput"] === true ? [{ "type": "${MAIN_CONNECTION}", "displayName": "Confirmed" }, { "type": "${MAIN_CONNECTION}", "displayName": "Refused" }] : ["${MAIN_CONNECTION}"] }}`,
		credentials: [{ name: 'payPalychApi', required: true }],
		webhooks: WEBHOOKS,
		triggerPanel,
		properties,
	};

	webhookMethods = {
		default: {
			// The service has no API to register or remove notification URLs: the merchant pastes the
			// URL into the merchant account. These methods therefore succeed without calling out.
			async checkExists(this: IHookFunctions): Promise<boolean> {
				return false;
			},
			async create(this: IHookFunctions): Promise<boolean> {
				const event = this.getNodeParameter('event', 'payment') as string;
				const target = isPostbackEvent(event) ? PASTE_TARGET[event] : 'PayPalych merchant account';
				const url = this.getNodeWebhookUrl('default') ?? 'the URL shown in the node';
				const also =
					event === 'payment' ? (this.getNodeParameter('alsoAccept', []) as string[]) : [];
				const more = also
					.map((kind) =>
						kind === 'refund' ? ' and as the Refund URL' : ' and as the Chargeback URL',
					)
					.join('');
				this.logger.info(
					`PayPalych Trigger: the service cannot register URLs through its API, so nothing was registered. Paste ${url} as the ${target}${more}.`,
				);
				return true;
			},
			async delete(this: IHookFunctions): Promise<boolean> {
				this.logger.info(
					'PayPalych Trigger: nothing to remove at PayPalych (URLs are set in the merchant account); clear the URL there if you no longer want the calls.',
				);
				return true;
			},
		},
	};

	async webhook(this: IWebhookFunctions): Promise<IWebhookResponseData> {
		const event = this.getNodeParameter('event', 'payment') as string;
		if (!isPostbackEvent(event)) {
			throw new NodeOperationError(this.getNode(), `Unknown event "${event}"`);
		}
		const req = this.getRequestObject() as unknown as N8nRequest;
		const res = this.getResponseObject() as unknown as PlainResponse;
		const call = { context: this, event, workflowId: this.getWorkflow().id };
		// Answered here, before n8n starts the execution (see send): the memory of postbacks the
		// steps updated is saved with the answer.
		const refusedOutput =
			!isRedirectEvent(event) && this.getNodeParameter('refusedOutput', false) === true;
		const answer = await receive(call, req);
		// Version 2 and later: the item in one naming style, the raw postback under `postback`.
		if (answer.item) answer.item = itemOfVersion(answer.item, this.getNode().typeVersion);
		return send(call, res, answer, refusedOutput);
	}
}
