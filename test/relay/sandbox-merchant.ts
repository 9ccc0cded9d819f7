// A merchant of its own on the real sandbox, and the sandbox's control API: what the relay suites
// that drive the sandbox over HTTP (catch-up, deep catch-up, attacks) set up.
import { randomBytes } from 'node:crypto';

type Json = Record<string, any>;

/** The sandbox's control API (`/_sandbox/...`) at `url`. */
export function sandboxControl(url: string) {
	return async (method: string, path: string, body?: unknown): Promise<Json> => {
		const r = await fetch(`${url}/_sandbox${path}`, {
			method,
			headers: body === undefined ? {} : { 'content-type': 'application/json' },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await r.text();
		if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
		return JSON.parse(text) as Json;
	};
}

/** A merchant of its own on the sandbox at `url`, whose postbacks the service loses: its bills, payments, payouts. */
export async function sandboxMerchant(url: string, profile: 'live' | 'spec', extra: Json = {}) {
	const control = sandboxControl(url);
	const token = `72|${randomBytes(12).toString('hex')}`;
	const m = await control('POST', '/merchants', {
		token,
		verified: true,
		subscription: 'active',
		balances: { RUB: '5000.00' },
		profile,
		...extra,
	});
	// A Result URL so that the sandbox builds each postback (every test loses them).
	await control('PATCH', `/shops/${m.shopId}`, { resultUrl: 'http://127.0.0.1:9/lost' });
	const api = async (method: 'GET' | 'POST', path: string, params: Record<string, string>) => {
		const qs = new URLSearchParams(params).toString();
		const r = await fetch(`${url}/api/v1${path}${method === 'GET' ? `?${qs}` : ''}`, {
			method,
			headers: {
				authorization: `Bearer ${token}`,
				...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
			},
			body: method === 'POST' ? qs : undefined,
		});
		return (await r.json()) as Json;
	};
	/**
	 * A bill; by default the payer pays the commission (in `spec` OutSum is then more than the API's
	 * amount), `payerPaysCommission: false` leaves the service's default (the merchant pays).
	 */
	const bill = async (
		amount: string,
		type = 'NORMAL',
		orderId = `o-${randomBytes(4).toString('hex')}`,
		payerPaysCommission = true,
	) => {
		const created = await api('POST', '/bill/create', {
			amount,
			shop_id: m.shopId,
			order_id: orderId,
			type,
			...(payerPaysCommission ? { payer_pays_commission: '1' } : {}),
		});
		if (!created.bill_id) throw new Error(`bill/create: ${JSON.stringify(created)}`);
		return { billId: created.bill_id as string, orderId };
	};
	/** One payment of a bill; `lose`: the service gives its postback up without sending it. */
	const pay = async (billId: string, lose = true) => {
		const paid = await control('POST', `/bills/${billId}/pay`, { losePostback: lose });
		return {
			postback: paid.postback as Record<string, string>,
			paymentId: paid.payment.id as string,
		};
	};
	/** A payout in SUCCESS whose postback the service lost. */
	const lostPayout = async (amount: string) => {
		await control('PATCH', `/merchants/${m.merchantId}`, { losePostbacks: true });
		const created = await api('POST', '/payout/personal/create', {
			amount,
			payout_account_id: m.payoutAccountId,
			order_id: `po-${randomBytes(4).toString('hex')}`,
		});
		const id = created.data[0].id as string;
		await control('POST', `/payouts/${id}/advance`, { status: 'SUCCESS' });
		await control('PATCH', `/merchants/${m.merchantId}`, { losePostbacks: false });
		return id;
	};
	return { ...m, token, api, bill, pay, lostPayout } as Json & {
		token: string;
		bill: typeof bill;
		pay: typeof pay;
		lostPayout: typeof lostPayout;
	};
}
