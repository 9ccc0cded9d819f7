// Refund › Create never refunds twice without relying on the service's `order_id`, on both sandbox
// profiles (`spec` shows a refund's order_id and refuses it twice; `live` accepts it, shows it
// nowhere and refuses nothing for it, as the live service is seen to):
// - an answer lost after the money moved: the node recognises the refund it made (new since it
//   read the payment's refunds, same payment and amount); a re-run refunds nothing again;
// - a retry that finds a refund it cannot tell from its own (same payment and amount, no Order ID
//   shown) stops naming it, refunding nothing; On Existing Refund = Treat as Done returns it, Other
//   Refund IDs lets a distinct refund through;
// - two executions of one item at the same moment: in one n8n process, one refund; in two
//   processes (two queue-mode workers, no shared lock), the double is said loudly, and the
//   service's own ceiling keeps the total within the payment.
import { afterEach, describe, expect, it } from 'vitest';
import type { INodeParameters } from 'n8n-workflow';

import { runNode } from '../helpers/n8n-context.ts';
import { failure } from '../helpers/node-params.ts';
import {
	PROFILES,
	control,
	newMerchant,
	sandboxFor,
	type Sandbox,
	type TestMerchant,
} from '../helpers/sandbox.ts';

type Json = Record<string, any>;

describe.each(PROFILES)('Refund › Create once, profile %s', (profile) => {
	let sandbox: Sandbox;
	sandboxFor(profile, (started) => (sandbox = started));
	afterEach(async () => {
		await control(sandbox, 'DELETE', '/faults');
	});

	async function paidPayment(merchant: TestMerchant, amount: string): Promise<string> {
		const bill = (await api(merchant, 'bill/create', { amount, shop_id: merchant.shopId })) as {
			bill_id: string;
		};
		const paid = await control<Json>(sandbox, 'POST', `/bills/${bill.bill_id}/pay`, {});
		return paid.payment.id as string;
	}

	/** A call of the sandbox's API as any client would make it (not the node). */
	async function api(merchant: TestMerchant, path: string, fields: Record<string, string>) {
		const response = await fetch(`${sandbox.url}/api/v1/${path}`, {
			method: 'POST',
			headers: {
				authorization: `Bearer ${merchant.token}`,
				'content-type': 'application/x-www-form-urlencoded',
			},
			body: new URLSearchParams(fields).toString(),
		});
		return (await response.json()) as Json;
	}

	const refundsOf = async (paymentId: string): Promise<Json[]> =>
		(await control<{ refunds: Json[] }>(sandbox, 'GET', `/payments/${paymentId}`)).refunds;

	const moneyCalls = async () => {
		const { calls } = await control<{ calls: Record<string, number> }>(sandbox, 'GET', '/calls');
		return (calls['refund/full/create'] ?? 0) + (calls['refund/partial/create'] ?? 0);
	};

	const create = (
		paymentId: string,
		amount: string,
		orderId: string,
		options: INodeParameters = {},
	): INodeParameters => ({
		resource: 'refund',
		operation: 'create',
		paymentId,
		amount,
		orderId,
		options,
	});

	const merchantWithRefunds = async () => await newMerchant(sandbox, { refunds: true });

	it('an answer lost after the money moved, then a re-run of the execution: exactly one refund', async () => {
		const merchant = await merchantWithRefunds();
		const paymentId = await paidPayment(merchant, '1000');
		await control(sandbox, 'DELETE', '/calls');
		await control(sandbox, 'POST', '/faults', {
			kind: 'drop_after',
			path: '/api/v1/refund/partial/create',
			count: 1,
		});
		const parameters = create(paymentId, '250', 'lost-1');
		const [made] = await runNode({ credential: merchant.credential, parameters });
		const [onService] = await refundsOf(paymentId);
		// The node read the refunds again and recognised the one its lost request made.
		expect(made.json).toMatchObject({ id: onService.id, amount: 250, already_existed: false });

		const rerun = await failure(runNode({ credential: merchant.credential, parameters }));
		if (profile === 'spec') {
			// The service shows the Order ID on the refund: the re-run returns it.
			expect(rerun).toBeUndefined();
		} else {
			expect(rerun?.message).toBe(
				`Refused: refund ${String(onService.id)} (250.00 RUB of payment ${paymentId}, SUCCESS, created ${String(onService.created_at)}) cannot be told from this refund (250.00 of payment ${paymentId} under Order ID lost-1): the service shows no Order ID on it`,
			);
			expect(rerun?.description).toContain('Nothing was refunded.');
			expect(rerun?.description).toContain(
				'set Options › On Existing Refund to Treat as Done: the node outputs it and refunds nothing',
			);
			const [done] = await runNode({
				credential: merchant.credential,
				parameters: create(paymentId, '250', 'lost-1', { onExisting: 'treatAsDone' }),
			});
			expect(done.json).toMatchObject({ id: onService.id, already_existed: true });
		}
		expect(await refundsOf(paymentId)).toHaveLength(1);
		expect(await moneyCalls()).toBe(1);
	});

	it('a retry that finds an identical refund made before (its run lost, or made in the account): a clear error, no second refund', async () => {
		const merchant = await merchantWithRefunds();
		// An earlier execution's request reached the service, and that execution never finished.
		const paymentId = await paidPayment(merchant, '800');
		const earlier = await api(merchant, 'refund/partial/create', {
			payment_id: paymentId,
			amount: '300.00',
			order_id: 'ticket-7',
		});
		await control(sandbox, 'DELETE', '/calls');
		const retry = await failure(
			runNode({
				credential: merchant.credential,
				parameters: create(paymentId, '300', 'ticket-7'),
			}),
		);
		if (profile === 'spec') expect(retry).toBeUndefined();
		else expect(retry?.message).toContain(`Refused: refund ${String(earlier.id)} (300.00 RUB`);
		expect(await refundsOf(paymentId)).toHaveLength(1);
		expect(await moneyCalls()).toBe(0);

		// A refund made in the merchant's account shows no Order ID on either profile.
		const other = await paidPayment(merchant, '500');
		const inAccount = await control<Json>(sandbox, 'POST', `/payments/${other}/refund`, {
			amount: '120.00',
		});
		const stopped = await failure(
			runNode({ credential: merchant.credential, parameters: create(other, '120', 'ticket-8') }),
		);
		expect(stopped?.message).toContain(
			`Refused: refund ${String(inAccount.refund.id)} (120.00 RUB of payment ${other}, SUCCESS, created ${String(inAccount.refund.created_at)}) cannot be told from this refund`,
		);
		// Dry Run says the same; Treat as Done outputs it; neither refunds.
		const dry = await failure(
			runNode({
				credential: merchant.credential,
				parameters: create(other, '120', 'ticket-8', { dryRun: true }),
			}),
		);
		expect(dry?.message).toBe(stopped?.message);
		const [plan] = await runNode({
			credential: merchant.credential,
			parameters: create(other, '120', 'ticket-8', { dryRun: true, onExisting: 'treatAsDone' }),
		});
		expect(plan.json).toMatchObject({
			dry_run: true,
			would_refund: false,
			order_id_exists: false,
			existing_refund_ids: [inAccount.refund.id],
		});
		const [done] = await runNode({
			credential: merchant.credential,
			parameters: create(other, '120', 'ticket-8', { onExisting: 'treatAsDone' }),
		});
		expect(done.json).toMatchObject({ id: inAccount.refund.id, already_existed: true });
		// Fail names it too.
		const failed = await failure(
			runNode({
				credential: merchant.credential,
				parameters: create(other, '120', 'ticket-8', { onExisting: 'fail' }),
			}),
		);
		expect(failed?.message).toContain('cannot be told from this refund');
		expect(await moneyCalls()).toBe(0);
		expect(await refundsOf(other)).toHaveLength(1);

		// Another refund of the same amount is made only when the workflow names the first as another.
		const [second] = await runNode({
			credential: merchant.credential,
			parameters: create(other, '120', 'ticket-9', {
				otherRefundIds: String(inAccount.refund.id),
			}),
		});
		expect(second.json).toMatchObject({ amount: 120, already_existed: false });
		expect(await refundsOf(other)).toHaveLength(2);
	});

	it('the same item run twice at the same moment in one n8n process: one refund, never above the payment', async () => {
		const merchant = await merchantWithRefunds();
		const paymentId = await paidPayment(merchant, '1000');
		// Each create waits, so that the two executions overlap.
		await control(sandbox, 'POST', '/faults', {
			kind: 'delay',
			path: '/api/v1/refund/partial/create',
			delayMs: 400,
			count: 2,
		});
		const run = () =>
			runNode({
				credential: merchant.credential,
				parameters: create(paymentId, '300', 'same-moment'),
			}).then(
				(items) => ({ ok: items[0].json }),
				(error: Error) => ({ error }),
			);
		const outcomes = await Promise.all([run(), run()]);
		const refunds = await refundsOf(paymentId);
		expect(refunds).toHaveLength(1);
		const made = outcomes.filter((o) => 'ok' in o && o.ok.already_existed === false);
		expect(made).toHaveLength(1);
		const second = outcomes.find((o) => o !== made[0]) as Json;
		if (profile === 'spec') expect(second.ok).toMatchObject({ already_existed: true });
		else expect(second.error.message).toContain(`Refused: refund ${String(refunds[0].id)}`);
	});

	it('the same item run at the same moment by two processes: a double is said loudly, naming both; the service keeps the total within the payment', async () => {
		const merchant = await merchantWithRefunds();
		const paymentId = await paidPayment(merchant, '1000');
		// Two processes share no lock: another credential id stands for the other worker here.
		await control(sandbox, 'POST', '/faults', {
			kind: 'delay',
			path: '/api/v1/refund/partial/create',
			delayMs: 500,
			count: 2,
		});
		const run = (worker: string) =>
			runNode({
				credential: merchant.credential,
				credentialId: worker,
				parameters: create(paymentId, '300', 'two-workers'),
			}).then(
				(items) => ({ ok: items[0].json }),
				(error: Error & { description?: string }) => ({ error }),
			);
		const outcomes = (await Promise.all([run('worker-1'), run('worker-2')])) as Json[];
		const refunds = await refundsOf(paymentId);
		if (profile === 'spec') {
			// The service refuses the Order ID twice: the second worker returns the first's refund.
			expect(refunds).toHaveLength(1);
			expect(outcomes.map((o) => o.ok?.already_existed).sort()).toEqual([false, true]);
		} else {
			// Nothing on the service stops the second refund: the node says so, naming both.
			expect(refunds).toHaveLength(2);
			const loud = outcomes.filter((o) => o.error !== undefined);
			expect(loud.length).toBeGreaterThanOrEqual(1);
			for (const { error } of loud) {
				expect(error.message).toContain(`Payment ${paymentId} may have been refunded twice`);
				for (const refund of refunds) expect(error.message).toContain(String(refund.id));
				expect(error.description).toContain('no idempotency key');
			}
		}

		// When the payment cannot give back both, the service refuses the second.
		const small = await paidPayment(merchant, '500');
		await control(sandbox, 'POST', '/faults', {
			kind: 'delay',
			path: '/api/v1/refund/partial/create',
			delayMs: 500,
			count: 2,
		});
		const runSmall = (worker: string) =>
			runNode({
				credential: merchant.credential,
				credentialId: worker,
				parameters: create(small, '300', 'two-workers-small'),
			}).then(
				() => 'ok',
				(error: Error) => error.message,
			);
		const smallOutcomes = await Promise.all([runSmall('worker-1'), runSmall('worker-2')]);
		expect(await refundsOf(small)).toHaveLength(1);
		if (profile === 'live') {
			expect(smallOutcomes.sort()).toEqual([
				'api:error.refund_amount_exceeded: The refund is more than the payment can still give back',
				'ok',
			]);
		}
	});
});
