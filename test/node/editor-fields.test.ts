// What a merchant meets in the editor, and that workflows saved before it changed keep working:
// Order ID a field of Bill › Create (an Order ID a saved workflow keeps in Additional Fields still
// sent), Shop ID from the credential, the payout and refund limits as fields under a notice (the
// limits a saved workflow keeps in Options still hold, the lower one where both are set), the
// canvas subtitle in action words, 9-digit BICs, and a wrong Base URL told as such. Parameters go
// through n8n's own resolution (a value n8n would drop on loading the workflow is dropped here).
import { readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { INodeParameters, INodeProperties } from 'n8n-workflow';

import { bicOf } from '../../dist/nodes/PayPalych/helpers/normalize.js';
import { sandboxCredential } from '../../scripts/harness/examples.ts';
import { PayPalych, runNode, workflowLib } from '../helpers/n8n-context.ts';
import { failure, personal } from '../helpers/node-params.ts';
import {
	PROFILES,
	control,
	newMerchant,
	sandboxFor,
	type Sandbox,
	type TestMerchant,
} from '../helpers/sandbox.ts';

const description = new PayPalych().description;

/** The top-level fields shown for `resource` › `operation`, in the editor's order. */
function fieldsOf(resource: string, operation: string): INodeProperties[] {
	return description.properties.filter(
		(p) =>
			p.displayOptions?.show?.resource?.includes(resource) &&
			p.displayOptions?.show?.operation?.includes(operation),
	);
}

/** The options "Add Option" offers in `collection`, in order (hidden ones are never offered). */
const offered = (collection: INodeProperties | undefined) =>
	((collection?.options ?? []) as INodeProperties[])
		.filter((o) => o.type !== 'hidden')
		.map((o) => o.name);

describe('the fields a merchant sees', () => {
	it('Bill › Create shows Order ID beside Amount, tied to the Order Check, and says when Shop ID is needed', () => {
		const fields = fieldsOf('bill', 'create');
		expect(fields.map((f) => f.name)).toEqual(['shopId', 'amount', 'orderId', 'additionalFields']);
		const orderId = fields.find((f) => f.name === 'orderId');
		expect(orderId?.type).toBe('string');
		expect(orderId?.hint).toMatch(/Order Check/);
		expect(fields.find((f) => f.name === 'shopId')?.hint).toBe(
			'Required unless your PayPalych credential has a Shop ID',
		);
		const additional = fields.find((f) => f.name === 'additionalFields');
		expect(offered(additional)).not.toContain('orderId');
		// The old place stays, hidden, so n8n keeps a saved workflow's value.
		expect((additional?.options as INodeProperties[]).find((o) => o.name === 'orderId')?.type).toBe(
			'hidden',
		);
	});

	it.each(['createPersonal', 'createRegular'])(
		'Payout › %s shows the limits as fields under a notice, the options in a reading order',
		(operation) => {
			const names = fieldsOf('payout', operation).map((f) => f.name);
			const at = (name: string) => names.indexOf(name);
			expect(names.slice(at('sendsMoneyNotice'))).toEqual([
				'sendsMoneyNotice',
				'maxAmount',
				'dailyLimit',
				'timeZone',
				'options',
			]);
			const notice = fieldsOf('payout', operation).find((f) => f.name === 'sendsMoneyNotice');
			expect(notice?.type).toBe('notice');
			expect(notice?.displayName).toMatch(/sends money.*Max Amount and Daily Limit/);
			const options = fieldsOf('payout', operation).find((f) => f.name === 'options');
			expect(offered(options)).toEqual([
				'dryRun',
				'onExisting',
				'accountCurrency',
				'recipientPaysCommission',
			]);
		},
	);

	it('Refund › Create shows Max Amount as a field under a notice', () => {
		const fields = fieldsOf('refund', 'create');
		expect(fields.map((f) => f.name)).toEqual([
			'paymentId',
			'amount',
			'orderId',
			'sendsMoneyNotice',
			'maxAmount',
			'options',
		]);
		expect(offered(fields.find((f) => f.name === 'options'))).toEqual([
			'dryRun',
			'onExisting',
			'otherRefundIds',
		]);
	});

	it('every tooltip of the node and the credential is one sentence in merchant words', async () => {
		const { PayPalychApi } = await import('../helpers/n8n-context.ts');
		const texts: Array<[string, string]> = [];
		const walk = (properties: unknown[], path: string) => {
			for (const property of properties as Array<Record<string, unknown>>) {
				const here = `${path}/${String(property.name ?? property.displayName)}`;
				for (const key of ['description', 'hint'])
					if (typeof property[key] === 'string') texts.push([here, property[key] as string]);
				if (Array.isArray(property.options)) walk(property.options, here);
				if (Array.isArray(property.values)) walk(property.values, here);
			}
		};
		walk(description.properties, 'node');
		walk(new PayPalychApi().properties, 'credential');
		expect(texts.length).toBeGreaterThan(80);
		const apiWords =
			/TrsId|InvId|float|\bsent as\b|[a-z]_[a-z]+\b|payment\/status|api\/v1|\bIANA\b/;
		const wrong = texts.filter(
			([, text]) =>
				/[.!?]\s+[A-Z(]/.test(text) || // one sentence
				text.split(/\s+/).length > 26 ||
				apiWords.test(text), // API words live in docs/merchant/node.md
		);
		expect(wrong).toEqual([]);
	});

	it('the canvas subtitle is the operation in action words, for every operation', () => {
		const subtitle = String(description.subtitle);
		const inner = /^=\{\{(.*)\}\}$/s.exec(subtitle)?.[1] ?? '';
		expect(inner).not.toContain('}}');
		const node = {
			id: 'n1',
			name: 'PayPalych',
			type: 'n8n-nodes-paypalych.payPalych',
			typeVersion: 1,
			position: [0, 0] as [number, number],
			parameters: {} as INodeParameters,
		};
		const shown = (resource: string, operation: string) => {
			node.parameters = { resource, operation };
			const workflow = new workflowLib.Workflow({
				nodes: [node],
				connections: {},
				active: false,
				nodeTypes: {
					getByName: () => new PayPalych(),
					getByNameAndVersion: () => new PayPalych(),
					getKnownTypes: () => ({}),
				} as never,
			});
			return workflow.expression.getSimpleParameterValue(node, subtitle, 'internal', {});
		};
		expect(shown('payout', 'createPersonal')).toBe('Create a payout to a saved account');
		expect(shown('bill', 'create')).toBe('Create a bill');
		expect(shown('balance', 'get')).toBe('Get the balance');
		expect(shown('sbpBank', 'getMany')).toMatch(/^[A-Z]/);
		expect(shown('bill', 'someday')).toBe('someday');
	});

	it('every example that pays out sets Max Amount and Daily Limit, as fields', () => {
		const dir = join(__dirname, '..', '..', 'examples');
		const creates = readdirSync(dir)
			.filter((file) => file.endsWith('.json'))
			.flatMap((file) =>
				(
					JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
						nodes: Array<{ name: string; type: string; parameters: Record<string, any> }>;
					}
				).nodes
					.filter(
						(n) =>
							n.type.endsWith('.payPalych') &&
							n.parameters.resource === 'payout' &&
							String(n.parameters.operation).startsWith('create'),
					)
					.map((n) => ({ ...n.parameters, where: `${file}: ${n.name}` }) as Record<string, any>),
			);
		expect(creates.map((c) => c.where)).toEqual(
			expect.arrayContaining([
				expect.stringMatching(/^02-/),
				expect.stringMatching(/^05-/),
				expect.stringMatching(/^06-/),
			]),
		);
		for (const create of creates) {
			expect(create.maxAmount, create.where).toMatch(/^\d+(\.\d\d)?$/);
			expect(create.dailyLimit, create.where).toMatch(/^\d+(\.\d\d)?$/);
			expect(Object.keys(create.options ?? {}), create.where).not.toContain('maxAmount');
		}
	});

	it('every example that creates a bill sets its Order ID in the field, not in Additional Fields', () => {
		const dir = join(__dirname, '..', '..', 'examples');
		const bills = readdirSync(dir)
			.filter((file) => file.endsWith('.json'))
			.flatMap(
				(file) =>
					(
						JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
							nodes: Array<{ type: string; parameters: Record<string, any> }>;
						}
					).nodes,
			)
			.filter(
				(n) =>
					n.type.endsWith('.payPalych') &&
					n.parameters.resource === 'bill' &&
					n.parameters.operation === 'create',
			);
		expect(bills.length).toBeGreaterThan(0);
		for (const bill of bills) {
			expect(String(bill.parameters.orderId)).not.toBe('');
			expect(bill.parameters.orderId).toBeDefined();
			expect(Object.keys(bill.parameters.additionalFields ?? {})).not.toContain('orderId');
		}
	});

	it("the demo's credential carries the sandbox's Shop ID", () => {
		const credential = sandboxCredential({
			url: 'http://127.0.0.1:8787',
			token: 't',
			shopId: 'SHOP1',
			payoutAccountId: 'A1',
		});
		expect(credential.data).toMatchObject({ shopId: 'SHOP1' });
	});
});

describe('a wrong Base URL', () => {
	let server: Server;
	let url: string;
	beforeAll(async () => {
		// A web server that is not PayPalych's API: every path is a 404 page.
		server = createServer((_request, response) => {
			response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>');
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});
	afterAll(async () => {
		await new Promise((resolve) => server.close(resolve));
	});

	it('is named as the thing to fix, by the node and by the credential test', async () => {
		const error = await failure(
			runNode({
				credential: { apiToken: 't', baseUrl: url },
				parameters: { resource: 'balance', operation: 'get' },
			}),
		);
		expect(error?.message).toBe(
			'http_404: The Base URL of the PayPalych credential does not lead to a PayPalych API',
		);
		expect(error?.description).toContain('such as https://pal24.pro, without /api/v1');
		expect(error?.context?.errorKey).toBe('http_404');
		const { PayPalychApi } = await import('../helpers/n8n-context.ts');
		const rule = new PayPalychApi().test?.rules?.find(
			(r) => r.type === 'responseCode' && r.properties.value === 404,
		);
		expect(rule?.properties.message).toMatch(/^The Base URL does not lead to a PayPalych API/);
	});
});

describe('refused before anything is sent: the limit fields, and the limits saved in Options', () => {
	const credential = { apiToken: 't', baseUrl: 'http://127.0.0.1:9' };
	const payout = (limits: INodeParameters, options: INodeParameters = {}) =>
		runNode({
			credential,
			parameters: { ...personal({ payoutAccountId: 'A1' }, '700', 'ord-1', options), ...limits },
		});

	it.each([
		['the field', { maxAmount: '500' }, {}, '500.00'],
		['a saved Options value', {}, { maxAmount: '500' }, '500.00'],
		['both: the lower', { maxAmount: '600' }, { maxAmount: '500' }, '500.00'],
		['both: the lower, the other way', { maxAmount: '400' }, { maxAmount: '650' }, '400.00'],
	])('payout Max Amount in %s', async (_name, limits, options, max) => {
		const error = await failure(payout(limits, options));
		expect(error?.message).toBe(
			`Refused: the payout of 700.00 to payout account A1 is above Max Amount ${max}`,
		);
	});

	it.each([
		['the field', { maxAmount: '500' }, {}],
		['a saved Options value', {}, { maxAmount: '500' }],
		['both: the lower', { maxAmount: '600' }, { maxAmount: '500' }],
	])('refund Max Amount in %s', async (_name, limits, options) => {
		const error = await failure(
			runNode({
				credential,
				parameters: {
					resource: 'refund',
					operation: 'create',
					paymentId: 'P1',
					amount: '500.01',
					orderId: 'r-1',
					options,
					...limits,
				},
			}),
		);
		expect(error?.message).toBe(
			'Refused: the refund of 500.01 of payment P1 is above Max Amount 500.00',
		);
	});
});

it('a BIC given as a number or as text becomes its 9 digits; anything else is left as it is', () => {
	expect(bicOf(44525225)).toBe('044525225');
	expect(bicOf('44525225')).toBe('044525225');
	expect(bicOf(' 044525225 ')).toBe('044525225');
	expect(bicOf('044525225')).toBe('044525225');
	for (const other of [null, undefined, '', 'n/a', 1234567890, -5, 4.5])
		expect(bicOf(other)).toBe(other);
});

describe.each(PROFILES)('against the sandbox, profile %s', (profile) => {
	let sandbox: Sandbox;
	sandboxFor(profile, (started) => (sandbox = started));

	async function bill(merchant: TestMerchant, parameters: INodeParameters, shopId?: string) {
		const [item] = await runNode({
			credential: { ...merchant.credential, ...(shopId ? { shopId } : {}) },
			parameters: { resource: 'bill', operation: 'create', amount: '100', ...parameters },
		});
		return await control(sandbox, 'GET', `/bills/${String(item.json.bill_id)}`);
	}

	it("Bill › Create sends the Order ID field, a saved workflow's Additional Fields one, the field's first", async () => {
		const merchant = await newMerchant(sandbox);
		const own = { shopId: merchant.shopId };
		expect(await bill(merchant, { ...own, orderId: 'A-1' })).toMatchObject({ orderId: 'A-1' });
		expect(await bill(merchant, { ...own, additionalFields: { orderId: 'OLD-2' } })).toMatchObject({
			orderId: 'OLD-2',
		});
		expect(
			await bill(merchant, { ...own, orderId: 'NEW-3', additionalFields: { orderId: 'OLD-3' } }),
		).toMatchObject({ orderId: 'NEW-3' });
	});

	it("Bill › Create takes the credential's Shop ID, and without one says where to set it", async () => {
		const merchant = await newMerchant(sandbox);
		expect(await bill(merchant, { orderId: 'S-1' }, merchant.shopId)).toMatchObject({
			orderId: 'S-1',
		});
		const error = await failure(bill(merchant, { orderId: 'S-2' }));
		expect(error?.message).toMatch(/Shop ID.*set it on the node or in the PayPalych credential/);
	});

	it('Daily Limit as a field refuses a payout over it, and a saved Options one still does', async () => {
		const merchant = await newMerchant(sandbox);
		const run = (orderId: string, limits: INodeParameters, options: INodeParameters = {}) =>
			runNode({
				credential: merchant.credential,
				parameters: { ...personal(merchant, '300', orderId, options), ...limits },
			});
		await run('d-1', { dailyLimit: '500' });
		const field = await failure(run('d-2', { dailyLimit: '500' }));
		expect(field?.message).toMatch(/^Refused: Daily Limit 500\.00 RUB would be exceeded: 300\.00/);
		const saved = await failure(run('d-3', {}, { dailyLimit: '500', timeZone: 'UTC' }));
		expect(saved?.message).toMatch(/Daily Limit 500\.00 RUB would be exceeded.*, UTC\)/);
		// Both set: the lower holds.
		const both = await failure(run('d-4', { dailyLimit: '10000' }, { dailyLimit: '500' }));
		expect(both?.message).toMatch(/Daily Limit 500\.00 RUB/);
	});

	it('SBP Bank › Get Many gives each BIC as its 9 digits, the leading zero kept', async () => {
		const merchant = await newMerchant(sandbox);
		const banks = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'sbpBank', operation: 'getMany', returnAll: true },
		});
		expect(banks.find((b) => b.json.name_en === 'Sberbank')?.json.bic).toBe('044525225');
		for (const bank of banks) expect(bank.json.bic).toMatch(/^\d{9}$/);
	});
});
