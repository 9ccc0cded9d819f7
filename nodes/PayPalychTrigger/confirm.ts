import { sleep, type IDataObject, type IWebhookFunctions } from 'n8n-workflow';

import {
	ENDPOINTS,
	apiRootOf,
	chooseBillPayment,
	confirmPayment,
	confirmPayout,
	isTransientStatus,
	billOfUnnamedOrder,
	listUrl,
	normalizeBaseUrl,
	orderIdOf,
	pages,
	type Confirmation,
	type Endpoint,
	type PostbackFields,
} from '../shared';
import { recordOf } from '../PayPalych/helpers/normalize';
import { apiRequestWithCredential, errorKeyOf, httpCodeOf } from '../PayPalych/transport';
import { credentialOf } from './credential';

/**
 * How long the whole confirmation may take, retry included. The trigger answers the service (or
 * the relay, whose delivery timeout is 10 s by default) only after it: well under both, a slow
 * service gets a clear "retry later" (503) rather than a sender that gives up waiting.
 */
export const CONFIRM_BUDGET_MS = 4000;

/** How long one look-up may take; a look-up that fails in time may be tried once more. */
export const CONFIRM_TIMEOUT_MS = 1500;

/** A retry needs at least this much of the budget left to be worth sending. */
const MIN_RETRY_MS = 250;

export type ConfirmResult =
	| {
			ok: true;
			record: IDataObject;
			orderConfirmed?: boolean;
			/** The bill's order ID as the service shows it (null: none; undefined: not shown). */
			orderId?: string | null;
			/** The service's amount the postback's OutSum matched (payments). */
			amount?: string;
			/** Set when TrsId named a bill: its id (the record is one of its payments). */
			viaBill?: string;
			/** A refund's or chargeback's payment, as the service shows it. */
			payment?: IDataObject;
	  }
	/** TrsId names a bill whose payments that confirm the postback were all delivered already. */
	| { ok: false; retry: false; delivered: true; reason: string }
	| Extract<Confirmation, { ok: false; retry: false }>
	/** `unknown`: the service answered that it does not know the payment, payout or bill. */
	| { ok: false; retry: true; reason: string; unknown?: boolean };

/** A confirmation that failed in a way worth retrying (`unknown`: the service does not know it). */
export type RetryLater = Extract<ConfirmResult, { ok: false; retry: true }>;

/** The service's answers that it does not know the record asked for. */
const NOT_FOUND_KEYS = [
	'api:error.payment_not_found',
	'api:error.payout_not_found',
	'api:error.bill_not_found',
	'api:error.refund_not_found',
];

/**
 * Every failure to read the service asks the sender to retry later: the record may not exist yet,
 * the service may be down, and nothing is lost by trying again. Only a record that contradicts the
 * postback is a refusal.
 */
export function unreachable(what: string, error: unknown): RetryLater {
	const key = errorKeyOf(error) ?? 'network_error';
	return {
		ok: false,
		retry: true,
		reason: `${what} could not be read from the service (${key})`,
		unknown: NOT_FOUND_KEYS.includes(key),
	};
}

/**
 * Failures worth one more try: nothing answered (a timeout, a dropped connection) or the service
 * failed (5xx, 429). The service's own answers (a record it does not know, a refused token) are
 * final for this call.
 */
export function transient(error: unknown): boolean {
	return isTransientStatus(httpCodeOf(error));
}

/** The budget ran out while a call was still being answered (a trickled or endless answer). */
class BudgetSpent extends Error {
	constructor() {
		super('the confirmation budget was spent before the service answered');
	}
}

/**
 * `call`, or a BudgetSpent at `deadline`: the HTTP client's timeout is an idle one, and an answer
 * trickled a byte at a time never idles. What is still being read is left to that client.
 */
async function within<T>(call: Promise<T>, deadline: number): Promise<T> {
	const spent = sleep(Math.max(0, deadline - Date.now())).then(() => {
		throw new BudgetSpent();
	});
	spent.catch(() => {});
	return await Promise.race([call, spent]);
}

/**
 * One look-up within the confirmation's budget: the per-call timeout, cut to what the budget has
 * left, the whole answer by the deadline (not only an idle limit), and at most one retry of a
 * transient failure.
 */
export async function get(
	context: IWebhookFunctions,
	endpoint: Endpoint,
	qs: Record<string, string>,
	deadline: number,
	url?: string,
): Promise<{ record: IDataObject } | { error: unknown }> {
	let failure: unknown;
	for (let attempt = 1; attempt <= 2; attempt++) {
		const left = deadline - Date.now();
		if (attempt === 2 && (!transient(failure) || left < MIN_RETRY_MS)) break;
		const timeoutMs = Math.max(1, Math.min(CONFIRM_TIMEOUT_MS, left));
		try {
			const credential = await credentialOf(context);
			const options = { qs, timeoutMs, url };
			const call = apiRequestWithCredential.call(context, credential, endpoint, options);
			call.catch(() => {});
			return { record: await within(call, deadline) };
		} catch (error) {
			failure = error;
		}
	}
	return { error: failure };
}

/**
 * Looks the postback's TrsId up with the service and compares (see `confirmPayment` and
 * `confirmPayout` in the contract). A payment's order ID comes from the payment when the service
 * gives it there, otherwise from its bill (`bill/status`), which is asked only when the order ID
 * is required: under Bill ID Only the payment's answer suffices. Every look-up shares one budget
 * (CONFIRM_BUDGET_MS).
 */
/** Most pages of `bill/payments` read for one confirmation (within its time budget anyway). */
export const BILL_PAYMENTS_MAX_PAGES = 50;

/** Rows asked for per page of `bill/payments`. */
const BILL_PAYMENTS_PER_PAGE = 100;

/**
 * Most payments of one bill read for one confirmation (a service that answers them all at once,
 * or more rows a page than asked, stops here as at the page cap): retry later.
 */
export const BILL_PAYMENTS_MAX_ROWS = BILL_PAYMENTS_MAX_PAGES * BILL_PAYMENTS_PER_PAGE;

/** Most characters of `bill/payments` rows read for one confirmation (a payment is ~1 KiB). */
export const BILL_PAYMENTS_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Every payment of the bill, page by page within the caps (pages, rows, bytes), or why they
 * could not all be read (a retry).
 */
async function billPayments(
	context: IWebhookFunctions,
	trsId: string,
	deadline: number,
): Promise<{ rows: IDataObject[] } | { retry: string }> {
	const base = normalizeBaseUrl((await credentialOf(context)).baseUrl);
	const rows: IDataObject[] = [];
	let bytes = 0;
	const fetchPage = async (url: string) => {
		const page = await get(context, ENDPOINTS.billPayments, {}, deadline, url);
		if ('error' in page) throw page.error;
		return page.record;
	};
	const read = pages<IDataObject>(fetchPage, {
		firstUrl: listUrl(base, ENDPOINTS.billPayments.path, {
			id: trsId,
			per_page: BILL_PAYMENTS_PER_PAGE,
		}),
		apiRoot: apiRootOf(base),
		maxPages: BILL_PAYMENTS_MAX_PAGES,
	});
	for await (const page of read) {
		rows.push(...page.rows);
		bytes += page.bytes;
		if (rows.length > BILL_PAYMENTS_MAX_ROWS || bytes > BILL_PAYMENTS_MAX_BYTES) {
			return {
				retry: `more than ${BILL_PAYMENTS_MAX_ROWS} payments or ${BILL_PAYMENTS_MAX_BYTES} bytes of them after ${page.number} pages`,
			};
		}
		if (page.end === 'page_cap' || page.end === 'refused_next')
			return { retry: `${page.end} after ${page.number} pages` };
	}
	return { rows };
}

/**
 * When `payment/status` does not know the TrsId: whether it names a bill (`bill/status`), and then
 * every page of its payments (`bill/payments`), one of which must confirm the postback and not be
 * delivered yet (chooseBillPayment in the contract).
 */
async function confirmByBill(
	context: IWebhookFunctions,
	fields: PostbackFields,
	trsId: string,
	requireOrderId: boolean,
	isDelivered: (paymentId: string, status: string) => boolean,
	deadline: number,
	notFound: unknown,
): Promise<ConfirmResult> {
	const bill = await get(context, ENDPOINTS.billStatus, { id: trsId }, deadline);
	if ('error' in bill) {
		// Neither a payment nor a bill of this id (or the bill could not be read): as the payment.
		return errorKeyOf(bill.error) === 'api:error.bill_not_found'
			? unreachable(`Payment or bill ${trsId}`, notFound)
			: unreachable(`Bill ${trsId}`, bill.error);
	}
	let list;
	try {
		list = await billPayments(context, trsId, deadline);
	} catch (error) {
		return unreachable(`The payments of bill ${trsId}`, error);
	}
	if ('retry' in list) {
		return {
			ok: false,
			retry: true,
			reason: `the payments of bill ${trsId} could not be read to the end (${list.retry})`,
		};
	}
	const choice = chooseBillPayment(fields, bill.record, list.rows, isDelivered, requireOrderId);
	if (!choice.ok) return choice;
	return {
		ok: true,
		record: recordOf(choice.payment as IDataObject),
		orderConfirmed: choice.orderConfirmed,
		orderId: choice.orderId,
		amount: choice.amount,
		viaBill: trsId,
	};
}

/**
 * The order ID a payment belongs to: the payment's own when the service shows it there, otherwise,
 * when the order check needs it, its bill's (`bill/status`, within the same budget). Under Bill ID
 * Only the payment's answer suffices. Payments, refunds and chargebacks all confirm through it.
 */
export async function orderIdOfPayment(
	context: IWebhookFunctions,
	payment: IDataObject,
	requireOrderId: boolean,
	deadline: number,
): Promise<{ orderId: string | null | undefined } | { failure: RetryLater }> {
	const billId = billOfUnnamedOrder(payment) ?? '';
	if (billId === '' || !requireOrderId) return { orderId: orderIdOf(payment) };
	const bill = await get(context, ENDPOINTS.billStatus, { id: billId }, deadline);
	if ('error' in bill) return { failure: unreachable(`Bill ${billId}`, bill.error) };
	return { orderId: orderIdOf(bill.record) };
}

export async function confirmWithService(
	context: IWebhookFunctions,
	event: 'payment' | 'payout',
	fields: PostbackFields,
	requireOrderId = true,
	isDelivered: (paymentId: string, status: string) => boolean = () => false,
): Promise<ConfirmResult> {
	const trsId = (fields.TrsId ?? '').trim();
	if (trsId === '') return { ok: false, retry: false, reason: 'TrsId is empty' };
	const deadline = Date.now() + CONFIRM_BUDGET_MS;
	const found = await get(
		context,
		event === 'payment' ? ENDPOINTS.paymentStatus : ENDPOINTS.payoutStatus,
		{ id: trsId },
		deadline,
	);
	if ('error' in found) {
		if (event === 'payment' && errorKeyOf(found.error) === 'api:error.payment_not_found') {
			// Some deployments send the bill id as TrsId.
			return await confirmByBill(
				context,
				fields,
				trsId,
				requireOrderId,
				isDelivered,
				deadline,
				found.error,
			);
		}
		return unreachable(`${event === 'payment' ? 'Payment' : 'Payout'} ${trsId}`, found.error);
	}
	const record = found.record;
	if (event === 'payout') {
		const verdict = confirmPayout(fields, record);
		return verdict.ok ? { ok: true, record: recordOf(record) } : verdict;
	}
	const order = await orderIdOfPayment(context, record, requireOrderId, deadline);
	if ('failure' in order) return order.failure;
	const orderId = order.orderId;
	const verdict = confirmPayment(fields, record, orderId, requireOrderId);
	return verdict.ok
		? {
				ok: true,
				record: recordOf(record),
				orderConfirmed: verdict.orderConfirmed,
				orderId,
				amount: verdict.amount,
			}
		: verdict;
}
