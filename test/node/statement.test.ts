import { describe, expect, it } from 'vitest';

import { runNode } from '../helpers/n8n-context.ts';
import { PROFILES, sandboxFor, type Sandbox } from '../helpers/sandbox.ts';
import { makeStatementDay, type ExpectedDay } from '../helpers/statement-day.ts';

// Statement › Get through the node's real execute() against the sandbox, on both profiles: a day
// with payments in two currencies, a partial and a full refund, a chargeback, payouts that
// succeed, fail, are declined and still wait, and movements one second either side of midnight.
// The expected figures come from the sandbox's own records (test/helpers/statement-day.ts).
describe.each(PROFILES)('Statement › Get, sandbox profile %s', (profile) => {
	let sandbox: Sandbox;
	let expected: ExpectedDay;
	sandboxFor(profile, (started) => (sandbox = started));

	const statement = async (parameters: Record<string, unknown>) =>
		(
			await runNode({
				credential: expected.merchant.credential,
				parameters: {
					resource: 'statement',
					operation: 'get',
					day: expected.day,
					timeZone: expected.timeZone,
					...parameters,
				},
			})
		).map((item) => item.json);

	it('gives one summary per currency with exactly the totals of the day', async () => {
		expected = await makeStatementDay(sandbox, profile);
		const summaries = await statement({});
		expect(summaries).toEqual(expected.summaries);
		expect(summaries.map((s) => s.currency)).toEqual(['RUB', 'USD']);
	});

	it('lists every movement of the day, and only those, with its effect on the balance', async () => {
		const movements = await statement({ output: 'movements' });
		const keys = movements.map((m) => `${m.kind}:${m.id}`).sort();
		expect(keys).toEqual(expected.movementKeys);
		for (const m of movements) {
			expect(m.balanceEffect, `${m.kind}:${m.id}`).toBe(expected.effects[`${m.kind}:${m.id}`]);
			expect(String(m.createdAt).slice(0, 10)).toBe(expected.day);
			if (m.kind !== 'payout') expect(m.paymentId).toEqual(expect.any(String));
		}
		const unknown = movements.filter((m) => m.counted === true && m.balanceEffect === null);
		expect(unknown.every((m) => typeof m.unknownEffect === 'string')).toBe(true);
		expect(movements.filter((m) => ['FAIL', 'DECLINED'].includes(String(m.status)))).toHaveLength(
			3,
		);
	});

	it('ties out: the balance moved by the known effects and what the records leave unknown', async () => {
		const [rub, usd] = await statement({ includeBalance: true });
		expect(rub.balance).toEqual({ available: expect.any(Number), locked: 200 + 2 * 12, hold: 0 });
		const moved = (currency: string) =>
			(expected.balanceAtEnd[currency] - expected.balanceAtStart[currency]) / 100;
		// The pending payouts only moved money from available to locked: the total stays.
		if (profile === 'live') {
			expect(moved('RUB')).toBeCloseTo(rub.net as number, 2);
			expect(moved('USD')).toBeCloseTo((usd.net as number) - 40, 2);
		} else {
			expect(moved('USD')).toBeCloseTo(usd.balanceEffect as number, 2);
			expect(rub.net).toBeNull();
		}
	});

	it('reads yesterday in the time zone when Day is empty, and refuses a zone it does not know', async () => {
		const yesterday = await statement({ day: '' });
		expect(yesterday).toEqual([]);
		await expect(statement({ timeZone: 'Mars/Olympus' })).rejects.toThrow(/Time Zone/);
	});
});
