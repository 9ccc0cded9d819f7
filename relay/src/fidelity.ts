import { canonicalStatus, chooseBillPayment, postbackKey, toCents } from './contract.ts';
import type { BillPaymentChoice, PostbackFields } from './contract.ts';
import type { BillPayments } from './look-ups.ts';
import type { Candidate, LookUp } from './admission.ts';
import type { ReadStore, StoredEvent } from './store/types.ts';

/**
 * One payment, one event: an event the catch-up built from the service's own answer and
 * a postback with the same kind, TrsId and canonical status are one event, whatever the amount's
 * spelling, the payer's commission or an order ID the service did not show. Only when one side is
 * trustworthy, so a forged call never shadows a genuine one:
 *
 * - a postback after a catch-up event of the same payment is a duplicate of it (the catch-up event
 *   is the service's own record; the postback, genuine or forged, adds nothing);
 * - a catch-up event after a postback of the same kind, TrsId and status counts as it only when that
 *   postback agrees with the service's record: the amount (as the API tells it, with the commission
 *   the record shows, or as received; never with the postback's own unsigned Commission) and the order ID when the service tells it. A forged
 *   postback that came first with the genuine TrsId does not agree: the catch-up event is stored
 *   and forwarded, the forged one fails the trigger's confirmation;
 * - two postbacks keep the dedupe key with the signed pair (postbackKey). A postback with the key of
 *   a stored one is its duplicate (answered so by the insert, no look-up). A postback whose kind,
 *   TrsId and status a stored postback holds under another signed pair (a forger borrowing a valid
 *   signature from another order of the shop, before or after the genuine call) is looked up with
 *   the service (`confirm`: payment/status, and bill/status for the order ID when the payment record
 *   names none, or payout/status, within the look-up budget): stored
 *   and forwarded when the service's record agrees, refused (403) when it does not, 503 when the
 *   look-up cannot be made. So a forged call after the genuine one is never forwarded; a forged
 *   call sent first is stored and forwarded (nothing tells it apart yet; the trigger refuses it),
 *   and the genuine one after it is looked up, agrees, and is stored and forwarded too.
 *
 * The one `listEvents` read serves every case. For a postback it is made only when the insert found
 * a twin (NewEvent.twinCheck: an event of the same kind and TrsId under another dedupe key, checked
 * inside the insert's own statement), so a postback with no twin, nearly every one, costs no read;
 * a race of two calls in the same instant can still store both (the trigger confirms each).
 */
export function onePaymentOneEvent(
	store: Pick<ReadStore, 'listEvents'>,
	confirm: Partial<Record<'payment' | 'payout', LookUp>> = {},
): LookUp {
	return async (candidate) => {
		const { kind, fields, source } = candidate;
		if (kind !== 'payment' && kind !== 'payout') return undefined;
		// A postback is read against the store only when the insert found a twin (Candidate.twins).
		if (source.via === 'postback' && candidate.twins !== true) return undefined;
		const trsId = (fields.TrsId ?? '').trim();
		if (trsId === '') return undefined;
		const status = canonicalStatus(fields.Status);
		const same = (await store.listEvents({ kind, trsId, limit: 50 })).filter(
			(e) => canonicalStatus(e.fields.Status) === status,
		);
		if (source.via === 'postback') {
			const found = same.find((e) => e.source === 'catch-up');
			if (found) return { outcome: 'stored', eventId: found.id, duplicate: true, deliveries: 0 };
			const key = postbackKey(kind, fields) ?? null;
			if (same.some((e) => e.dedupeKey === key)) return undefined;
			return same.length > 0 ? confirm[kind]?.(candidate) : undefined;
		}
		return same.some((e) => agrees(e, candidate)) ? { outcome: 'known' } : undefined;
	};
}

const cents = (value: string | undefined) => (value === undefined ? undefined : toCents(value));

/** Whether a stored event says what the service's record (a catch-up candidate) says. */
export function agrees(stored: StoredEvent, { kind, fields, source }: Candidate): boolean {
	if (stored.source === 'catch-up') return true;
	const s = stored.fields;
	if (kind === 'payout') {
		const told = cents(s.Amount);
		const amount = cents(fields.Amount);
		const commission = cents(fields.Commission) ?? 0;
		return (
			told !== undefined && amount !== undefined && [amount, amount - commission].includes(told)
		);
	}
	if (source.via === 'catch-up' && !source.orderUnknown && (s.InvId ?? '') !== fields.InvId)
		return false;
	const told = cents(s.OutSum);
	if (told === undefined) return false;
	return spellings(fields).includes(told);
}

/**
 * The sums a genuine postback's OutSum may carry for a payment the API describes by `fields`: the
 * amount, the amount with the commission the service's record shows, what it credited. Never the
 * stored postback's own Commission: nobody signs it, and a forgery could claim any sum with it.
 */
function spellings(fields: PostbackFields): number[] {
	const amount = cents(fields.OutSum);
	if (amount === undefined) return [];
	const sums = [amount];
	const commission = cents(fields.Commission);
	if (commission !== undefined && commission > 0) sums.push(amount + commission);
	const received = cents(fields.BalanceAmount);
	if (received !== undefined) sums.push(received);
	return sums;
}

/**
 * The dedupe key of a payment postback whose TrsId names a bill, stored as the one event of the
 * bill's payment `paymentId` (the service's id) in `status`. Apart from every postbackKey: its
 * fourth part is never an amount (`<cents>c` or `as-sent:...`).
 */
export function billPaymentKey(billId: string, paymentId: string, status: string): string {
	return JSON.stringify(['payment', billId, canonicalStatus(status), 'bill-payment', paymentId]);
}

/** The service's payment id a billPaymentKey names; undefined for any other key. */
export function billPaymentOf(dedupeKey: string | null): string | undefined {
	if (dedupeKey === null || !dedupeKey.includes('"bill-payment"')) return undefined;
	try {
		const parts: unknown = JSON.parse(dedupeKey);
		return Array.isArray(parts) && parts.length === 5 && parts[3] === 'bill-payment'
			? String(parts[4])
			: undefined;
	} catch {
		return undefined;
	}
}

/** Most events of one bill and status read to tell which of its payments were stored. */
const BILL_EVENTS_READ = 5_000;

/**
 * Which payment of the bill a payment postback whose TrsId names it is (chooseBillPayment in
 * nodes/shared, as the trigger chooses), with the store as the memory of what was delivered: a
 * payment counts as delivered when the store holds an event of it in the postback's status,
 * - one stored under its billPaymentKey (claimed by an earlier postback of the bill);
 * - one under its own id as TrsId (a catch-up event, or a postback that named the payment);
 * - or the event of this very postback (its dedupe key) stored before anything told it names a
 *   bill (a bill's first postback is stored as any other, with no look-up): it counts for one
 *   payment that confirms it, taken in the service's order among those not accounted for otherwise.
 * `claim`: the payment to store this postback as (under `key`); `delivered`: every payment that
 * confirms it is stored (a retry: `eventId` is one of the bill's events); else a refusal or a retry.
 */
export async function chooseStoredBillPayment(
	store: Pick<ReadStore, 'listEvents'>,
	fields: PostbackFields,
	{ bill, payments }: BillPayments,
): Promise<
	| (Extract<BillPaymentChoice, { ok: true }> & { key: string })
	| (Exclude<BillPaymentChoice, { ok: true }> & { eventId?: string })
> {
	const billId = String(bill.id ?? '');
	const status = canonicalStatus(fields.Status);
	const inStatus = (events: StoredEvent[]) =>
		events.filter((e) => canonicalStatus(e.fields.Status) === status);
	const stored =
		billId === ''
			? []
			: inStatus(
					await store.listEvents({ kind: 'payment', trsId: billId, limit: BILL_EVENTS_READ }),
				);
	const claimed = new Set<string>();
	const same = postbackKey('payment', fields) ?? null;
	let unnamed = 0;
	for (const event of stored) {
		const paymentId = billPaymentOf(event.dedupeKey);
		if (paymentId !== undefined) claimed.add(paymentId);
		// Stored unnamed: one payment this very postback (its signed pair) confirms.
		else if (event.dedupeKey === same) unnamed += 1;
	}
	// Payments found stored under their own id. An event of the bill stored unnamed may be one of
	// them: counted so, the next payment is forwarded rather than taken for delivered (the trigger
	// behind the relay confirms each again and starts nothing twice).
	const ownEvents = new Set<string>();
	let eventId = stored[0]?.id;
	for (let round = 0; round <= payments.length; round++) {
		let unnamedLeft = Math.max(0, unnamed - ownEvents.size);
		const choice = chooseBillPayment(
			fields,
			bill,
			payments,
			(paymentId) => {
				if (claimed.has(paymentId) || ownEvents.has(paymentId)) return true;
				if (unnamedLeft === 0) return false;
				unnamedLeft -= 1;
				return true;
			},
			false,
		);
		if (!choice.ok) return eventId === undefined ? choice : { ...choice, eventId };
		const paymentId = String(choice.payment.id);
		const own = inStatus(await store.listEvents({ kind: 'payment', trsId: paymentId, limit: 50 }));
		if (own.length === 0) return { ...choice, key: billPaymentKey(billId, paymentId, status) };
		ownEvents.add(paymentId);
		eventId ??= own[0].id;
	}
	return { ok: false, retry: true, reason: `bill ${billId}: no payment could be chosen` };
}
