import { summarizeStatement, toCents } from '../contract.ts';
import type { StatementMovement, StatementSummary } from '../contract.ts';
import type { BalanceLine } from '../store/balances.ts';
import type { UnreadList } from './reader.ts';
import { instantOf } from './window.ts';

/**
 * The ledger of one day, per currency: the balance at the day's start and end (snapshots), the
 * day's totals (the shared summary, the same figures Statement › Get gives), and `unexplained`:
 * closing − opening − the balance effects of the movements between the two snapshots. Pure: the
 * reads are done (reader.ts, deliveries.ts) before it is called.
 */

/** A balance as the statement shows it: the service's three parts and their sum. */
export interface BalanceFigure {
	available: number | null;
	locked: number | null;
	hold: number | null;
	/** available + locked + hold; null when a part is not a plain amount. */
	total: number | null;
}

/** Where a balance of the statement comes from. */
export interface BalancePoint {
	/** boundary: recorded at the day boundary; first-start: when the relay first started; live: read now. */
	kind: 'boundary' | 'first-start' | 'live';
	takenAt: string;
}

export interface CurrencyLedger {
	currency: string;
	opening: BalanceFigure | null;
	closing: BalanceFigure | null;
	/** The day's totals (the shared summary); null when the currency had no movement on the day. */
	totals: StatementSummary | null;
	/** The balance effects of the movements between the two snapshots (the day's, and around it). */
	effects: number | null;
	unexplained: number | null;
	/** Why `unexplained` is null. */
	unexplainedReason?: string;
}

export interface LedgerInput {
	day: string;
	timeZone: string;
	opening: { point: BalancePoint; at: number; lines: BalanceLine[] } | null;
	closing: { point: BalancePoint; at: number; lines: BalanceLine[] } | null;
	/** Why a balance is missing (said in every currency's reason). */
	missing?: string;
	dayMovements: readonly StatementMovement[];
	around: readonly StatementMovement[];
	unread: readonly UnreadList[];
}

const cents = (n: number | null) => (n === null ? null : Math.round(n * 100));
const money = (c: number) => c / 100;

/** A currency's balance in a snapshot: its parts and their sum, in cents; undefined when absent. */
export function figureOf(
	lines: readonly BalanceLine[],
	currency: string,
): BalanceFigure | undefined {
	const line = lines.find((l) => l.currency.toUpperCase() === currency);
	if (line === undefined) return undefined;
	const parts = [line.available, line.locked, line.hold].map((v) => toCents(v) ?? null);
	const [available, locked, hold] = parts.map((c) => (c === null ? null : money(c)));
	const total = parts.every((c) => c !== null)
		? money(parts.reduce<number>((a, c) => a + (c as number), 0))
		: null;
	return { available, locked, hold, total };
}

/** A currency no snapshot shows holds nothing: zero. */
const ZERO: BalanceFigure = { available: 0, locked: 0, hold: 0, total: 0 };

/** The ledger per currency: every currency with a movement on the day or a balance that moved. */
export function ledgerOf(input: LedgerInput): CurrencyLedger[] {
	const summaries = summarizeStatement({
		day: input.day,
		timeZone: input.timeZone,
		movements: input.dayMovements,
	});
	const currencies = new Set<string>(summaries.map((s) => s.currency));
	for (const side of [input.opening, input.closing])
		for (const line of side?.lines ?? []) currencies.add(line.currency.toUpperCase());
	const ledgers: CurrencyLedger[] = [];
	for (const currency of [...currencies].sort()) {
		const totals = summaries.find((s) => s.currency === currency) ?? null;
		const ledger = currencyLedger(input, currency, totals);
		const quiet =
			totals === null &&
			ledger.unexplained === 0 &&
			ledger.opening?.total === ledger.closing?.total;
		if (!quiet) ledgers.push(ledger);
	}
	return ledgers;
}

function currencyLedger(
	input: LedgerInput,
	currency: string,
	totals: StatementSummary | null,
): CurrencyLedger {
	const opening = input.opening ? (figureOf(input.opening.lines, currency) ?? ZERO) : null;
	const closing = input.closing ? (figureOf(input.closing.lines, currency) ?? ZERO) : null;
	const effect = effectsOf(input, currency);
	const ledger: CurrencyLedger = {
		currency,
		opening,
		closing,
		totals,
		effects: effect.cents === null ? null : money(effect.cents),
		unexplained: null,
	};
	const reason = whyUnknown(input, opening, closing, effect.why);
	if (reason !== undefined) ledger.unexplainedReason = reason;
	else {
		const change = (cents(closing!.total) as number) - (cents(opening!.total) as number);
		ledger.unexplained = money(change - (effect.cents as number));
	}
	return ledger;
}

function whyUnknown(
	input: LedgerInput,
	opening: BalanceFigure | null,
	closing: BalanceFigure | null,
	effectWhy: string | undefined,
): string | undefined {
	if (opening === null) return input.missing ?? 'no balance was recorded at the start of the day';
	if (closing === null) return input.missing ?? 'no balance was recorded at the end of the day';
	if (opening.total === null || closing.total === null)
		return 'a balance is not a plain amount in cents';
	if (input.unread.length > 0)
		return `the service's lists were not all read: ${input.unread
			.map((u) => `${u.list} (${u.reason}${u.detail ? `: ${u.detail}` : ''})`)
			.join(', ')}`;
	return effectWhy;
}

/**
 * The balance effects of the currency's movements between the two snapshots, in cents: a day's
 * movement before the opening snapshot (the relay first started during the day) is left out, one
 * of the next day before the closing snapshot counted. null with why when an effect is unknown.
 */
function effectsOf(input: LedgerInput, currency: string): { cents: number | null; why?: string } {
	const from = input.opening?.at ?? -Infinity;
	const to = input.closing?.at ?? Infinity;
	let sum = 0;
	const unknown: string[] = [];
	for (const m of [...input.dayMovements, ...input.around]) {
		if (m.currency !== currency || !m.counted) continue;
		const at = instantOf(m.createdAt, input.timeZone);
		if (at !== undefined && (at < from || at >= to)) continue;
		if (m.balanceEffect === null)
			unknown.push(`${m.kind} ${m.id}: ${m.unknownEffect ?? 'unknown'}`);
		else sum += Math.round(m.balanceEffect * 100);
	}
	if (unknown.length === 0) return { cents: sum };
	const shown = unknown.slice(0, 5).join('; ');
	const more = unknown.length > 5 ? ` and ${unknown.length - 5} more` : '';
	return {
		cents: null,
		why: `the effect of ${unknown.length} movement(s) is unknown (${shown}${more})`,
	};
}
