/*
 * Reading what a payment can still give back: the payment (`payment/status` with `refunds=1` and
 * `chargeback=1`) and its refunds (`refund/search` by payment, every page), in either record shape
 * the service is seen to use (a refund naming its payment by `payment_id`, or by `entity_type` and
 * `entity_id`; chargebacks under `chargeback` or `chargebacks`, with or without an amount). The
 * refund API is the service's current reference: unknown fields pass through, missing ones are not
 * required, and a figure the records do not give is never guessed.
 */

import type { IDataObject, IExecuteFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import {
	ENDPOINTS,
	ERROR_CATALOGUE,
	UNAUTHORIZED_KEY,
	canonicalStatus,
	formatCents,
	moneyBackListOf,
	paymentIdOfMoneyBack,
	textOf,
	toCents,
} from '../../shared';
import { apiRequest, errorKeyOf, httpCodeOf } from '../transport';
import { listAll } from './pagination';

/** What a merchant is told when the refund API answers as if it were not switched on. */
export const ENABLE_REFUNDS_ADVICE =
	"The refund API is switched on per merchant: ask the service's support to enable refunds for your merchant account. Nothing was refunded.";

/** Refunds (and chargebacks) whose money did not leave: not counted. */
export const NOT_COUNTED_REFUND_STATUSES: readonly string[] = ['FAIL', 'DECLINED'];

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
	/** Every refund of the payment the service shows (refund/search, then the payment's own list), once each. */
	refunds: IDataObject[];
}

const isCounted = (record: Readonly<Record<string, unknown>>) =>
	!NOT_COUNTED_REFUND_STATUSES.includes(canonicalStatus(record.status));

/**
 * Cents of the records (those whose money left: FAIL and DECLINED left out unless `all`), and the
 * records among them whose amount cannot be read: the sum is not known while there are any.
 */
function sumOf(
	rows: ReadonlyArray<Readonly<Record<string, unknown>>>,
	all = false,
): { cents: number; unreadable: Array<Readonly<Record<string, unknown>>> } {
	let cents = 0;
	const unreadable: Array<Readonly<Record<string, unknown>>> = [];
	for (const row of rows) {
		const amount = toCents(row.amount);
		if (amount !== undefined && (all || isCounted(row))) cents += amount;
		// A FAIL or DECLINED record took nothing: its amount does not matter.
		else if (amount === undefined && isCounted(row)) unreadable.push(row);
	}
	return { cents, unreadable };
}

/** The refunds of both lists, each once (by id); rows without an id are kept. */
function mergedRefunds(searched: IDataObject[], listed: IDataObject[]): IDataObject[] {
	const seen = new Set(searched.map((refund) => textOf(refund.id)).filter((id) => id !== ''));
	return [
		...searched,
		...listed.filter((refund) => {
			const id = textOf(refund.id);
			return id !== '' && !seen.has(id);
		}),
	];
}

function cannotWorkOut(
	this: IExecuteFunctions,
	itemIndex: number,
	paymentId: string,
	what: string,
	rows: Array<Readonly<Record<string, unknown>>>,
): NodeOperationError {
	const named = [
		...new Set(
			rows.map((row) => `${textOf(row.id) || '(no id)'} (${canonicalStatus(row.status) || '?'})`),
		),
	].join(', ');
	return new NodeOperationError(
		this.getNode(),
		`Payment ${paymentId} has ${what} whose amount the service does not show (${named}): what the payment can still give back cannot be worked out`,
		{
			itemIndex,
			description:
				'Nothing was refunded. The node never guesses an amount that takes money back from a payment: check the payment in your merchant account (Payment › Get with Include Refunds and Include Chargebacks shows what the service lists) and refund there if anything is left.',
		},
	);
}

/**
 * Reads the payment and its refunds. What is already refunded is the largest figure the service
 * shows: `refunded_amount`, the refunds listed beside the payment, or the refunds the refund API
 * lists (FAIL and DECLINED ones left out); the chargebacks listed are taken off too. A refund or
 * chargeback whose money may have left and whose amount is not shown (the service's chargeback
 * records carry none) is an error: the figure would be too high.
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
	const searched = await withRefundAdvice(
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
	const listed = (moneyBackListOf('refund', payment) ?? []) as IDataObject[];
	const refunds = mergedRefunds(searched, listed);
	const unreadable = sumOf([...searched, ...listed]).unreadable;
	if (unreadable.length > 0) {
		throw cannotWorkOut.call(this, itemIndex, paymentId, 'a refund', unreadable);
	}
	const charged = sumOf(moneyBackListOf('chargeback', payment) ?? [], true);
	if (charged.unreadable.length > 0) {
		throw cannotWorkOut.call(this, itemIndex, paymentId, 'a chargeback', charged.unreadable);
	}
	const refundedCents = Math.max(
		toCents(payment.refunded_amount) ?? 0,
		sumOf(listed).cents,
		sumOf(searched).cents,
	);
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
		chargedBackCents: charged.cents,
		refundableCents: Math.max(0, amountCents - refundedCents - charged.cents),
		refunds,
	};
}

/** "refund R1 (250.50 RUB of payment P, SUCCESS, created 2026-01-02 10:00:00)", "refunds R1 (…), R2 (…)". */
export function describeRefunds(refunds: IDataObject[], currency: string): string {
	const each = refunds.map((refund) => {
		const cents = toCents(refund.amount);
		const own = textOf(refund.currency).toUpperCase() || currency;
		const payment = paymentIdOfMoneyBack(refund) || '?';
		const created = textOf(refund.created_at);
		return `${textOf(refund.id) || '(no id)'} (${cents === undefined ? '?' : formatCents(cents)} ${own} of payment ${payment}, ${canonicalStatus(refund.status) || '?'}${created ? `, created ${created}` : ''})`;
	});
	return `${each.length === 1 ? 'refund' : 'refunds'} ${each.join(', ')}`;
}
