import type { IDataObject, IWebhookFunctions } from 'n8n-workflow';

import {
	MONEY_BACK_DONE_STATUSES,
	canonicalStatus,
	doneFieldOf,
	eventKeyOf,
	identifyMoneyBack,
	isPaidStatus,
	moneyBackItem,
	moneyBackKey,
	moneyBackKeyOf,
	postbackKey,
	statusFieldOf,
	verifiedItem,
	verifyPostback,
	type CallEvent,
	type MoneyBackEvent,
	type PostbackEvent,
	type PostbackFields,
	type RedirectEvent,
	type VerifyResult,
} from '../shared';
import { confirmWithService, type ConfirmResult } from './confirm';
import { confirmMoneyBackWithService } from './money-back';

/**
 * What differs between the kinds of call the trigger takes, in one table (as the relay's intake
 * has its own): how a body of the kind is verified, its key and label in the memory of postbacks
 * already received, its item, how the service confirms it and what the confirmation adds to the
 * item. Everything else (reading the body, the no-token refusal, the memory, the claim, the
 * not-confirmed answer, the record key) is one pipeline for all of them (pipeline.ts).
 */
export interface KindRule {
	/** The signature: a refund-or-chargeback body says which of the two it is by it. */
	verify(fields: PostbackFields, tokens: string[]): KindVerdict;
	/** The key in the memory of postbacks already received; undefined: never remembered. */
	key(fields: PostbackFields): string | undefined;
	/** How the log names one postback: its id and canonical status. */
	label(fields: PostbackFields): string;
	/** The item before any confirmation: what the signature covers at the top, the rest under `unverified`. */
	item(fields: PostbackFields): IDataObject;
	/** What an item taken on its signature alone (Confirm With PayPalych API off) adds. */
	unconfirmed(item: IDataObject, fields: PostbackFields): void;
	/** Asks the service; undefined for the redirects, which claim nothing to confirm. */
	confirm?(ask: ConfirmRequest): Promise<ConfirmResult>;
	/** The item of a confirmed postback, from the service's record. */
	fill(item: IDataObject, confirmed: Confirmed): void;
}

export type KindVerdict = { ok: true; kind: PostbackEvent } | Exclude<VerifyResult, { ok: true }>;

/** What a confirmation needs: the context, the fields, the order check and the memory's view. */
export interface ConfirmRequest {
	context: IWebhookFunctions;
	fields: PostbackFields;
	requireOrderId: boolean;
	/** Whether a payment of the service (its id and status) already started an execution. */
	isDelivered: (id: string, status: string) => boolean;
}

export type Confirmed = Extract<ConfirmResult, { ok: true }>;

const trimmed = (value: string | undefined) => (value ?? '').trim();

const signedBy =
	(kind: PostbackEvent) =>
	(fields: PostbackFields, tokens: string[]): KindVerdict => {
		const verified = verifyPostback(kind, fields, tokens);
		return verified.ok ? { ok: true, kind } : verified;
	};

/** The service's bill id, order ID and amount at the top of a confirmed payment's item. */
const UNBOUND_FIELDS = ['InvId', 'OutSum'];

/**
 * Where the order is not bound (Bill ID Only, or a service that shows no order ID), the
 * postback's InvId and OutSum may come from another order's redirect signature: they go under
 * `unverified`, so a workflow that reads the order or the amount finds the service's.
 */
function serviceFigures(item: IDataObject, confirmed: Confirmed): void {
	const billId = confirmed.record.bill_id;
	item.billId = typeof billId === 'string' || typeof billId === 'number' ? String(billId) : null;
	item.orderId = confirmed.orderId ?? null;
	item.amount = confirmed.amount ?? null;
	item.amountNumber = confirmed.amount === undefined ? null : Number(confirmed.amount);
	if (confirmed.orderConfirmed === true) return;
	const unverified = { ...((item.unverified as IDataObject | undefined) ?? {}) };
	for (const field of UNBOUND_FIELDS) {
		if (!(field in item)) continue;
		unverified[field] = item[field];
		delete item[field];
	}
	delete item.OutSumNumber;
	item.unverified = unverified;
}

/** A payment or payout postback: TrsId + Status (with the signed pair) is its identity. */
function callRule(kind: 'payment' | 'payout'): KindRule {
	return {
		verify: signedBy(kind),
		key: (fields) => postbackKey(kind, fields),
		label: (fields) => `${trimmed(fields.TrsId)} ${canonicalStatus(fields.Status)}`,
		item: (fields) => verifiedItem(kind, fields) as IDataObject,
		unconfirmed: () => undefined,
		confirm: ({ context, fields, requireOrderId, isDelivered }) =>
			confirmWithService(context, kind, fields, requireOrderId, isDelivered),
		fill(item, confirmed) {
			const record = confirmed.record;
			item.status = canonicalStatus(record.status);
			item.eventKey = eventKeyOf(kind, String(record.id), String(record.status));
			if (kind === 'payout') {
				item.payout = record;
				return;
			}
			item.trsIdNames = confirmed.viaBill === undefined ? 'payment' : 'bill';
			item.paid = isPaidStatus(record.status);
			item.orderConfirmed = confirmed.orderConfirmed === true;
			serviceFigures(item, confirmed);
			item.payment = record;
		},
	};
}

/** A redirect: the customer's browser, signed like a payment; never remembered, never confirmed. */
function redirectRule(kind: RedirectEvent): KindRule {
	return {
		verify: signedBy(kind),
		key: () => undefined,
		label: (fields) => trimmed(fields.InvId),
		item: (fields) => verifiedItem(kind, fields) as IDataObject,
		unconfirmed: () => undefined,
		fill: () => undefined,
	};
}

/**
 * A refund or chargeback: its identity is the contract's (moneyBackKeyOf); its status and "done"
 * fields are its own (`refundStatus`/`refunded`, `chargebackStatus`/`chargedBack`), never a
 * payment's `status` or `paid`.
 */
function moneyBackRule(kind: MoneyBackEvent): KindRule {
	return {
		verify: (fields, tokens) => {
			const verified = identifyMoneyBack(fields, tokens);
			return verified.ok ? { ok: true, kind: verified.event } : verified;
		},
		key: (fields) => moneyBackKeyOf(kind, fields),
		label: (fields) => `${trimmed(fields.Id)} ${canonicalStatus(fields.Status)}`,
		item: (fields) => {
			const item = moneyBackItem(kind, fields) as IDataObject;
			item.eventKey = eventKeyOf(kind, fields.Id ?? '', fields.Status ?? '');
			return item;
		},
		unconfirmed(item, fields) {
			item[doneFieldOf(kind)] = MONEY_BACK_DONE_STATUSES.includes(canonicalStatus(fields.Status));
		},
		confirm: ({ context, fields, requireOrderId }) =>
			confirmMoneyBackWithService(context, kind, fields, requireOrderId),
		fill(item, confirmed) {
			const status = canonicalStatus(confirmed.record.status);
			item[statusFieldOf(kind)] = status;
			item[doneFieldOf(kind)] = MONEY_BACK_DONE_STATUSES.includes(status);
			item.eventKey = eventKeyOf(kind, String(confirmed.record.id), status);
			item.orderConfirmed = confirmed.orderConfirmed === true;
			item[kind] = confirmed.record;
			item.payment = confirmed.payment ?? null;
		},
	};
}

export const KINDS: Readonly<Record<PostbackEvent, KindRule>> = {
	payment: callRule('payment'),
	payout: callRule('payout'),
	success: redirectRule('success'),
	fail: redirectRule('fail'),
	refund: moneyBackRule('refund'),
	chargeback: moneyBackRule('chargeback'),
};

/**
 * The memory's key of one record of the service (a payment, payout, refund or chargeback in one
 * status): a replay whose ids are spelled another way but name the same record is a duplicate.
 * A refund's or chargeback's is its identity itself.
 */
export function recordKeyOf(kind: PostbackEvent, id: string, status: string): string {
	if (kind === 'refund' || kind === 'chargeback') return moneyBackKey(kind, id, status);
	return JSON.stringify([kind, 'record', id, canonicalStatus(status)]);
}

export type { CallEvent };
