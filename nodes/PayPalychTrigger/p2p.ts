import { canonicalStatus, describeRejection, verifyPostback, type PostbackFields } from '../shared';
import { printable, refused, type Answer, type Call } from './answer';
import { checkSigned } from './credential';

/**
 * A P2P deal postback: the service's P2P product posts its deals to the shop's Result URL, signed
 * like a payout (`MD5(Amount:TrsId:token)`), with lists of the deal's payments and payouts
 * (postbackKindOf tells it by its fields). It is neither a payment nor a payout of the shop, so it
 * starts no workflow of any event; a verified one is answered 200 (the service stops retrying) and
 * logged as what it is, a forged one gets 401 like every forgery. No trigger event takes deals.
 */
export async function receiveP2pDeal(call: Call, fields: PostbackFields): Promise<Answer> {
	const verified = await checkSigned(call.context, call.event, (tokens) =>
		verifyPostback('payout', fields, tokens),
	);
	if (!verified.ok) {
		const why =
			verified.reason === 'no_token'
				? 'The trigger has no API token to verify calls: set it in the PayPalych credential'
				: describeRejection(verified);
		return refused({ event: 'P2P deal' }, verified.reason === 'no_token' ? 500 : 401, why);
	}
	const deal = printable(`${(fields.TrsId ?? '').trim()} ${canonicalStatus(fields.Status)}`);
	return {
		status: 200,
		body: 'OK',
		receipt: 'ignored',
		log: {
			level: 'info',
			message: `PayPalych Trigger (${call.event}) received a P2P deal postback (deal ${deal}, Amount ${printable(fields.Amount ?? '')}): it is neither a payment nor a payout of the shop, so it started nothing and was answered OK so that the service stops sending it.`,
		},
	};
}
