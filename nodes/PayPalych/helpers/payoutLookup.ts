/*
 * Looking up the payouts already made under an order ID: payout/status for the first one, then
 * the parts of a split payout among the payouts listed around its time.
 */

import type { IDataObject, IExecuteFunctions, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { ENDPOINTS, formatCents, toCents, widenedDates } from '../../shared';
import { apiRequest, errorKeyOf } from '../transport';
import { listAll } from './pagination';

/** The first payout under this order ID (payout/status answers one), or undefined when there is none. */
async function firstPayout(
	this: IExecuteFunctions,
	orderId: string,
	itemIndex: number,
): Promise<IDataObject | undefined> {
	try {
		return await apiRequest.call(this, ENDPOINTS.payoutStatus, {
			qs: { order_id: orderId },
			itemIndex,
		});
	} catch (error) {
		if (errorKeyOf(error) === 'api:error.payout_not_found') return undefined;
		throw new NodeApiError(this.getNode(), error as JsonObject, { itemIndex });
	}
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

function timeOf(value: unknown): number | undefined {
	const match = typeof value === 'string' ? DATE_TIME.exec(value.trim()) : null;
	if (!match) return undefined;
	const [, y, m, d, hh, mm, ss] = match.map(Number);
	return Date.UTC(y, m - 1, d, hh, mm, ss);
}

const ymd = (time: number) => new Date(time).toISOString().slice(0, 10);

/** Parts of one split request are created together: this close in time, to the same account. */
const SPLIT_WINDOW_MS = 5000;

/** Candidates of a split counted exhaustively (2^16 subsets at most). */
const MAX_SPLIT_CANDIDATES = 16;

/**
 * The other parts of a split payout among payouts made with it (same account, currency and time):
 * the one set of them whose amounts add up to what is missing. Several such sets (two identical
 * payouts made in the same second) cannot be told apart: 'ambiguous'. None: only the first part.
 */
function otherParts(candidates: IDataObject[], missingCents: number): IDataObject[] | 'ambiguous' {
	if (missingCents <= 0 || candidates.length === 0) return [];
	const amounts = candidates.map((payout) => toCents(payout.amount) ?? Number.NaN);
	if (candidates.length > MAX_SPLIT_CANDIDATES) {
		return amounts.reduce((a, b) => a + b, 0) === missingCents ? candidates : 'ambiguous';
	}
	let found: IDataObject[] | undefined;
	for (let mask = 1; mask < 1 << candidates.length; mask++) {
		let total = 0;
		for (let i = 0; i < candidates.length; i++) if (mask & (1 << i)) total += amounts[i];
		if (total !== missingCents) continue;
		if (found) return 'ambiguous';
		found = candidates.filter((_payout, i) => (mask & (1 << i)) !== 0);
	}
	return found ?? [];
}

/**
 * Every payout made under an order ID. payout/status answers one payout; the parts of a split
 * payout are found by listing the payouts from the day before to the day after the first one
 * (parts may straddle midnight), asked a day wider on each side (the service's `finish_date` may
 * be exclusive and its clock may not be UTC), and keeping those of the
 * same request: the same order_id where the service gives one (not a documented payout field),
 * otherwise the one set of payouts to the same account, in the same currency, made within a few
 * seconds, that makes up the amount. A failed listing, or parts that cannot be told apart from
 * another payout made at the same time, is an error: the parts are never silently dropped.
 */
export async function payoutsUnderOrderId(
	this: IExecuteFunctions,
	orderId: string,
	requestedCents: number,
	itemIndex: number,
): Promise<IDataObject[] | undefined> {
	const first = await firstPayout.call(this, orderId, itemIndex);
	if (first === undefined) return undefined;
	const firstCents = toCents(first.amount);
	if (firstCents === requestedCents) return [first];
	const created = timeOf(first.created_at);
	if (created === undefined || firstCents === undefined) return [first];
	const all = await listAll.call(
		this,
		ENDPOINTS.payoutSearch,
		widenedDates(ymd(created - 86_400_000), ymd(created + 86_400_000)),
		{ label: `The look-up of the payouts under Order ID ${orderId}` },
		itemIndex,
	);
	const others = all.filter((payout) => payout.id !== first.id);
	if (first.order_id !== undefined && others.every((payout) => payout.order_id !== undefined)) {
		return [first, ...others.filter((payout) => String(payout.order_id) === orderId)];
	}
	const candidates = others.filter((payout) => {
		const time = timeOf(payout.created_at);
		return (
			payout.account_identifier === first.account_identifier &&
			payout.currency === first.currency &&
			time !== undefined &&
			Math.abs(time - created) <= SPLIT_WINDOW_MS
		);
	});
	const parts = otherParts(candidates, requestedCents - firstCents);
	if (parts === 'ambiguous') {
		throw new NodeOperationError(
			this.getNode(),
			`Order ID ${orderId} already has a payout (${String(first.id)}, ${formatCents(firstCents)}), but its other parts cannot be told apart from other payouts made at the same time to ${String(first.account_identifier ?? 'the same account')}`,
			{
				itemIndex,
				description:
					'Nothing was paid. Check the payouts of that time in your merchant account; the service does not show which order ID each payout belongs to.',
			},
		);
	}
	return [first, ...parts];
}
