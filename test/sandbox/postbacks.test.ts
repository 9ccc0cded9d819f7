import { describe, expect, it } from 'vitest';
import {
	harness,
	harnessAndListener,
	listener,
	md5,
	parseRedirectForm,
	read,
	type Harness,
	type Listener,
} from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

let h: Harness;
let shop: Listener;
harnessAndListener(async (started, listening) => {
	h = started;
	shop = listening;
	await h.control('PATCH', `shops/${h.sb.shopId}`, {
		resultUrl: `${shop.url}/result`,
		successUrl: `${shop.url}/success`,
		failUrl: `${shop.url}/fail`,
	});
});

async function payOnPage(payPageUrl: string, form: Record<string, string>) {
	const response = await fetch(payPageUrl, { method: 'POST', body: new URLSearchParams(form) });
	return read(response);
}

describe('bill → payment page → postback → redirect', () => {
	it('pays on the HTML page; the shop gets a signed form postback and the browser an auto-submitting POST to the Success URL', async () => {
		const created = await h.api('POST', 'bill/create', {
			amount: '18.54',
			shop_id: h.sb.shopId,
			order_id: 'order-77',
			custom: 'user=5&x=ä',
		});
		const billId = created.body.bill_id;
		const pageHtml = await (await fetch(created.body.link_page_url)).text();
		expect(pageHtml).toContain(`action="/pay/${billId}"`);
		for (const outcome of ['full', 'under', 'over', 'fail'])
			expect(pageHtml).toContain(`value="${outcome}"`);
		expect(pageHtml).toContain('value="BANK_CARD"');
		expect(pageHtml).toContain('value="SBP"');

		const before = shop.received.length;
		const answer = await payOnPage(created.body.link_page_url, { method: 'SBP', outcome: 'full' });
		expect(answer.status).toBe(200);
		const redirect = parseRedirectForm(answer.text);
		expect(redirect.method).toBe('post');
		expect(redirect.action).toBe(`${shop.url}/success`);
		expect(answer.text).toContain('.submit()');
		expect(redirect.fields).toEqual({
			InvId: 'order-77',
			OutSum: '18.54',
			CurrencyIn: 'RUB',
			custom: 'user=5&x=ä',
			SignatureValue: md5(`18.54:order-77:${h.token}`),
		});

		// The browser submits the form: the shop's listener receives it.
		const submitted = await fetch(redirect.action, {
			method: 'POST',
			body: new URLSearchParams(redirect.fields),
		});
		expect(submitted.status).toBe(200);

		const postback = await waitFor('postback', () =>
			shop.received.slice(before).find((r) => r.path === '/result'),
		);
		expect(postback.method).toBe('POST');
		expect(postback.headers['content-type']).toBe('application/x-www-form-urlencoded');
		const f = postback.fields;
		// Exactly the payment postback of the interface document.
		expect(f).toEqual({
			InvId: 'order-77',
			OutSum: '18.54',
			Commission: '0.56',
			Currency: 'RUB',
			CurrencyIn: 'RUB',
			TrsId: expect.any(String),
			Status: 'SUCCESS',
			custom: 'user=5&x=ä',
			SignatureValue: expect.any(String),
		});
		expect(f['SignatureValue']).toBe(md5(`${f['OutSum']}:${f['InvId']}:${h.token}`));
		const browser = shop.received.slice(before).find((r) => r.path === '/success');
		expect(browser?.fields['SignatureValue']).toBe(f['SignatureValue']);

		const payments = await h.api('GET', 'bill/payments', { id: billId });
		expect(payments.body.data[0].id).toBe(f['TrsId']);
		const log = await h.control('GET', `deliveries?trsId=${f['TrsId']}`);
		expect(log.body.data).toHaveLength(1);
		expect(log.body.data[0]).toMatchObject({
			kind: 'payment',
			attempt: 1,
			status: 200,
			delivered: true,
			url: `${shop.url}/result`,
		});
	});

	for (const [outcome, status, target] of [
		['fail', 'FAIL', 'fail'],
		['under', 'UNDERPAID', 'fail'],
		['over', 'OVERPAID', 'success'],
	] as const) {
		it(`outcome ${outcome}: postback ${status}, browser sent to the ${target} URL`, async () => {
			const created = await h.api('POST', 'bill/create', {
				amount: '200',
				shop_id: h.sb.shopId,
				order_id: `o-${outcome}`,
			});
			const answer = await payOnPage(created.body.link_page_url, { method: 'BANK_CARD', outcome });
			const redirect = parseRedirectForm(answer.text);
			expect(redirect.action).toBe(`${shop.url}/${target}`);
			expect(redirect.fields['custom']).toBe('');
			expect(redirect.fields['SignatureValue']).toBe(
				md5(`${redirect.fields['OutSum']}:o-${outcome}:${h.token}`),
			);
			const postback = await waitFor('postback', () =>
				shop.received.find((r) => r.path === '/result' && r.fields['InvId'] === `o-${outcome}`),
			);
			expect(postback.fields['Status']).toBe(status);
			expect(postback.fields['custom']).toBeUndefined();
			expect(postback.fields['SignatureValue']).toBe(
				md5(`${postback.fields['OutSum']}:o-${outcome}:${h.token}`),
			);
		});
	}

	it('a bill with payment_method offers only that method and refuses another', async () => {
		const created = await h.api('POST', 'bill/create', {
			amount: '10',
			shop_id: h.sb.shopId,
			payment_method: 'BANK_CARD',
		});
		const html = await (await fetch(created.body.link_page_url)).text();
		expect(html).toContain('value="BANK_CARD"');
		expect(html).not.toContain('value="SBP"');
		const refused = await payOnPage(created.body.link_page_url, { method: 'SBP', outcome: 'full' });
		expect(refused.status).toBe(400);
		expect((await h.api('GET', 'bill/status', { id: created.body.bill_id })).body.status).toBe(
			'NEW',
		);
	});

	it('a paid NORMAL bill page says so and takes no second payment', async () => {
		const created = await h.api('POST', 'bill/create', { amount: '10', shop_id: h.sb.shopId });
		await payOnPage(created.body.link_page_url, { outcome: 'full' });
		expect((await fetch(created.body.link_page_url)).status).toBe(409);
		const again = await payOnPage(created.body.link_page_url, { outcome: 'full' });
		expect(again.status).toBe(409);
		expect(
			(await h.api('GET', 'bill/payments', { id: created.body.bill_id })).body.data,
		).toHaveLength(1);
	});

	it('without Success/Fail/Result URLs: a plain result page, no postback, redirect url null', async () => {
		const m = await h.merchant();
		const created = await h.api(
			'POST',
			'bill/create',
			{ amount: '10', shop_id: m.shopId },
			m.token,
		);
		const page = await payOnPage(created.body.link_page_url, { outcome: 'full' });
		expect(page.status).toBe(200);
		expect(page.text).not.toContain('<form');
		expect(page.text).toContain('SUCCESS');
		const second = await h.api('POST', 'bill/create', { amount: '10', shop_id: m.shopId }, m.token);
		const pay = await h.control('POST', `bills/${second.body.bill_id}/pay`, { outcome: 'full' });
		expect(pay.body.postback).toBeNull();
		expect(pay.body.redirect.url).toBeNull();
		const log = await h.control('GET', `deliveries?trsId=${pay.body.payment.id}`);
		expect(log.body.data).toEqual([]);
	});

	it('control pay returns the postback and redirect fields it sends', async () => {
		const created = await h.api('POST', 'bill/create', {
			amount: '50',
			shop_id: h.sb.shopId,
			order_id: 'ctl-1',
			custom: 'k',
		});
		const pay = await h.control('POST', `bills/${created.body.bill_id}/pay`, {
			outcome: 'full',
			method: 'BANK_CARD',
		});
		expect(pay.body.redirect).toEqual({
			url: `${shop.url}/success`,
			fields: {
				InvId: 'ctl-1',
				OutSum: '50.00',
				CurrencyIn: 'RUB',
				custom: 'k',
				SignatureValue: md5(`50.00:ctl-1:${h.token}`),
			},
		});
		const received = await waitFor('postback', () =>
			shop.received.find((r) => r.fields['TrsId'] === pay.body.payment.id),
		);
		expect(received.fields).toEqual(pay.body.postback);
	});

	it('Currency is RUB as the document lists it, CurrencyIn the bill currency; liveExtras adds the fields live postbacks carry', async () => {
		const m = await h.merchant({
			shop: { resultUrl: `${shop.url}/result`, defaultCurrency: 'USD' },
		});
		const usd = await h.api(
			'POST',
			'bill/create',
			{ amount: '10', shop_id: m.shopId, order_id: 'usd-1' },
			m.token,
		);
		const plain = await h.control('POST', `bills/${usd.body.bill_id}/pay`, {
			outcome: 'full',
			method: 'SBP',
		});
		expect(plain.body.postback).toMatchObject({
			Currency: 'RUB',
			CurrencyIn: 'USD',
			OutSum: '10.00',
		});
		for (const extra of ['AccountType', 'AccountNumber', 'BalanceAmount', 'BalanceCurrency'])
			expect(plain.body.postback).not.toHaveProperty(extra);

		expect(
			(await h.control('PATCH', `merchants/${m.merchantId}`, { liveExtras: true })).body.liveExtras,
		).toBe(true);
		const rub = await h.api(
			'POST',
			'bill/create',
			{ amount: '10', shop_id: m.shopId, order_id: 'rub-1', currency_in: 'RUB' },
			m.token,
		);
		const live = await h.control('POST', `bills/${rub.body.bill_id}/pay`, {
			outcome: 'full',
			method: 'SBP',
		});
		expect(live.body.postback).toMatchObject({
			Currency: 'RUB',
			CurrencyIn: 'RUB',
			AccountType: 'SBP',
			BalanceAmount: '9.70',
			BalanceCurrency: 'RUB',
		});
		expect(live.body.postback.AccountNumber).toMatch(/^\+79\*+\d{4}$/);
		expect(live.body.postback.SignatureValue).toBe(md5(`10.00:rub-1:${m.token}`));
	});
});

describe('retries', () => {
	it('retries a non-200 answer 5 times on the 10^n s schedule scaled by the time factor, in order, then stops', async () => {
		const factor = 0.00001;
		const failing = await listener(() => 500);
		const fast = await harness({ timeFactor: factor });
		try {
			await fast.control('PATCH', `shops/${fast.sb.shopId}`, {
				resultUrl: `${failing.url}/result`,
			});
			const created = await fast.api('POST', 'bill/create', {
				amount: '10',
				shop_id: fast.sb.shopId,
				order_id: 'retry-1',
			});
			const pay = await fast.control('POST', `bills/${created.body.bill_id}/pay`, {
				outcome: 'full',
			});
			const trsId = pay.body.payment.id;
			const log = await waitFor('six attempts', async () => {
				const answer = await fast.control('GET', `deliveries?trsId=${trsId}`);
				return answer.body.data.length === 6 && answer.body.pending === 0
					? answer.body.data
					: undefined;
			});
			expect(log.map((entry: { attempt: number }) => entry.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
			expect(
				log.every(
					(entry: { status: number; delivered: boolean }) =>
						entry.status === 500 && !entry.delivered,
				),
			).toBe(true);
			const delays = log.map((entry: { nextAttemptInMs: number | null }) => entry.nextAttemptInMs);
			expect(delays.slice(0, 5)).toEqual(
				[10, 100, 1000, 10_000, 100_000].map((s) => expect.closeTo(s * 1000 * factor, 6)),
			);
			expect(delays[5]).toBeNull();
			expect(new Set(log.map((entry: { id: string }) => entry.id)).size).toBe(1);
			expect(failing.received).toHaveLength(6);
			for (const received of failing.received) expect(received.fields['TrsId']).toBe(trsId);
			const times = log.map((entry: { at: string }) => Date.parse(entry.at));
			const gaps = times.slice(1).map((t: number, i: number) => t - (times[i] as number));
			expect(gaps[4]).toBeGreaterThan(gaps[0]);
		} finally {
			await fast.close();
			await failing.close();
		}
	});

	it('stops retrying once the answer is 200', async () => {
		const flaky = await listener((index) => (index < 2 ? 503 : 200));
		const fast = await harness({ timeFactor: 0.00001 });
		try {
			await fast.control('PATCH', `shops/${fast.sb.shopId}`, { resultUrl: `${flaky.url}/result` });
			const created = await fast.api('POST', 'bill/create', {
				amount: '10',
				shop_id: fast.sb.shopId,
			});
			await fast.control('POST', `bills/${created.body.bill_id}/pay`, { outcome: 'full' });
			const log = await waitFor('delivery done', async () => {
				const answer = await fast.control('GET', 'deliveries?kind=payment');
				return answer.body.pending === 0 && answer.body.data.length > 0
					? answer.body.data
					: undefined;
			});
			expect(log.map((e: { attempt: number; status: number }) => [e.attempt, e.status])).toEqual([
				[1, 503],
				[2, 503],
				[3, 200],
			]);
			expect(log[2].delivered).toBe(true);
			expect(flaky.received).toHaveLength(3);
		} finally {
			await fast.close();
			await flaky.close();
		}
	});

	it('logs connection errors and timeouts as attempts without a status', async () => {
		const silent = await listener();
		const hanging = await import('node:http').then(
			({ createServer }) =>
				new Promise<{ url: string; server: import('node:http').Server }>((resolve) => {
					const server = createServer(() => undefined);
					server.listen(0, '127.0.0.1', () => {
						const address = server.address();
						resolve({
							url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`,
							server,
						});
					});
				}),
		);
		await silent.close();
		const fast = await harness({ timeFactor: 0.000001, postbackTimeoutMs: 50 });
		try {
			const refused = await fast.control('POST', 'shops', { resultUrl: `${silent.url}/gone` });
			const slow = await fast.control('POST', 'shops', { resultUrl: `${hanging.url}/slow` });
			for (const shopId of [refused.body.shopId, slow.body.shopId]) {
				const created = await fast.api('POST', 'bill/create', { amount: '10', shop_id: shopId });
				await fast.control('POST', `bills/${created.body.bill_id}/pay`, { outcome: 'full' });
			}
			const log = await waitFor('twelve attempts', async () => {
				const answer = await fast.control('GET', 'deliveries');
				return answer.body.pending === 0 && answer.body.data.length === 12
					? answer.body.data
					: undefined;
			});
			const gone = log.filter((e: { url: string }) => e.url.endsWith('/gone'));
			const timedOut = log.filter((e: { url: string }) => e.url.endsWith('/slow'));
			expect(gone).toHaveLength(6);
			expect(timedOut).toHaveLength(6);
			for (const entry of gone) expect(entry).toMatchObject({ status: null, delivered: false });
			for (const entry of gone) expect(entry.error).toBeTruthy();
			for (const entry of timedOut) expect(entry).toMatchObject({ status: null, error: 'timeout' });
		} finally {
			await fast.close();
			hanging.server.closeAllConnections();
			hanging.server.close();
		}
	});

	it('close cancels pending retries', async () => {
		const failing = await listener(() => 500);
		const slow = await harness({ timeFactor: 1 });
		await slow.control('PATCH', `shops/${slow.sb.shopId}`, { resultUrl: `${failing.url}/result` });
		const created = await slow.api('POST', 'bill/create', {
			amount: '10',
			shop_id: slow.sb.shopId,
		});
		await slow.control('POST', `bills/${created.body.bill_id}/pay`, { outcome: 'full' });
		await waitFor('first attempt', () => failing.received.length === 1);
		await waitFor(
			'logged',
			async () => (await slow.control('GET', 'deliveries')).body.data.length === 1,
		);
		expect(slow.sb.context.deliverer.pending).toBe(1);
		await slow.close();
		expect(slow.sb.context.deliverer.pending).toBe(0);
		await failing.close();
	});
});

describe('payout postbacks', () => {
	it('SUCCESS, FAIL and DECLINED send a signed payout postback to the webhook URL, and ERROR a FAIL one (live); PROCESS none', async () => {
		const hook = await listener();
		try {
			const m = await h.merchant({ payoutWebhookUrl: `${hook.url}/payouts` });
			const make = async () =>
				(
					await h.api(
						'POST',
						'payout/personal/create',
						{ amount: '100.50', payout_account_id: m.payoutAccountId },
						m.token,
					)
				).body.data[0].id as string;
			const sent: string[] = [];
			for (const status of ['SUCCESS', 'FAIL', 'DECLINED', 'ERROR']) {
				const id = await make();
				await h.control('POST', `payouts/${id}/advance`, { status: 'PROCESS' });
				await h.control('POST', `payouts/${id}/advance`, { status });
				sent.push(id);
			}
			await waitFor('four postbacks', () => hook.received.length >= 4);
			const bodies = hook.received.slice(0, 4).map((r) => r.fields);
			expect(bodies.map((b) => b['TrsId'])).toEqual(sent);
			// The public record's postbacks carry FAIL for an ERROR payout too.
			expect(bodies.map((b) => b['Status'])).toEqual(['SUCCESS', 'FAIL', 'DECLINED', 'FAIL']);
			for (const body of bodies) {
				expect(body).toMatchObject({
					Amount: '112.51',
					Commission: '12.01',
					Currency: 'RUB',
					AccountType: 'BANK_CARD',
					BalanceAmount: '112.51',
					BalanceCommission: '12.01',
					BalanceCurrency: 'RUB',
					CommissionApplyType: 'sender',
					IsAuto: 'false',
				});
				expect(body['AccountNumber']).toMatch(/^\d{6}\*+\d{4}$/);
				expect(body['SignatureValue']).toBe(md5(`${body['Amount']}:${body['TrsId']}:${m.token}`));
			}
			const log = await h.control('GET', 'deliveries?kind=payout');
			expect(
				log.body.data.filter((e: { url: string }) => e.url === `${hook.url}/payouts`),
			).toHaveLength(4);
		} finally {
			await hook.close();
		}
	});

	it.each([
		['live', 'SBP'],
		['spec', 'QIWI'],
	])(
		'a payout to a phone number says AccountType %s → %s (the document lists QIWI and BANK_CARD only; the public record SBP)',
		async (profile, accountType) => {
			const hook = await listener();
			try {
				const m = await h.merchant({ payoutWebhookUrl: `${hook.url}/payouts`, profile });
				const created = await h.api(
					'POST',
					'payout/regular/create',
					{
						amount: '100',
						currency: 'RUB',
						account_type: 'sbp',
						account_identifier: '+7 900 123-45-67',
						account_bank: '100000000004',
					},
					m.token,
				);
				expect(created.status).toBe(200);
				const id = created.body.data[0].id;
				await h.control('POST', `payouts/${id}/advance`, { status: 'DECLINED' });
				const received = await waitFor('payout postback', () => hook.received[0]);
				// spec posts JSON (amounts as numbers written as signed), live form fields.
				const fields: Record<string, unknown> =
					profile === 'spec' ? JSON.parse(received.raw) : received.fields;
				expect(fields).toMatchObject({
					TrsId: id,
					Status: 'DECLINED',
					AccountType: accountType,
					AccountNumber: '+79001234567',
				});
				const amount = /"Amount":([0-9.]+)/.exec(received.raw)?.[1] ?? fields['Amount'];
				expect(fields['SignatureValue']).toBe(md5(`${String(amount)}:${id}:${m.token}`));
			} finally {
				await hook.close();
			}
		},
	);
});
