/*
 * Reading refunds for Refund › Create, Get and Search: the advice when the refund API is not
 * switched on for the merchant, and what a payment can still give back (its record with its
 * refunds and chargebacks, and the refunds the refund API lists).
 */

import type { IDataObject, IExecuteFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import {
	ENDPOINTS,
	ERROR_CATALOGUE,
	UNAUTHORIZED_KEY,
	canonicalStatus,
	chargedBackOf,
	toCents,
} from '../../shared';
import { apiRequest, errorKeyOf, httpCodeOf } from '../transport';
import { listAll } from './pagination';

/** What a merchant is told when the refund API answers as if it were not switched on. */
export const ENABLE_REFUNDS_ADVICE =
	"The refund API is switched on per merchant: ask the service's support to enable refunds for your merchant account. Nothing was refunded.";

/** Refunds whose money did not leave: not counted as refunded. */
const NOT_COUNTED_REFUND_STATUSES: readonly string[] = ['FAIL', 'DECLINED'];

/**
 * Runs a call of the refund API; a refusal that reads as "this merchant may not use it"
 * (`refunds_not_enabled`, the unauthorized sentence, a bare 403) keeps the service's answer and
 * says to ask support to enable refunds.
 */
export async function withRefundAdvice<T>(
	context: IExecuteFunctions,
	call: () => Promise<T>,
): Promise<T> {
	try {
		return await call();
	} catch (error) {
		const key = errorKeyOf(error);
		const notEnabled =
			key === 'api:error.refunds_not_enabled' ||
			key === UNAUTHORIZED_KEY ||
			(key === 'http_403' && httpCodeOf(error) === 403);
		if (notEnabled && error instanceof NodeApiError) {
			// The unauthorized sentence's own hint is about payouts: not what a refund call needs.
			const payoutHint = ERROR_CATALOGUE[UNAUTHORIZED_KEY].hint;
			if (key === UNAUTHORIZED_KEY && payoutHint && error.description) {
				error.description = error.description.replace(`${payoutHint}.`, '').trim();
			}
			if (!(error.description ?? '').includes('enable refunds')) {
				error.description = [error.description, ENABLE_REFUNDS_ADVICE].filter(Boolean).join(' ');
			}
		}
		throw error instanceof NodeApiError || error instanceof NodeOperationError
			? error
			: new NodeApiError(context.getNode(), error as JsonObject);
	}
}

/** A payment as the refund check reads it: what it took and what already went back. */
export interface RefundablePayment {
	paymentId: string;
	currency: string;
	amountCents: number;
	refundedCents: number;
	chargedBackCents: number;
	refundableCents: number;
	/** Every refund of the payment the service lists (refund/search). */
	refunds: IDataObject[];
}

/** Cents the refunds of a list took back (FAIL and DECLINED ones left out); undefined: no list. */
function sumOf(rows: unknown): number | undefined {
	if (!Array.isArray(rows)) return undefined;
	let cents = 0;
	for (const row of rows) {
		if (typeof row !== 'object' || row === null) continue;
		const record = row as IDataObject;
		if (NOT_COUNTED_REFUND_STATUSES.includes(canonicalStatus(record.status))) continue;
		cents += toCents(record.amount) ?? 0;
	}
	return cents;
}

/**
 * Reads the payment (`payment/status` with `refunds=1` and `chargeback=1`) and its refunds
 * (`refund/search` by payment, every page). What is already refunded is the largest figure the
 * service shows: `refunded_amount`, the refunds listed beside the payment, or the refunds the
 * refund API lists (FAIL and DECLINED ones left out); chargebacks listed are taken off too.
 */
export async function readRefundable(
	this: IExecuteFunctions,
	paymentId: string,
	itemIndex: number,
): Promise<RefundablePayment> {
	const payment = await apiRequest.call(this, ENDPOINTS.paymentStatus, {
		qs: { id: paymentId, refunds: '1', chargeback: '1' },
		itemIndex,
	});
	const refunds = await withRefundAdvice(
		this,
		async () =>
			await listAll.call(
				this,
				ENDPOINTS.refundSearch,
				{ payment_id: paymentId },
				{
					label: `The look-up of the refunds of payment ${paymentId}`,
					incomplete: 'Nothing was refunded: the Order ID cannot be checked without every refund.',
				},
				itemIndex,
			),
	);
	const amountCents = toCents(payment.amount);
	if (amountCents === undefined) {
		throw new NodeOperationError(
			this.getNode(),
			`Payment ${paymentId} has an amount the node cannot read (${JSON.stringify(payment.amount)})`,
			{
				itemIndex,
				description:
					'Nothing was refunded: what the payment can still give back cannot be worked out.',
			},
		);
	}
	const refundedCents = Math.max(
		toCents(payment.refunded_amount) ?? 0,
		sumOf(payment.refunds) ?? 0,
		sumOf(refunds) ?? 0,
	);
	// Listed under `chargeback` (the service's key) or `chargebacks`; one without an amount counts
	// as the whole payment (chargedBackOf).
	const chargedBackCents = chargedBackOf(payment, amountCents).cents;
	const currency =
		typeof payment.currency_in === 'string' && payment.currency_in.trim() !== ''
			? payment.currency_in.trim().toUpperCase()
			: typeof payment.currency === 'string' && payment.currency.trim() !== ''
				? payment.currency.trim().toUpperCase()
				: 'RUB';
	return {
		paymentId,
		currency,
		amountCents,
		refundedCents,
		chargedBackCents,
		refundableCents: Math.max(0, amountCents - refundedCents - chargedBackCents),
		refunds,
	};
}
