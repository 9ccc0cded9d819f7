import {
	PAYMENT_POSTBACK_STATUSES,
	PAYOUT_POSTBACK_STATUSES,
	isMoneyBackFinal,
	moneyBackKey,
} from '../contract.ts';
import type { StatementKind, StatementMovement } from '../contract.ts';
import type { BalanceBook, MovementTrace } from '../store/balances.ts';
import { instantOf } from './window.ts';

/**
 * What n8n never got of the day: each movement the service lists for the day that would have
 * brought a postback (a payment or payout in a postback status, a final refund or chargeback),
 * of a kind the relay forwards, made after the relay's baseline, that the store holds no event of
 * (`not-received`) or holds one whose deliveries did not all reach their targets
 * (`not-delivered`). Payments and payouts are found by TrsId (a payment's also by its bill, for a
 * deployment whose TrsId names the bill), refunds and chargebacks by their identity (kind, Id,
 * status), the key the relay stores them under.
 */

export interface NotDelivered {
	kind: StatementKind;
	id: string;
	status: string;
	createdAt: string;
	currency: string;
	amount: number | null;
	orderId: string | null;
	billId: string | null;
	paymentId: string | null;
	reason: 'not-received' | 'not-delivered';
	/** With not-delivered: the event's deliveries, and how many reached their target. */
	deliveries?: number;
	delivered?: number;
}

export interface DeliveryCheck {
	items: NotDelivered[];
	/** The day's movements made before the relay's baseline (the service had them before it ran). */
	beforeRelay: number;
	/** Kinds the relay has no target for: not looked for. */
	notWatched: StatementKind[];
}

/** TrsIds and keys asked of the store at once. */
const CHUNK = 500;

const PAYOUT_FINAL = [...PAYOUT_POSTBACK_STATUSES, 'ERROR'] as readonly string[];

function postbackFor(m: StatementMovement): boolean {
	if (m.kind === 'payment')
		return (PAYMENT_POSTBACK_STATUSES as readonly string[]).includes(m.status);
	if (m.kind === 'payout') return PAYOUT_FINAL.includes(m.status);
	return isMoneyBackFinal(m.status);
}

const keyOf = (m: StatementMovement) =>
	moneyBackKey(m.kind as 'refund' | 'chargeback', m.id, m.status);

/** The day's movements n8n never got (see above), the store asked CHUNK movements at a time. */
export async function checkDeliveries(
	store: Pick<BalanceBook, 'movementTraces'>,
	movements: readonly StatementMovement[],
	watched: (kind: StatementKind) => boolean,
	since: number,
	timeZone: string,
): Promise<DeliveryCheck> {
	const check: DeliveryCheck = {
		items: [],
		beforeRelay: 0,
		notWatched: (['payment', 'refund', 'chargeback', 'payout'] as const).filter((k) => !watched(k)),
	};
	const wanted: StatementMovement[] = [];
	for (const m of movements) {
		if (!watched(m.kind) || !postbackFor(m)) continue;
		// The service writes whole seconds: a movement is before the relay only when the whole second
		// it names ended before the baseline (one in the baseline's own second is checked: listed
		// rather than missed).
		const at = instantOf(m.createdAt, timeZone);
		if (at !== undefined && at + 999 < since) check.beforeRelay += 1;
		else wanted.push(m);
	}
	for (let i = 0; i < wanted.length; i += CHUNK) {
		const chunk = wanted.slice(i, i + CHUNK);
		const trsIds = new Set<string>();
		const keys: string[] = [];
		for (const m of chunk) {
			if (m.kind === 'refund' || m.kind === 'chargeback') keys.push(keyOf(m));
			else {
				trsIds.add(m.id);
				if (m.kind === 'payment' && m.billId !== null) trsIds.add(m.billId);
			}
		}
		const traces = await store.movementTraces([...trsIds], keys);
		for (const m of chunk) {
			const trace = traceFor(m, traces);
			if (trace !== undefined && trace.deliveries > 0 && trace.delivered === trace.deliveries)
				continue;
			check.items.push(itemOf(m, trace));
		}
	}
	return check;
}

/** The stored event of a movement: the best delivered one when several match. */
function traceFor(
	m: StatementMovement,
	traces: readonly MovementTrace[],
): MovementTrace | undefined {
	const mine = traces.filter((t) =>
		m.kind === 'refund' || m.kind === 'chargeback'
			? t.kind === m.kind && t.dedupeKey === keyOf(m)
			: t.kind === m.kind && (t.trsId === m.id || (m.kind === 'payment' && t.trsId === m.billId)),
	);
	return mine.sort((a, b) => b.delivered - a.delivered || b.deliveries - a.deliveries)[0];
}

function itemOf(m: StatementMovement, trace: MovementTrace | undefined): NotDelivered {
	const item: NotDelivered = {
		kind: m.kind,
		id: m.id,
		status: m.status,
		createdAt: m.createdAt,
		currency: m.currency,
		amount: m.amount,
		orderId: m.orderId,
		billId: m.billId,
		paymentId: m.paymentId,
		reason: trace === undefined ? 'not-received' : 'not-delivered',
	};
	if (trace !== undefined) {
		item.deliveries = trace.deliveries;
		item.delivered = trace.delivered;
	}
	return item;
}
