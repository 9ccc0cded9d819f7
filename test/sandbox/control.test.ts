import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './helpers.ts';

let h: Harness;
beforeAll(async () => {
	h = await harness();
});
afterAll(async () => {
	await h.close();
});

describe('control API', () => {
	it('creates merchants with chosen flags and shows them', async () => {
		const m = await h.merchant({
			verified: false,
			balances: { RUB: '12.34', EUR: '5' },
			payoutSplitSize: '700',
			shop: { defaultCurrency: 'USD' },
		});
		expect(m.token).toMatch(/^\d+\|[A-Za-z0-9]{40}$/);
		const view = await h.control('GET', `merchants/${m.merchantId}`);
		expect(view.status).toBe(200);
		expect(view.body).toMatchObject({
			id: m.merchantId,
			token: m.token,
			verified: false,
			banned: false,
			subscription: 'active',
			payoutSplitSize: '700.00',
			balances: { RUB: { available: '12.34', locked: '0.00' }, EUR: { available: '5.00' } },
		});
		expect(view.body.shops.map((s: { id: string }) => s.id)).toEqual([m.shopId]);
		expect(view.body.shops[0].defaultCurrency).toBe('USD');
		expect(view.body.payoutAccounts.map((a: { id: string }) => a.id)).toEqual([m.payoutAccountId]);
		expect(view.body.payouts).toEqual([]);
		await h.control('PATCH', `merchants/${m.merchantId}`, { verified: true });
		const payout = await h.api(
			'POST',
			'payout/personal/create',
			{ amount: '1', payout_account_id: m.payoutAccountId },
			m.token,
		);
		const after = await h.control('GET', `merchants/${m.merchantId}`);
		expect(after.body.payouts.map((p: { id: string }) => p.id)).toEqual([payout.body.data[0].id]);
	});

	it('fixes a token on request and refuses a token in use', async () => {
		const m = await h.merchant({ token: '9|fixedfixedfixedfixedfixedfixedfixedfixed' });
		expect(m.token).toBe('9|fixedfixedfixedfixedfixedfixedfixedfixed');
		expect((await h.api('GET', 'merchant/balance', {}, m.token)).status).toBe(200);
		const taken = await h.control('POST', 'merchants', { token: m.token });
		expect(taken.status).toBe(409);
	});

	it('answers 400 for bad control bodies and 404 for unknown ids, changing nothing', async () => {
		const bad = await h.control('PATCH', `merchants/${h.sb.merchantId}`, {
			subscription: 'lifetime',
			balances: { RUB: 'lots' },
		});
		expect(bad.status).toBe(400);
		expect(bad.body.error).toBe('invalid_request');
		const view = await h.control('GET', `merchants/${h.sb.merchantId}`);
		expect(view.body.subscription).toBe('active');
		expect((await h.control('GET', 'merchants/nope')).status).toBe(404);
		expect((await h.control('POST', 'bills/nope/pay', { outcome: 'full' })).status).toBe(404);
		expect((await h.control('POST', 'payouts/nope/advance', { status: 'SUCCESS' })).status).toBe(
			404,
		);
		expect((await h.control('POST', 'faults', { kind: 'flood', count: 1 })).status).toBe(400);
	});

	it('reset brings back the single demo merchant with the same token and ids', async () => {
		const local = await harness({ token: '5|resetresetresetresetresetresetresetreset' });
		try {
			const bill = await local.api('POST', 'bill/create', {
				amount: '10',
				shop_id: local.sb.shopId,
			});
			await local.control('PATCH', `merchants/${local.sb.merchantId}`, { banned: true });
			const other = await local.merchant();
			await local.control('POST', `merchants/${local.sb.merchantId}/rotate-token`);
			const reset = await local.control('POST', 'reset');
			expect(reset.body).toEqual({
				merchantId: local.sb.merchantId,
				token: '5|resetresetresetresetresetresetresetreset',
				shopId: local.sb.shopId,
				payoutAccountId: local.sb.payoutAccountId,
			});
			expect((await local.api('GET', 'bill/status', { id: bill.body.bill_id })).body.message).toBe(
				'api:error.bill_not_found',
			);
			expect((await local.api('GET', 'merchant/balance', {}, other.token)).status).toBe(401);
			const balance = await local.api('GET', 'merchant/balance');
			expect(balance.status).toBe(200);
			expect(
				(await local.api('POST', 'bill/create', { amount: '10', shop_id: local.sb.shopId })).status,
			).toBe(200);
		} finally {
			await local.close();
		}
	});
});

describe('faults', () => {
	it('500 for the next N API requests, then normal answers', async () => {
		const set = await h.control('POST', 'faults', { kind: '500', count: 2 });
		expect(set.body.faults).toHaveLength(1);
		for (let i = 0; i < 2; i += 1) {
			const answer = await h.api('GET', 'merchant/balance');
			expect(answer.status).toBe(500);
			expect(answer.body).toEqual({ success: false, message: 'api:error.general_error' });
		}
		expect((await h.api('GET', 'merchant/balance')).status).toBe(200);
		expect((await h.control('GET', 'faults')).body.faults).toEqual([]);
	});

	it('429 with Retry-After, only on the chosen path', async () => {
		await h.control('POST', 'faults', { kind: 429, count: 1, path: '/api/v1/bill/status' });
		expect((await h.api('GET', 'merchant/balance')).status).toBe(200);
		const limited = await h.api('GET', 'bill/status', { id: 'x' });
		expect(limited.status).toBe(429);
		expect(limited.headers.get('retry-after')).toBe('1');
		expect((await h.api('GET', 'bill/status', { id: 'x' })).status).toBe(422);
	});

	it('a 500 fault on bill/create creates no bill', async () => {
		const m = await h.merchant();
		await h.control('POST', 'faults', { kind: '500', count: 1, path: '/api/v1/bill/create' });
		expect(
			(await h.api('POST', 'bill/create', { amount: '10', shop_id: m.shopId }, m.token)).status,
		).toBe(500);
		const day = new Date().toISOString().slice(0, 10);
		expect(
			(await h.api('GET', 'bill/search', { start_date: day, finish_date: day }, m.token)).body.data,
		).toEqual([]);
	});

	it('delay answers normally after the delay', async () => {
		await h.control('POST', 'faults', { kind: 'delay', count: 1, delayMs: 50 });
		const answer = await h.api('GET', 'merchant/balance');
		expect(answer.status).toBe(200);
		expect(answer.body.success).toBe('true');
	});

	it('drop destroys the connection without an answer', async () => {
		await h.control('POST', 'faults', { kind: 'drop', count: 1 });
		await expect(h.api('GET', 'merchant/balance')).rejects.toThrow();
		expect((await h.api('GET', 'merchant/balance')).status).toBe(200);
	});

	it('error answers any key with the status the endpoint gives it', async () => {
		await h.control('POST', 'faults', {
			kind: 'error',
			key: 'bill_not_found',
			path: '/api/v1/merchant/balance',
		});
		const balance = await h.api('GET', 'merchant/balance');
		expect(balance.status).toBe(422);
		expect(balance.body).toEqual({ success: false, message: 'api:error.bill_not_found' });
		await h.control('POST', 'faults', {
			kind: 'error',
			key: 'bill_not_found',
			path: '/api/v1/bill/payments',
		});
		expect((await h.api('GET', 'bill/payments', { id: 'x' })).status).toBe(403);
		await h.control('POST', 'faults', {
			kind: 'error',
			key: 'general_error',
			path: '/api/v1/payout/regular/create',
		});
		expect((await h.api('POST', 'payout/regular/create', {})).status).toBe(500);
	});
});

describe('bin', () => {
	it('prints one JSON line with a ready demo merchant, serves bill/create, and exits on SIGTERM', async () => {
		const child = spawn(
			process.execPath,
			[
				'sandbox/src/bin.ts',
				'--port',
				'0',
				'--token',
				'1|binbinbinbinbinbinbinbinbinbinbinbinbinb',
			],
			{
				stdio: ['ignore', 'pipe', 'pipe'],
			},
		);
		try {
			const line = await new Promise<string>((resolve, reject) => {
				const lines = createInterface({ input: child.stdout });
				lines.once('line', resolve);
				child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
			});
			const info = JSON.parse(line);
			expect(Object.keys(info).sort()).toEqual([
				'merchantId',
				'payoutAccountId',
				'profile',
				'shopId',
				'token',
				'url',
			]);
			expect(info.profile).toBe('live');
			expect(info.token).toBe('1|binbinbinbinbinbinbinbinbinbinbinbinbinb');
			expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
			const created = await fetch(`${info.url}/api/v1/bill/create`, {
				method: 'POST',
				headers: { authorization: `Bearer ${info.token}` },
				body: new URLSearchParams({ amount: '10', shop_id: info.shopId }),
			});
			expect(created.status).toBe(200);
			const payout = await fetch(`${info.url}/api/v1/payout/personal/create`, {
				method: 'POST',
				headers: { authorization: `Bearer ${info.token}` },
				body: new URLSearchParams({ amount: '10', payout_account_id: info.payoutAccountId }),
			});
			expect(payout.status).toBe(200);
			const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
			child.kill('SIGTERM');
			expect(await exited).toBe(0);
		} finally {
			if (child.exitCode === null) child.kill('SIGKILL');
		}
	});
});
