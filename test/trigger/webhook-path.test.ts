/**
 * The trigger's webhook path (its Event) resolves without n8n's expression engine: n8n 2.x
 * resolves a webhook description's template natively when the description declares how, and
 * otherwise evaluates it for every call (under the `vm` engine with lazy acquisition, one isolate
 * built per call for that alone). The native value must be the one the template evaluates to.
 */
import {
	Workflow,
	resolveWebhookDescriptionField,
	webhookDescriptionIsNativelyResolvable,
	type INodeParameters,
	type INodeType,
	type INodeTypes,
	type IWebhookDescription,
} from 'n8n-workflow';
import { describe, expect, it } from 'vitest';
import { PayPalychTrigger } from '../../dist/nodes/PayPalychTrigger/PayPalychTrigger.node.js';

const trigger = new PayPalychTrigger() as INodeType;
const nodeTypes = {
	getByName: () => trigger,
	getByNameAndVersion: () => trigger,
	getKnownTypes: () => ({}),
} as unknown as INodeTypes;

function workflowNode(parameters: INodeParameters) {
	const workflow = new Workflow({
		nodes: [
			{
				id: 'trigger',
				name: 'PayPalych Trigger',
				type: 'n8n-nodes-paypalych.payPalychTrigger',
				typeVersion: 2,
				position: [0, 0],
				parameters,
			},
		],
		connections: {},
		active: false,
		nodeTypes,
	});
	return { workflow, node: workflow.getNode('PayPalych Trigger')! };
}

const webhook = trigger.description.webhooks![0] as IWebhookDescription;

describe('the webhook path', () => {
	it('is resolvable without the expression engine: every field is static or declares its resolver', () => {
		expect(webhook.path).toBe('={{$parameter["event"]}}');
		expect(webhookDescriptionIsNativelyResolvable(webhook)).toBe(true);
	});

	it('resolves natively to what the template evaluates to, for every event', () => {
		for (const event of ['payment', 'payout', 'refund', 'chargeback', 'success', 'fail']) {
			const { workflow, node } = workflowNode({ event });
			expect(resolveWebhookDescriptionField(node, webhook, 'path')).toEqual({
				resolved: true,
				value: event,
			});
			expect(workflow.expression.getSimpleParameterValue(node, webhook.path, 'internal', {})).toBe(
				event,
			);
		}
	});

	it('leaves a node whose parameters hold an expression to the engine', () => {
		const { node } = workflowNode({ event: 'success', redirectUrl: '={{ "https://x.test" }}' });
		expect(resolveWebhookDescriptionField(node, webhook, 'path')).toEqual({ resolved: false });
	});
});
