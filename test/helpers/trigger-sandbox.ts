// The start-up the trigger's sandbox files share (confirm, forgery, trsid-bill): a sandbox of one
// profile, a merchant whose shop posts its genuine postbacks nowhere (a closed port, so each test
// delivers them itself), the trigger's process memory reset before each test, and every trigger
// harness the file opened closed after it.
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { resetProcessMemory } from '../../dist/nodes/PayPalychTrigger/receive.js';
import { control, newMerchant, start, type Sandbox, type TestMerchant } from './sandbox.ts';
import type { WebhookHarness } from './webhook-harness.ts';

export function triggerSandbox(options: {
	profile: Parameters<typeof start>[0];
	/** The merchant's fields (newMerchant). */
	merchant: Record<string, unknown>;
	/** The file's open trigger harnesses, closed after its tests. */
	open: WebhookHarness[];
	/** Gets the sandbox and the merchant once both are ready. */
	started: (sb: Sandbox, merchant: TestMerchant) => void;
}): void {
	let sb: Sandbox | undefined;
	beforeAll(async () => {
		sb = await start(options.profile);
		const merchant = await newMerchant(sb, options.merchant);
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
}
