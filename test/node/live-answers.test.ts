import { afterEach, describe, expect, it } from 'vitest';
import type { INodeParameters } from 'n8n-workflow';

import { runNode, type Credential } from '../helpers/n8n-context.ts';
import { requestsTo, startFakeService, type FakeService } from '../helpers/fake-service.ts';

// The action node against a stand-in service that answers both ways where the interface document
// is silent (test/helpers/fake-service.ts): error keys in `message` or in `error_code`, lists in
// one answer or cursor-paged, searches that require `shop_id`, payment records with or without
// `amount_received`.
let service: FakeService | undefined;
afterEach(async () => {
	await service?.close();
	service = undefined;
});

const credentialOf = (target: FakeService, extra: Partial<Credential> = {}): Credential => ({
	apiToken: '1|fake-token',
	baseUrl: target.url,
	...extra,
});

const failure = (promise: Promise<unknown>) =>
	promise.then(
		() => undefined,
		(e: Error & { httpCode?: string; description?: string; context?: Record<string, unknown> }) =>
			e,
	);

describe.each(['message', 'error_code'] as const)('error keys in %s', (errorForm) => {
	const personal = (orderId: string, amount = '100'): INodeParameters => ({
		resource: 'payout',
		operation: 'createPersonal',
		payoutAccountId: 'ACC-1',
		amount,
		orderId,
	});

	it('Payout › Create with an Order ID recognises payout_not_found, pays once, and a re-run pays nothing', async () => {
		service = await startFakeService({ errorForm });
		const credential = credentialOf(service);
		const [first] = await runNode({ credential, parameters: personal('order-1') });
		expect(first.json).toMatchObject({ order_id: 'order-1', already_existed: false });
		const [again] = await runNode({ credential, parameters: personal('order-1') });
		expect(again.json).toMatchObject({ id: first.json.id, already_existed: true });
		expect(requestsTo(service, 'payout/personal/create')).toHaveLength(1);
		expect(service.payouts).toHaveLength(1);
	});

	it("names the service's key in the node's error", async () => {
		service = await startFakeService({ errorForm });
		const error = await failure(
			runNode({
				credential: credentialOf(service),
				parameters: { resource: 'payment', operation: 'get', paymentId: 'NOPE' },
			}),
		);
		expect(error?.message).toBe('api:error.payment_not_found: No payment has this ID');
		expect(error?.httpCode).toBe('422');
		expect(error?.context?.errorKey).toBe('api:error.payment_not_found');
		if (errorForm === 'error_code') expect(error?.description).toContain('Payment not found');
	});
});
