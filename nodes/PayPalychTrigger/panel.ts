import type { INodePropertyOptions, TriggerPanelDefinition } from 'n8n-workflow';

/**
 * What the merchant reads in the editor: the events as the nodes panel lists them, the trigger
 * panel and the notices. Each says which URL goes into which field of the shop settings in a
 * sentence or two, in words that fit the buttons of n8n 1.x and 2.x alike; the rest is in the
 * trigger guide the notices link to.
 */

export const TRIGGER_GUIDE =
	'https://github.com/n8n-nodes-paypalych/n8n-nodes-paypalych/blob/main/docs/merchant/trigger.md';

const guide = (anchor = '') =>
	` <a href="${TRIGGER_GUIDE}${anchor}" target="_blank">More in the trigger guide</a>`;

/** Where the merchant pastes the URL of each event, used by the panel and by the lifecycle log. */
export const PASTE_TARGET = {
	payment: 'Result URL in the shop settings of your PayPalych merchant account',
	payout: 'payout webhook URL under Webhooks in your PayPalych merchant account',
	success: 'Success URL in the shop settings of your PayPalych merchant account',
	fail: 'Fail URL in the shop settings of your PayPalych merchant account',
	refund: 'Refund URL in the shop settings of your PayPalych merchant account',
	chargeback: 'Chargeback URL in the shop settings of your PayPalych merchant account',
} as const;

/**
 * The Event options in the order a merchant needs them, Payment first (the nodes panel lists them
 * in this order, as "On payment reported"...). Their values are the ones workflows saved before.
 */
export const EVENT_OPTIONS: INodePropertyOptions[] = [
	{
		name: 'Payment Reported',
		value: 'payment',
		action: 'On payment reported',
		description: 'PayPalych reports a finished payment of a bill. Paste the URL as the Result URL.',
	},
	{
		name: 'Refund Reported',
		value: 'refund',
		action: 'On refund reported',
		description: 'PayPalych reports a refund of a payment. Paste the URL as the Refund URL.',
	},
	{
		name: 'Chargeback Reported',
		value: 'chargeback',
		action: 'On chargeback reported',
		description:
			'PayPalych reports a chargeback of a payment. Paste the URL as the Chargeback URL.',
	},
	{
		name: 'Payout Reported',
		value: 'payout',
		action: 'On payout reported',
		description:
			'PayPalych reports a payout that succeeded, failed or was declined. Paste the URL as the payout webhook URL.',
	},
	{
		name: 'Customer Returned After Paying',
		value: 'success',
		action: 'On customer returned after paying',
		description:
			"The customer's browser comes back after a successful payment (proves no payment). Paste the URL as the Success URL.",
	},
	{
		name: 'Customer Returned After a Failed Payment',
		value: 'fail',
		action: 'On customer returned after a failed payment',
		description:
			"The customer's browser comes back after a failed payment. Paste the URL as the Fail URL.",
	},
];

/** The canvas subtitle of each event. */
export const SUBTITLE = `={{ ${JSON.stringify(
	Object.fromEntries(EVENT_OPTIONS.map((o) => [o.value, o.name])),
)}[$parameter["event"]] }}`;

/** Which URL, in words that fit n8n 1.x and 2.x (their buttons and "live" switches differ). */
const WHICH_URL =
	'the Test URL while you test this trigger, the Production URL once the workflow is published (active in n8n 1.x)';

const notice = (field: string, then: string, anchor = '') =>
	`Paste this node's URL into the ${field}: ${WHICH_URL}. ${then}${guide(anchor)}`;

/** The notice of each event: at most two sentences and the guide. */
export const NOTICES = {
	payment: notice(
		'Result URL field of your PayPalych shop settings',
		'Each payment is confirmed with PayPalych before the workflow starts: fulfil the order when paid is true.',
	),
	payout: notice(
		'payout webhook URL field under Webhooks in your PayPalych merchant account',
		'Each payout is confirmed with PayPalych before the workflow starts.',
		'#payout-statuses',
	),
	success: notice(
		'Success URL field of your PayPalych shop settings',
		"This is the customer's browser and proves no payment: fulfil orders from the payment event only.",
	),
	fail: notice(
		'Fail URL field of your PayPalych shop settings',
		"This is the customer's browser and proves nothing: the payment event tells what happened.",
	),
	refund: notice(
		'Refund URL field of your PayPalych shop settings',
		'Each refund is confirmed with PayPalych and never reads as a payment (refunded, not paid).',
		'#refunds-and-chargebacks',
	),
	chargeback: notice(
		'Chargeback URL field of your PayPalych shop settings',
		'Each chargeback is confirmed with PayPalych and never reads as a payment (chargedBack, not paid).',
		'#refunds-and-chargebacks',
	),
} as const;

/**
 * The trigger panel (left of the parameters in n8n 2.x, the "Listen" view in 1.x). "Run this
 * trigger" fits both versions' button; the URLs are in the node's Webhook URLs section.
 */
export const triggerPanel: TriggerPanelDefinition = {
	header: "Paste this node's URL into your PayPalych shop settings",
	executionsHelp: {
		inactive:
			"Copy the Test URL from the node's Webhook URLs section into the field its Event names (the Result URL for payments) in your PayPalych shop settings, then run this trigger and pay a test bill. " +
			'Once it works, publish the workflow (activate it in n8n 1.x) and paste the Production URL there instead.' +
			guide(),
		active:
			"The workflow is live: the Production URL from the node's Webhook URLs section must be in the field its Event names (the Result URL for payments) in your PayPalych shop settings. " +
			'Each confirmed call then starts the workflow once and shows in the executions list.' +
			guide(),
	},
	activationHint:
		'Once it works, publish the workflow (activate it in n8n 1.x) and paste the Production URL into your PayPalych shop settings instead of the Test URL.',
};
