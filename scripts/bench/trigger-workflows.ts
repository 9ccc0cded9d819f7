// The hand-built confirmation of the trigger's benchmark (trigger-stand.ts): what a careful
// merchant builds from n8n's own nodes for the safety the PayPalych Trigger gives.
import type { WorkflowJson } from '../harness/n8n.ts';

const node = (
	name: string,
	type: string,
	typeVersion: number,
	x: number,
	parameters: Record<string, unknown>,
) => ({
	name,
	type,
	typeVersion,
	position: [x, 0],
	parameters,
});

/** An IF (v2) passing its item on when the string `left` equals `right`. */
const ifEquals = (name: string, x: number, left: string, right: string) =>
	node(name, 'n8n-nodes-base.if', 2, x, {
		conditions: {
			options: { caseSensitive: true, leftValue: '', typeValidation: 'loose' },
			conditions: [
				{
					id: name,
					leftValue: left,
					rightValue: right,
					operator: { type: 'string', operation: 'equals' },
				},
			],
			combinator: 'and',
		},
		options: {},
	});

/** A GET to the service (HTTP Request v4.2) with `id` in the query and the token in a header. */
const serviceGet = (name: string, x: number, url: string, token: string, id: string) =>
	node(name, 'n8n-nodes-base.httpRequest', 4.2, x, {
		method: 'GET',
		url,
		sendQuery: true,
		queryParameters: { parameters: [{ name: 'id', value: id }] },
		sendHeaders: true,
		headerParameters: {
			parameters: [
				{ name: 'Authorization', value: `Bearer ${token}` },
				{ name: 'Accept', value: 'application/json' },
			],
		},
		options: {},
	});

/**
 * What a careful merchant builds by hand with n8n's own nodes for the same safety as the trigger
 * with confirmation on: a Webhook answering after its last node, the signature
 * MD5(OutSum:InvId:token) upper-case computed (Crypto) and compared (IF), payment/status asked
 * (HTTP Request) and its status checked (IF), then the order ID compared with the postback's InvId
 * (IF): the payment's own where the service shows it there (`orderShown`), otherwise its bill's
 * (one more HTTP Request, to bill/status). The caller adds a No-Op after it. A forged call ends at
 * the first IF: no item, n8n answers 500.
 */
export function handBuilt(
	token: string,
	serviceUrl: string,
	orderShown = false,
	path = 'bench-hand',
): WorkflowJson['nodes'] {
	const api = `${serviceUrl.replace(/\/+$/, '')}/api/v1`;
	const hook = "$('Webhook').item.json.body";
	const nodes: WorkflowJson['nodes'] = [
		{
			...node('Webhook', 'n8n-nodes-base.webhook', 2, 0, {
				httpMethod: 'POST',
				path,
				responseMode: 'lastNode',
				responseData: 'firstEntryJson',
				options: {},
			}),
			webhookId: path,
		},
		node('Crypto', 'n8n-nodes-base.crypto', 1, 200, {
			action: 'hash',
			type: 'MD5',
			value: `={{ $json.body.OutSum }}:{{ $json.body.InvId }}:${token}`,
			dataPropertyName: 'signature',
			encoding: 'hex',
		}),
		ifEquals(
			'Signature',
			400,
			'={{ $json.signature.toUpperCase() }}',
			'={{ $json.body.SignatureValue }}',
		),
		serviceGet('Payment', 600, `${api}/payment/status`, token, `={{ ${hook}.TrsId }}`),
		ifEquals('Paid', 800, '={{ $json.status }}', 'SUCCESS'),
	];
	if (!orderShown) {
		nodes.push(serviceGet('Bill', 1000, `${api}/bill/status`, token, '={{ $json.bill_id }}'));
	}
	nodes.push(ifEquals('Order', 1200, '={{ $json.order_id }}', `={{ ${hook}.InvId }}`));
	return nodes;
}
