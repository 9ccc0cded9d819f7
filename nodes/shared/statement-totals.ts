import { textOf } from './kinds';
import { toCents } from './money';
import { centsToNumber, type StatementMovement } from './statement';

/**
 * The day's totals per currency, summed in whole cents as movements come (a caller reading pages
 * keeps only these, never the movements: bounded memory whatever the day holds). A sum that would
 * need a figure the records do not show is null, never a guess; `unknownEffects` counts the
 * movements whose effect on the balance is unknown.
 */

export interface StatementBalance {
	available: number | null;
	locked: number | null;
	hold: number | null;
}

export interface StatementSummary {
	day: string;
	timeZone: string;
	currency: string;
	payments: {
		count: number;
		amount: number | null;
		commission: number | null;
		credited: number | null;
	};
	refunds: { count: number; amount: number | null };
	/** `amount` only when every counted chargeback shows one. */
	chargebacks: { count: number; amount?: number };
	payouts: {
		count: number;
		amount: number | null;
		commission: number | null;
		debited: number | null;
	};
	pendingPayouts: { count: number; amount: number | null };
	/** credited − refunds − payouts debited; null when one of them is unknown. */
	net: number | null;
	/** The known effects of every counted movement, chargebacks with an amount included. */
	balanceEffect: number;
	/** Counted movements whose effect is unknown (left out of balanceEffect). */
	unknownEffects: number;
	/** Movements listed but counted nowhere (FAIL, DECLINED, ERROR, an unknown status). */
	notCounted: number;
	balance?: StatementBalance | null;
}

/** A sum in cents that turns unknown for good once one part is unknown. */
interface Sum {
	cents: number;
	known: boolean;
}

const sum = (): Sum => ({ cents: 0, known: true });

function add(target: Sum, value: number | null): void {
	if (value === null) target.known = false;
	else target.cents += Math.round(value * 100);
}

const out = (s: Sum): number | null => (s.known ? centsToNumber(s.cents) : null);

interface CurrencyTotals {
	payments: { count: number; amount: Sum; commission: Sum; credited: Sum };
	refunds: { count: number; amount: Sum };
	chargebacks: { count: number; amount: Sum };
	payouts: { count: number; amount: Sum; commission: Sum; debited: Sum };
	pending: { count: number; amount: Sum };
	net: Sum;
	effect: number;
	unknownEffects: number;
	notCounted: number;
}

export interface StatementTotals {
	day: string;
	timeZone: string;
	currencies: Map<string, CurrencyTotals>;
}

export function newStatementTotals(day: string, timeZone: string): StatementTotals {
	return { day, timeZone, currencies: new Map() };
}

function totalsOf(totals: StatementTotals, currency: string): CurrencyTotals {
	let found = totals.currencies.get(currency);
	if (found === undefined) {
		found = {
			payments: { count: 0, amount: sum(), commission: sum(), credited: sum() },
			refunds: { count: 0, amount: sum() },
			chargebacks: { count: 0, amount: sum() },
			payouts: { count: 0, amount: sum(), commission: sum(), debited: sum() },
			pending: { count: 0, amount: sum() },
			net: sum(),
			effect: 0,
			unknownEffects: 0,
			notCounted: 0,
		};
		totals.currencies.set(currency, found);
	}
	return found;
}

const debit = (effect: number | null) => (effect === null ? null : -effect);

/** Adds one movement of the day to the totals (the caller has kept only the day's movements). */
export function addMovement(totals: StatementTotals, movement: StatementMovement): void {
	const t = totalsOf(totals, movement.currency);
	if (!movement.counted) {
		if (movement.kind === 'payout' && movement.pending === true) {
			t.pending.count += 1;
			add(t.pending.amount, movement.amount);
		} else if (movement.pending !== true) t.notCounted += 1;
		return;
	}
	if (movement.balanceEffect === null) t.unknownEffects += 1;
	else t.effect += Math.round(movement.balanceEffect * 100);
	switch (movement.kind) {
		case 'payment':
			t.payments.count += 1;
			add(t.payments.amount, movement.amount);
			add(t.payments.commission, movement.commission);
			add(t.payments.credited, movement.balanceEffect);
			add(t.net, movement.balanceEffect);
			break;
		case 'refund':
			t.refunds.count += 1;
			add(t.refunds.amount, movement.amount);
			add(t.net, movement.balanceEffect);
			break;
		case 'chargeback':
			t.chargebacks.count += 1;
			add(t.chargebacks.amount, movement.amount);
			break;
		case 'payout':
			t.payouts.count += 1;
			add(t.payouts.amount, movement.amount);
			add(t.payouts.commission, movement.commission);
			add(t.payouts.debited, debit(movement.balanceEffect));
			add(t.net, movement.balanceEffect);
			break;
	}
}

/**
 * A balance of `merchant/balance` (its answer, or its `balances` list) in one currency: available,
 * locked and held, as numbers; null when the answer shows no balance in the currency.
 */
export function balanceIn(answer: unknown, currency: string): StatementBalance | null {
	const list = Array.isArray(answer)
		? answer
		: typeof answer === 'object' && answer !== null
			? (answer as { balances?: unknown }).balances
			: undefined;
	if (!Array.isArray(list)) return null;
	for (const entry of list) {
		if (typeof entry !== 'object' || entry === null) continue;
		const row = entry as Record<string, unknown>;
		if (textOf(row.currency).toUpperCase() !== currency) continue;
		const read = (v: unknown) => centsToNumber(toCents(v));
		return {
			available: read(row.balance_available),
			locked: read(row.balance_locked),
			hold: read(row.balance_hold),
		};
	}
	return null;
}

/**
 * One summary per currency with movements on the day, in currency order. With `balance` (the
 * answer of `merchant/balance`), each carries the balance now in its currency.
 */
export function finishStatement(totals: StatementTotals, balance?: unknown): StatementSummary[] {
	return [...totals.currencies.keys()].sort().map((currency) => {
		const t = totals.currencies.get(currency) as CurrencyTotals;
		const summary: StatementSummary = {
			day: totals.day,
			timeZone: totals.timeZone,
			currency,
			payments: {
				count: t.payments.count,
				amount: out(t.payments.amount),
				commission: out(t.payments.commission),
				credited: out(t.payments.credited),
			},
			refunds: { count: t.refunds.count, amount: out(t.refunds.amount) },
			chargebacks: { count: t.chargebacks.count },
			payouts: {
				count: t.payouts.count,
				amount: out(t.payouts.amount),
				commission: out(t.payouts.commission),
				debited: out(t.payouts.debited),
			},
			pendingPayouts: { count: t.pending.count, amount: out(t.pending.amount) },
			net: out(t.net),
			balanceEffect: centsToNumber(t.effect) as number,
			unknownEffects: t.unknownEffects,
			notCounted: t.notCounted,
		};
		const shown = out(t.chargebacks.amount);
		if (shown !== null) summary.chargebacks.amount = shown;
		if (balance !== undefined) summary.balance = balanceIn(balance, currency);
		return summary;
	});
}

/** The day's summary of a list of movements (the day's only: see statementDay). */
export function summarizeStatement(input: {
	day: string;
	timeZone: string;
	movements: Iterable<StatementMovement>;
	balance?: unknown;
}): StatementSummary[] {
	const totals = newStatementTotals(input.day, input.timeZone);
	for (const movement of input.movements) addMovement(totals, movement);
	return finishStatement(totals, input.balance);
}
