// The pages a customer sees after paying, when the relay answers the success/fail redirects itself
// (no RELAY_SUCCESS_URL / RELAY_FAIL_URL): complete HTML pages, readable on a phone, that load
// nothing from elsewhere.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../relay/src/app.ts';
import { loadConfig } from '../../relay/src/config.ts';
import { openStore } from '../../relay/src/store-open.ts';
import type { Store } from '../../relay/src/store/types.ts';
import { baseEnv, form, redirectFields, tempDir } from './helpers.ts';

describe("the customer's pages after paying", () => {
	let app: FastifyInstance;
	let store: Store;
	let tmp: ReturnType<typeof tempDir>;

	beforeAll(async () => {
		tmp = tempDir();
		const config = loadConfig(
			baseEnv(
				tmp.dir,
				{ payment: ['http://127.0.0.1:9/pay'], redirect: ['http://127.0.0.1:9/r'] },
				{ LOG_LEVEL: 'silent' },
			),
		);
		store = await openStore(config.database);
		app = await buildApp(config, { store, forwarder: false });
	});

	afterAll(async () => {
		await app.close();
		await store.close();
		tmp.cleanup();
	});

	const redirect = (kind: 'success' | 'fail', fields: Record<string, string>) =>
		app.inject({
			method: 'POST',
			url: `/redirect/${kind}`,
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			payload: form(fields),
		});

	it.each([
		['success', redirectFields('order-page-1'), 200, 'Thank you'],
		['fail', redirectFields('order-page-2'), 200, 'Payment failed'],
		[
			'success',
			{ ...redirectFields('order-page-3'), SignatureValue: 'forged' },
			401,
			'not confirmed',
		],
	] as const)(
		'%s redirect answers %i with a styled page saying "%s"',
		async (kind, fields, code, says) => {
			const res = await redirect(kind, fields);
			expect(res.statusCode).toBe(code);
			expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
			expect(res.body).toContain(says);
			expect(res.body).toMatch(/<meta name="viewport" content="width=device-width/);
			expect(res.body).toMatch(/<style>[^<]*body\{[^<]*\}<\/style>/);
			// Nothing loaded from elsewhere: no stylesheet link, script or image.
			expect(res.body).not.toMatch(/<link|<script|<img|https?:\/\//);
		},
	);
});
