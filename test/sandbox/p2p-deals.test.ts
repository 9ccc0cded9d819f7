// The P2P deal postback (POST /_sandbox/p2p-deals): the service's P2P product posts a deal to the
// shop's Result URL, signed like a payout (MD5(Amount:TrsId:token)), with its lists of payments
// and payouts as form fields. On both profiles (form fields in `live`, JSON with the lists as JSON
// lists in `spec`); the package's own body reader takes both to the same fields, and tells the
// deal from a payment and a payout.
import { describe, expect, it } from 'vitest';
import { parsePostbackBody, postbackKindOf, verifyPostback } from '../../nodes/shared/index.ts';
import { waitFor } from '../../scripts/harness/wait.ts';
import { PROFILES } from '../helpers/sandbox.ts';
import { harnessAndListener, md5, type Harness, type Listener } from './helpers.ts';

let h: Harness;
let shop: Listener;
harnessAndListener((started, listening) => {
	h = started;
	shop = listening;
});

describe.each(PROFILES)('P2P deal postbacks (%s profile)', (profile) => {
	it("sends a signed deal with its lists to the shop's Result URL", async () => {
		const m = await h.merchant({ profile });
		await h.control('PATCH', `shops/${m.shopId}`, { resultUrl: `${shop.url}/deal/${m.shopId}` });
		const sent = await h.control('POST', 'p2p-deals', {
			shopId: m.shopId,
			trsId: `deal-${m.shopId}`,
			invId: 'order-7',
			status: 'SUCCESS',
			amount: '150.50',
			currency: 'USDT',
			balanceAmount: '148.00',
			balanceCurrency: 'RUB',
			payments: [
				{ id: 'PAY-1', amount: '100.00' },
				{ id: 'PAY-2', amount: '50.50' },
			],
			payouts: [{ id: 'OUT-1', amount: '148.00' }],
		});
		expect(sent.status, sent.text).toBe(200);
		const expected = {
			TrsId: `deal-${m.shopId}`,
			InvId: 'order-7',
			Status: 'SUCCESS',
			Amount: '150.50',
			Currency: 'USDT',
			BalanceAmount: '148.00',
			BalanceCurrency: 'RUB',
			'Payment[0][id]': 'PAY-1',
			'Payment[0][amount]': '100.00',
			'Payment[1][id]': 'PAY-2',
			'Payment[1][amount]': '50.50',
			'Payout[0][id]': 'OUT-1',
			'Payout[0][amount]': '148.00',
			SignatureValue: md5(`150.50:deal-${m.shopId}:${m.token}`),
		};
		expect(sent.body).toEqual({ postback: expected, url: `${shop.url}/deal/${m.shopId}` });
		const posted = await waitFor('the deal postback', () =>
			shop.received.find((entry) => entry.path === `/deal/${m.shopId}`),
		);
		const type = String(posted.headers['content-type']);
		expect(type).toContain(profile === 'spec' ? 'json' : 'x-www-form-urlencoded');
		if (profile === 'spec') {
			// The lists as JSON lists of objects, the amounts as JSON numbers written as signed.
			expect(posted.raw).toContain(
				'"Payment":[{"id":"PAY-1","amount":100.00},{"id":"PAY-2","amount":50.50}]',
			);
			expect(posted.raw).toContain('"Payout":[{"id":"OUT-1","amount":148.00}]');
		}
		const parsed = parsePostbackBody(posted.raw, type);
		expect(parsed).toEqual({ ok: true, fields: expected });
		if (!parsed.ok) return;
		// Signed like a payout, and yet no payout: the fields say a deal.
		expect(verifyPostback('payout', parsed.fields, m.token)).toMatchObject({ ok: true });
		expect(postbackKindOf(parsed.fields)).toBe('p2pDeal');
		const log = await h.control('GET', `deliveries?kind=p2pDeal&trsId=deal-${m.shopId}`);
		expect(log.body.data).toEqual([
			expect.objectContaining({ kind: 'p2pDeal', delivered: true, body: expected }),
		]);
	});

	it('defaults: a new deal id, SUCCESS, RUB, the balance fields as the amount, no lists; without a Result URL nothing is sent', async () => {
		const m = await h.merchant({ profile });
		const quiet = await h.control('POST', 'p2p-deals', { shopId: m.shopId, amount: '10' });
		expect(quiet.status, quiet.text).toBe(200);
		expect(quiet.body.url).toBeNull();
		const fields = quiet.body.postback;
		expect(fields).toEqual({
			TrsId: expect.stringMatching(/^P2P[A-Za-z0-9]{9}$/),
			InvId: '',
			Status: 'SUCCESS',
			Amount: '10.00',
			Currency: 'RUB',
			BalanceAmount: '10.00',
			BalanceCurrency: 'RUB',
			SignatureValue: md5(`10.00:${fields.TrsId}:${m.token}`),
		});
		const log = await h.control('GET', `deliveries?trsId=${fields.TrsId}`);
		expect(log.body.data).toEqual([]);
		const bad = await h.control('POST', 'p2p-deals', { shopId: m.shopId, amount: '0' });
		expect(bad.status).toBe(400);
		const unknown = await h.control('POST', 'p2p-deals', { shopId: 'nope', amount: '1' });
		expect(unknown.status).toBe(404);
		const status = await h.control('POST', 'p2p-deals', { amount: '1', status: 'DONE' });
		expect(status.status).toBe(400);
	});
});
