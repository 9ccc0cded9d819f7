import type { Logger } from 'pino';
import {
	PAYMENT_POSTBACK_STATUSES,
	canonicalStatus,
	createdWithin,
	expectedSignature,
	formatCents,
	orderIdOf,
	toCents,
} from '../contract.ts';
import type { MoneyBackEvent, PostbackFields } from '../contract.ts';
import { ApiError, BudgetSpent } from '../service-api.ts';
import type { Admission } from '../admission.ts';
import type { Housekeeping } from '../store/types.ts';
import type { Targets } from '../targets.ts';
import { readList } from './lists.ts';
import type { MoneyBackCoverage, Window } from './result.ts';

/**
 * The catch-up of money going back (beyond the interface document: docs/developer/service.md):
 * refunds through `refund/search` (the refund API, switched on per merchant by the service's
 * support), chargebacks where a paid payment's record shows them (`payment/status?chargeback=1`, or
 * a `chargebacks` list the payment search already carries). Each one no postback brought is
 * admitted as the postback the service would have sent (signed with the token, so the trigger
 * verifies it and confirms it with the service), once: a mark per refund and status, and per
 * chargeback, spares the calls of the next runs, and the intake's dedupe key makes the late genuine
 * postback its duplicate. Read after the payouts and the last days' bills, within a share of the
 * run's budget (a quarter) held for them from the start of the run: no backlog of bills or payouts
 * spends it.
 */

/** What the run learnt of money going back: the coverage beside the bills'. */
export interface MoneyBackHooks {
	/** The runner's admission of a rebuilt postback (skipped records reported there): undefined if skipped. */
	admit: (
		kind: MoneyBackEvent,
		fields: PostbackFields,
		orderUnknown: boolean,
		/** The service's record: one made before the relay's baseline is counted, not admitted. */
		record: Record<string, unknown>,
	) => Promise<Admission | undefined>;
	store: Pick<Housekeeping, 'catchupMarks' | 'addCatchupMarks'>;
	logger: Logger;
	/** A kind without targets is not read. */
	targets: Pick<Targets, MoneyBackEvent>;
}

type Json = Record<string, unknown>;

const text = (value: unknown): string =>
	typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';

/** Statuses a refund or chargeback may still leave: not caught up yet. */
const NOT_FINAL = ['NEW', 'PROCESS', ''];

/** Payment statuses that took money: what a refund or chargeback can give back. */
const TOOK_MONEY = PAYMENT_POSTBACK_STATUSES.filter((s) => s !== 'FAIL') as readonly string[];

const markOf = (kind: MoneyBackEvent, record: Json) =>
	kind === 'refund'
		? `refund:${text(record.id)}:${canonicalStatus(record.status)}`
		: `chargeback:${text(record.id)}`;

/**
 * The refund or chargeback postback the service would have sent for its record: `Id, Amount,
 * Currency, Status, InvId, BillId, PaymentId` (amounts in the postback spelling), signed as the
 * service signs them. undefined: not final, or a field the signature needs is missing.
 */
export function moneyBackPostback(
	kind: MoneyBackEvent,
	record: Json,
	billId: string,
	invId: string,
	token: string,
): PostbackFields | undefined {
	const status = canonicalStatus(record.status);
	const cents = toCents(record.amount);
	const fields: PostbackFields = {
		Id: text(record.id),
		Amount: cents === undefined ? '' : formatCents(cents),
		Currency: text(record.currency).toUpperCase() || 'RUB',
		Status: status,
		InvId: invId,
		BillId: billId,
		PaymentId: text(record.payment_id),
	};
	if (NOT_FINAL.includes(status) || fields.Id === '' || fields.PaymentId === '' || billId === '')
		return undefined;
	if (kind === 'refund' && fields.Amount === '') return undefined;
	fields.SignatureValue = expectedSignature(kind, fields, token);
	return fields;
}

export class MoneyBackCatchup {
	/** When each paid payment's chargebacks were last read: the least recently read go first. */
	readonly #checkedAt = new Map<string, number>();
	/** The service answered refunds_not_enabled: not asked again before the next deep run. */
	#refundsOff = false;

	/** The kinds this run reads: those with targets; refunds not while remembered off (but on a deep run). */
	#kinds(w: Window, targets: MoneyBackHooks['targets']): MoneyBackEvent[] {
		return (['refund', 'chargeback'] as const).filter(
			(k) => targets[k].length > 0 && (k === 'chargeback' || !this.#refundsOff || w.result.deep),
		);
	}

	/**
	 * The share of the run's budget held for refunds and chargebacks, that payouts and bills cannot
	 * spend: a quarter, at least one call for each kind read, at most half; none when none is read.
	 */
	share(w: Window, targets: MoneyBackHooks['targets']): number {
		const kinds = this.#kinds(w, targets).length;
		if (kinds === 0) return 0;
		return Math.min(Math.max(kinds, Math.floor(w.budget / 4)), Math.floor(w.budget / 2));
	}

	/**
	 * Reads refunds, then chargebacks, within `share` calls (held for them by the runner: the
	 * refund search's first page is read every run, whatever the bills left); what it learnt goes
	 * to the run's `moneyBack`.
	 */
	async read(w: Window, share: number, hooks: MoneyBackHooks): Promise<BudgetSpent | undefined> {
		const kinds = this.#kinds(w, hooks.targets);
		const remembered = hooks.targets.refund.length > 0 && !kinds.includes('refund');
		const coverage: MoneyBackCoverage = {
			refunds: remembered ? 'refunds_not_enabled' : 'not_read',
			...(remembered ? { refundsRemembered: true as const } : {}),
			refundsListed: 0,
			paymentsChecked: 0,
			paymentsToCheck: 0,
		};
		w.result.moneyBack = coverage;
		const until = Math.min(w.budget, w.api.calls + share);
		if (kinds.length === 0 || until <= w.api.calls) return undefined;
		try {
			if (kinds.includes('refund')) await this.#refunds(w, hooks, coverage, until);
			if (kinds.includes('chargeback')) await this.#chargebacks(w, hooks, coverage, until);
			return undefined;
		} catch (error) {
			if (error instanceof BudgetSpent) return error;
			throw error;
		}
	}

	async #refunds(w: Window, hooks: MoneyBackHooks, coverage: MoneyBackCoverage, until: number) {
		let listed;
		try {
			listed = await readList(
				w.fetchPage,
				w.firstUrl('/api/v1/refund/search', w.since),
				w.apiRoot,
				Math.max(1, Math.floor((until - w.api.calls) / 2)),
				(row) => createdWithin(row, w.since, w.today),
				w.held,
			);
		} catch (error) {
			if (!(error instanceof ApiError) || error.status === null || error.status >= 500) throw error;
			coverage.refunds =
				error.status === 403 || /refunds_not_enabled/.test(error.key)
					? 'refunds_not_enabled'
					: 'refused';
			this.#refundsOff = coverage.refunds === 'refunds_not_enabled';
			if (coverage.refunds === 'refused') coverage.refundsRefusal = error.key;
			hooks.logger.warn(
				{ status: error.status, key: error.key },
				coverage.refunds === 'refunds_not_enabled'
					? 'catch-up cannot read refunds: the refund API is not switched on for this merchant (ask the service support)'
					: 'catch-up cannot read refunds: the service refused refund/search',
			);
			return;
		}
		this.#refundsOff = false;
		coverage.refunds = listed.stopped ? 'not_read' : 'read';
		coverage.refundsListed += listed.rows.length;
		await this.#admitAll(w, hooks, 'refund', listed.rows, undefined);
		if (listed.stopped) throw listed.stopped;
	}

	/**
	 * Paid payments of the window, least recently read first: the chargebacks each one shows (the
	 * search row's own list, else `payment/status?chargeback=1`), while the share lasts.
	 */
	async #chargebacks(w: Window, hooks: MoneyBackHooks, coverage: MoneyBackCoverage, until: number) {
		const listed = await readList(
			w.fetchPage,
			w.firstUrl('/api/v1/payment/search', w.billSince),
			w.apiRoot,
			Math.max(1, Math.floor((until - w.api.calls) / 2)),
			(row) =>
				TOOK_MONEY.includes(canonicalStatus(row.status)) &&
				createdWithin(row, w.billSince, w.today),
			w.held,
		);
		const queue = listed.rows.sort(
			(a, b) =>
				(this.#checkedAt.get(text(a.id)) ?? 0) - (this.#checkedAt.get(text(b.id)) ?? 0) ||
				String(b.created_at ?? '').localeCompare(String(a.created_at ?? '')),
		);
		while (queue.length > 0) {
			const row = queue[0];
			let payment: Json = row;
			if (!Array.isArray(row.chargebacks)) {
				if (w.api.calls >= until) break;
				try {
					payment = await w.api.paymentStatus(text(row.id), { chargeback: true });
				} catch (error) {
					if (!(error instanceof ApiError) || error.status === null || error.status >= 500)
						throw error;
					hooks.logger.warn(
						{ payment: text(row.id), error: error.message },
						'catch-up skipped the chargebacks of a payment',
					);
				}
			}
			queue.shift();
			coverage.paymentsChecked += 1;
			this.#checkedAt.set(text(row.id), w.now);
			const list = Array.isArray(payment.chargebacks) ? (payment.chargebacks as Json[]) : [];
			await this.#admitAll(w, hooks, 'chargeback', list, payment);
		}
		coverage.paymentsToCheck += queue.length;
		if (listed.stopped) throw listed.stopped;
	}

	/** The final records not marked yet, each admitted as its postback, then marked. */
	async #admitAll(
		w: Window,
		hooks: MoneyBackHooks,
		kind: MoneyBackEvent,
		records: readonly Json[],
		payment: Json | undefined,
	): Promise<void> {
		const fresh = records.filter(
			(r) => typeof r === 'object' && r !== null && !NOT_FINAL.includes(canonicalStatus(r.status)),
		);
		const known = new Set(await hooks.store.catchupMarks(fresh.map((r) => markOf(kind, r))));
		for (const record of fresh) {
			if (known.has(markOf(kind, record))) continue;
			const order = await this.#orderOf(w, record, payment);
			if (order === undefined) continue;
			const fields = moneyBackPostback(kind, record, order.billId, order.invId ?? '', w.token);
			if (!fields) continue;
			const admitted = await hooks.admit(kind, fields, order.invId === undefined, record);
			if (admitted?.outcome === 'stored' || admitted?.outcome === 'known')
				await hooks.store.addCatchupMarks([markOf(kind, record)], w.now, w.pruneBefore);
		}
	}

	/**
	 * The bill and its order ID (InvId) of a refund or chargeback: from the payment record when the
	 * caller has it and it names them, else `payment/status` and `bill/status`. `invId` undefined:
	 * the service tells no order ID (InvId is sent empty). undefined: the service did not tell.
	 */
	async #orderOf(
		w: Window,
		record: Json,
		payment: Json | undefined,
	): Promise<{ billId: string; invId?: string } | undefined> {
		try {
			let billId = text(record.bill_id) || text(payment?.bill_id);
			let source = payment;
			if (billId === '') {
				source = await w.api.paymentStatus(text(record.payment_id));
				billId = text(source.bill_id);
			}
			if (billId === '') return undefined;
			let orderId = source === undefined ? undefined : orderIdOf(source);
			if (orderId === undefined) orderId = orderIdOf(await w.api.billStatus(billId));
			return { billId, ...(orderId === undefined ? {} : { invId: orderId ?? '' }) };
		} catch (error) {
			if (!(error instanceof ApiError) || error.status === null || error.status >= 500) throw error;
			return undefined;
		}
	}
}
