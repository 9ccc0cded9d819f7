import type { Logger } from 'pino';
import type { Housekeeping } from '../store/types.ts';
import { StoreInputError } from '../store/input.ts';
import { BudgetSpent } from '../service-api.ts';
import { billPayments } from './lists.ts';
import type { Window } from './result.ts';

type LinkStore = Pick<Housekeeping, 'rememberLinks' | 'linksToRead' | 'markLinksRead'>;

/** A MULTI link read with payments is remembered: read in rotation whatever its age. */
export async function rememberLink(
	store: Pick<Housekeeping, 'rememberLinks'>,
	id: string,
	now: number,
	logger: Logger,
): Promise<void> {
	try {
		await store.rememberLinks([id], now);
	} catch (error) {
		// An id the store cannot hold is read while the bill search lists it, no longer.
		if (!(error instanceof StoreInputError)) throw error;
		logger.warn({ bill: id.slice(0, 100) }, 'catch-up cannot remember a link');
	}
}

/**
 * The MULTI links the relay has seen pay, whatever their age (the store's list): those not in
 * `readThisRun`, least recently read first, each with `bill/payments` (every page), with at most a
 * quarter of the budget. A link made longer ago than RELAY_CATCHUP_BILL_DAYS is in no bill search:
 * here it still is. The bill is not read (one call more per link): its order is the payment
 * records' `order_id` where they show one. `admit` takes each link's payments as a bill's.
 */
export async function readRememberedLinks(
	w: Window,
	store: LinkStore,
	readThisRun: Set<string>,
	logger: Logger,
	admit: (bill: Record<string, unknown>, payments: Record<string, unknown>[]) => Promise<void>,
): Promise<BudgetSpent | undefined> {
	const { api, now } = w;
	const share = Math.max(1, Math.floor(w.budget / 4));
	const until = Math.min(w.budget, api.calls + share);
	const ids = await store.linksToRead(share, [...readThisRun]);
	for (const id of ids) {
		if (api.calls >= until) break;
		const payments = await billPayments(w, { id }, logger);
		if (payments instanceof BudgetSpent) return payments;
		readThisRun.add(id);
		await store.markLinksRead([id], now);
		if (payments === undefined) continue;
		w.result.billsRead += 1;
		const named = payments.find((p) => Object.prototype.hasOwnProperty.call(p, 'order_id'));
		await admit(named ? { id, order_id: named.order_id } : { id }, payments);
	}
	return undefined;
}
