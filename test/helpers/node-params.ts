/**
 * What the node suites share: the parameters of a payout to the merchant's saved account, and a
 * failed run's error caught as a value.
 */
import type { INodeParameters } from 'n8n-workflow';

/** The node's parameters for Payout > Create to Saved Account. */
export const personal = (
	merchant: { payoutAccountId: string },
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

/** The error a run failed with, or undefined when it succeeded. */
export const failure = (promise: Promise<unknown>) =>
	promise.then(
		() => undefined,
		(e: Error & { httpCode?: string; description?: string; context?: Record<string, unknown> }) =>
			e,
	);
