// The sandbox's two profiles where the interface document leaves a choice open: `live` (what
// public integrations see, the sandbox's behaviour before profiles) and `spec` (the other answer
// the document allows: no order_id on bills, Laravel pages, an exclusive finish_date, Moscow
// time, a payment amount without the payer's commission, JSON postbacks).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
	harness,
	listener,
	md5,
	parseRedirectForm,
	type Harness,
	shopMerchants,
	type Listener,
	outputOf,
} from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

let h: Harness;
let shop: Listener;
beforeAll(async () => {
	h = await harness({ profile: 'spec' });
	shop = await listener();
});
afterAll(async () => {
	await h.close();
	await shop.close();
});

const { merchantIn, bill } = shopMerchants(() => ({ h, shop }));

async function at<T>(iso: string, run: () => Promise<T>): Promise<T> {
	await h.control('POST', 'clock', { now: iso });
	try {
		return await run();
	} finally {
		await h.control('POST', 'clock', { now: null });
	}
}

describe('choosing the profile', () => {
	it('the instance option sets the demo merchant and new merchants; the control API switches one merchant', async () => {
		expect(h.sb.profile).toBe('spec');
		const demo = await h.control('GET', `merchants/${h.sb.merchantId}`);
		expect(demo.body).toMatchObject({ profile: 'spec', searchPageSize: 15 });
		const fresh = await h.merchant();
		expect((await h.control('GET', `merchants/${fresh.merchantId}`)).body.profile).toBe('spec');
		const switched = await h.control('PATCH', `merchants/${fresh.merchantId}`, { profile: 'live' });
		expect(switched.body.profile).toBe('live');
		const bad = await h.control('PATCH', `merchants/${fresh.merchantId}`, { profile: 'guess' });
		expect(bad.status).toBe(400);
		// A reset keeps the instance's profile for the demo merchant.
		await h.control('POST', 'reset');
		expect((await h.control('GET', `merchants/${h.sb.merchantId}`)).body.profile).toBe('spec');
	});

	it('the bin takes --profile (and SANDBOX_PROFILE), prints it, documents it in --help and refuses an unknown one', async () => {
		const run = (args: string[], env: Record<string, string> = {}) =>
			spawn(process.execPath, ['sandbox/src/bin.ts', ...args], {
				stdio: ['ignore', 'pipe', 'pipe'],
				env: { ...process.env, ...env },
			});
		const firstLine = (child: ReturnType<typeof run>) =>
			new Promise<string>((resolve, reject) => {
				createInterface({ input: child.stdout! }).once('line', resolve);
				child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
			});
		const output = outputOf;
		for (const [args, env] of [
			[['--port', '0', '--profile', 'spec'], {}],
			[['--port', '0'], { SANDBOX_PROFILE: 'spec' }],
		] as const) {
			const child = run([...args], env);
			try {
				expect(JSON.parse(await firstLine(child)).profile).toBe('spec');
			} finally {
				child.kill('SIGTERM');
			}
		}
		const help = await output(run(['--help']));
		expect(help.code).toBe(0);
		expect(help.text).toContain('--profile live|spec');
		expect(help.text).toContain('JSON postbacks');
		const bad = await output(run(['--port', '0', '--profile', 'document']));
		expect(bad.code).toBe(2);
		expect(bad.text).toContain(
			'--profile (SANDBOX_PROFILE) must be one of live, spec, got document',
		);
	});
});

describe('spec: what the API answers', () => {
	it('shows no order_id on bills or payments, even with live extras; live shows it on bills', async () => {
		const spec = await merchantIn('spec', { liveExtras: true });
		const live = await merchantIn('live', { liveExtras: true });
		for (const [m, shown] of [
			[spec, false],
			[live, true],
		] as const) {
			const id = await bill(m.token, m.shopId, { order_id: 'ord-1' });
			const paid = await h.control('POST', `bills/${id}/pay`, { outcome: 'full' });
			expect(paid.body.postback.InvId).toBe('ord-1');
			const status = await h.api('GET', 'bill/status', { id }, m.token);
			const today = new Date().toISOString().slice(0, 10);
			const search = await h.api(
				'GET',
				'bill/search',
				{ start_date: '2000-01-01', finish_date: '2100-01-01', page: '1' },
				m.token,
			);
			const toggled = await h.api(
				'POST',
				'bill/toggle_activity',
				{ id: await bill(m.token, m.shopId, { order_id: 'ord-2' }), active: '0' },
				m.token,
			);
			const payment = await h.api('GET', 'payment/status', { id: paid.body.payment.id }, m.token);
			const payments = await h.api('GET', 'bill/payments', { id }, m.token);
			expect('order_id' in status.body, `bill/status ${today}`).toBe(shown);
			expect('order_id' in search.body.data[0]).toBe(shown);
			expect('order_id' in toggled.body).toBe(shown);
			expect(status.body.active).toBe(true);
			expect('order_id' in payment.body).toBe(false);
			expect('order_id' in payments.body.data[0]).toBe(false);
		}
	});

	it('writes created_at in Moscow time and counts days in Moscow time, finish_date exclusive', async () => {
		const spec = await merchantIn('spec');
		const live = await merchantIn('live');
		// 21:30 UTC on 10 March is 00:30 on 11 March in Moscow.
		const ids = await at('2025-03-10T21:30:00Z', async () => ({
			spec: await bill(spec.token, spec.shopId),
			live: await bill(live.token, live.shopId),
		}));
		expect((await h.api('GET', 'bill/status', { id: ids.spec }, spec.token)).body.created_at).toBe(
			'2025-03-11 00:30:00',
		);
		expect((await h.api('GET', 'bill/status', { id: ids.live }, live.token)).body.created_at).toBe(
			'2025-03-10 21:30:00',
		);
		const found = async (m: { token: string }, start: string, finish: string) =>
			(
				(await h.api('GET', 'bill/search', { start_date: start, finish_date: finish }, m.token))
					.body.data as Array<{ id: string }>
			).map((b) => b.id);
		// spec: [11 March, 12 March) holds it; [10 March, 11 March) does not (exclusive end, Moscow day).
		expect(await found(spec, '2025-03-11', '2025-03-12')).toEqual([ids.spec]);
		expect(await found(spec, '2025-03-10', '2025-03-11')).toEqual([]);
		expect(await found(spec, '2025-03-11', '2025-03-11')).toEqual([]);
		// live: the UTC day, both ends included.
		expect(await found(live, '2025-03-10', '2025-03-10')).toEqual([ids.live]);
		expect(await found(live, '2025-03-11', '2025-03-12')).toEqual([]);
		// The same date twice is not an error in either profile; a finish before the start is.
		const backwards = await h.api(
			'GET',
			'bill/search',
			{ start_date: '2025-03-12', finish_date: '2025-03-11' },
			spec.token,
		);
		expect(backwards.status).toBe(422);
	});

	it('pages bill/search and payout/search the Laravel way, whatever per_page or cursor say', async () => {
		const m = await merchantIn('spec', { searchPageSize: 2, payoutSplitSize: '1.00' });
		const created: string[] = [];
		for (let i = 0; i < 5; i++) created.push(await bill(m.token, m.shopId, { amount: `${i + 1}` }));
		const query = { start_date: '2000-01-01', finish_date: '2100-01-01', per_page: '100' };
		const first = await h.api('GET', 'bill/search', query, m.token);
		expect(first.body.data.map((b: { id: string }) => b.id)).toEqual(created.slice(0, 2));
		expect(first.body.meta).toMatchObject({
			current_page: 1,
			last_page: 3,
			per_page: 2,
			total: 5,
			from: 1,
			to: 2,
			path: `${h.sb.url}/api/v1/bill/search`,
		});
		expect(first.body.links.prev).toBeNull();
		const next = new URL(first.body.links.next as string);
		expect(`${next.origin}${next.pathname}`).toBe(`${h.sb.url}/api/v1/bill/search`);
		expect(Object.fromEntries(next.searchParams)).toEqual({ ...query, page: '2' });
		// Following links.next as given, with the token, reads every page once.
		const seen: string[] = [];
		let url: string | null = `${h.sb.url}/api/v1/bill/search?${new URLSearchParams(query)}`;
		let pages = 0;
		while (url) {
			const answer = (await (
				await fetch(url, { headers: { authorization: `Bearer ${m.token}` } })
			).json()) as { data: Array<{ id: string }>; links: { next: string | null } };
			seen.push(...answer.data.map((b) => b.id));
			url = answer.links.next;
			pages += 1;
		}
		expect(pages).toBe(3);
		expect(seen).toEqual(created);
		// A cursor is ignored (page 1), a page past the last one is empty, a bad page is page 1.
		const cursor = await h.api('GET', 'bill/search', { ...query, cursor: 'abc' }, m.token);
		expect(cursor.body.meta.current_page).toBe(1);
		const past = await h.api('GET', 'bill/search', { ...query, page: '9' }, m.token);
		expect(past.body).toMatchObject({ data: [], links: { next: null }, meta: { current_page: 9 } });
		const junk = await h.api('GET', 'bill/search', { ...query, page: 'x' }, m.token);
		expect(junk.body.meta.current_page).toBe(1);

		const payout = await h.api(
			'POST',
			'payout/personal/create',
			{ amount: '3', payout_account_id: m.payoutAccountId },
			m.token,
		);
		expect(payout.body.data).toHaveLength(3);
		const payouts = await h.api('GET', 'payout/search', { ...query, page: '2' }, m.token);
		expect(payouts.body.meta).toMatchObject({ current_page: 2, last_page: 2, total: 3 });
		expect(payouts.body.data).toHaveLength(1);
		expect(payouts.body.links.next).toBeNull();
	});

	it("leaves the payer's commission out of the payment's amount; OutSum includes it", async () => {
		for (const profile of ['spec', 'live'] as const) {
			const m = await merchantIn(profile);
			const id = await bill(m.token, m.shopId, { payer_pays_commission: '1', order_id: 'fee-1' });
			const paid = await h.control('POST', `bills/${id}/pay`, { outcome: 'full' });
			expect(paid.body.postback).toMatchObject({ OutSum: '103.00', Commission: '3.00' });
			const payment = await h.api('GET', 'payment/status', { id: paid.body.payment.id }, m.token);
			expect(payment.body).toMatchObject({
				amount: profile === 'spec' ? 100 : 103,
				amount_received: 100,
			});
			// The control API's view is the API's.
			expect(paid.body.payment.amount).toBe(payment.body.amount);
		}
	});

	it('posts JSON postbacks, decimals as numbers in the signed text; redirects stay browser forms', async () => {
		const m = await merchantIn('spec');
		await h.control('PATCH', `shops/${m.shopId}`, { successUrl: `${shop.url}/success` });
		await h.control('PATCH', `merchants/${m.merchantId}`, {
			payoutWebhookUrl: `${shop.url}/payout/${m.merchantId}`,
		});
		const id = await bill(m.token, m.shopId, { amount: '18.50', order_id: 'json-1' });
		const paid = await h.control('POST', `bills/${id}/pay`, { outcome: 'full' });
		const received = await waitFor('the JSON payment postback', () =>
			shop.received.find((r) => r.path === `/result/${m.shopId}`),
		);
		expect(received.headers['content-type']).toBe('application/json');
		expect(received.raw).toContain('"OutSum":18.50');
		const body = JSON.parse(received.raw) as Record<string, unknown>;
		expect(body).toMatchObject({ InvId: 'json-1', TrsId: paid.body.payment.id, Status: 'SUCCESS' });
		expect(body.SignatureValue).toBe(md5(`18.50:json-1:${m.token}`));
		const log = await h.control('GET', `deliveries?trsId=${paid.body.payment.id}`);
		expect(log.body.data[0]).toMatchObject({ contentType: 'application/json', status: 200 });
		// The customer's browser is sent on with a form POST, as the document describes it.
		expect(paid.body.redirect.url).toBe(`${shop.url}/success`);
		const page = await fetch(
			`${h.sb.url}/pay/${await bill(m.token, m.shopId, { order_id: 'json-2' })}`,
			{
				method: 'POST',
				body: new URLSearchParams({ method: 'BANK_CARD', outcome: 'full' }),
			},
		);
		expect(parseRedirectForm(await page.text())).toMatchObject({
			method: 'post',
			action: `${shop.url}/success`,
			fields: { InvId: 'json-2' },
		});

		const payout = await h.api(
			'POST',
			'payout/personal/create',
			{ amount: '100', payout_account_id: m.payoutAccountId },
			m.token,
		);
		const payoutId = payout.body.data[0].id as string;
		await h.control('POST', `payouts/${payoutId}/advance`, { status: 'SUCCESS' });
		const posted = await waitFor('the JSON payout postback', () =>
			shop.received.find((r) => r.path === `/payout/${m.merchantId}`),
		);
		expect(posted.headers['content-type']).toBe('application/json');
		expect(posted.raw).toContain('"Amount":112.00');
		expect(posted.raw).toContain('"IsAuto":false');
		expect(JSON.parse(posted.raw).SignatureValue).toBe(md5(`112.00:${payoutId}:${m.token}`));
	});

	it('a live merchant on the same instance still gets form postbacks', async () => {
		const m = await merchantIn('live');
		const id = await bill(m.token, m.shopId, { order_id: 'form-1' });
		await h.control('POST', `bills/${id}/pay`, { outcome: 'full' });
		const received = await waitFor('the form postback', () =>
			shop.received.find((r) => r.path === `/result/${m.shopId}`),
		);
		expect(received.headers['content-type']).toBe('application/x-www-form-urlencoded');
		expect(received.fields).toMatchObject({ InvId: 'form-1', OutSum: '100.00' });
	});

	it("counts the sandbox's own daily payout limit on the Moscow day", async () => {
		const m = await merchantIn('spec', { dailyPayoutLimit: '1000.00' });
		const create = (amount: string) =>
			h.api(
				'POST',
				'payout/personal/create',
				{ amount, payout_account_id: m.payoutAccountId },
				m.token,
			);
		// 20:30 UTC is 23:30 in Moscow; 21:30 UTC is the next Moscow day.
		expect((await at('2025-03-10T20:30:00Z', () => create('900'))).status).toBe(200);
		expect((await at('2025-03-10T20:45:00Z', () => create('200'))).body.message).toBe(
			'api:error.daily_payout_limit_exceeded',
		);
		expect((await at('2025-03-10T21:30:00Z', () => create('900'))).status).toBe(200);
	});
});
