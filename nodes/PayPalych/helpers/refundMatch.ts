/*
 * Recognising a refund among a payment's refunds: the one under an Order ID, the ones the node
 * cannot tell from a new request (same payment and amount, no Order ID shown), the one a request
 * whose answer was lost made, and two made at the same moment.
 */

import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { canonicalStatus, formatCents, paymentIdOfMoneyBack, textOf, toCents } from '../../shared';
import { NOT_COUNTED_REFUND_STATUSES, describeRefunds, type RefundablePayment } from './refundable';

/** What one Refund › Create asks for. */
export interface RefundIntent {
	paymentId: string;
	orderId: string;
	/** Cents of a partial refund; undefined: the whole payment. */
	cents?: number;
	/** Refunds of the payment the workflow says are not this one (Other Refund IDs). */
	others: ReadonlySet<string>;
}

/** A refund's `created_at` this long before the request started may still be the request's own: clocks differ. */
const CLOCK_SLACK_MS = 10 * 60_000;

const SERVICE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})/;

/**
 * Whether a refund was certainly made before `startedAt`: its `created_at` read as UTC (the latest
 * instant it can be for a service writing UTC or Moscow time), with the clocks' slack. A
 * `created_at` the node cannot read says nothing.
 */
function madeBefore(refund: IDataObject, startedAt: number): boolean {
	const match = SERVICE_TIME.exec(textOf(refund.created_at));
	if (!match) return false;
	const [, y, mo, d, h, mi, s] = match.map(Number);
	return Date.UTC(y, mo - 1, d, h, mi, s) + CLOCK_SLACK_MS < startedAt;
}

const ofPayment = (refund: IDataObject, paymentId: string) => {
	const shown = paymentIdOfMoneyBack(refund);
	return shown === '' || shown === paymentId;
};

/** The refunds of the payment the service shows under this Order ID. */
export function underOrderId(payment: RefundablePayment, orderId: string): IDataObject[] {
	return payment.refunds.filter((refund) => textOf(refund.order_id) === orderId);
}

/**
 * The refunds made last (the latest `created_at`; all of them when one has none the node can
 * read): the only ones that can have taken what was left of a payment.
 */
function madeLast(refunds: IDataObject[]): IDataObject[] {
	const times = refunds.map((refund) => textOf(refund.created_at));
	if (times.some((time) => !SERVICE_TIME.test(time))) return refunds;
	const latest = times.reduce((a, b) => (b > a ? b : a), '');
	return refunds.filter((_refund, i) => times[i] === latest);
}

/**
 * Refunds the node cannot tell from this one: shown without an Order ID, of this payment, whose
 * money may have left, not among Other Refund IDs, and of the same amount. For a whole-payment
 * refund: when nothing is left to give back, the refunds made last (one of them took the rest).
 */
export function lookAlikes(payment: RefundablePayment, intent: RefundIntent): IDataObject[] {
	const counted = payment.refunds.filter(
		(refund) =>
			ofPayment(refund, intent.paymentId) &&
			!NOT_COUNTED_REFUND_STATUSES.includes(canonicalStatus(refund.status)),
	);
	const candidates =
		intent.cents === undefined
			? payment.refundableCents > 0
				? []
				: madeLast(counted)
			: counted.filter((refund) => toCents(refund.amount) === intent.cents);
	return candidates.filter(
		(refund) => textOf(refund.order_id) === '' && !intent.others.has(textOf(refund.id)),
	);
}

/**
 * Refunds of this intent that appeared since `before` was read: of this payment, not listed then,
 * under this Order ID or none shown, of the same amount (a whole-payment refund: any), and not made
 * before the request started.
 */
export function appeared(
	after: RefundablePayment,
	before: RefundablePayment,
	intent: RefundIntent,
	startedAt: number,
): IDataObject[] {
	const known = new Set(before.refunds.map((refund) => textOf(refund.id)));
	return after.refunds.filter((refund) => {
		const orderId = textOf(refund.order_id);
		return (
			!known.has(textOf(refund.id)) &&
			ofPayment(refund, intent.paymentId) &&
			(orderId === '' || orderId === intent.orderId) &&
			(intent.cents === undefined || toCents(refund.amount) === intent.cents) &&
			!madeBefore(refund, startedAt)
		);
	});
}

export const intentLabel = (intent: RefundIntent) =>
	`${intent.cents === undefined ? 'the whole' : formatCents(intent.cents)} of payment ${intent.paymentId} under Order ID ${intent.orderId}`;

/**
 * The refunds already under the Order ID are this refund when they are of the same payment and
 * the same amount: a partial refund's amount, or, for a whole-payment refund, nothing left to give
 * back. Anything else is an error naming both; nothing is refunded.
 */
export function sameRefundOrThrow(
	this: IExecuteFunctions,
	existing: IDataObject[],
	payment: RefundablePayment,
	intent: RefundIntent,
	itemIndex: number,
): void {
	const samePayment = existing.every((refund) => ofPayment(refund, intent.paymentId));
	const total = existing.reduce((sum, refund) => sum + (toCents(refund.amount) ?? Number.NaN), 0);
	const sameAmount =
		intent.cents === undefined ? payment.refundableCents === 0 : total === intent.cents;
	if (samePayment && sameAmount) return;
	throw new NodeOperationError(
		this.getNode(),
		`Order ID ${intent.orderId} already has a refund: ${describeRefunds(existing, payment.currency)}; this request is ${intentLabel(intent)}`,
		{
			itemIndex,
			description:
				'Nothing was refunded. An Order ID names one refund: give this refund its own Order ID, or correct the payment or amount if it is the same refund.',
		},
	);
}

/** Two or more refunds of this intent made at the same moment: said loudly, naming them all. */
export function madeTwice(
	this: IExecuteFunctions,
	itemIndex: number,
	refunds: IDataObject[],
	intent: RefundIntent,
	currency: string,
	ownId?: string,
): NodeOperationError {
	return new NodeOperationError(
		this.getNode(),
		`Payment ${intent.paymentId} may have been refunded twice: ${describeRefunds(refunds, currency)} appeared while this refund (${intentLabel(intent)}) was made`,
		{
			itemIndex,
			description: [
				ownId === undefined
					? 'The answer to this request was lost, and the node cannot tell which of them is its own.'
					: `This execution's refund is ${ownId}.`,
				"Another execution made a refund of the same payment and amount at the same moment (another n8n worker running this item, or a refund made outside this workflow). The service gives refunds no idempotency key, so n8n processes running side by side cannot stop each other. Check the payment's refunds (Refund › Search by Payment ID) and settle any double with the payer or the service's support; running this node again refunds nothing more for it.",
			].join(' '),
		},
	);
}

export function otherRefundIds(value: unknown): Set<string> {
	const text = typeof value === 'string' || typeof value === 'number' ? String(value) : '';
	return new Set(
		text
			.split(/[\s,;]+/)
			.map((id) => id.trim())
			.filter((id) => id !== ''),
	);
}
