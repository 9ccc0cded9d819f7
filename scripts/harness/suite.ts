/**
 * What the end-to-end suites and the e2e bench share beside the stack itself: the n8n owner they
 * set up, and the sandbox's record of a postback it sent.
 */
import type { Owner } from './n8n.ts';
import type { Stack } from './stack.ts';
import { waitFor, OUTSIDE } from './wait.ts';

/** One postback the sandbox sent: where, its answer's status, and the body it sent. */
export interface PostbackDelivery {
	url: string;
	status?: number | null;
	body: unknown;
	[field: string]: unknown;
}

/**
 * The sandbox's record of its postback of a payment (or payout) with this TrsId, once the relay
 * (or whatever the shop's URL names) has answered it: its `status` and the `body` it sent.
 */
export async function answeredPostback(
	stack: Pick<Stack, 'control'>,
	trsId: string,
	kind: 'payment' | 'payout' | 'refund' | 'chargeback' = 'payment',
): Promise<PostbackDelivery> {
	return await waitFor(
		`the sandbox to post ${kind} ${trsId}`,
		async () => {
			const { data } = await stack.control<{ data: PostbackDelivery[] }>(
				'GET',
				`/deliveries?kind=${kind}&trsId=${encodeURIComponent(trsId)}`,
			);
			return data.find((d) => d.status !== undefined && d.status !== null);
		},
		OUTSIDE,
	);
}

/** The n8n owner a script or suite sets up, named after it (`E2E`, `Smoke`, `Queue`, `Bench`). */
export function ownerFor(label: string): Owner {
	const word = label.charAt(0).toUpperCase() + label.slice(1).toLowerCase();
	return {
		email: `${label.toLowerCase()}-owner@example.com`,
		password: `${word}-Passw0rd`,
		firstName: label,
		lastName: 'Owner',
	};
}
