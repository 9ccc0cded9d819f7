import type { INodeProperties, TriggerPanelDefinition } from 'n8n-workflow';
import { OTHER_STATUSES } from './receive';

/** Where the merchant pastes the URL of each event, used by the panel and by the lifecycle log. */
export const PASTE_TARGET = {
	payment: 'Result URL in the shop settings of your PayPalych merchant account',
	payout: 'payout webhook URL under Webhooks in your PayPalych merchant account',
	success: 'Success URL in the shop settings of your PayPalych merchant account',
	fail: 'Fail URL in the shop settings of your PayPalych merchant account',
	refund: 'Refund URL in the shop settings of your PayPalych merchant account',
	chargeback: 'Chargeback URL in the shop settings of your PayPalych merchant account',
} as const;

const MONEY_BACK_IS_NOT_A_PAYMENT =
	'The output never reads as a payment: it has no <b>paid</b> and no <b>status</b>; branch on <b>event</b>, and on <b>refunded</b> / <b>refundStatus</b> (or <b>chargedBack</b> / <b>chargebackStatus</b>). ';

const TEST_VS_PRODUCTION =
	'Use the Test URL only while "Listen for test event" is running (one call, shown in the editor). ' +
	'For real traffic, put the workflow live (Publish in n8n 2.x, the Active switch in n8n 1.x) and paste the Production URL instead: the service keeps calling the URL you pasted, so replace the Test URL before going live.';

const REDIRECT_IS_NO_PROOF =
	'<b>Fulfil orders from the Payment Postback only.</b> A redirect is the customer\'s own browser: anyone can post it, its signature is public, and it may never arrive. Its output says which page the customer was sent to (customerSentTo) and carries no "paid". ';

export const triggerPanel: TriggerPanelDefinition = {
	header:
		'PayPalych has no API to register notification URLs: copy the URL above and paste it into your merchant account',
	executionsHelp: {
		inactive:
			'<b>While building</b>: click "Listen for test event", paste the <b>Test URL</b> where this event is set (Result URL, payout webhook, Success URL, Fail URL, Refund URL or Chargeback URL), then pay a bill, finish a payout or refund a payment. The call shows up here.<br /><br />' +
			'<b>In production</b>: put the workflow live (<b>Publish</b> in n8n 2.x, the <b>Active</b> switch in n8n 1.x) and paste the <b>Production URL</b> there instead. Every verified call then starts the workflow once and shows up in the executions list.',
		active:
			'<b>While building</b>: click "Listen for test event", paste the <b>Test URL</b> where this event is set, then trigger the event. The call shows up here.<br /><br />' +
			'<b>The workflow is live</b> (published, or active in n8n 1.x): make sure the <b>Production URL</b> is the one pasted in your merchant account. Every verified call starts the workflow once and shows up in the executions list.',
	},
	activationHint:
		'Once the workflow works, put it live (Publish in n8n 2.x, Active in n8n 1.x) and paste the Production URL into your PayPalych merchant account instead of the Test URL.',
};

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
	description:
		'Which payment statuses start the workflow. Other verified postbacks are answered OK and start nothing. Nothing selected means every status.',
};

export const properties: INodeProperties[] = [
	{
		displayName: 'Event',
		name: 'event',
		type: 'options',
		noDataExpression: true,
		default: 'payment',
		options: [
			{
				name: 'Chargeback Postback (Chargeback URL)',
				value: 'chargeback',
				description: "The service reports a chargeback of a payment (the shop's Chargeback URL)",
			},
			{
				name: 'Fail Redirect (Fail URL)',
				value: 'fail',
				description: "The customer's browser comes back after a failed payment",
			},
			{
				name: 'Payment Postback (Result URL)',
				value: 'payment',
				description: 'The service reports a finished payment of a bill',
			},
			{
				name: 'Payout Postback (Payout Webhook)',
				value: 'payout',
				description: 'The service reports a payout that succeeded, failed or was declined',
			},
			{
				name: 'Refund Postback (Refund URL)',
				value: 'refund',
				description: "The service reports a refund of a payment (the shop's Refund URL)",
			},
			{
				name: 'Success Redirect (Success URL)',
				value: 'success',
				description: "The customer's browser comes back after a successful payment",
			},
		],
		description:
			'Which call of the service starts the workflow. Use one trigger node per event: each gets its own URL.',
	},
	{
		displayName:
			"Paste this node's Production URL as the <b>Result URL</b> in the shop settings of your PayPalych merchant account. The service then posts every finished payment (SUCCESS, UNDERPAID, OVERPAID, FAIL) here. " +
			'Each postback is confirmed with the PayPalych API before the workflow starts (see Confirm With PayPalych API): use <b>paid</b> and the <b>payment</b> record of the output to fulfil the order, and <b>eventKey</b> as the Order ID of any payout it causes. ' +
			TEST_VS_PRODUCTION,
		name: 'paymentNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { event: ['payment'] } },
	},
	{
		displayName:
			"Paste this node's Production URL as the <b>payout webhook URL</b> under <b>Webhooks</b> in your PayPalych merchant account. The service then posts every finished payout (SUCCESS, DECLINED, FAIL) here. " +
			TEST_VS_PRODUCTION,
		name: 'payoutNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { event: ['payout'] } },
	},
	{
		displayName:
			"Paste this node's Production URL as the <b>Success URL</b> in the shop settings of your PayPalych merchant account. After a successful payment the customer's browser comes here; the workflow starts and the customer is sent on to the page below. " +
			REDIRECT_IS_NO_PROOF +
			TEST_VS_PRODUCTION,
		name: 'successNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { event: ['success'] } },
	},
	{
		displayName:
			"Paste this node's Production URL as the <b>Fail URL</b> in the shop settings of your PayPalych merchant account. After a failed payment the customer's browser comes here; the workflow starts and the customer is sent on to the page below. " +
			REDIRECT_IS_NO_PROOF +
			TEST_VS_PRODUCTION,
		name: 'failNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { event: ['fail'] } },
	},
	// Version 1 started the workflow for every payment status by default; version 2 only for the
	// paid ones. Each version keeps its own default, so existing workflows keep what they had.
	{ ...paymentStatuses, displayOptions: { show: { event: ['payment'], '@version': [1] } } },
	{
		displayName:
			"Paste this node's Production URL as the <b>Refund URL</b> in the shop settings of your PayPalych merchant account (or paste the Payment trigger's URL there and select Refund in its Also Accept option). " +
			'Each refund is confirmed with the PayPalych API (refund/status, or the refunds payment/status lists) and must belong to the bill and order it names. ' +
			MONEY_BACK_IS_NOT_A_PAYMENT +
			TEST_VS_PRODUCTION,
		name: 'refundNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { event: ['refund'] } },
	},
	{
		displayName:
			"Paste this node's Production URL as the <b>Chargeback URL</b> in the shop settings of your PayPalych merchant account (or paste the Payment trigger's URL there and select Chargeback in its Also Accept option). " +
			'Each chargeback is confirmed with the PayPalych API (the chargebacks payment/status lists) and must belong to the bill and order it names. ' +
			MONEY_BACK_IS_NOT_A_PAYMENT +
			TEST_VS_PRODUCTION,
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
			"Refunds and chargebacks this payment trigger takes too, when you paste its URL into the Refund URL and Chargeback URL fields as well: each item then says what it is in event (payment, refund, chargeback), so one Switch node tells them apart. A refund or chargeback that is not selected here is refused with a 503 (the service retries it) and n8n's log names the fix.",
		displayOptions: { show: { event: ['payment'] } },
	},
	{
		...paymentStatuses,
		default: PAID_STATUSES,
		description:
			'Which payment statuses start the workflow. By default only the paid ones (SUCCESS, OVERPAID), so a "payment → mark the order paid" workflow cannot mark a declined or short payment paid; add UNDERPAID, FAIL or Any Other Status to handle those too (then check paid in the workflow). Other verified postbacks are answered OK and start nothing. Nothing selected means every status.',
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
		description:
			'Which payout statuses start the workflow. Other verified postbacks are answered OK and start nothing. Nothing selected means every status.',
		displayOptions: { show: { event: ['payout'] } },
	},
	{
		displayName: 'Confirm With PayPalych API',
		name: 'confirmWithApi',
		type: 'boolean',
		default: true,
		description:
			"Whether to look the postback up with the PayPalych API (payment/status or payout/status, with the credential) before starting the workflow. The workflow starts only when the service's own record has the same transaction, status, amount and (for payments) order ID, and the output then carries that record (payment or payout) and confirmed: true. Turning this off trusts the postback's Status and TrsId, which the signature does not cover: anyone who saw a Success or Fail redirect of your shop can then make a workflow mark an order paid.",
		displayOptions: { show: { event: ['payment', 'payout', 'refund', 'chargeback'] } },
	},
	{
		displayName: 'Order Check',
		name: 'orderCheck',
		type: 'options',
		default: 'orderId',
		options: [
			{
				name: "InvId Must Be the Bill's Order ID",
				value: 'orderId',
				description:
					"The postback's InvId is compared with the order ID the service shows for the payment's bill. Where the service does not show it, the postback is refused: use the other choice then.",
			},
			{
				name: 'Bill ID Only',
				value: 'billId',
				description:
					"For deployments that do not show a bill's order ID: the payment and its bill are confirmed, InvId is not (orderConfirmed is false, and InvId and OutSum are moved under unverified). Find the order by billId (the service's), which you saved when you created the bill, and use amount (the service's), never InvId or OutSum.",
			},
		],
		description: 'How the trigger makes sure the payment belongs to the order the postback names',
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
			"Whether a signed call the service's record contradicts (HTTP 422: another status, amount or order, an unknown TrsId) starts an execution on a second output, Refused, with the reason. n8n shows no execution for a refused call otherwise: the reason is only in n8n's log. The Refused output never carries paid; every postback field there is under unverified. Forged or unsigned calls (401) never start anything.",
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
			"Page of your site the customer's browser is sent to (HTTP 303). Leave empty to show a plain page saying whether the payment succeeded.",
		displayOptions: { show: { event: ['success', 'fail'] } },
	},
];
