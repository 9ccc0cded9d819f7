import type { Alerter } from '../alerts.ts';
import type { Metrics } from '../metrics.ts';
import type { Statement } from './statement-shape.ts';

/**
 * What a closed day's statement tells the operator: the `statement` alert, once per day, when a
 * currency's balance moved by more or less than the day's movements explain (`unexplained` not
 * zero) or the service lists a movement n8n never got; and the gauges of the last day checked.
 */

/** The statement's figures as its JSON answer and its alert carry them (no movements). */
export function statementJson(s: Statement): Omit<Statement, 'movements'> & { movements: number } {
	const { movements, ...rest } = s;
	return { ...rest, movements: movements.length };
}

export async function alertDay(
	alerter: Alerter | undefined,
	metrics: Metrics,
	s: Statement,
): Promise<boolean> {
	metrics.statementUnexplained.reset();
	for (const c of s.currencies)
		if (c.unexplained !== null)
			metrics.statementUnexplained.set({ currency: c.currency }, c.unexplained);
	metrics.statementNotDelivered.reset();
	for (const kind of ['payment', 'refund', 'chargeback', 'payout'] as const)
		metrics.statementNotDelivered.set(
			{ kind },
			(s.notDelivered ?? []).filter((m) => m.kind === kind).length,
		);
	const off = s.currencies.filter((c) => c.unexplained !== null && c.unexplained !== 0);
	const missed = s.notDelivered ?? [];
	if (off.length === 0 && missed.length === 0) return false;
	const parts = [
		...off.map(
			(c) => `${c.currency} balance moved ${c.unexplained} more than its movements explain`,
		),
		...(missed.length > 0
			? [`${missed.length} movement(s) the service lists never reached n8n`]
			: []),
	];
	return (
		(await alerter?.raise(
			'statement',
			`statement:${s.timeZone}:${s.day}`,
			`the statement of ${s.day} does not tie out: ${parts.join('; ')}`,
			{
				day: s.day,
				timeZone: s.timeZone,
				unexplained: Object.fromEntries(off.map((c) => [c.currency, c.unexplained])),
				notDelivered: missed.slice(0, 100),
				notDeliveredCount: missed.length,
			},
			{ day: s.day },
		)) ?? false
	);
}
