/**
 * P2P deal postbacks: the service's P2P product posts a deal's outcome to the shop's Result URL,
 * signed like a payout. A deal is neither a payment nor a payout of the shop; the sandbox makes
 * none, it only sends the postback (POST /_sandbox/p2p-deals) so that a receiver can be held to
 * telling it apart. The field set is the one the service's typed client models: `TrsId` (the
 * deal), `InvId`, `Status` (NEW, PROCESS, SUCCESS, FAIL), `Amount`, `Currency`, `BalanceAmount`,
 * `BalanceCurrency`, and the deal's lists as form fields (`Payment[0][id]`, `Payment[0][amount]`,
 * `Payout[0][id]`, ...), signed upper-case `MD5(Amount:TrsId:token)`.
 */
import { format2 } from './money.ts';
import { payoutSignature, randomId, type Fields, type Merchant, type Shop } from './model.ts';
import { postbackEncoding } from './postbacks.ts';
import type { State } from './state.ts';

export const DEAL_STATUSES = ['NEW', 'PROCESS', 'SUCCESS', 'FAIL'] as const;
export const DEAL_CURRENCIES = ['RUB', 'USD', 'EUR', 'USDT'] as const;

/** One payment or payout a deal lists: its id and amount in cents. */
export interface DealEntry {
	id: string;
	amount: number;
}

/** What a deal postback tells (amounts in cents). */
export interface Deal {
	trsId: string;
	invId: string;
	status: (typeof DEAL_STATUSES)[number];
	amount: number;
	currency: (typeof DEAL_CURRENCIES)[number];
	balanceAmount: number;
	balanceCurrency: (typeof DEAL_CURRENCIES)[number];
	payments: DealEntry[];
	payouts: DealEntry[];
}

/** A new deal's id, shaped as the sandbox's other ids. */
export function dealId(): string {
	return `P2P${randomId(9)}`;
}

/** The deal's list under `name` as form fields: `Payment[0][id]`, `Payment[0][amount]`, ... */
function listFields(name: 'Payment' | 'Payout', entries: readonly DealEntry[]): Fields {
	const fields: Fields = {};
	entries.forEach((entry, index) => {
		fields[`${name}[${index}][id]`] = entry.id;
		fields[`${name}[${index}][amount]`] = format2(entry.amount);
	});
	return fields;
}

/** The deal postback's fields, signed with the merchant's token. */
export function dealPostback(deal: Deal, merchant: Pick<Merchant, 'token'>): Fields {
	const fields: Fields = {
		TrsId: deal.trsId,
		InvId: deal.invId,
		Status: deal.status,
		Amount: format2(deal.amount),
		Currency: deal.currency,
		BalanceAmount: format2(deal.balanceAmount),
		BalanceCurrency: deal.balanceCurrency,
		...listFields('Payment', deal.payments),
		...listFields('Payout', deal.payouts),
	};
	return { ...fields, SignatureValue: payoutSignature(fields.Amount, deal.trsId, merchant.token) };
}

/**
 * Sends a deal's postback to the shop's Result URL (form fields, JSON in `spec`, the usual
 * retries, lost with the merchant's losePostbacks); the delivery log files it as `p2pDeal` under
 * the deal's id. `url` null: the shop has no Result URL and nothing was sent.
 */
export function sendDeal(
	state: State,
	shop: Shop,
	deal: Deal,
): { postback: Fields; url: string | null } {
	const merchant = state.merchants.get(shop.merchantId) as Merchant;
	const postback = dealPostback(deal, merchant);
	if (shop.resultUrl)
		state.options.deliver('p2pDeal', shop.resultUrl, postback, deal.trsId, {
			lost: merchant.losePostbacks,
			encoding: postbackEncoding(merchant),
		});
	return { postback, url: shop.resultUrl };
}
