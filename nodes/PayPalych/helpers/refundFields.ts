/** The fields of Refund › Create: Payment ID, Amount, Order ID, the limit and the Options. */

import type { INodeProperties } from 'n8n-workflow';

import { legacyRefundLimitOptions, refundLimitFields } from './limits';

export const refundCreateFields: INodeProperties[] = [
	{
		displayName: 'Payment ID',
		name: 'paymentId',
		type: 'string',
		required: true,
		default: '',
		description:
			"The payment to refund, by its ID from the PayPalych Trigger's item, Bill › Get Payments or Payment › Search",
	},
	{
		displayName: 'Amount',
		name: 'amount',
		type: 'string',
		default: '',
		placeholder: 'e.g. 500.00 (empty: the whole payment)',
		description:
			"Amount to send back in the payment's currency; empty refunds all that is left of the payment",
	},
	{
		displayName: 'Order ID',
		name: 'orderId',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. refund-{{ $json.ticketId }}',
		description:
			'Your own ID of this refund, the same value for every retry, re-run and duplicate delivery, such as a return number',
		hint: 'The node never refunds one Order ID twice',
	},
	...refundLimitFields,
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
					'Whether to check everything and output what would be refunded, without refunding anything',
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
						description: 'Output the refund already made under this Order ID and refund nothing',
					},
					{
						name: 'Treat as Done',
						value: 'treatAsDone',
						description:
							'As Return It, and also take a refund of the same amount shown without an Order ID for this one',
					},
					{
						name: 'Fail',
						value: 'fail',
						description: 'Stop with an error naming the existing refund, and refund nothing',
					},
				],
				description: 'What to do when the payment already has this refund',
			},
			{
				displayName: 'Other Refund IDs',
				name: 'otherRefundIds',
				type: 'string',
				default: '',
				placeholder: 'e.g. R12345, R12346',
				description: 'Comma-separated IDs of earlier refunds of this payment that are not this one',
			},
			...legacyRefundLimitOptions,
		],
	},
];
