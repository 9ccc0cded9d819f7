import { addDays, createdDate, toYmd } from './dates';
import { textOf } from './kinds';
import { moneyBackListOf, paymentIdOfMoneyBack } from './money-back';
import { toCents } from './money';
import { canonicalStatus } from './statuses';

/**
 * The day's statement, one movement at a time: what each of the service's records (a payment, a
 * refund, a chargeback a payment shows, a payout) did to the merchant's balance, read from the
 * record in either shape the service is known to answer (the interface document's and the public
 * record's, docs/developer/service.md). Nothing here guesses an amount a record does not show: a
 * movement whose effect on the balance cannot be read says so (`balanceEffect: null` and
 * `unknownEffect`), and the totals (statement-totals.ts) leave it out and count it.
 *
 * Money is read into whole cents (kopecks) and only turned into a decimal number on output.
 */

export type StatementKind = 'payment' | 'refund' | 'chargeback' | 'payout';

export interface StatementMovement {
	kind: StatementKind;
	id: string;
	createdAt: string;
	/** The record's status in canonical form (trimmed, upper case). */
	status: string;
	/** The payment's `currency_in`, the refund's `currency`, the payout's `currency`; a chargeback takes its payment's. */
	currency: string;
	/** What was paid, refunded, charged back or paid out; null where the record shows none. */
	amount: number | null;
	/** The service's fee; null where the record shows none. */
	commission: number | null;
	/** Signed, in the balance's currency (= `currency`); null where the record leaves it unknown. */
	balanceEffect: number | null;
	/** Why `balanceEffect` is null for a movement that counts. */
	unknownEffect?: string;
	/** Whether the movement counts in the day's totals (a final status that moved money). */
	counted: boolean;
	/** Not final yet (a payout in NEW, MODERATING or PROCESS, a payment in NEW or PROCESS). */
	pending?: boolean;
	orderId: string | null;
	billId: string | null;
	paymentId: string | null;
}

type Json = Readonly<Record<string, unknown>>;

/** Payment statuses that count: paid, with what was paid (UNDERPAID and OVERPAID included). */
export const STATEMENT_PAYMENT_COUNTED: readonly string[] = ['SUCCESS', 'OVERPAID', 'UNDERPAID'];
/** Refund and chargeback statuses that count: the money went back. */
export const STATEMENT_MONEY_BACK_COUNTED: readonly string[] = ['SUCCESS'];
/** Payout statuses that count: paid out. */
export const STATEMENT_PAYOUT_COUNTED: readonly string[] = ['SUCCESS'];
/** Statuses a record may still leave: listed as pending, counted nowhere but pendingPayouts. */
export const STATEMENT_PENDING: readonly string[] = ['NEW', 'PROCESS', 'MODERATING'];

/** Whole cents as a decimal number (150 → 1.5), or null. */
export function centsToNumber(cents: number | null | undefined): number | null {
	return cents === null || cents === undefined ? null : cents / 100;
}

const orNull = (value: unknown): string | null => {
	const text = textOf(value);
	return text === '' ? null : text;
};

const currencyOf = (value: unknown): string => textOf(value).toUpperCase();

/** Whole cents of a money field, or null when absent or not a plain decimal. */
function centsOf(value: unknown): number | null {
	if (value === undefined || value === null || value === '') return null;
	return toCents(value) ?? null;
}

/**
 * The money a record moved in its own currency, read from `account_amount` (the balance's side)
 * when the balance is the movement's currency (`accountCurrency` absent or the same), else the
 * fallback (`amount_received` of the interface document's payment). undefined: the record moved
 * another currency's balance (`account_*` names it), so this currency's totals cannot hold it.
 */
function balanceSide(
	record: Json,
	currency: string,
	accountCurrencyField: string,
	fallback: unknown,
): { cents: number | null } | undefined {
	const accountCurrency = currencyOf(record[accountCurrencyField]);
	if (accountCurrency !== '' && currency !== '' && accountCurrency !== currency) return undefined;
	const account = centsOf(record.account_amount);
	return { cents: account ?? centsOf(fallback) };
}

function base(kind: StatementKind, record: Json, currency: string) {
	return {
		kind,
		id: textOf(record.id),
		createdAt: textOf(record.created_at),
		status: canonicalStatus(record.status),
		currency,
	};
}

/**
 * A payment record (`payment/search`, `payment/status`): `amount` what was paid, `commission`
 * the service's fee, the effect what reached the balance (`account_amount`, else the document's
 * `amount_received`). SUCCESS, OVERPAID and UNDERPAID count; NEW and PROCESS are pending; FAIL
 * and anything else is listed and counted nowhere.
 */
export function paymentMovement(record: Json): StatementMovement {
	const currency = currencyOf(record.currency_in);
	const head = base('payment', record, currency);
	const counted = STATEMENT_PAYMENT_COUNTED.includes(head.status);
	const movement: StatementMovement = {
		...head,
		amount: centsToNumber(centsOf(record.amount)),
		commission: centsToNumber(centsOf(record.commission)),
		balanceEffect: null,
		counted,
		orderId: orNull(record.order_id),
		billId: orNull(record.bill_id),
		paymentId: orNull(record.id),
	};
	if (STATEMENT_PENDING.includes(head.status)) movement.pending = true;
	if (!counted) return movement;
	const credited = balanceSide(record, currency, 'account_currency_code', record.amount_received);
	if (credited === undefined) {
		movement.unknownEffect = `credited to the ${currencyOf(record.account_currency_code)} balance, not the ${currency} one`;
	} else if (credited.cents === null) {
		movement.unknownEffect = 'the record shows neither account_amount nor amount_received';
	} else {
		movement.balanceEffect = centsToNumber(credited.cents);
	}
	return movement;
}

/**
 * A refund record (`refund/search`, `refund/status`, a payment's `refunds`): it takes its amount
 * (its `account_amount` where one is shown) from the balance of its currency. The record shows no
 * fee for a refund: `commission` is null and none is counted. `paymentOf` gives the payment it
 * belongs to where the caller knows it (for the bill and the currency of a record without them).
 */
export function refundMovement(record: Json, paymentOf?: Json): StatementMovement {
	const currency = currencyOf(record.currency) || currencyOf(paymentOf?.currency_in);
	const head = base('refund', record, currency);
	return moneyBack(head, record, paymentOf, STATEMENT_MONEY_BACK_COUNTED.includes(head.status));
}

function moneyBack(
	head: ReturnType<typeof base>,
	record: Json,
	paymentOf: Json | undefined,
	counted: boolean,
): StatementMovement {
	const amount = centsOf(record.amount);
	const paymentId = paymentIdOfMoneyBack(record) || textOf(paymentOf?.id);
	const movement: StatementMovement = {
		...head,
		amount: centsToNumber(amount),
		commission: centsToNumber(centsOf(record.commission)),
		balanceEffect: null,
		counted,
		orderId: orNull(record.order_id),
		billId: orNull(record.bill_id) ?? orNull(paymentOf?.bill_id),
		paymentId: paymentId === '' ? null : paymentId,
	};
	if (STATEMENT_PENDING.includes(head.status)) movement.pending = true;
	if (!counted) return movement;
	const taken = balanceSide(record, head.currency, 'account_currency', record.amount);
	if (taken === undefined) {
		movement.unknownEffect = `taken from the ${currencyOf(record.account_currency)} balance, not the ${head.currency} one`;
	} else if (taken.cents === null) {
		movement.unknownEffect = `the service shows no amount for this ${head.kind}`;
	} else {
		movement.balanceEffect = centsToNumber(-taken.cents);
	}
	return movement;
}

/**
 * The chargebacks a payment record shows (`chargeback`, the public record's singular key, or
 * `chargebacks`; moneyBackListOf). Each takes the payment's currency; SUCCESS counts. The public
 * record shows no amount for a chargeback: its effect is then unknown, never guessed.
 */
export function chargebackMovements(paymentRecord: Json): StatementMovement[] {
	const list = moneyBackListOf('chargeback', paymentRecord) ?? [];
	const paymentCurrency = currencyOf(paymentRecord.currency_in);
	return list.map((record) => {
		const currency = currencyOf(record.currency) || paymentCurrency;
		const head = base('chargeback', record, currency);
		return moneyBack(
			head,
			record,
			paymentRecord,
			STATEMENT_MONEY_BACK_COUNTED.includes(head.status),
		);
	});
}

/**
 * A payout record (`payout/search`, `payout/status`): `amount` and `commission` as the record
 * gives them; what left the balance is `account_amount` (in `account_currency`; the amount when
 * the recipient pays the fee, the amount and the fee when the sender does). The interface
 * document's record has no `account_amount` and does not say who paid the fee: the effect is then
 * unknown. SUCCESS counts; NEW, MODERATING and PROCESS are pending; FAIL, ERROR and DECLINED are
 * listed and counted nowhere.
 */
export function payoutMovement(record: Json): StatementMovement {
	const currency = currencyOf(record.currency);
	const head = base('payout', record, currency);
	const counted = STATEMENT_PAYOUT_COUNTED.includes(head.status);
	const movement: StatementMovement = {
		...head,
		amount: centsToNumber(centsOf(record.amount)),
		commission: centsToNumber(centsOf(record.commission)),
		balanceEffect: null,
		counted,
		orderId: orNull(record.order_id),
		billId: null,
		paymentId: null,
	};
	if (STATEMENT_PENDING.includes(head.status)) movement.pending = true;
	if (!counted) return movement;
	const debited = balanceSide(record, currency, 'account_currency', undefined);
	if (debited === undefined) {
		movement.unknownEffect = `taken from the ${currencyOf(record.account_currency)} balance, not the ${currency} one`;
	} else if (debited.cents === null) {
		movement.unknownEffect =
			'the record shows no account_amount: whether the fee was taken on top is not shown';
	} else {
		movement.balanceEffect = centsToNumber(-debited.cents);
	}
	return movement;
}

/** One day of a statement in a time zone. */
export interface StatementDay {
	day: string;
	timeZone: string;
	/** The day's first instant and the next day's first instant, in UTC (ISO 8601). */
	start: string;
	end: string;
	/** Whether a record's `created_at` falls on the day (see createdDate). */
	isOnDay(createdAt: unknown): boolean;
}

/** Minutes the zone's clock is ahead of UTC at an instant. */
function offsetMinutes(timeZone: string, at: number): number {
	const parts = new Intl.DateTimeFormat('en-US', {
		timeZone,
		hourCycle: 'h23',
		year: 'numeric',
		month: '2-digit',
		day: '2-digit',
		hour: '2-digit',
		minute: '2-digit',
		second: '2-digit',
	}).formatToParts(new Date(at));
	const n = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? '0');
	const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
	return Math.round((wall - Math.floor(at / 1000) * 1000) / 60_000);
}

/** The UTC instant the zone's clock shows midnight of `day` (Y-m-d). */
export function midnightIn(day: string, timeZone: string): Date {
	const [y, m, d] = day.split('-').map(Number);
	const wall = Date.UTC(y, m - 1, d);
	let at = wall - offsetMinutes(timeZone, wall) * 60_000;
	at = wall - offsetMinutes(timeZone, at) * 60_000;
	return new Date(at);
}

/**
 * A statement's day: its UTC window (for a balance taken at the day's boundaries) and the test of a
 * record's `created_at`. A `created_at` written without a zone (`Y-m-d H:i:s`, the service's own
 * clock) is on the day its date part says, as every search of the package reads it; one with an
 * offset is an instant, placed in `timeZone`. Throws RangeError for a date or zone it cannot read.
 */
export function statementDay(day: string, timeZone: string): StatementDay {
	const checked = toYmd(day);
	if (!checked.ok || checked.value !== day) throw new RangeError(`not a Y-m-d date: ${day}`);
	new Intl.DateTimeFormat('en-US', { timeZone });
	return {
		day,
		timeZone,
		start: midnightIn(day, timeZone).toISOString(),
		end: midnightIn(addDays(day, 1), timeZone).toISOString(),
		isOnDay: (createdAt) => createdDate(createdAt, timeZone) === day,
	};
}
