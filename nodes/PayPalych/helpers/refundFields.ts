/** The fields of Refund › Create: Payment ID, Amount, Order ID and the Options. */

import type { INodeProperties } from 'n8n-workflow';

export const refundCreateFields: INodeProperties[] = [
	{
		displayName: 'Payment ID',
		name: 'paymentId',
		type: 'string',
		required: true,
		default: '',
		description:
			'ID of the payment to refund (the TrsId of the payment postback, or an ID from Bill > Get Payments or Payment > Search)',
	},
	{
		displayName: 'Amount',
		name: 'amount',
		type: 'string',
		default: '',
		placeholder: 'e.g. 500.00 (empty: the whole payment)',
		description:
			"Amount to send back, in the payment's currency, with at most 2 decimals. Empty: everything the payment can still give back (a full refund). Never more than the payment's amount minus what is already refunded: the node reads that first and refuses before sending anything.",
	},
	{
		displayName: 'Order ID',
		name: 'orderId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. refund-{{ $json.ticketId }}',
		description:
			"Your unique ID of this refund: the same value for every retry, re-run and duplicate delivery of this refund, and a new value for each refund you mean to make (a return or ticket number from your system). The node reads the payment's refunds first and never refunds an Order ID twice; where the service shows no Order ID on its refunds, a refund of the same payment and amount stops it with an error naming that refund (see On Existing Refund).",
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Dry Run',
				name: 'dryRun',
				type: 'boolean',
				default: false,
				description:
					'Whether to check everything (inputs, Max Amount, the Order ID, what the payment can still give back) and output what would be refunded (dry_run: true, would_refund, amount, refundable_amount, order_id_exists) without sending a refund request. Nothing is refunded.',
			},
			{
				displayName: 'Max Amount',
				name: 'maxAmount',
				type: 'string',
				default: '',
				placeholder: 'e.g. 5000.00',
				description:
					"Refuse any refund above this amount (in the payment's currency, at most 2 decimals; empty: no limit) before anything is sent. A full refund is checked against what the payment can still give back.",
			},
			{
				displayName: 'On Existing Refund',
				name: 'onExisting',
				type: 'options',
				default: 'return',
				options: [
					{
						name: 'Return It',
						value: 'return',
						description:
							'Output the refund the service shows under this Order ID, marked already_existed: true, and refund nothing. A refund of the same payment and amount shown without an Order ID stops with an error naming it.',
					},
					{
						name: 'Treat as Done',
						value: 'treatAsDone',
						description:
							'As Return It, and a refund of the same payment and amount that the service shows without an Order ID is taken to be this refund: it is output, marked already_existed: true, and nothing is refunded',
					},
					{
						name: 'Fail',
						value: 'fail',
						description: 'Stop with an error naming the existing refund, and refund nothing',
					},
				],
				description:
					'What to do when the payment already has this refund. One under this Order ID with another amount is always an error.',
			},
			{
				displayName: 'Other Refund IDs',
				name: 'otherRefundIds',
				type: 'string',
				default: '',
				placeholder: 'e.g. R12345, R12346',
				description:
					'IDs of refunds of this payment that are not this refund (comma-separated), such as a refund of the same amount your system made earlier under another Order ID. A refund listed here never stops this one; any other refund of the same payment and amount still does.',
			},
		],
	},
];
