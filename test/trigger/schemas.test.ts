// The trigger's output schemas (nodes/PayPalychTrigger/__schema__, n8n's layout: one folder per
// node version, one file per event as the resource of n8n's `<resource>/<operation>`) checked
// against real items of every event, from the sandbox, on both profiles and both node versions.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import type { IDataObject } from 'n8n-workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROFILES } from '../helpers/sandbox.ts';
import { EVENTS, startItemWorld, type Event, type ItemWorld } from './item-world.ts';

const ROOT = join(__dirname, '..', '..');
const SOURCE = join(ROOT, 'nodes', 'PayPalychTrigger', '__schema__');
const SHIPPED = join(ROOT, 'dist', 'nodes', 'PayPalychTrigger', '__schema__');
type Schema = { properties: Record<string, unknown>; required?: string[] };
const schemaOf = (version: 1 | 2, name: string): Schema =>
	JSON.parse(readFileSync(join(SOURCE, `v${version}.0.0`, `${name}.json`), 'utf8')) as Schema;

const ajv = new Ajv({ allErrors: true, strict: false });

function check(version: 1 | 2, event: Event, item: IDataObject): void {
	const schema = schemaOf(version, event);
	const validate = ajv.compile(schema);
	expect(validate(item), `v${version} ${event}: ${ajv.errorsText(validate.errors)}`).toBe(true);
	// Every field of the item is in the schema: none a workflow could not map before a run.
	expect(Object.keys(item).filter((name) => !(name in schema.properties))).toEqual([]);
}

it('one schema per event and version, shipped in dist/ as n8n finds them (__schema__/v2.0.0/payment.json)', () => {
	for (const version of ['v1.0.0', 'v2.0.0']) {
		expect(readdirSync(join(SOURCE, version)).sort()).toEqual(
			EVENTS.map((name) => `${name}.json`).sort(),
		);
		for (const name of EVENTS) {
			expect(existsSync(join(SHIPPED, version, `${name}.json`)), `${version}/${name}`).toBe(true);
		}
	}
	// What a workflow uses first is required in version 2.
	expect(schemaOf(2, 'payment').required).toEqual(
		expect.arrayContaining(['paid', 'orderId', 'billId', 'amount', 'currency', 'status']),
	);
	expect(schemaOf(2, 'payment').properties.amount).toEqual({ type: ['number', 'null'] });
});

describe.each(PROFILES)('sandbox profile %s', (profile) => {
	let world: ItemWorld;
	beforeAll(async () => {
		world = await startItemWorld(profile);
	}, 60_000);
	afterAll(async () => await world?.close());

	it('every event of version 2 matches its schema', () => {
		for (const event of EVENTS) check(2, event, world.v2[event]);
		check(2, 'payment', world.unconfirmed.v2);
	});

	it('every event of version 1 matches its schema', () => {
		for (const event of EVENTS) check(1, event, world.v1[event]);
		check(1, 'payment', world.unconfirmed.v1);
	});

	it('a schema tells one event from another: a refund item is no payment', () => {
		const payment = ajv.compile(schemaOf(2, 'payment'));
		expect(payment(world.v2.refund)).toBe(false);
		const refund = ajv.compile(schemaOf(2, 'refund'));
		expect(refund(world.v2.payment)).toBe(false);
	});
});
