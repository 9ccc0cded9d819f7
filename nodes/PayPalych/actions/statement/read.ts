import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	API_PREFIX,
	ENDPOINTS,
	STATEMENT_PAYMENT_COUNTED,
	apiRootOf,
	chargebackMovements,
	listUrl,
	normalizeBaseUrl,
	pages,
	paymentMovement,
	payoutMovement,
	refundMovement,
	widenedDates,
	type Endpoint,
	type StatementDay,
	type StatementMovement,
} from '../../../shared';
import { PAGE_SIZE } from '../../helpers/pagination';
import type { PayPalychContext } from '../../transport';
import { CREDENTIAL_NAME, apiRequest } from '../../transport';

type Sink = (movement: StatementMovement) => void;

/**
 * Every row of a day's search, page by page, handed to `onRow` and never kept: the service is
 * asked for the day with a day more on each side (its `finish_date` may be exclusive, its days
 * another zone's) and `onRow` keeps the rows created on the day. A list that stops before its end
 * (the page cap, a next page outside the credential's address) is an error: a statement must never
 * look complete when it is not.
 */
async function eachRow(
	ctx: PayPalychContext,
	endpoint: Endpoint,
	day: StatementDay,
	label: string,
	itemIndex: number,
	onRow: (row: IDataObject) => Promise<void> | void,
): Promise<void> {
	const credentials = await ctx.getCredentials(CREDENTIAL_NAME);
	const base = normalizeBaseUrl(credentials.baseUrl);
	const qs = { ...widenedDates(day.day, day.day), per_page: PAGE_SIZE };
	for await (const page of pages<IDataObject>(
		async (url) => await apiRequest.call(ctx, endpoint, { url, itemIndex }),
		{ firstUrl: listUrl(base, endpoint.path, qs), apiRoot: apiRootOf(base) },
	)) {
		for (const row of page.rows) await onRow(row);
		if (page.end === 'page_cap' || page.end === 'refused_next') {
			const why =
				page.end === 'refused_next'
					? `the service named its next page outside the credential's Base URL (${base}${API_PREFIX}/), and the API token is never sent there`
					: `it has more than ${page.number} pages`;
			throw new NodeOperationError(
				ctx.getNode(),
				`Statement › Get could not read the whole ${label}: ${why}`,
				{ itemIndex, description: 'No statement was made: it would leave movements out.' },
			);
		}
	}
}

/**
 * The day's payments (payment/search), each with the chargebacks its record shows when it was
 * paid (payment/status?chargeback=1: the service has no search of chargebacks), the day's refunds
 * (refund/search) and payouts (payout/search), each movement handed to `sink` as it is read.
 * Rows and chargebacks are kept by their own `created_at` on the day.
 */
export async function readDay(
	ctx: PayPalychContext,
	day: StatementDay,
	itemIndex: number,
	sink: Sink,
): Promise<void> {
	await eachRow(ctx, ENDPOINTS.paymentSearch, day, 'list of payments', itemIndex, async (row) => {
		if (!day.isOnDay(row.created_at)) return;
		const movement = paymentMovement(row);
		sink(movement);
		if (!STATEMENT_PAYMENT_COUNTED.includes(movement.status) || movement.id === '') return;
		const record = await apiRequest.call(ctx, ENDPOINTS.paymentStatus, {
			qs: { id: movement.id, chargeback: '1' },
			itemIndex,
		});
		for (const chargeback of chargebackMovements({ ...row, ...record })) {
			if (day.isOnDay(chargeback.createdAt)) sink(chargeback);
		}
	});
	await eachRow(ctx, ENDPOINTS.refundSearch, day, 'list of refunds', itemIndex, (row) => {
		if (day.isOnDay(row.created_at)) sink(refundMovement(row));
	});
	await eachRow(ctx, ENDPOINTS.payoutSearch, day, 'list of payouts', itemIndex, (row) => {
		if (day.isOnDay(row.created_at)) sink(payoutMovement(row));
	});
}
