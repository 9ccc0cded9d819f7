/**
 * A sandbox day for Statement › Get, made through the sandbox's API and control calls, and what
 * the statement must say about it worked out from the sandbox's own records (its control views),
 * not from the package's statement code: payments in RUB and USD (paid, underpaid, failed), a
 * partial and a full refund, a chargeback, payouts that succeed, fail, are declined or still wait,
 * and movements one second either side of both midnights in the profile's time zone.
 */
import { addDays } from '../../nodes/shared/dates.ts';
import {
	PROFILE_TIME_ZONE,
	control,
	newMerchant,
	type Profile,
	type TestMerchant,
} from './sandbox.ts';

/** The statement's day: a fixed past day, its times set with the sandbox's clock. */
export const STATEMENT_DAY = '2025-03-10';

type Row = Record<string, any>;
interface SandboxLike {
	url: string;
}

export interface ExpectedDay {
	merchant: TestMerchant;
	day: string;
	timeZone: string;
	/** One summary per currency, as Statement › Get must give it (without `balance`). */
	summaries: Row[];
	/** kind:id of every movement of the day, sorted. */
	movementKeys: string[];
	/** What each movement of the day does to the balance (kind:id → number or null). */
	effects: Record<string, number | null>;
	/** available + locked + hold per currency at the day's end, in cents, from merchant/balance. */
	balanceAtEnd: Record<string, number>;
	balanceAtStart: Record<string, number>;
}

const cents = (value: unknown) => Math.round(Number(value) * 100);
const money = (c: number) => c / 100;

/**
 * Statement › Get's view of the day on `profile`: `live` with the public record's payment fields
 * (account_amount, commission), `spec` with the interface document's (amount_received only, no
 * commission on payments, no account_amount on payouts).
 */
export async function makeStatementDay(
	sandbox: SandboxLike,
	profile: Profile,
	options: { merchant?: TestMerchant; day?: string } = {},
): Promise<ExpectedDay> {
	const timeZone = PROFILE_TIME_ZONE[profile];
	const offsetMs = profile === 'spec' ? 3 * 3_600_000 : 0;
	const fields = {
		profile,
		balances: { RUB: '10000.00', USD: '0', EUR: '0' },
		refunds: true,
		liveExtras: profile === 'live',
		newPaymentFields: profile === 'live',
	};
	let merchant = options.merchant;
	if (merchant === undefined) merchant = await newMerchant(sandbox as never, fields);
	else await control(sandbox as never, 'PATCH', `/merchants/${merchant.merchantId}`, fields);
	const D = options.day ?? STATEMENT_DAY;
	const api = async (method: 'GET' | 'POST', path: string, params: Record<string, string>) => {
		const query = new URLSearchParams(params).toString();
		const response = await fetch(
			`${sandbox.url}/api/v1/${path}${method === 'GET' ? `?${query}` : ''}`,
			{
				method,
				headers: {
					authorization: `Bearer ${merchant.token}`,
					...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
				},
				body: method === 'POST' ? query : undefined,
			},
		);
		return (await response.json()) as Row;
	};
	const clock = async (local: string) => {
		const now = new Date(Date.parse(`${local}Z`) - offsetMs).toISOString();
		await control(sandbox as never, 'POST', '/clock', { now });
	};
	const totals = async () => {
		const answer = await api('GET', 'merchant/balance', {});
		const out: Record<string, number> = {};
		for (const b of answer.balances as Row[])
			out[b.currency] =
				cents(b.balance_available) + cents(b.balance_locked) + cents(b.balance_hold);
		return out;
	};
	const payments: string[] = [];
	const pay = async (amount: string, currency: string, outcome = 'full') => {
		const bill = await api('POST', 'bill/create', {
			amount,
			shop_id: merchant.shopId,
			currency_in: currency,
		});
		const paid = await control(sandbox as never, 'POST', `/bills/${bill.bill_id}/pay`, { outcome });
		payments.push(paid.payment.id);
		return paid.payment.id as string;
	};
	const payout = async (status: string | null) => {
		const made = await api('POST', 'payout/personal/create', {
			amount: '100.00',
			payout_account_id: merchant.payoutAccountId,
		});
		const id = made.data[0].id as string;
		if (status !== null)
			await control(sandbox as never, 'POST', `/payouts/${id}/advance`, { status });
	};
	try {
		await clock(`${addDays(D, -1)}T23:59:59`);
		await pay('500.00', 'RUB');
		await payout('SUCCESS');
		const balanceAtStart = await totals();
		await clock(`${D}T00:00:01`);
		const first = await pay('1000.00', 'RUB');
		await clock(`${D}T10:00:00`);
		await pay('200.00', 'RUB', 'under');
		await pay('50.00', 'RUB', 'fail');
		const usd = await pay('100.00', 'USD');
		const whole = await pay('300.00', 'RUB');
		await clock(`${D}T11:00:00`);
		await control(sandbox as never, 'POST', `/payments/${first}/refund`, { amount: '100.00' });
		await control(sandbox as never, 'POST', `/payments/${whole}/refund`, {});
		await clock(`${D}T12:00:00`);
		await control(sandbox as never, 'POST', `/payments/${usd}/chargeback`, { amount: '40.00' });
		await clock(`${D}T13:00:00`);
		await payout('SUCCESS');
		await payout('FAIL');
		await payout('DECLINED');
		await payout('PROCESS');
		await payout(null);
		await clock(`${D}T23:59:59`);
		await pay('10.00', 'USD');
		const balanceAtEnd = await totals();
		await clock(`${addDays(D, 1)}T00:00:01`);
		await pay('700.00', 'RUB');
		await control(sandbox as never, 'POST', `/payments/${first}/refund`, { amount: '50.00' });
		await control(sandbox as never, 'POST', `/payments/${first}/chargeback`, { amount: '10.00' });
		await payout('SUCCESS');
		const expected = await oracle(sandbox, merchant, profile, payments, D);
		return { merchant, day: D, timeZone, balanceAtStart, balanceAtEnd, ...expected };
	} finally {
		await control(sandbox as never, 'POST', '/clock', { now: null });
	}
}

/** The expected statement, from the sandbox's control views and the profile's record shapes. */
async function oracle(
	sandbox: SandboxLike,
	merchant: TestMerchant,
	profile: Profile,
	paymentIds: string[],
	day: string,
): Promise<Pick<ExpectedDay, 'summaries' | 'movementKeys' | 'effects'>> {
	const onDay = (row: Row) => String(row.created_at).slice(0, 10) === day;
	const effects: Record<string, number | null> = {};
	const per = new Map<string, Row>();
	const of = (currency: string) => {
		if (!per.has(currency))
			per.set(currency, {
				pay: [0, 0, 0, 0],
				ref: [0, 0],
				cb: [0, 0],
				out: [0, 0, 0, 0],
				pend: [0, 0],
				unknown: 0,
				notCounted: 0,
			});
		return per.get(currency) as Row;
	};
	for (const id of paymentIds) {
		const p = await control(sandbox as never, 'GET', `/payments/${id}`);
		if (onDay(p)) {
			const t = of(p.currency_in);
			if (p.status === 'FAIL') {
				t.notCounted += 1;
				effects[`payment:${id}`] = null;
			} else {
				t.pay[0] += 1;
				t.pay[1] += cents(p.amount);
				t.pay[2] += cents(p.commission);
				t.pay[3] += cents(p.amount_received);
				effects[`payment:${id}`] = money(cents(p.amount_received));
			}
		}
		for (const r of p.refunds as Row[]) {
			if (!onDay(r)) continue;
			const t = of(r.currency);
			t.ref[0] += 1;
			t.ref[1] += cents(r.amount);
			effects[`refund:${r.id}`] = -money(cents(r.amount));
		}
		for (const c of p.chargebacks as Row[]) {
			if (!onDay(c) || !onDay(p)) continue;
			const t = of(p.currency_in);
			t.cb[0] += 1;
			t.cb[1] += cents(p.charged_back_amount);
			if (profile === 'live') t.unknown += 1;
			effects[`chargeback:${c.id}`] =
				profile === 'live' ? null : -money(cents(p.charged_back_amount));
		}
	}
	const payouts = (
		await control(sandbox as never, 'GET', `/payouts?merchantId=${merchant.merchantId}`)
	).data as Row[];
	for (const o of payouts.filter(onDay)) {
		const t = of(o.currency);
		const debit = cents(o.amount) + (o.recipientPaysCommission ? 0 : cents(o.commission));
		if (o.status === 'SUCCESS') {
			t.out[0] += 1;
			t.out[1] += cents(o.amount);
			t.out[2] += cents(o.commission);
			t.out[3] += debit;
			if (profile === 'spec') t.unknown += 1;
			effects[`payout:${o.id}`] = profile === 'spec' ? null : -money(debit);
		} else if (['NEW', 'MODERATING', 'PROCESS'].includes(o.status)) {
			t.pend[0] += 1;
			t.pend[1] += cents(o.amount);
			effects[`payout:${o.id}`] = null;
		} else {
			t.notCounted += 1;
			effects[`payout:${o.id}`] = null;
		}
	}
	const summaries = [...per.keys()].sort().map((currency) => {
		const t = per.get(currency) as Row;
		const debitedKnown = profile === 'live' || t.out[0] === 0;
		const net = t.pay[3] - t.ref[1] - t.out[3];
		return {
			day,
			timeZone: PROFILE_TIME_ZONE[profile],
			currency,
			payments: {
				count: t.pay[0],
				amount: money(t.pay[1]),
				commission: profile === 'live' || t.pay[0] === 0 ? money(t.pay[2]) : null,
				credited: money(t.pay[3]),
			},
			refunds: { count: t.ref[0], amount: money(t.ref[1]) },
			chargebacks:
				profile === 'live' && t.cb[0] > 0
					? { count: t.cb[0] }
					: { count: t.cb[0], amount: money(t.cb[1]) },
			payouts: {
				count: t.out[0],
				amount: money(t.out[1]),
				commission: money(t.out[2]),
				debited: debitedKnown ? money(t.out[3]) : null,
			},
			pendingPayouts: { count: t.pend[0], amount: money(t.pend[1]) },
			net: debitedKnown ? money(net) : null,
			// The known effects: in `spec` the payouts' debit is unknown, in `live` the chargebacks'.
			balanceEffect: money(profile === 'spec' ? t.pay[3] - t.ref[1] - t.cb[1] : net),
			unknownEffects: t.unknown,
			notCounted: t.notCounted,
		};
	});
	return { summaries, movementKeys: Object.keys(effects).sort(), effects };
}
