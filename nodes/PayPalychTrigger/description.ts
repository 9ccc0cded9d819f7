import type { INodeProperties } from 'n8n-workflow';
import { EVENT_OPTIONS, NOTICES } from './panel';
import { OTHER_STATUSES } from './receive';

export { PASTE_TARGET, SUBTITLE, triggerPanel } from './panel';

const statusOption = (value: string, description: string) => ({ name: value, value, description });

/** The payment statuses a version 2 node starts the workflow for by default: the paid ones. */
export const PAID_STATUSES = ['SUCCESS', 'OVERPAID'];

/** The Statuses of a payment trigger as version 1 had it (every status by default). */
const paymentStatuses: INodeProperties = {
	displayName: 'Statuses',
	name: 'paymentStatuses',
	type: 'multiOptions',
	default: ['SUCCESS', 'UNDERPAID', 'OVERPAID', 'FAIL', OTHER_STATUSES],
	options: [
		statusOption('SUCCESS', 'Paid in full'),
		statusOption('OVERPAID', 'Paid more than the bill (counts as paid)'),
		statusOption('UNDERPAID', 'Paid less than the bill (not paid)'),
		statusOption('FAIL', 'The payment failed'),
		{
			name: 'Any Other Status',
			value: OTHER_STATUSES,
			description: 'A status the service does not document (for example CANCELLED)',
		},
	],
	description: 'Which payment statuses start the workflow (none selected: every status)',
};

export const properties: INodeProperties[] = [
	{
		displayName: 'Event',
		name: 'event',
		type: 'options',
		noDataExpression: true,
		default: 'payment',
		// Payment first: the order a merchant needs them in (see EVENT_OPTIONS).
		options: EVENT_OPTIONS,
		description:
			'Which call of PayPalych starts the workflow; use one trigger per event, each with its own URL',
	},
	{
		displayName: NOTICES.payment,
		name: 'paymentNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { event: ['payment'] } },
	},
	{
		displayName: NOTICES.payout,
		name: 'payoutNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { event: ['payout'] } },
	},
	{
		displayName: NOTICES.success,
		name: 'successNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { event: ['success'] } },
	},
	{
		displayName: NOTICES.fail,
		name: 'failNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { event: ['fail'] } },
	},
	// Version 1 started the workflow for every payment status by default; version 2 only for the
	// paid ones. Each version keeps its own default, so existing workflows keep what they had.
	{ ...paymentStatuses, displayOptions: { show: { event: ['payment'], '@version': [1] } } },
	{
		displayName: NOTICES.refund,
		name: 'refundNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { event: ['refund'] } },
	},
	{
		displayName: NOTICES.chargeback,
		name: 'chargebackNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { event: ['chargeback'] } },
	},
	{
		displayName: 'Also Accept',
		name: 'alsoAccept',
		type: 'multiOptions',
		default: [],
		options: [
			{
				name: 'Refund',
				value: 'refund',
				description: 'Refund postbacks posted to this URL (its URL pasted as the Refund URL too)',
			},
			{
				name: 'Chargeback',
				value: 'chargeback',
				description:
					'Chargeback postbacks posted to this URL (its URL pasted as the Chargeback URL too)',
			},
		],
		description:
			"Refunds and chargebacks this payment trigger takes too, when its URL is also pasted as the Refund URL and Chargeback URL; the item's event tells them apart",
		displayOptions: { show: { event: ['payment'] } },
	},
	{
		...paymentStatuses,
		default: PAID_STATUSES,
		description:
			'Which payment statuses start the workflow: by default only the paid ones, so a declined or short payment never reaches your "mark paid" step',
		displayOptions: { show: { event: ['payment'], '@version': [2] } },
	},
	{
		displayName: 'Statuses',
		name: 'payoutStatuses',
		type: 'multiOptions',
		default: ['SUCCESS', 'DECLINED', 'FAIL', OTHER_STATUSES],
		options: [
			statusOption('SUCCESS', 'The payout was paid out'),
			statusOption('DECLINED', 'The payout was declined in moderation'),
			statusOption('FAIL', 'The payout failed'),
			{
				name: 'Any Other Status',
				value: OTHER_STATUSES,
				description: 'A status the service does not document',
			},
		],
		description: 'Which payout statuses start the workflow (none selected: every status)',
		displayOptions: { show: { event: ['payout'] } },
	},
	{
		displayName: 'Confirm With PayPalych API',
		name: 'confirmWithApi',
		type: 'boolean',
		default: true,
		description:
			'Whether to check each call with PayPalych before the workflow starts, so that a copied or altered call can never mark an order paid (keep it on)',
		displayOptions: { show: { event: ['payment', 'payout', 'refund', 'chargeback'] } },
	},
	{
		displayName: 'Order Check',
		name: 'orderCheck',
		type: 'options',
		default: 'orderId',
		options: [
			{
				name: "Order ID Must Match the Bill's",
				value: 'orderId',
				description:
					"The call's order ID must be the Order ID set on the bill (Bill › Create), as PayPalych shows it",
			},
			{
				name: 'Bill ID Only',
				value: 'billId',
				description:
					'For bills made without an Order ID: find the order by billId and use amount, never the order ID the call claims',
			},
		],
		description: 'How the trigger makes sure the payment belongs to the order the call names',
		displayOptions: {
			show: { event: ['payment', 'refund', 'chargeback'], confirmWithApi: [true] },
		},
	},
	{
		displayName: 'Output Refused Calls',
		name: 'refusedOutput',
		type: 'boolean',
		default: false,
		description:
			"Whether calls PayPalych's records contradict start a second output, Refused, with the reason: connect it to an alert, never to fulfilment",
		displayOptions: {
			show: { event: ['payment', 'payout', 'refund', 'chargeback'], confirmWithApi: [true] },
		},
	},
	{
		displayName: 'Send Customer To',
		name: 'redirectUrl',
		type: 'string',
		default: '',
		placeholder: 'https://shop.example.com/thank-you',
		description:
			"Page of your site the customer's browser is sent to; leave empty to show a plain page saying whether the payment went through",
		displayOptions: { show: { event: ['success', 'fail'] } },
	},
];
