// The output schemas n8n's editor reads to offer a node's fields for mapping before a run
// (nodes/PayPalych/__schema__/v1.0.0/<resource>/<operation>.json, copied into dist/ by tsc: the
// tsconfig includes nodes/**/*.json, as for the codex file):
// one for every operation of the action node, each a JSON Schema that the node's real output,
// run against the sandbox on both profiles (and in each shape an operation can give: Dry Run,
// Split Into Items, every Pay To), validates against.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import type { IDataObject, INodeParameters, INodePropertyOptions } from 'n8n-workflow';

import { PayPalych, runNode } from '../helpers/n8n-context.ts';
import {
	PROFILES,
	control,
	newMerchant,
	sandboxFor,
	serviceDay,
	type Profile,
	type Sandbox,
} from '../helpers/sandbox.ts';

const root = join(__dirname, '..', '..');
const SCHEMA_DIR = join(root, 'nodes', 'PayPalych', '__schema__', 'v1.0.0');

/** Every resource/operation pair the action node offers, from its description. */
function operations(): string[] {
	const pairs: string[] = [];
	for (const property of new PayPalych().description.properties) {
		if (property.name !== 'operation') continue;
		for (const resource of (property.displayOptions?.show?.resource ?? []) as string[])
			for (const option of property.options as INodePropertyOptions[])
				pairs.push(`${resource}/${String(option.value)}`);
	}
	return pairs.sort();
}

const schemaOf = (pair: string) =>
	JSON.parse(readFileSync(join(SCHEMA_DIR, `${pair}.json`), 'utf8')) as Record<string, unknown>;

/** Runs every operation in each shape it can give; the output items by resource/operation. */
async function outputsOf(sandbox: Sandbox, profile: Profile): Promise<Map<string, IDataObject[]>> {
	const merchant = await newMerchant(sandbox, { refunds: true, balances: { USDT: '1000' } });
	const credential = { ...merchant.credential, shopId: merchant.shopId };
	const outputs = new Map<string, IDataObject[]>();
	const run = async (parameters: INodeParameters) => {
		const items = await runNode({ credential, parameters });
		const pair = `${String(parameters.resource)}/${String(parameters.operation)}`;
		outputs.set(pair, [...(outputs.get(pair) ?? []), ...items.map((item) => item.json)]);
		return items.map((item) => item.json);
	};
	const dates = { startDate: serviceDay(profile, -1), finishDate: serviceDay(profile, 1) };
	const all = { returnAll: true };

	const bill = { resource: 'bill' };
	const [created] = await run({
		...bill,
		operation: 'create',
		amount: '1500',
		orderId: 'SCHEMA-1',
		additionalFields: { description: 'Schema check', ttl: 900 },
	});
	const billId = String(created.bill_id);
	const paid = await control<{ payment: { id: string } }>(
		sandbox,
		'POST',
		`/bills/${billId}/pay`,
		{},
	);
	const paymentId = paid.payment.id;
	await run({ ...bill, operation: 'get', billId });
	await run({ ...bill, operation: 'getPayments', billId, ...all });
	await run({ ...bill, operation: 'search', ...dates, ...all });
	const [other] = await run({ ...bill, operation: 'create', amount: '10' });
	await run({ ...bill, operation: 'setActive', billId: String(other.bill_id), active: false });

	const payment = { resource: 'payment' };
	await run({ ...payment, operation: 'get', paymentId });
	await run({
		...payment,
		operation: 'get',
		paymentId,
		options: { includeChargebacks: true, includeRefunds: true },
	});
	await run({ ...payment, operation: 'search', ...dates, ...all });

	await run({ resource: 'balance', operation: 'get' });
	await run({ resource: 'balance', operation: 'get', splitIntoItems: true });

	const payout = { resource: 'payout', maxAmount: '5000', dailyLimit: '50000' };
	const personal = {
		...payout,
		operation: 'createPersonal',
		payoutAccountId: merchant.payoutAccountId,
		amount: '100',
	};
	await run({ ...personal, orderId: 'P-DRY', options: { dryRun: true } });
	const [made] = await run({ ...personal, orderId: 'P-1' });
	await run({ ...personal, orderId: 'P-1' }); // already made: returned, already_existed
	const regular = { ...payout, operation: 'createRegular', amount: '50' };
	// The spec profile's service pays cards and SBP only (crypto and Steam: the live record's).
	for (const [orderId, to] of [
		[
			'R-CARD',
			{ accountType: 'credit_card', cardNumber: '4111111111111111', cardHolder: 'IVAN PETROV' },
		],
		['R-SBP', { accountType: 'sbp', phone: '79001234567', bank: '100000000111' }],
		['R-STEAM', { accountType: 'steam', steamLogin: 'schema_check' }],
		[
			'R-CRYPTO',
			{
				accountType: 'crypto',
				network: 'TRX',
				walletAddress: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
				currency: 'USDT',
			},
		],
	] as const)
		if (profile === 'live' || !orderId.match(/STEAM|CRYPTO/))
			await run({ ...regular, ...to, orderId });
	await run({
		...regular,
		accountType: 'credit_card',
		cardNumber: '4111111111111111',
		cardHolder: 'IVAN PETROV',
		orderId: 'R-DRY',
		options: { dryRun: true },
	});
	await run({ resource: 'payout', operation: 'get', findBy: 'id', payoutId: String(made.id) });
	await run({ resource: 'payout', operation: 'get', findBy: 'orderId', orderId: 'P-1' });
	await run({ resource: 'payout', operation: 'search', ...dates, ...all });

	const refund = { resource: 'refund' };
	const create = { ...refund, operation: 'create', paymentId, maxAmount: '1000' };
	await run({ ...create, amount: '100', orderId: 'RF-DRY', options: { dryRun: true } });
	const [refunded] = await run({ ...create, amount: '100', orderId: 'RF-1' });
	await run({ ...refund, operation: 'get', refundId: String(refunded.id) });
	await run({ ...refund, operation: 'search', searchBy: 'paymentId', paymentId, ...all });
	await run({ ...refund, operation: 'search', searchBy: 'dates', ...dates, ...all });

	await run({ resource: 'sbpBank', operation: 'getMany', ...all });

	// The day's statement in both shapes, with the balance: the payment, refund and payouts above.
	const statement = { resource: 'statement', operation: 'get', day: serviceDay(profile) };
	const tz = { timeZone: profile === 'spec' ? 'Europe/Moscow' : 'UTC' };
	await run({ ...statement, ...tz, includeBalance: true });
	await run({ ...statement, ...tz, output: 'movements' });
	if (process.env.SCHEMA_DUMP) console.log(JSON.stringify(outputs.get('statement/get'), null, 1)); // to write the schema
	return outputs;
}

it('there is a schema for every operation of the action node, and for nothing else', () => {
	const pairs = operations();
	expect(pairs.length).toBeGreaterThanOrEqual(16);
	const files = (readdirSync(SCHEMA_DIR, { recursive: true }) as string[])
		.filter((file) => file.endsWith('.json'))
		.map((file) => file.replace(/\\/g, '/').replace(/\.json$/, ''))
		.sort();
	expect(files).toEqual(pairs);
	const ajv = new Ajv({ strict: true });
	for (const pair of pairs) {
		const schema = schemaOf(pair);
		expect(ajv.validateSchema(schema), pair).toBe(true);
		expect(schema.type, pair).toBe('object');
	}
});

it('the build copies the schemas next to the compiled node, where n8n looks for them', () => {
	for (const pair of operations())
		expect(
			existsSync(join(root, 'dist', 'nodes', 'PayPalych', '__schema__', 'v1.0.0', `${pair}.json`)),
			pair,
		).toBe(true);
});

describe.each(PROFILES)('the real outputs, profile %s', (profile) => {
	let sandbox: Sandbox;
	sandboxFor(profile, (started) => (sandbox = started));

	it('every operation ran, and each item validates against its schema', async () => {
		const outputs = await outputsOf(sandbox, profile);
		expect([...outputs.keys()].sort()).toEqual(operations());
		const ajv = new Ajv({ strict: false, allErrors: true });
		const failures: string[] = [];
		for (const [pair, items] of outputs) {
			expect(items.length, pair).toBeGreaterThan(0);
			const validate = ajv.compile(schemaOf(pair));
			for (const item of items)
				if (!validate(item))
					failures.push(`${pair}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(item)}`);
		}
		expect(failures).toEqual([]);
	});
});
