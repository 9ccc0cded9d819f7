// The live-answer switches set for a whole sandbox: startSandbox's options (the demo merchant and
// new merchants) and the bin's flags and SANDBOX_* variables. Each switch's answers:
// live-answers.test.ts.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness, outputOf } from './helpers.ts';

let h: Harness;
beforeAll(async () => {
	h = await harness();
});
afterAll(async () => {
	await h.close();
});

describe('the instance options and the bin flags', () => {
	it('startSandbox options set the demo merchant and new merchants; an unknown value is refused', async () => {
		const other = await harness({
			trsId: 'bill',
			errorForm: 'error_code',
			requireShopId: true,
			newPaymentFields: true,
			billOrderId: false,
			paymentsPageSize: 7,
			refunds: true,
		});
		try {
			const expected = {
				trsId: 'bill',
				errorForm: 'error_code',
				requireShopId: true,
				newPaymentFields: true,
				billOrderId: false,
				paymentsPageSize: 7,
				refunds: true,
			};
			expect((await other.control('GET', `merchants/${other.sb.merchantId}`)).body).toMatchObject(
				expected,
			);
			const fresh = await other.merchant();
			expect((await other.control('GET', `merchants/${fresh.merchantId}`)).body).toMatchObject(
				expected,
			);
			await other.control('POST', 'reset');
			expect((await other.control('GET', `merchants/${other.sb.merchantId}`)).body).toMatchObject(
				expected,
			);
		} finally {
			await other.close();
		}
		await expect(harness({ trsId: 'order' as 'bill' })).rejects.toThrow(/trsId/);
		const bad = await h.control('PATCH', `merchants/${h.sb.merchantId}`, { trsId: 'order' });
		expect(bad.status).toBe(400);
	});

	it('the bin takes the flags (and SANDBOX_* variables), lists them in --help and refuses a bad value', async () => {
		const env = { ...process.env };
		for (const name of Object.keys(env)) if (name.startsWith('SANDBOX_')) delete env[name];
		const run = (args: string[], extra: Record<string, string> = {}) =>
			spawn(process.execPath, ['sandbox/src/bin.ts', '--port', '0', ...args], {
				stdio: ['ignore', 'pipe', 'pipe'],
				env: { ...env, ...extra },
			});
		const output = outputOf;
		const demoOf = async (child: ReturnType<typeof run>) => {
			try {
				const line = await new Promise<string>((resolve, reject) => {
					createInterface({ input: child.stdout! }).once('line', resolve);
					child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
				});
				const { url, merchantId } = JSON.parse(line) as { url: string; merchantId: string };
				return (await (await fetch(`${url}/_sandbox/merchants/${merchantId}`)).json()) as Record<
					string,
					unknown
				>;
			} finally {
				child.kill('SIGTERM');
				await new Promise((resolve) => child.once('exit', resolve));
			}
		};
		const flags = await demoOf(
			run([
				'--trs-id',
				'bill',
				'--error-form',
				'error_code',
				'--require-shop-id',
				'--new-payment-fields',
				'--hide-bill-order-id',
				'--payments-page-size',
				'5',
				'--refunds',
			]),
		);
		const switched = {
			trsId: 'bill',
			errorForm: 'error_code',
			requireShopId: true,
			newPaymentFields: true,
			billOrderId: false,
			paymentsPageSize: 5,
			refunds: true,
		};
		expect(flags).toMatchObject(switched);
		const vars = await demoOf(
			run([], {
				SANDBOX_TRS_ID: 'bill',
				SANDBOX_ERROR_FORM: 'error_code',
				SANDBOX_REQUIRE_SHOP_ID: '1',
				SANDBOX_NEW_PAYMENT_FIELDS: '1',
				SANDBOX_HIDE_BILL_ORDER_ID: '1',
				SANDBOX_PAYMENTS_PAGE_SIZE: '5',
				SANDBOX_REFUNDS: '1',
			}),
		);
		expect(vars).toMatchObject(switched);
		const defaults = await demoOf(run([]));
		expect(defaults).toMatchObject({
			trsId: 'payment',
			errorForm: 'message',
			requireShopId: false,
			newPaymentFields: false,
			billOrderId: true,
			paymentsPageSize: 15,
			refunds: false,
		});
		const help = await output(run(['--help']));
		for (const name of [
			'--trs-id',
			'--error-form',
			'--require-shop-id',
			'--new-payment-fields',
			'--hide-bill-order-id',
			'--payments-page-size',
			'--refunds',
		])
			expect(help.text).toContain(name);
		const bad = await output(run(['--trs-id', 'order']));
		expect(bad.code).toBe(2);
		expect(bad.text).toContain('--trs-id');
	});
});
