import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { INodeParameters } from 'n8n-workflow';

import { failure, personal } from '../helpers/node-params.ts';
import { runNode } from '../helpers/n8n-context.ts';
import { startRecordingServer, type RecordingServer } from '../helpers/recording-server.ts';
import {
	control,
	newMerchant,
	patchMerchant,
	payoutsOf,
	PROFILE_TIME_ZONE,
	PROFILES,
	sandboxFor,
	serviceDay,
	start,
	type Sandbox,
} from '../helpers/sandbox.ts';

// The payout guardrails through the node's real execute() against the sandbox: Dry Run, Max
// Amount, Daily Limit and the rules for the node used as an AI agent's tool. The sandbox's
// payouts and a tripwire on its create endpoints show that a guarded payout sends nothing.
let sandbox: Sandbox;
sandboxFor('live', (started) => (sandbox = started));

const TOOL_TYPE = 'n8n-nodes-paypalych.payPalychTool';
const PERSONAL_CREATE = '/api/v1/payout/personal/create';
const REGULAR_CREATE = '/api/v1/payout/regular/create';

const card = (amount: string, orderId: string, options: INodeParameters = {}): INodeParameters => ({
	resource: 'payout',
	operation: 'createRegular',
	accountType: 'credit_card',
	amount,
	cardNumber: '4111 1111 1111 1111',
	cardHolder: 'IVAN PETROV',
	orderId,
	options,
});

const TRON = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
/** Payout › Create to a crypto wallet: USDT (or `currency`) to a TRX wallet. */
const wallet = (
	amount: string,
	orderId: string,
	options: INodeParameters = {},
	currency = 'USDT',
): INodeParameters => ({
	resource: 'payout',
	operation: 'createRegular',
	accountType: 'crypto',
	network: 'TRX',
	walletAddress: TRON,
	currency,
	amount,
	orderId,
	options,
});

/**
 * A tripwire on the sandbox's create endpoints: a zero-delay fault that counts down on every
 * create request that reaches the sandbox. `creates()` tells how many did.
 */
async function tripwire(
	on: Sandbox = sandbox,
): Promise<{ creates(): Promise<number>; remove(): Promise<void> }> {
	const sandbox = on;
	const armed = 1000;
	for (const path of [PERSONAL_CREATE, REGULAR_CREATE]) {
		await control(sandbox, 'POST', '/faults', { kind: 'delay', delayMs: 0, count: armed, path });
	}
	return {
		async creates() {
			const { faults } = await control<{ faults: Array<{ path: string; remaining: number }> }>(
				sandbox,
				'GET',
				'/faults',
			);
			const left = [PERSONAL_CREATE, REGULAR_CREATE].map(
				(path) => faults.find((f) => f.path === path)?.remaining ?? 0,
			);
			return left.reduce((sum, remaining) => sum + (armed - remaining), 0);
		},
		async remove() {
			await control(sandbox, 'DELETE', '/faults');
		},
	};
}

describe('Dry Run', () => {
	it('outputs what would be paid, looks the Order ID up and reads the balance, and sends no create request', async () => {
		const merchant = await newMerchant(sandbox, { balances: { RUB: '1000.00' } });
		const wire = await tripwire();
		try {
			const [out] = await runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '150.5', 'dry-1', { dryRun: true }),
			});
			expect(out.json).toMatchObject({
				dry_run: true,
				would_pay: true,
				amount: '150.50',
				currency: 'RUB',
				destination: `payout account ${merchant.payoutAccountId}`,
				order_id: 'dry-1',
				order_id_exists: false,
				balance_available: '1000.00',
				balance_covers: true,
			});
			const [tooMuch] = await runNode({
				credential: merchant.credential,
				parameters: card('1000.01', 'dry-2', { dryRun: true }),
			});
			expect(tooMuch.json).toMatchObject({
				dry_run: true,
				amount: '1000.01',
				destination: 'card 411111******1111',
				balance_covers: false,
			});
			expect(await wire.creates()).toBe(0);
		} finally {
			await wire.remove();
		}
		expect(await payoutsOf(sandbox, merchant.merchantId)).toEqual([]);
	});

	it('shows an Order ID that is already paid (would_pay: false) and refuses one paid with another amount', async () => {
		const merchant = await newMerchant(sandbox, { balances: { RUB: '5000.00' } });
		const [paid] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '300', 'dry-paid'),
		});
		const wire = await tripwire();
		try {
			const [out] = await runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '300', 'dry-paid', { dryRun: true }),
			});
			expect(out.json).toMatchObject({
				dry_run: true,
				would_pay: false,
				order_id_exists: true,
				existing_payout_ids: [paid.json.id],
			});
			const error = await failure(
				runNode({
					credential: merchant.credential,
					parameters: personal(merchant, '301', 'dry-paid', { dryRun: true }),
				}),
			);
			expect(error?.message).toContain('Order ID dry-paid already has a payout of 300.00');
			expect(await wire.creates()).toBe(0);
		} finally {
			await wire.remove();
		}
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(1);
	});
});

describe.each(PROFILES)('Dry Run of a crypto payout, sandbox profile %s', (profile) => {
	let sb: Sandbox;
	beforeAll(async () => {
		sb = await start(profile);
	});
	afterAll(async () => {
		await sb.close();
	});

	it("reads the balance it would be taken from, and tells whether it covers the amount only in the payout's currency", async () => {
		const merchant = await newMerchant(sb, { balances: { RUB: '1000.00', USDT: '500.00' } });
		const wire = await tripwire(sb);
		try {
			const [own] = await runNode({
				credential: merchant.credential,
				parameters: wallet('100', 'dry-crypto', { dryRun: true }),
			});
			// spec lists no USDT balance (the document's currencies): unknown, never "covers".
			expect(own.json).toMatchObject({
				dry_run: true,
				would_pay: true,
				amount: '100.00',
				currency: 'USDT',
				destination: `TRX wallet ${TRON}`,
				balance_available: profile === 'live' ? '500.00' : null,
				balance_covers: profile === 'live' ? true : null,
				summary: `Dry run: would pay 100.00 USDT to TRX wallet ${TRON} under Order ID dry-crypto; nothing was sent`,
			});
			const [fromRub] = await runNode({
				credential: merchant.credential,
				parameters: wallet('100', 'dry-crypto', { dryRun: true, accountCurrency: 'RUB' }),
			});
			// The RUB balance, but no exchange rate: whether it covers 100 USDT is not told.
			expect(fromRub.json).toMatchObject({
				balance_available: '1000.00',
				balance_currency: 'RUB',
				balance_covers: null,
			});
			expect(await wire.creates()).toBe(0);
		} finally {
			await wire.remove();
		}
		expect(await payoutsOf(sb, merchant.merchantId)).toEqual([]);
	});
});

describe('Max Amount', () => {
	it('refuses a payout above it before any request; the same amount passes', async () => {
		const merchant = await newMerchant(sandbox);
		const target = await startRecordingServer();
		try {
			const error = await failure(
				runNode({
					credential: { ...merchant.credential, baseUrl: target.url },
					parameters: card('1000.01', 'max-1', { maxAmount: '1000' }),
				}),
			);
			expect(error?.message).toBe(
				'Refused: the payout of 1000.01 to card 411111******1111 is above Max Amount 1000.00',
			);
			expect(error?.description).toContain('Nothing was sent');
			expect(target.requests).toEqual([]);
		} finally {
			await target.close();
		}
		const [out] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '1000', 'max-2', { maxAmount: '1000.00' }),
		});
		expect(out.json).toMatchObject({ amount: 1000, order_id: 'max-2' });
		const bad = await failure(
			runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '10', 'max-3', { maxAmount: '1.500' }),
			}),
		);
		expect(bad?.message).toMatch(/^Max Amount is ambiguous/);
		expect((await payoutsOf(sandbox, merchant.merchantId)).map((p) => p.order_id)).toEqual([
			'max-2',
		]);
	});

	it("holds a crypto payout to it in the payout's currency, before any request", async () => {
		const merchant = await newMerchant(sandbox);
		const target = await startRecordingServer();
		try {
			const error = await failure(
				runNode({
					credential: { ...merchant.credential, baseUrl: target.url },
					parameters: wallet('100.01', 'max-crypto', { maxAmount: '100' }),
				}),
			);
			expect(error?.message).toBe(
				`Refused: the payout of 100.01 to TRX wallet ${TRON} is above Max Amount 100.00`,
			);
			expect(target.requests).toEqual([]);
		} finally {
			await target.close();
		}
		const [out] = await runNode({
			credential: merchant.credential,
			parameters: wallet('100', 'max-crypto', { maxAmount: '100' }),
		});
		expect(out.json).toMatchObject({ amount: 100, currency: 'USDT', already_existed: false });
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(1);
	});
});

describe.each(PROFILES)('Daily Limit, sandbox profile %s', (profile) => {
	// Its own sandbox in this profile. On live the sandbox writes UTC times, so Time Zone is set to
	// UTC; on spec it writes Moscow time and the option keeps its default (Europe/Moscow).
	let sb: Sandbox;
	beforeAll(async () => {
		sb = await start(profile);
	});
	afterAll(async () => {
		vi.useRealTimers();
		await sb.close();
	});
	const zone: INodeParameters = profile === 'live' ? { timeZone: 'UTC' } : {};
	const zoneName = PROFILE_TIME_ZONE[profile];
	const day = (options: INodeParameters = {}): INodeParameters => ({ ...zone, ...options });

	it("refuses when today's payouts plus this one exceed it, naming both figures, and sends no create", async () => {
		const merchant = await newMerchant(sb, { balances: { RUB: '10000.00' } });
		await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '600', 'day-1'),
		});
		const wire = await tripwire(sb);
		let exact: Awaited<ReturnType<typeof runNode>>[number];
		try {
			const error = await failure(
				runNode({
					credential: merchant.credential,
					parameters: personal(merchant, '400.01', 'day-2', day({ dailyLimit: '1000' })),
				}),
			);
			expect(error?.message).toBe(
				`Refused: Daily Limit 1000.00 RUB would be exceeded: 600.00 paid out today (${serviceDay(profile)}, ${zoneName}) + 400.01 to payout account ${merchant.payoutAccountId} = 1000.01`,
			);
			// A dry run refuses it the same way.
			const dry = await failure(
				runNode({
					credential: merchant.credential,
					parameters: personal(
						merchant,
						'400.01',
						'day-2',
						day({ dailyLimit: '1000', dryRun: true }),
					),
				}),
			);
			expect(dry?.message).toBe(error?.message);
			expect(await wire.creates()).toBe(0);
			// Up to the limit it pays: the one create request the tripwire counts.
			[exact] = await runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '400', 'day-3', day({ dailyLimit: '1000' })),
			});
			expect(exact.json).toMatchObject({ amount: 400, already_existed: false });
			expect(await wire.creates()).toBe(1);
		} finally {
			await wire.remove();
		}
		// A re-run of a payout already made is returned, not refused (it is not paid again).
		const [again] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '400', 'day-3', day({ dailyLimit: '1000' })),
		});
		expect(again.json).toMatchObject({ id: exact.json.id, already_existed: true });
		expect((await payoutsOf(sb, merchant.merchantId)).map((p) => p.order_id)).toEqual([
			'day-1',
			'day-3',
		]);
	});

	it('does not count FAIL or DECLINED payouts (their money went back); counts ERROR', async () => {
		const merchant = await newMerchant(sb, { balances: { RUB: '10000.00' } });
		const [declined] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '700', 'day-declined'),
		});
		const [failed] = await runNode({
			credential: merchant.credential,
			parameters: card('200', 'day-failed'),
		});
		await control(sb, 'POST', `/payouts/${declined.json.id}/advance`, { status: 'DECLINED' });
		await control(sb, 'POST', `/payouts/${failed.json.id}/advance`, { status: 'FAIL' });
		const [paid] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '900', 'day-after', day({ dailyLimit: '1000' })),
		});
		expect(paid.json).toMatchObject({ amount: 900, already_existed: false });
		const error = await failure(
			runNode({
				credential: merchant.credential,
				parameters: card('100.01', 'day-over', day({ dailyLimit: '1000' })),
			}),
		);
		expect(error?.message).toContain('900.00 paid out today');
		// A payout in ERROR still counts: the document does not say its money came back.
		await control(sb, 'POST', `/payouts/${paid.json.id}/advance`, { status: 'ERROR' });
		const stillOver = await failure(
			runNode({
				credential: merchant.credential,
				parameters: card('100.01', 'day-over', day({ dailyLimit: '1000' })),
			}),
		);
		expect(stillOver?.message).toContain('900.00 paid out today');
		expect(await payoutsOf(sb, merchant.merchantId)).toHaveLength(3);
	});

	it('counts crypto payouts with the others, each in its currency; a re-run pays nothing twice', async () => {
		const merchant = await newMerchant(sb, { balances: { RUB: '100000.00' } });
		await runNode({ credential: merchant.credential, parameters: card('600', 'mix-card') });
		const inRub = await failure(
			runNode({
				credential: merchant.credential,
				parameters: wallet('300', 'mix-crypto', day({ dailyLimit: '1000' }), 'RUB'),
			}),
		);
		if (profile === 'spec') {
			// The document's service takes no crypto payout: refused by it, nothing paid, nothing counted.
			expect(inRub?.httpCode).toBe('422');
			const [paid] = await runNode({
				credential: merchant.credential,
				parameters: card('400', 'mix-card-2', day({ dailyLimit: '1000' })),
			});
			expect(paid.json).toMatchObject({ amount: 400, already_existed: false });
			expect(await payoutsOf(sb, merchant.merchantId)).toHaveLength(2);
			return;
		}
		expect(inRub).toBeUndefined();
		const wire = await tripwire(sb);
		try {
			// The crypto payout in RUB counts with the card payout: 600 + 300.
			const over = await failure(
				runNode({
					credential: merchant.credential,
					parameters: card('100.01', 'mix-over', day({ dailyLimit: '1000' })),
				}),
			);
			expect(over?.message).toContain(
				'Daily Limit 1000.00 RUB would be exceeded: 900.00 paid out today',
			);
			// A USDT payout counts the USDT payouts of the day.
			const [usdt] = await runNode({
				credential: merchant.credential,
				parameters: wallet('50', 'mix-usdt', day({ dailyLimit: '60' })),
			});
			expect(usdt.json).toMatchObject({ currency: 'USDT', already_existed: false });
			const usdtOver = await failure(
				runNode({
					credential: merchant.credential,
					parameters: wallet('10.01', 'mix-usdt-2', day({ dailyLimit: '60' })),
				}),
			);
			expect(usdtOver?.message).toBe(
				`Refused: Daily Limit 60.00 USDT would be exceeded: 50.00 paid out today (${serviceDay(profile)}, ${zoneName}) + 10.01 to TRX wallet ${TRON} = 60.01`,
			);
			// The same Order ID again is returned, not paid (and not refused by the limit).
			const [again] = await runNode({
				credential: merchant.credential,
				parameters: wallet('50', 'mix-usdt', day({ dailyLimit: '60' })),
			});
			expect(again.json).toMatchObject({ id: usdt.json.id, already_existed: true });
			expect(await wire.creates()).toBe(1);
		} finally {
			await wire.remove();
		}
		expect((await payoutsOf(sb, merchant.merchantId)).map((p) => p.order_id)).toEqual([
			'mix-card',
			'mix-crypto',
			'mix-usdt',
		]);
	});

	it("counts every page of today's payouts: a payout over the limit never goes through", async () => {
		// 150 payouts of 1.00 (one request, split); the spec profile pages them by 15.
		const merchant = await newMerchant(sb, {
			balances: { RUB: '10000.00' },
			payoutSplitSize: '1.00',
			searchPageSize: 15,
		});
		const parts = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '150', 'day-bulk'),
		});
		expect(parts).toHaveLength(150);
		await patchMerchant(sb, merchant.merchantId, { payoutSplitSize: null });
		const error = await failure(
			runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '60', 'day-bulk-2', day({ dailyLimit: '200' })),
			}),
		);
		expect(error?.message).toContain('150.00 paid out today');
		expect(await payoutsOf(sb, merchant.merchantId)).toHaveLength(150);
	});

	it('counts the day in Time Zone: a payout made before midnight there is yesterday', async () => {
		const merchant = await newMerchant(sb, { balances: { RUB: '10000.00' } });
		vi.useFakeTimers({ toFake: ['Date'] });
		try {
			// 20:30 UTC is 23:30 in Moscow; 21:30 UTC is 00:30 the next day in Moscow, still the same UTC day.
			vi.setSystemTime(new Date('2025-03-10T20:30:00Z'));
			await runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '600', 'tz-evening'),
			});
			vi.setSystemTime(new Date('2025-03-10T21:30:00Z'));
			const moscow = await failure(
				runNode({
					credential: merchant.credential,
					parameters: personal(merchant, '500', 'tz-moscow', {
						dailyLimit: '1000',
						dryRun: true,
						...(profile === 'live' ? {} : { timeZone: 'Europe/Moscow' }),
					}),
				}),
			);
			const utc = await failure(
				runNode({
					credential: merchant.credential,
					parameters: personal(merchant, '500', 'tz-utc', {
						dailyLimit: '1000',
						dryRun: true,
						timeZone: 'UTC',
					}),
				}),
			);
			// UTC (and the service writing UTC times): one day, 600 + 500 is over.
			expect(utc?.message).toContain('600.00 paid out today (2025-03-10, UTC)');
			if (profile === 'spec') {
				// Moscow time: the 600 were paid yesterday; the service writes Moscow times.
				expect(moscow).toBeUndefined();
				const [dry] = await runNode({
					credential: merchant.credential,
					parameters: personal(merchant, '500', 'tz-moscow', { dailyLimit: '1000', dryRun: true }),
				});
				expect(dry.json).toMatchObject({
					paid_today: '0.00',
					daily_limit_day: '2025-03-11',
					time_zone: 'Europe/Moscow',
				});
			} else {
				// The default Time Zone against a service that writes UTC times: Moscow's 11 March has
				// no payout yet, as far as created_at tells (README: set Time Zone to the service's zone).
				expect(moscow).toBeUndefined();
			}
		} finally {
			vi.useRealTimers();
		}
	});
});

describe('Daily Limit on the wire', () => {
	let server: RecordingServer;
	beforeAll(async () => {
		server = await startRecordingServer();
	});
	afterAll(async () => {
		await server.close();
	});
	const credential = () => ({
		apiToken: '72|dailyLimitWire0123456789abcdefghijklm',
		baseUrl: server.url,
	});

	it('counts only payouts in the currency of this payout (RUB); a payout without a currency counts', async () => {
		const today = new Date().toISOString().slice(0, 10);
		const payout = (id: string, amount: string, currency?: string) => ({
			id,
			amount,
			status: 'SUCCESS',
			created_at: `${today} 12:00:00`,
			...(currency ? { currency } : {}),
		});
		const search = (...data: unknown[]) => ({ status: 200, body: { success: true, data } });
		const notFound = {
			status: 422,
			body: { success: false, message: 'api:error.payout_not_found' },
		};
		server.requests.length = 0;
		server.answers.push(
			notFound,
			search(
				payout('U1', '900.00', 'USD'),
				payout('R1', '100.00', 'RUB'),
				payout('E1', '50.00', 'eur'),
			),
			{
				status: 200,
				body: { success: true, data: [{ id: 'NEW', amount: 800, status: 'MODERATING' }] },
			},
		);
		const [ok] = await runNode({
			credential: credential(),
			parameters: card('800', 'cur-1', { dailyLimit: '1000', timeZone: 'UTC' }),
		});
		expect(ok.json).toMatchObject({ id: 'NEW' });
		expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
			'GET /api/v1/payout/status',
			'GET /api/v1/payout/search',
			'POST /api/v1/payout/regular/create',
		]);
		server.requests.length = 0;
		server.answers.push(notFound, search(payout('R1', '100.00', 'RUB'), payout('X1', '100.00')));
		const refused = await failure(
			runNode({
				credential: credential(),
				parameters: card('800.01', 'cur-2', { dailyLimit: '1000', timeZone: 'UTC' }),
			}),
		);
		expect(refused?.message).toContain(
			'Daily Limit 1000.00 RUB would be exceeded: 200.00 paid out today',
		);
		expect(server.requests.map((r) => r.path)).not.toContain('/api/v1/payout/regular/create');
	});

	it('counts every payout that may still move money: NEW, MODERATING, PROCESS, SUCCESS and ERROR; not FAIL or DECLINED', async () => {
		const today = new Date().toISOString().slice(0, 10);
		const statuses = ['NEW', 'MODERATING', 'PROCESS', 'SUCCESS', 'ERROR', 'FAIL', 'DECLINED'];
		const search = {
			status: 200,
			body: {
				success: true,
				data: statuses.map((status, i) => ({
					id: `S${i}`,
					amount: '100.00',
					currency: 'RUB',
					status,
					created_at: `${today} 12:00:00`,
				})),
			},
		};
		const notFound = {
			status: 422,
			body: { success: false, message: 'api:error.payout_not_found' },
		};
		server.requests.length = 0;
		server.answers.push(notFound, search);
		const refused = await failure(
			runNode({
				credential: credential(),
				parameters: card('500.01', 'pending-1', { dailyLimit: '1000', timeZone: 'UTC' }),
			}),
		);
		expect(refused?.message).toContain(
			'Daily Limit 1000.00 RUB would be exceeded: 500.00 paid out today',
		);
		expect(server.requests.map((r) => r.path)).not.toContain('/api/v1/payout/regular/create');
	});

	it('refuses an unknown Time Zone, naming the setting, before any request', async () => {
		server.requests.length = 0;
		const error = await failure(
			runNode({
				credential: credential(),
				parameters: card('10', 'tz-bad', { dailyLimit: '1000', timeZone: 'Europe/Atlantis' }),
			}),
		);
		expect(error?.message).toBe(
			'Time Zone is not a time zone this n8n knows (got "Europe/Atlantis")',
		);
		expect(error?.description).toContain('Nothing was paid');
		expect(server.requests).toEqual([]);
	});
});

describe('As an AI tool', () => {
	it('refuses a payout without an explicit Order ID, naming the amount and destination, and sends nothing', async () => {
		const merchant = await newMerchant(sandbox);
		const target = await startRecordingServer();
		try {
			const error = await failure(
				runNode({
					credential: { ...merchant.credential, baseUrl: target.url },
					nodeType: TOOL_TYPE,
					parameters: card('250', '  '),
				}),
			);
			expect(error?.message).toBe(
				'Refused: no payout of 250.00 RUB to card 411111******1111 without an explicit Order ID',
			);
			expect(error?.description).toContain('never invent one');
			expect(target.requests).toEqual([]);
		} finally {
			await target.close();
		}
	});

	it('names the currency and the wallet of a crypto payout, in the refusal and in its answer', async () => {
		const merchant = await newMerchant(sandbox);
		const target = await startRecordingServer();
		try {
			const error = await failure(
				runNode({
					credential: { ...merchant.credential, baseUrl: target.url },
					nodeType: TOOL_TYPE,
					parameters: wallet('25', ''),
				}),
			);
			expect(error?.message).toBe(
				`Refused: no payout of 25.00 USDT to TRX wallet ${TRON} without an explicit Order ID`,
			);
			expect(target.requests).toEqual([]);
		} finally {
			await target.close();
		}
		const [out] = await runNode({
			credential: merchant.credential,
			nodeType: TOOL_TYPE,
			parameters: wallet('25', 'agent-crypto'),
		});
		expect(out.json.summary).toBe(
			`Paid out 25.00 USDT to TRX wallet ${TRON} under Order ID agent-crypto: payout ${String(out.json.id)} (MODERATING)`,
		);
	});

	it('states the amount and destination in its answer', async () => {
		const merchant = await newMerchant(sandbox);
		const [out] = await runNode({
			credential: merchant.credential,
			nodeType: TOOL_TYPE,
			parameters: personal(merchant, '120', 'agent-1'),
		});
		expect(out.json.summary).toBe(
			`Paid out 120.00 RUB to payout account ${merchant.payoutAccountId} under Order ID agent-1: payout ${String(out.json.id)} (MODERATING)`,
		);
		const [again] = await runNode({
			credential: merchant.credential,
			nodeType: TOOL_TYPE,
			parameters: personal(merchant, '120', 'agent-1'),
		});
		expect(again.json.summary).toMatch(/^Already paid earlier, nothing paid now: 120\.00 RUB/);
		// Outside a tool the output stays as it was.
		const [plain] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '120', 'agent-1'),
		});
		expect(plain.json.summary).toBeUndefined();
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(1);
	});
});
