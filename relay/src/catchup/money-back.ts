import type { Logger } from 'pino';
import {
	PAYMENT_POSTBACK_STATUSES,
	canonicalStatus,
	createdDate,
	createdWithin,
	expectedSignature,
	formatCents,
	isMoneyBackFinal,
	isTransientStatus,
	moneyBackKey,
	moneyBackListOf,
	orderIdOf,
	paymentIdOfMoneyBack,
	textOf,
	toCents,
} from '../contract.ts';
import type { MoneyBackEvent, PostbackFields } from '../contract.ts';
import { ApiError, BudgetSpent } from '../service-api.ts';
import type { Admission } from '../admission.ts';
import type { Targets } from '../targets.ts';
import { noteListed, noteUnread, readList } from './lists.ts';
import { PaymentSearch, billOf, paymentSearchCoverage } from './payments.ts';
import type { PaymentHooks } from './payments.ts';
import type { MoneyBackCoverage, Window } from './result.ts';

/**
 * The catch-up of money going back (docs/developer/service.md): refunds
 * through `refund/search` (the refund API, switched on per merchant by the service's support),
 * chargebacks where a paid payment's record shows them (`payment/status?chargeback=1`, or a
 * `chargeback` / `chargebacks` list the payment search already carries), the paid payments listed
 * by the run's one payment search (payments.ts). Each one no postback brought is admitted as the
 * postback the service would have sent (signed with the token, so the trigger verifies it and
 * confirms it with the service), once: a mark per record under its identity (moneyBackKey: kind,
 * Id, status) spares the calls of the next runs, and the intake's dedupe key, the same identity,
 * makes the late genuine postback its duplicate. Read after the payouts and the last days' bills,
 * within a share of the run's budget (a quarter) held for them from the start of the run: no
 * backlog of bills or payouts spends it.
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
	/** The runner's admission of a payment the payment search found (payments.ts). */
	admitPayment: PaymentHooks['admit'];
	store: PaymentHooks['store'];
	logger: Logger;
	/** A kind without targets is not read (payments: the payment search's payments). */
	targets: Pick<Targets, MoneyBackEvent | 'payment'>;
}

type Json = Record<string, unknown>;

/** Payment statuses that took money: what a refund or chargeback can give back. */
const TOOK_MONEY = PAYMENT_POSTBACK_STATUSES.filter((s) => s !== 'FAIL') as readonly string[];

/** A record's catch-up mark: its identity, the key its postback is stored under. */
const markOf = (kind: MoneyBackEvent, record: Json) => moneyBackKey(kind, record.id, record.status);

/**
 * The refund or chargeback postback the service would have sent for its record: a refund's `Id,
 * Amount, Currency, Status, InvId, BillId, PaymentId` (the amount in the postback spelling), a
 * chargeback's `Id, Status, InvId, BillId, PaymentId` (its postback and record carry no amount),
 * signed as the service signs them. undefined: not final, or a field the signature needs is
 * missing (a refund record without an amount or a currency is not rebuilt: nothing is guessed).
 */
export function moneyBackPostback(
	kind: MoneyBackEvent,
	record: Json,
	billId: string,
	invId: string,
	token: string,
): PostbackFields | undefined {
	const fields: PostbackFields = {
		Id: textOf(record.id),
		Status: canonicalStatus(record.status),
		InvId: invId,
		BillId: billId,
		PaymentId: paymentIdOfMoneyBack(record),
	};
	if (
		!isMoneyBackFinal(fields.Status) ||
		fields.Id === '' ||
		fields.PaymentId === '' ||
		billId === ''
	)
		return undefined;
	if (kind === 'refund') {
		const cents = toCents(record.amount);
		const currency = textOf(record.currency).toUpperCase();
		if (cents === undefined || currency === '') return undefined;
		fields.Amount = formatCents(cents);
		fields.Currency = currency;
	}
	fields.SignatureValue = expectedSignature(kind, fields, token);
	return fields;
}

export class MoneyBackCatchup {
	/** When each paid payment's chargebacks were last read: the least recently read go first. */
	readonly #checkedAt = new Map<string, number>();
	/** The service answered refunds_not_enabled: not asked again before the next deep run. */
	#refundsOff = false;
	/** The payment search: payments of older bills, and the paid payments to read chargebacks of. */
	readonly #search = new PaymentSearch();

	/** The kinds this run reads: those with targets; refunds not while remembered off (but on a deep run). */
	#kinds(w: Window, targets: MoneyBackHooks['targets']): MoneyBackEvent[] {
		return (['refund', 'chargeback'] as const).filter(
			(k) => targets[k].length > 0 && (k === 'chargeback' || !this.#refundsOff || w.result.deep),
		);
	}

	/** The lists this run reads within the share: refund/search, and payment/search (one list for payments and chargebacks). */
	#lists(w: Window, targets: MoneyBackHooks['targets']): number {
		const kinds = this.#kinds(w, targets);
		const search = kinds.includes('chargeback') || targets.payment.length > 0;
		return (kinds.includes('refund') ? 1 : 0) + (search ? 1 : 0);
	}

	/**
	 * The share of the run's budget held for refunds, chargebacks and the payment search, that
	 * payouts and bills cannot spend: a quarter, at least one call for each list read, at most
	 * half; none when none is read.
	 */
	share(w: Window, targets: MoneyBackHooks['targets']): number {
		const lists = this.#lists(w, targets);
		if (lists === 0) return 0;
		return Math.min(Math.max(lists, Math.floor(w.budget / 4)), Math.floor(w.budget / 2));
	}

	/**
	 * Reads refunds, then the payment search (payments.ts): the payments of older bills, then the
	 * chargebacks of its paid payments, within `share` calls (held for them by the runner: the
	 * refund search's first page is read every run, whatever the bills left); what it learnt goes
	 * to the run's `moneyBack` and `paymentSearch`.
	 */
	async read(w: Window, share: number, hooks: MoneyBackHooks): Promise<BudgetSpent | undefined> {
		const kinds = this.#kinds(w, hooks.targets);
		const remembered = hooks.targets.refund.length > 0 && !kinds.includes('refund');
		const chargebacks = kinds.includes('chargeback');
		const coverage: MoneyBackCoverage = {
			refunds: remembered ? 'refunds_not_enabled' : 'not_read',
			...(remembered ? { refundsRemembered: true as const } : {}),
			refundsListed: 0,
			chargebacksSince: chargebacks ? w.chargebackSince : null,
			paymentsChecked: 0,
			paymentsToCheck: 0,
			paymentsNeverChecked: 0,
			oldestToCheck: null,
		};
		w.result.moneyBack = coverage;
		const payments = hooks.targets.payment.length > 0;
		if (payments || chargebacks) w.result.paymentSearch = paymentSearchCoverage();
		const until = Math.min(w.budget, w.api.calls + share);
		if (this.#lists(w, hooks.targets) === 0 || until <= w.api.calls) return undefined;
		try {
			if (kinds.includes('refund')) await this.#refunds(w, hooks, coverage, until);
			if (!payments && !chargebacks) return undefined;
			const listed = await this.#search.read(
				w,
				chargebacks ? w.chargebackSince : w.since,
				Math.max(1, Math.floor((until - w.api.calls) / 2)),
				hooks.logger,
			);
			if (listed === undefined) return undefined;
			const left = payments
				? await this.#search.admit(
						w,
						listed.rows,
						{ admit: hooks.admitPayment, store: hooks.store, logger: hooks.logger },
						until,
					)
				: undefined;
			if (chargebacks) await this.#chargebacks(w, hooks, coverage, until, listed.rows);
			return listed.stopped ?? left;
		} catch (error) {
			if (!(error instanceof BudgetSpent)) throw error;
			// The refunds spent the share: the payment search waits for the next run, and says so.
			if (w.result.paymentSearch?.state === 'not_read')
				noteUnread(w.result.unread, 'payment/search', 'budget');
			return error;
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
			if (!(error instanceof ApiError) || isTransientStatus(error.status)) throw error;
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
		noteListed(w.result.unread, 'refund/search', listed);
		await this.#admitAll(w, hooks, 'refund', listed.rows, undefined);
		if (listed.stopped) throw listed.stopped;
	}

	/**
	 * The paid payments the search listed in the chargeback window, least recently read first: the
	 * chargebacks each one shows (the search row's own list, else `payment/status?chargeback=1`),
	 * while the share lasts. Those left are counted, with how many were never read and the oldest.
	 */
	async #chargebacks(
		w: Window,
		hooks: MoneyBackHooks,
		coverage: MoneyBackCoverage,
		until: number,
		rows: readonly Json[],
	) {
		const queue = rows
			.filter(
				(row) =>
					TOOK_MONEY.includes(canonicalStatus(row.status)) &&
					createdWithin(row, w.chargebackSince, w.today),
			)
			.sort(
				(a, b) =>
					(this.#checkedAt.get(textOf(a.id)) ?? 0) - (this.#checkedAt.get(textOf(b.id)) ?? 0) ||
					String(b.created_at ?? '').localeCompare(String(a.created_at ?? '')),
			);
		while (queue.length > 0) {
			const row = queue[0];
			let payment: Json = row;
			if (moneyBackListOf('chargeback', row) === undefined) {
				if (w.api.calls >= until) break;
				try {
					payment = await w.api.paymentStatus(textOf(row.id), { chargeback: true });
				} catch (error) {
					if (!(error instanceof ApiError) || isTransientStatus(error.status)) throw error;
					hooks.logger.warn(
						{ payment: textOf(row.id), error: error.message },
						'catch-up skipped the chargebacks of a payment',
					);
				}
			}
			queue.shift();
			coverage.paymentsChecked += 1;
			this.#checkedAt.set(textOf(row.id), w.now);
			const list = moneyBackListOf('chargeback', payment) ?? [];
			await this.#admitAll(w, hooks, 'chargeback', list, payment);
		}
		coverage.paymentsToCheck += queue.length;
		for (const row of queue) {
			if (!this.#checkedAt.has(textOf(row.id))) coverage.paymentsNeverChecked += 1;
			const day = createdDate(row.created_at);
			if (day !== undefined && (coverage.oldestToCheck === null || day < coverage.oldestToCheck))
				coverage.oldestToCheck = day;
		}
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
			(r) => typeof r === 'object' && r !== null && isMoneyBackFinal(r.status),
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
			let billId = textOf(record.bill_id) || textOf(payment?.bill_id);
			let source = payment;
			if (billId === '') {
				source = await w.api.paymentStatus(paymentIdOfMoneyBack(record));
				billId = textOf(source.bill_id);
			}
			if (billId === '') return undefined;
			let orderId = source === undefined ? undefined : orderIdOf(source);
			if (orderId === undefined) orderId = orderIdOf(await billOf(w, billId));
			return { billId, ...(orderId === undefined ? {} : { invId: orderId ?? '' }) };
		} catch (error) {
			if (!(error instanceof ApiError) || isTransientStatus(error.status)) throw error;
			return undefined;
		}
	}
}
