import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ICredentialTestRequest, IHttpRequestOptions, INodeProperties } from 'n8n-workflow';

import {
	PayPalych,
	PayPalychApi,
	resolveCredentialExpression,
	runNode,
} from '../helpers/n8n-context.ts';
import { newMerchant, start, type Sandbox } from '../helpers/sandbox.ts';

let sandbox: Sandbox;
beforeAll(async () => {
	sandbox = await start();
});
afterAll(async () => {
	await sandbox.close();
});

const credentialType = new PayPalychApi();

describe('credential payPalychApi', () => {
	it('has a required password token and a base URL defaulting to https://pal24.pro', () => {
		const byName = Object.fromEntries(
			credentialType.properties.map((p: INodeProperties) => [p.name, p]),
		);
		expect(byName.apiToken).toMatchObject({
			type: 'string',
			required: true,
			typeOptions: { password: true },
		});
		expect(byName.baseUrl).toMatchObject({ type: 'string', default: 'https://pal24.pro' });
		// The optional Shop ID: the default of Bill › Create and the searches' shop_id.
		expect(byName.shopId).toMatchObject({ type: 'string', default: '' });
		expect(byName.shopId.required).toBeFalsy();
	});

	it('its test request reaches GET /api/v1/merchant/balance for any spelling of the base URL, and a 401 reads as a rejected token', async () => {
		const merchant = await newMerchant(sandbox);
		const test = credentialType.test as ICredentialTestRequest;
		const request = test.request as IHttpRequestOptions;
		expect(request.method).toBe('GET');
		for (const baseUrl of [
			sandbox.url,
			`${sandbox.url}/`,
			`${sandbox.url}//`,
			`${sandbox.url}/api/v1`,
			`${sandbox.url}/api/v1/`,
		]) {
			const credentials = { apiToken: merchant.token, baseUrl };
			const resolvedBase = resolveCredentialExpression(request.baseURL as string, credentials);
			expect(resolvedBase).toBe(sandbox.url);
			const authorization = resolveCredentialExpression(
				'=Bearer {{$credentials.apiToken}}',
				credentials,
			);
			const ok = await fetch(`${resolvedBase}${request.url}`, {
				headers: { authorization: String(authorization), accept: 'application/json' },
			});
			expect(ok.status).toBe(200);
		}
		const rejected = await fetch(`${sandbox.url}${request.url}`, {
			headers: { authorization: 'Bearer wrong', accept: 'application/json' },
		});
		expect(rejected.status).toBe(401);
		const rule = test.rules?.find(
			(r) => r.type === 'responseCode' && r.properties.value === rejected.status,
		);
		expect(rule?.properties.message).toBe(
			'The API token was rejected. Refresh it on the API integration page and paste the new one',
		);
	});

	it('works with a white-label host: the node calls whatever base URL the credential holds', async () => {
		const merchant = await newMerchant(sandbox);
		const whiteLabel = sandbox.url.replace('127.0.0.1', 'localhost');
		const [item] = await runNode({
			credential: { apiToken: merchant.token, baseUrl: `${whiteLabel}/` },
			parameters: { resource: 'balance', operation: 'get' },
		});
		expect(item.json.success).toBe(true);
	});
});

describe('node description', () => {
	const description = new PayPalych().description;
	const operations = (resource: string) =>
		(description.properties.find(
			(p) => p.name === 'operation' && p.displayOptions?.show?.resource?.[0] === resource,
		)?.options ?? []) as Array<{
			value: string;
			action?: string;
			description?: string;
		}>;

	it('is usable as an AI tool and needs the payPalychApi credential', () => {
		expect(description.name).toBe('payPalych');
		expect(description.usableAsTool).toBe(true);
		expect(description.credentials).toEqual([{ name: 'payPalychApi', required: true }]);
		// One icon folder (icons/): the paths resolve from the compiled node to the copied icons.
		expect(description.icon).toEqual({
			light: 'file:../../icons/paypalych.svg',
			dark: 'file:../../icons/paypalych.dark.svg',
		});
		const nodeDir = join(__dirname, '..', '..', 'dist', 'nodes', 'PayPalych');
		for (const icon of Object.values(description.icon as Record<string, string>)) {
			expect(existsSync(join(nodeDir, icon.replace(/^file:/, ''))), icon).toBe(true);
		}
	});

	it('offers exactly the documented operations, each with an action and a description an agent can act on', () => {
		const table = Object.fromEntries(
			['bill', 'payment', 'balance', 'payout', 'sbpBank'].map((r) => [
				r,
				operations(r)
					.map((o) => o.value)
					.sort(),
			]),
		);
		expect(table).toEqual({
			bill: ['create', 'get', 'getPayments', 'search', 'setActive'],
			payment: ['get', 'search'],
			balance: ['get'],
			payout: ['createPersonal', 'createRegular', 'get', 'search'],
			sbpBank: ['getMany'],
		});
		for (const resource of Object.keys(table)) {
			for (const option of operations(resource)) {
				expect(option.action, `${resource}.${option.value}`).toMatch(/^[A-Z]/);
				expect((option.description ?? '').length, `${resource}.${option.value}`).toBeGreaterThan(
					20,
				);
			}
		}
	});

	it('documents the payout order-ID rule where the merchant sets it: a required business key, never derived', () => {
		const orderIds = description.properties.filter(
			(p) =>
				p.name === 'orderId' &&
				p.displayOptions?.show?.resource?.[0] === 'payout' &&
				String(p.displayOptions?.show?.operation?.[0]).startsWith('create'),
		);
		expect(orderIds).toHaveLength(2);
		for (const orderId of orderIds) {
			expect(orderId.required).toBe(true);
			expect(orderId.description).toContain(
				'the same value for every retry, re-run and duplicate delivery',
			);
			expect(orderId.hint).toBe('The node never pays one Order ID twice');
			expect(orderId.description).toContain('eventKey');
		}
		const options = description.properties.filter(
			(p) => p.name === 'options' && p.displayOptions?.show?.resource?.[0] === 'payout',
		);
		for (const collection of options) {
			const onExisting = (collection.options as INodeProperties[]).find(
				(o) => o.name === 'onExisting',
			);
			expect(onExisting?.default).toBe('return');
			expect((onExisting?.options as Array<{ value: string }>).map((o) => o.value)).toEqual([
				'return',
				'fail',
			]);
		}
	});
});
