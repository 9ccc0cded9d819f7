// The start-up the trigger's sandbox files share (confirm, forgery, trsid-bill): a sandbox of one
// profile, a merchant whose shop posts its genuine postbacks nowhere (a closed port, so each test
// delivers them itself), the trigger's process memory reset before each test, and every trigger
// harness the file opened closed after it; and the bill and payment calls its tests make.
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { resetProcessMemory } from '../../dist/nodes/PayPalychTrigger/memory.js';
import { control, newMerchant, start, type Sandbox, type TestMerchant } from './sandbox.ts';
import type { WebhookHarness } from './webhook-harness.ts';

/** A payment as the sandbox's pay call answers it. */
export type Paid = {
	payment: { id: string };
	postback: Record<string, string> | null;
	redirect: { url: string | null; fields: Record<string, string> };
};

/** A bill of `merchant`'s shop; answers its id. */
export async function billOf(
	sb: Sandbox,
	merchant: TestMerchant,
	amount: string,
	orderId: string,
	extra: Record<string, string> = {},
): Promise<string> {
	const res = await fetch(`${sb.url}/api/v1/bill/create`, {
		method: 'POST',
		headers: { authorization: `Bearer ${merchant.token}`, accept: 'application/json' },
		body: new URLSearchParams({ amount, shop_id: merchant.shopId, order_id: orderId, ...extra }),
	});
	const body = (await res.json()) as { bill_id: string };
	if (!res.ok) throw new Error(`bill/create: ${res.status} ${JSON.stringify(body)}`);
	return body.bill_id;
}

export function triggerSandbox(options: {
	profile: Parameters<typeof start>[0];
	/** The merchant's fields (newMerchant). */
	merchant: Record<string, unknown>;
	/** The file's open trigger harnesses, closed after its tests. */
	open: WebhookHarness[];
	/** Gets the sandbox and the merchant once both are ready. */
	started: (sb: Sandbox, merchant: TestMerchant) => void;
}) {
	let sb: Sandbox | undefined;
	let merchant: TestMerchant;
	beforeAll(async () => {
		sb = await start(options.profile);
		merchant = await newMerchant(sb, options.merchant);
		await control(sb, 'PATCH', `/shops/${merchant.shopId}`, {
			resultUrl: 'http://127.0.0.1:9/closed',
			successUrl: null,
			failUrl: null,
		});
		options.started(sb, merchant);
	});
	beforeEach(() => resetProcessMemory());
	afterAll(async () => {
		for (const h of options.open.splice(0)) await h.close();
		await sb?.close();
	});

	/** A bill of the merchant's shop; answers its id. */
	const bill = (amount: string, orderId: string, extra: Record<string, string> = {}) =>
		billOf(sb!, merchant, amount, orderId, extra);
	/** Pays the bill through the sandbox's control API. */
	async function pay(
		billId: string,
		outcome: 'full' | 'fail' | 'over' | 'under' = 'full',
	): Promise<Paid> {
		return await control<Paid>(sb!, 'POST', `/bills/${billId}/pay`, { outcome });
	}
	return { bill, pay };
}
