import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { INodeParameters } from 'n8n-workflow';

import { runNode } from '../helpers/n8n-context.ts';
import { startRecordingServer } from '../helpers/recording-server.ts';
import {
	control,
	newMerchant,
	payoutsOf,
	start,
	type Sandbox,
	type TestMerchant,
	utcDay,
} from '../helpers/sandbox.ts';

// The payout guardrails through the node's real execute() against the sandbox: Dry Run, Max
// Amount, Daily Limit and the rules for the node used as an AI agent's tool. The sandbox's
// payouts and a tripwire on its create endpoints show that a guarded payout sends nothing.
let sandbox: Sandbox;
beforeAll(async () => {
	sandbox = await start();
});
afterAll(async () => {
	await sandbox.close();
});

const TOOL_TYPE = 'n8n-nodes-paypalych.payPalychTool';
const PERSONAL_CREATE = '/api/v1/payout/personal/create';
const REGULAR_CREATE = '/api/v1/payout/regular/create';

const personal = (
	merchant: TestMerchant,
	amount: string,
	orderId: string,
	options: INodeParameters = {},
): INodeParameters => ({
	resource: 'payout',
	operation: 'createPersonal',
	payoutAccountId: merchant.payoutAccountId,
	amount,
	orderId,
	options,
});

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

const failure = (promise: Promise<unknown>) =>
	promise.then(
		() => undefined,
		(e: Error & { description?: string }) => e,
	);

/**
 * A tripwire on the sandbox's create endpoints: a zero-delay fault that counts down on every
 * create request that reaches the sandbox. `creates()` tells how many did.
 */
async function tripwire(): Promise<{ creates(): Promise<number>; remove(): Promise<void> }> {
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
});

describe('Daily Limit', () => {
	it("refuses when today's payouts plus this one exceed it, naming both figures, and sends no create", async () => {
		const merchant = await newMerchant(sandbox, { balances: { RUB: '10000.00' } });
		await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '600', 'day-1'),
		});
		const wire = await tripwire();
		let exact: Awaited<ReturnType<typeof runNode>>[number];
		try {
			const error = await failure(
				runNode({
					credential: merchant.credential,
					parameters: personal(merchant, '400.01', 'day-2', { dailyLimit: '1000' }),
				}),
			);
			expect(error?.message).toBe(
				`Refused: Daily Limit 1000.00 would be exceeded: 600.00 paid out today (${utcDay()}) + 400.01 to payout account ${merchant.payoutAccountId} = 1000.01`,
			);
			// A dry run refuses it the same way.
			const dry = await failure(
				runNode({
					credential: merchant.credential,
					parameters: personal(merchant, '400.01', 'day-2', { dailyLimit: '1000', dryRun: true }),
				}),
			);
			expect(dry?.message).toBe(error?.message);
			expect(await wire.creates()).toBe(0);
			// Up to the limit it pays: the one create request the tripwire counts.
			[exact] = await runNode({
				credential: merchant.credential,
				parameters: personal(merchant, '400', 'day-3', { dailyLimit: '1000' }),
			});
			expect(exact.json).toMatchObject({ amount: 400, already_existed: false });
			expect(await wire.creates()).toBe(1);
		} finally {
			await wire.remove();
		}
		// A re-run of a payout already made is returned, not refused (it is not paid again).
		const [again] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '400', 'day-3', { dailyLimit: '1000' }),
		});
		expect(again.json).toMatchObject({ id: exact.json.id, already_existed: true });
		expect((await payoutsOf(sandbox, merchant.merchantId)).map((p) => p.order_id)).toEqual([
			'day-1',
			'day-3',
		]);
	});

	it('does not count failed or declined payouts (their money went back)', async () => {
		const merchant = await newMerchant(sandbox, { balances: { RUB: '10000.00' } });
		const [declined] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '700', 'day-declined'),
		});
		const [failed] = await runNode({
			credential: merchant.credential,
			parameters: card('200', 'day-failed'),
		});
		await control(sandbox, 'POST', `/payouts/${declined.json.id}/advance`, { status: 'DECLINED' });
		await control(sandbox, 'POST', `/payouts/${failed.json.id}/advance`, { status: 'FAIL' });
		const [paid] = await runNode({
			credential: merchant.credential,
			parameters: personal(merchant, '900', 'day-after', { dailyLimit: '1000' }),
		});
		expect(paid.json).toMatchObject({ amount: 900, already_existed: false });
		const error = await failure(
			runNode({
				credential: merchant.credential,
				parameters: card('100.01', 'day-over', { dailyLimit: '1000' }),
			}),
		);
		expect(error?.message).toContain('900.00 paid out today');
		expect(await payoutsOf(sandbox, merchant.merchantId)).toHaveLength(3);
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
