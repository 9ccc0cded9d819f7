import type { IDataObject } from 'n8n-workflow';

/**
 * The item of a node of version 2 or later: what a workflow uses first at the top, in one naming
 * style (`paid`, `orderId`, `billId`, `amount` as a number, `currency`, `status`, then the
 * service's record), and the postback's own fields, exactly as received and as the trigger stood
 * behind them, under `postback`. Built from the version 1 item, which stays as it was for nodes of
 * version 1 (workflows saved before); what the trigger checked is the same for both.
 *
 * Nothing moves between trusted and untrusted places: a field the version 1 item kept under
 * `unverified` stays there, and `postback` holds only what the version 1 item had at its top.
 */

/** The postback's own fields at the top of a version 1 item: the service's PascalCase names. */
const isPostbackField = (name: string) => /^[A-Z]/.test(name) && !name.endsWith('Number');

const text = (value: unknown): string | null =>
	typeof value === 'string' || typeof value === 'number' ? String(value) : null;

const number = (value: unknown): number | null => {
	if (typeof value === 'number') return Number.isFinite(value) ? value : null;
	if (typeof value !== 'string' || value.trim() === '') return null;
	const n = Number(value);
	return Number.isFinite(n) ? n : null;
};

const record = (value: unknown): IDataObject | null =>
	typeof value === 'object' && value !== null ? (value as IDataObject) : null;

function postbackOf(item: IDataObject): IDataObject {
	const postback: IDataObject = {};
	for (const [name, value] of Object.entries(item)) {
		if (isPostbackField(name)) postback[name] = value;
	}
	return postback;
}

/** What every kind ends with: when, the trigger's verdict, the raw postback and the rest. */
function tail(item: IDataObject): IDataObject {
	return {
		receivedAt: item.receivedAt,
		verified: item.verified,
		postback: postbackOf(item),
		unverified: item.unverified ?? {},
	};
}

/** The service's amount where it was confirmed, else the postback's signed one. */
const amountOf = (item: IDataObject, postbackField: string) =>
	'amountNumber' in item ? number(item.amountNumber) : number(item[`${postbackField}Number`]);

function paymentItem(item: IDataObject): IDataObject {
	const payment = record(item.payment);
	const confirmed = item.confirmed === true;
	return {
		event: item.event,
		paid: item.paid === true,
		orderId: 'orderId' in item ? text(item.orderId) : text(item.InvId),
		billId: text(item.billId),
		amount: amountOf(item, 'OutSum'),
		currency: text(payment?.currency_in) ?? text(item.CurrencyIn),
		status: item.status,
		confirmed,
		orderConfirmed: item.orderConfirmed === true,
		eventKey: item.eventKey,
		...(item.trsIdNames === undefined ? {} : { trsIdNames: item.trsIdNames }),
		payment,
		...tail(item),
	};
}

function payoutItem(item: IDataObject): IDataObject {
	const payout = record(item.payout);
	return {
		event: item.event,
		status: item.status,
		payoutId: text(payout?.id) ?? text(item.TrsId),
		orderId: text(payout?.order_id),
		amount: amountOf(item, 'Amount'),
		currency: text(payout?.currency),
		confirmed: item.confirmed === true,
		eventKey: item.eventKey,
		payout,
		...tail(item),
	};
}

function moneyBackItem(item: IDataObject, kind: 'refund' | 'chargeback'): IDataObject {
	const done = kind === 'refund' ? 'refunded' : 'chargedBack';
	const status = kind === 'refund' ? 'refundStatus' : 'chargebackStatus';
	return {
		event: item.event,
		[done]: item[done] === true,
		[status]: item[status],
		[`${kind}Id`]: text(item.Id),
		orderId: text(item.InvId) || null,
		billId: text(item.BillId),
		amount: amountOf(item, 'Amount'),
		currency: text(item.Currency),
		confirmed: item.confirmed === true,
		orderConfirmed: item.orderConfirmed === true,
		eventKey: item.eventKey,
		[kind]: record(item[kind]),
		payment: record(item.payment),
		...tail(item),
	};
}

function redirectItem(item: IDataObject): IDataObject {
	return {
		event: item.event,
		paymentProof: false,
		customerSentTo: item.customerSentTo,
		orderId: text(item.InvId),
		amount: amountOf(item, 'OutSum'),
		...tail(item),
	};
}

/** The item of a node of this version (version 1: as it was). */
export function itemOfVersion(item: IDataObject, typeVersion: number): IDataObject {
	if (typeVersion < 2) return item;
	switch (item.event) {
		case 'payment':
			return paymentItem(item);
		case 'payout':
			return payoutItem(item);
		case 'refund':
		case 'chargeback':
			return moneyBackItem(item, item.event);
		default:
			return redirectItem(item);
	}
}
