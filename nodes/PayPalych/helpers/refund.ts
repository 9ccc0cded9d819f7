/*
 * Refunds: sending a payment's money back at most once per Order ID, never more than the payment
 * can still give back, with the payout's guardrails (Dry Run, Max Amount, the AI-tool rule).
 * The refund API is the service's current reference (service-facts.md): its answers' field sets
 * are unconfirmed, so unknown fields pass through and missing ones are not required.
 */

import type { IDataObject, IExecuteFunctions, INodeProperties, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { ENDPOINTS, formatCents, paymentIdOfMoneyBack, toCents, withPaymentId } from '../../shared';
import { apiRequest } from '../transport';
import { limitOf, runsAsTool } from './guardrails';
import { mayHaveMovedMoney, orderIdTaken, withOrderId } from './orderId';
import { checkOrderId } from './payout';
import { readRefundable, withRefundAdvice, type RefundablePayment } from './refundable';
import { checkAmount, checkRequired } from './validation';

export { ENABLE_REFUNDS_ADVICE, withRefundAdvice } from './refundable';

/** The Order ID, Amount and Options of Refund › Create. */
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
			"Your unique ID of this refund: the same value for every retry, re-run and duplicate delivery of this refund, and a new value for each refund you mean to make (a return or ticket number from your system). The node looks it up among the payment's refunds first and never refunds an Order ID twice.",
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
		],
	},
];

/** The refunds of the payment made under this Order ID. */
function underOrderId(payment: RefundablePayment, orderId: string): IDataObject[] {
	return payment.refunds.filter(
		(refund) =>
			refund.order_id !== undefined &&
			refund.order_id !== null &&
			String(refund.order_id) === orderId,
	);
}

/** What one Refund › Create asks for. */
export interface RefundIntent {
	paymentId: string;
	orderId: string;
	/** Cents of a partial refund; undefined: the whole payment. */
	cents?: number;
}

function describeRefunds(refunds: IDataObject[]): string {
	return refunds
		.map(
			(refund) =>
				`${String(refund.id)} (${formatCents(toCents(refund.amount) ?? 0)} of payment ${paymentIdOfMoneyBack(refund) || '?'}, ${String(refund.status ?? '?')})`,
		)
		.join(', ');
}

const intentLabel = (intent: RefundIntent) =>
	intent.cents === undefined
		? `the whole of payment ${intent.paymentId}`
		: `${formatCents(intent.cents)} of payment ${intent.paymentId}`;

/**
 * The refunds already made under the Order ID are this refund when they are of the same payment
 * and the same amount: a partial refund's amount, or, for a whole-payment refund, nothing left to
 * give back. Anything else is an error naming both; nothing is refunded.
 */
function sameRefundOrThrow(
	this: IExecuteFunctions,
	existing: IDataObject[],
	payment: RefundablePayment,
	intent: RefundIntent,
	itemIndex: number,
): void {
	// The refund's payment: `payment_id`, or `entity_id` as the service's refund records name it.
	const samePayment = existing.every((refund) => {
		const of = paymentIdOfMoneyBack(refund);
		return of === '' || of === intent.paymentId;
	});
	const total = existing.reduce((sum, refund) => sum + (toCents(refund.amount) ?? Number.NaN), 0);
	const sameAmount =
		intent.cents === undefined ? payment.refundableCents === 0 : total === intent.cents;
	if (samePayment && sameAmount) return;
	throw new NodeOperationError(
		this.getNode(),
		`Order ID ${intent.orderId} already has a refund: ${describeRefunds(existing)}; this request is ${intentLabel(intent)}`,
		{
			itemIndex,
			description:
				'Nothing was refunded. An Order ID names one refund: give this refund its own Order ID, or correct the payment or amount if it is the same refund.',
		},
	);
}

/** What an AI agent reads: the amount, the payment and the Order ID, in words. */
function toolSummary(refunds: IDataObject[], intent: RefundIntent, currency: string): string {
	const cents = refunds.reduce((sum, refund) => sum + (toCents(refund.amount) ?? 0), 0);
	const ids = refunds.map((refund) => `${String(refund.id)} (${String(refund.status ?? '?')})`);
	return refunds.some((refund) => refund.already_existed === true)
		? `Already refunded earlier, nothing refunded now: ${formatCents(cents)} ${currency} of payment ${intent.paymentId} under Order ID ${intent.orderId}, refund ${ids.join(', ')}`
		: `Refunded ${formatCents(cents)} ${currency} of payment ${intent.paymentId} under Order ID ${intent.orderId}: refund ${ids.join(', ')}`;
}

/**
 * Refund › Create, at most once per Order ID:
 * 1. inputs, and (as an AI tool) an explicit Order ID; a partial refund above Max Amount is
 *    refused before any request;
 * 2. the payment and its refunds are read: a refund under the Order ID that is this refund is
 *    returned (already_existed: true), another one is an error;
 * 3. more than the payment can still give back, or (a whole-payment refund) above Max Amount, is
 *    refused; Dry Run outputs what would be refunded and stops;
 * 4. the refund is created with the Order ID. An Order ID taken meanwhile, no answer or a 5xx
 *    (it may have refunded before failing to answer): the refunds are read again and a refund
 *    found under the Order ID is returned; with none found the error stands, and running again
 *    is safe.
 */
export async function createRefundOnce(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const node = this.getNode();
	const asTool = runsAsTool.call(this);
	const paymentId = checkRequired(
		node,
		this.getNodeParameter('paymentId', itemIndex, ''),
		itemIndex,
		'Payment ID',
	);
	const rawAmount = this.getNodeParameter('amount', itemIndex, '') as unknown;
	const whole =
		rawAmount === undefined ||
		rawAmount === null ||
		(typeof rawAmount === 'string' && rawAmount.trim() === '');
	const amount = whole ? undefined : checkAmount(node, rawAmount, itemIndex);
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const maxCents = limitOf.call(this, options.maxAmount, 'Max Amount', itemIndex);
	const dryRun = options.dryRun === true;
	const cents = amount === undefined ? undefined : toCents(amount);
	const rawOrderId = this.getNodeParameter('orderId', itemIndex, '') as unknown;
	if (
		asTool &&
		!(
			(typeof rawOrderId === 'string' && rawOrderId.trim() !== '') ||
			typeof rawOrderId === 'number'
		)
	) {
		throw new NodeOperationError(
			node,
			`Refused: no refund of ${amount ?? 'the whole payment'} of payment ${paymentId} without an explicit Order ID`,
			{
				itemIndex,
				description:
					'Nothing was refunded. A refund requested by an AI agent needs the Order ID of the request it answers (a return or ticket number the user gave); ask for it, never invent one.',
			},
		);
	}
	const orderId = checkOrderId.call(this, itemIndex);
	const intent: RefundIntent = { paymentId, orderId, cents };
	const overMax = (refundCents: number) => {
		if (maxCents === undefined || refundCents <= maxCents) return;
		throw new NodeOperationError(
			node,
			`Refused: the refund of ${formatCents(refundCents)} of payment ${paymentId} is above Max Amount ${formatCents(maxCents)}`,
			{
				itemIndex,
				description:
					'Nothing was sent to PayPalych. Check the amount, or raise Max Amount in the Options if this refund is meant.',
			},
		);
	};
	if (cents !== undefined) overMax(cents);

	const before = await readRefundable.call(this, paymentId, itemIndex);
	const existing = underOrderId(before, orderId);
	if (existing.length > 0) sameRefundOrThrow.call(this, existing, before, intent, itemIndex);
	const refundCents = cents ?? before.refundableCents;
	if (existing.length === 0) {
		if (before.refundableCents <= 0 || refundCents > before.refundableCents) {
			throw new NodeOperationError(
				node,
				`Refused: the refund of ${cents === undefined ? 'the whole payment' : formatCents(refundCents)} is more than payment ${paymentId} can still give back (${formatCents(before.refundableCents)} ${before.currency}: ${formatCents(before.amountCents)} paid, ${formatCents(before.refundedCents)} refunded${before.chargedBackCents > 0 ? `, ${formatCents(before.chargedBackCents)} charged back` : ''})`,
				{
					itemIndex,
					description:
						'Nothing was sent to PayPalych. Refund at most what the payment can still give back (Payment › Get with Include Refunds shows refunded_amount).',
				},
			);
		}
		overMax(refundCents);
	}

	if (dryRun) {
		return [
			{
				dry_run: true,
				would_refund: existing.length === 0,
				payment_id: paymentId,
				full: cents === undefined,
				amount: formatCents(existing.length === 0 ? refundCents : 0),
				currency: before.currency,
				payment_amount: formatCents(before.amountCents),
				refunded_amount: formatCents(before.refundedCents),
				refundable_amount: formatCents(before.refundableCents),
				order_id: orderId,
				order_id_exists: existing.length > 0,
				...(existing.length > 0
					? { existing_refund_ids: existing.map((refund) => String(refund.id)) }
					: {}),
				...(maxCents !== undefined ? { max_amount: formatCents(maxCents) } : {}),
				summary:
					existing.length > 0
						? `Dry run: Order ID ${orderId} already has a refund (${existing.map((r) => String(r.id)).join(', ')}); nothing would be refunded`
						: `Dry run: would refund ${formatCents(refundCents)} ${before.currency} of payment ${paymentId}${cents === undefined ? ' (the whole payment)' : ''} under Order ID ${orderId}; nothing was sent`,
			},
		];
	}

	// Every refund output names its payment as `payment_id`, whatever spelling the service used.
	const finish = (made: IDataObject[]) => {
		const refunds = made.map((refund) => withPaymentId(refund));
		return asTool
			? refunds.map((refund) => ({
					...refund,
					summary: toolSummary(refunds, intent, before.currency),
				}))
			: refunds;
	};
	if (existing.length > 0) return finish(withOrderId(existing, orderId, true));

	const endpoint = cents === undefined ? ENDPOINTS.refundFullCreate : ENDPOINTS.refundPartialCreate;
	let answer: IDataObject;
	try {
		answer = await withRefundAdvice(
			this,
			async () =>
				await apiRequest.call(this, endpoint, {
					body: { payment_id: paymentId, amount, order_id: orderId },
					itemIndex,
				}),
		);
	} catch (error) {
		if (orderIdTaken(error) || mayHaveMovedMoney(error)) {
			const after = await readRefundable.call(this, paymentId, itemIndex).catch(() => undefined);
			const found = after ? underOrderId(after, orderId) : [];
			if (after && found.length > 0) {
				sameRefundOrThrow.call(this, found, after, intent, itemIndex);
				// Taken meanwhile: another run's refund. No answer: this request's own refund.
				return finish(withOrderId(found, orderId, orderIdTaken(error)));
			}
			if (after && orderIdTaken(error)) {
				throw new NodeOperationError(
					node,
					`Order ID ${orderId} is already used by a refund of another payment (not of payment ${paymentId})`,
					{
						itemIndex,
						description:
							'Nothing was refunded. An Order ID names one refund of your merchant account: give this refund its own Order ID.',
					},
				);
			}
		}
		if (error instanceof NodeApiError && mayHaveMovedMoney(error)) {
			error.description = [
				error.description,
				`The refund may have been made before the service failed to answer: running this node again with Order ID ${orderId} is safe, it never refunds an Order ID twice.`,
			]
				.filter(Boolean)
				.join(' ');
		}
		throw error instanceof NodeApiError
			? error
			: new NodeApiError(node, error as JsonObject, { itemIndex });
	}
	const refund =
		typeof answer.data === 'object' && answer.data !== null && !Array.isArray(answer.data)
			? (answer.data as IDataObject)
			: answer;
	if (refund.id === undefined || refund.id === null || refund.id === '') {
		throw new NodeOperationError(
			node,
			`The service accepted refund ${orderId} but answered without the refund's id`,
			{
				itemIndex,
				description: `The money may have moved. Look the payment's refunds up (Refund › Search by Payment ID ${paymentId}) before refunding again; running this node again with the same Order ID is safe.`,
			},
		);
	}
	return finish(withOrderId([refund], orderId, false));
}
