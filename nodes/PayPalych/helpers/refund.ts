/*
 * Refund › Create: a payment's money sent back at most once, never more than the payment can
 * still give back, with the payout's guardrails (Dry Run, Max Amount, the AI-tool rule). The steps
 * are createOnce.ts's; this is the refund's part of them.
 *
 * The service takes `order_id` on a refund but is not seen to show it on any record, nor to refuse
 * a second refund under it, nor to look refunds up by it; and it gives refunds no idempotency key.
 * So "this refund" is recognised from the payment's refunds: under the Order ID where the service
 * shows one; otherwise a refund of the same payment and amount is one the node cannot tell from
 * this one (an error unless On Existing Refund says Treat as Done); after a lost answer, the refund
 * of this payment and amount that was not there before the request and not made before it started.
 */

import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { ENDPOINTS, formatCents, textOf, toCents, withPaymentId } from '../../shared';
import { apiRequest, CREDENTIAL_NAME } from '../transport';
import {
	REFUND_KIND,
	createOnce,
	onExistingOf,
	requireToolOrderId,
	type Found,
} from './createOnce';
import { limitOf } from './guardrails';
import { limitInputs } from './limits';
import { checkOrderId } from './payout';
import {
	describeRefunds,
	readRefundable,
	withRefundAdvice,
	type RefundablePayment,
} from './refundable';
import {
	appeared,
	intentLabel,
	lookAlikes,
	madeTwice,
	otherRefundIds,
	sameRefundOrThrow,
	underOrderId,
	type RefundIntent,
} from './refundMatch';
import { checkAmount, checkRequired } from './validation';

/** What Dry Run outputs: what would be refunded, and what stands in the way. */
function dryRunOutput(
	before: RefundablePayment,
	intent: RefundIntent,
	found: Found | undefined,
	maxCents: number | undefined,
): IDataObject {
	const refundCents = intent.cents ?? before.refundableCents;
	const ids = found?.records.map((refund) => textOf(refund.id));
	return {
		dry_run: true,
		would_refund: found === undefined,
		payment_id: intent.paymentId,
		full: intent.cents === undefined,
		amount: formatCents(found === undefined ? refundCents : 0),
		currency: before.currency,
		payment_amount: formatCents(before.amountCents),
		refunded_amount: formatCents(before.refundedCents),
		refundable_amount: formatCents(before.refundableCents),
		order_id: intent.orderId,
		order_id_exists: found?.identified === true,
		...(ids ? { existing_refund_ids: ids } : {}),
		...(maxCents !== undefined ? { max_amount: formatCents(maxCents) } : {}),
		summary: found
			? `Dry run: ${found.identified ? `Order ID ${intent.orderId} already has a refund` : 'a refund of this payment and amount is taken to be this one'} (${ids?.join(', ')}); nothing would be refunded`
			: `Dry run: would refund ${formatCents(refundCents)} ${before.currency} of payment ${intent.paymentId}${intent.cents === undefined ? ' (the whole payment)' : ''} under Order ID ${intent.orderId}; nothing was sent`,
	};
}

/**
 * Refund › Create (createOnce.ts runs the steps, one at a time per credential and payment in this
 * n8n process):
 * 1. inputs, and (as an AI tool) an explicit Order ID; a partial refund above Max Amount is
 *    refused before any request;
 * 2. the payment and its refunds are read: a refund under the Order ID that is this refund is
 *    returned (already_existed: true), another one is an error; a refund of the same payment and
 *    amount shown without an Order ID is an error naming it (On Existing Refund = Treat as Done:
 *    returned);
 * 3. more than the payment can still give back, or (a whole-payment refund) above Max Amount, is
 *    refused; Dry Run outputs what would be refunded and stops;
 * 4. the refund is created with the Order ID. Taken meanwhile, no answer or a 5xx: the refunds
 *    are read again and the refund of this request recognised; with none found the error stands.
 * 5. After creating, the refunds are read again: another refund of this intent made at the same
 *    moment (another process) is an error naming both.
 */
export async function createRefundOnce(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const node = this.getNode();
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
	// The Max Amount field and the one a saved workflow keeps in its Options: the lower holds.
	const maxes = limitInputs
		.call(this, itemIndex, options)
		.maxAmount.map((limit) => limitOf.call(this, limit.value, 'Max Amount', itemIndex) as number);
	const maxCents = maxes.length > 0 ? Math.min(...maxes) : undefined;
	const what = `${amount ?? 'the whole payment'} of payment ${paymentId}`;
	requireToolOrderId.call(this, itemIndex, REFUND_KIND, what);
	const orderId = checkOrderId.call(this, itemIndex);
	const intent: RefundIntent = {
		paymentId,
		orderId,
		cents: amount === undefined ? undefined : toCents(amount),
		others: otherRefundIds(options.otherRefundIds),
	};
	const overMax = (refundCents: number) => {
		if (maxCents === undefined || refundCents <= maxCents) return;
		throw new NodeOperationError(
			node,
			`Refused: the refund of ${formatCents(refundCents)} of payment ${paymentId} is above Max Amount ${formatCents(maxCents)}`,
			{
				itemIndex,
				description:
					'Nothing was sent to PayPalych. Check the amount, or raise Max Amount if this refund is meant.',
			},
		);
	};
	if (intent.cents !== undefined) overMax(intent.cents);

	let before: RefundablePayment | undefined;
	let startedAt = Date.now();
	const read = async () => await readRefundable.call(this, paymentId, itemIndex);
	const refundable = () => {
		const payment = before as RefundablePayment;
		const refundCents = intent.cents ?? payment.refundableCents;
		if (payment.refundableCents <= 0 || refundCents > payment.refundableCents) {
			throw new NodeOperationError(
				node,
				`Refused: the refund of ${intent.cents === undefined ? 'the whole payment' : formatCents(refundCents)} is more than payment ${paymentId} can still give back (${formatCents(payment.refundableCents)} ${payment.currency}: ${formatCents(payment.amountCents)} paid, ${formatCents(payment.refundedCents)} refunded${payment.chargedBackCents > 0 ? `, ${formatCents(payment.chargedBackCents)} charged back` : ''})`,
				{
					itemIndex,
					description:
						'Nothing was sent to PayPalych. Refund at most what the payment can still give back (Payment › Get with Include Refunds shows refunded_amount).',
				},
			);
		}
		overMax(refundCents);
	};
	const currency = () => before?.currency ?? 'RUB';
	const credential = node.credentials?.[CREDENTIAL_NAME];
	const lockKey = JSON.stringify([credential?.id ?? credential?.name ?? '', paymentId]);

	// Every refund output names its payment as `payment_id`, whatever spelling the service used.
	const made = await createOnce.call(
		this,
		itemIndex,
		{
			kind: REFUND_KIND,
			orderId,
			onExisting: onExistingOf(options.onExisting),
			find: async () => {
				before = await read();
				const existing = underOrderId(before, orderId);
				if (existing.length > 0) {
					sameRefundOrThrow.call(this, existing, before, intent, itemIndex);
					return { records: existing, identified: true };
				}
				const alike = lookAlikes(before, intent);
				return alike.length > 0 ? { records: alike, identified: false } : undefined;
			},
			describe: (records) => describeRefunds(records, currency()),
			request:
				intent.cents === undefined
					? `${intentLabel(intent)}; the payment has nothing left to give back`
					: intentLabel(intent),
			cannotTellAdvice: `If it is this refund (an earlier run of Order ID ${orderId} whose answer was lost), set Options › On Existing Refund to Treat as Done: the node outputs it and refunds nothing. If it is another refund, add its ID to Options › Other Refund IDs and run again: this refund is then made too, never above what the payment can still give back.`,
			dryRun:
				options.dryRun === true
					? async (found) => {
							if (!found) refundable();
							return dryRunOutput(before as RefundablePayment, intent, found, maxCents);
						}
					: undefined,
			beforeCreate: async () => refundable(),
			create: async () => {
				startedAt = Date.now();
				const endpoint =
					amount === undefined ? ENDPOINTS.refundFullCreate : ENDPOINTS.refundPartialCreate;
				return await withRefundAdvice(
					this,
					async () =>
						await apiRequest.call(this, endpoint, {
							body: { payment_id: paymentId, amount, order_id: orderId },
							itemIndex,
						}),
				);
			},
			recordsOf: (answer) => {
				const refund =
					typeof answer.data === 'object' && answer.data !== null && !Array.isArray(answer.data)
						? (answer.data as IDataObject)
						: answer;
				return textOf(refund.id) === '' ? undefined : [refund];
			},
			noRecords: {
				missing: "the refund's id",
				lookUp: `Look the payment's refunds up (Refund › Search by Payment ID ${paymentId})`,
			},
			recover: async (taken) => {
				const after = await read().catch(() => undefined);
				if (!after || !before) return undefined;
				const found = underOrderId(after, orderId);
				if (found.length > 0) {
					sameRefundOrThrow.call(this, found, after, intent, itemIndex);
					return found;
				}
				if (taken) {
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
				const own = appeared(after, before, intent, startedAt);
				if (own.length > 1) throw madeTwice.call(this, itemIndex, own, intent, currency());
				return own.length === 1 ? own : undefined;
			},
			rerunNote:
				'Where the service shows no Order ID on its refunds, a re-run that finds a refund of this payment and amount stops with an error naming it instead of refunding again.',
			afterCreate: async ([made]) => {
				const after = await read().catch(() => undefined);
				if (!after || !before) return;
				const ownId = textOf(made.id);
				const others = appeared(after, before, intent, startedAt).filter(
					(refund) => textOf(refund.id) !== ownId,
				);
				if (others.length === 0) return;
				throw madeTwice.call(this, itemIndex, [made, ...others], intent, currency(), ownId);
			},
			summary: () => ({ currency: currency(), where: `of payment ${paymentId}` }),
		},
		lockKey,
	);
	return made.map((refund) => withPaymentId(refund));
}
