// Refund › Create, Get and Search against the real sandbox over HTTP, on both profiles: a refund
// is made at most once per Order ID (re-runs, reordered items, an answer lost after the money
// moved), never above what the payment can still give back (refused before any money call), Dry
// Run moves nothing, and a merchant without the refund API is told to ask support to enable it.
// `spec` shows a refund's order_id and refuses it twice; `live` shows none and refuses nothing
// for it, so there a re-run stops on the refund it cannot tell from its own, and On Existing
// Refund = Treat as Done returns it (rerun below).
import { describe, expect, it } from 'vitest';
import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { runNode, type RunOptions } from '../helpers/n8n-context.ts';
import { failure } from '../helpers/node-params.ts';
import {
	PROFILES,
	control,
	newMerchant,
	serviceDay,
	sandboxFor,
	type Sandbox,
	type TestMerchant,
} from '../helpers/sandbox.ts';

const TOOL_TYPE = 'n8n-nodes-paypalych.payPalychTool';

describe.each(PROFILES)('Refund resource against the sandbox, profile %s', (profile) => {
	let sandbox: Sandbox;
	sandboxFor(profile, (started) => (sandbox = started));

	/** A paid payment of `amount` on a new bill of the merchant; returns its id. */
	async function paidPayment(merchant: TestMerchant, amount: string): Promise<string> {
		const response = await fetch(`${sandbox.url}/api/v1/bill/create`, {
			method: 'POST',
			headers: {
				authorization: `Bearer ${merchant.token}`,
				'content-type': 'application/x-www-form-urlencoded',
			},
			body: new URLSearchParams({ amount, shop_id: merchant.shopId }).toString(),
		});
		const { bill_id } = (await response.json()) as { bill_id: string };
		const paid = await control<{ payment: { id: string } }>(
			sandbox,
			'POST',
			`/bills/${bill_id}/pay`,
			{},
		);
		return paid.payment.id;
	}

	/** The sandbox's own view of the payment's refunds (control API, not the node). */
	async function refundsOf(paymentId: string): Promise<Array<Record<string, any>>> {
		return (
			await control<{ refunds: Array<Record<string, any>> }>(
				sandbox,
				'GET',
				`/payments/${paymentId}`,
			)
		).refunds;
	}

	async function calls(): Promise<Record<string, number>> {
		return (await control<{ calls: Record<string, number> }>(sandbox, 'GET', '/calls')).calls;
	}
	const moneyCalls = (c: Record<string, number>) =>
		(c['refund/full/create'] ?? 0) + (c['refund/partial/create'] ?? 0);

	const refundMerchant = async () => await newMerchant(sandbox, { refunds: true });

	/**
	 * A re-run of refunds already made (`made`: their ids). `spec` shows the Order ID on refunds:
	 * the node returns them. `live` shows none: the node first stops naming the refund it cannot
	 * tell from this one, refunding nothing; with On Existing Refund = Treat as Done it returns it.
	 */
	async function rerun(run: RunOptions, made: string[]): Promise<INodeExecutionData[]> {
		if (profile === 'spec') return await runNode(run);
		const stopped = await failure(runNode(run));
		expect(stopped?.message).toContain('cannot be told from this refund');
		expect(made.some((id) => stopped?.message.includes(id))).toBe(true);
		expect(stopped?.description).toContain('On Existing Refund to Treat as Done');
		const options = { ...(run.parameters.options as INodeParameters), onExisting: 'treatAsDone' };
		return await runNode({ ...run, parameters: { ...run.parameters, options } });
	}

	const create = (
		paymentId: string,
		amount: string,
		orderId: string,
		options: INodeParameters = {},
	) =>
		({
			resource: 'refund',
			operation: 'create',
			paymentId,
			amount,
			orderId,
			options,
		}) as INodeParameters;

	it('a partial refund run twice with the same Order ID refunds once; the second run returns it, already_existed', async () => {
		const merchant = await refundMerchant();
		const paymentId = await paidPayment(merchant, '1000');
		const parameters = create(paymentId, '250.50', 'return-1');
		const [first] = await runNode({ credential: merchant.credential, parameters });
		expect(first.json).toMatchObject({
			payment_id: paymentId,
			order_id: 'return-1',
			amount: 250.5,
			already_existed: false,
		});
		const [again] = await rerun({ credential: merchant.credential, parameters }, [
			String(first.json.id),
		]);
		expect(again.json).toMatchObject({ id: first.json.id, already_existed: true });
		expect(await refundsOf(paymentId)).toHaveLength(1);
		// Where the service shows no Order ID, another amount under it is another refund to the node.
		if (profile === 'live') return;

		// The same Order ID with another amount, or for another payment: an error, nothing refunded.
		const other = await failure(
			runNode({
				credential: merchant.credential,
				parameters: create(paymentId, '100', 'return-1'),
			}),
		);
		expect(other?.message).toContain('Order ID return-1 already has a refund');
		expect(other?.description).toContain('Nothing was refunded');
		const otherPayment = await paidPayment(merchant, '500');
		const elsewhere = await failure(
			runNode({
				credential: merchant.credential,
				parameters: create(otherPayment, '250.50', 'return-1'),
			}),
		);
		expect(elsewhere?.message).toContain(
			'Order ID return-1 is already used by a refund of another payment',
		);
		expect(await refundsOf(paymentId)).toHaveLength(1);
		expect(await refundsOf(otherPayment)).toHaveLength(0);
	});

	it('a whole-payment refund (Amount empty) uses the full endpoint, once; a re-run returns it', async () => {
		const merchant = await refundMerchant();
		const paymentId = await paidPayment(merchant, '700');
		await control(sandbox, 'DELETE', '/calls');
		const parameters = create(paymentId, '', 'full-1');
		const [first] = await runNode({ credential: merchant.credential, parameters });
		expect(first.json).toMatchObject({ payment_id: paymentId, already_existed: false });
		expect((await calls())['refund/full/create']).toBe(1);
		const [again] = await rerun({ credential: merchant.credential, parameters }, [
			String(first.json.id),
		]);
		expect(again.json).toMatchObject({ id: first.json.id, already_existed: true });
		expect((await calls())['refund/full/create']).toBe(1);
		const refunds = await refundsOf(paymentId);
		expect(refunds).toHaveLength(1);
		if (profile === 'live') return; // no Order ID shown: the rest is `spec`'s
		// A partial refund already made under the Order ID is not "the whole payment".
		const partialFirst = await paidPayment(merchant, '300');
		await runNode({
			credential: merchant.credential,
			parameters: create(partialFirst, '100', 'full-2'),
		});
		const mismatch = await failure(
			runNode({ credential: merchant.credential, parameters: create(partialFirst, '', 'full-2') }),
		);
		expect(mismatch?.message).toContain('Order ID full-2 already has a refund');
		expect(await refundsOf(partialFirst)).toHaveLength(1);
	});

	it('reordered items with their Order IDs: each payment is refunded once', async () => {
		const merchant = await refundMerchant();
		const a = await paidPayment(merchant, '100');
		const b = await paidPayment(merchant, '200');
		const parameters: INodeParameters = {
			resource: 'refund',
			operation: 'create',
			paymentId: '={{ $json.paymentId }}',
			amount: '={{ $json.amount }}',
			orderId: '={{ $json.orderId }}',
		};
		const items = [
			{ paymentId: a, amount: '40', orderId: 'ret-a' },
			{ paymentId: b, amount: '', orderId: 'ret-b' },
		];
		const first = await runNode({ credential: merchant.credential, parameters, items });
		expect(first.map((i) => i.json.already_existed)).toEqual([false, false]);
		const second = await rerun(
			{ credential: merchant.credential, parameters, items: [...items].reverse() },
			first.map((i) => String(i.json.id)),
		);
		expect(second.map((i) => i.json.id)).toEqual([first[1].json.id, first[0].json.id]);
		expect(second.map((i) => i.json.already_existed)).toEqual([true, true]);
		expect(await refundsOf(a)).toHaveLength(1);
		expect(await refundsOf(b)).toHaveLength(1);
	});

	it('an answer lost after the money moved: the node finds the refund it made; a re-run refunds nothing again', async () => {
		const merchant = await refundMerchant();
		const paymentId = await paidPayment(merchant, '900');
		for (const [path, amount, orderId, later] of [
			['/api/v1/refund/partial/create', '300', 'lost-partial', 0],
			['/api/v1/refund/full/create', '', 'lost-full', 2000],
		] as const) {
			// The whole-payment refund is made a moment after the partial one (not in its second).
			await control(sandbox, 'POST', '/clock', { offsetMs: later });
			await control(sandbox, 'POST', '/faults', { kind: 'drop_after', path, count: 1 });
			const [made] = await runNode({
				credential: merchant.credential,
				parameters: create(paymentId, amount, orderId),
			});
			expect(made.json).toMatchObject({ order_id: orderId, already_existed: false });
			const [again] = await rerun(
				{ credential: merchant.credential, parameters: create(paymentId, amount, orderId) },
				[String(made.json.id)],
			);
			expect(again.json).toMatchObject({ id: made.json.id, already_existed: true });
		}
		await control(sandbox, 'POST', '/clock', { offsetMs: 0 });
		const refunds = await refundsOf(paymentId);
		expect(refunds).toHaveLength(2);
		// `live` keeps no order_id (it accepts one and shows none).
		expect(refunds.map((r) => r.orderId ?? r.order_id ?? null).sort()).toEqual(
			profile === 'spec' ? ['lost-full', 'lost-partial'] : [null, null],
		);
	});

	it('a 5xx after which nothing was refunded: the error says a re-run is safe, and the re-run refunds once', async () => {
		const merchant = await refundMerchant();
		const paymentId = await paidPayment(merchant, '400');
		await control(sandbox, 'POST', '/faults', {
			kind: '500',
			path: '/api/v1/refund/partial/create',
			count: 1,
		});
		const error = await failure(
			runNode({ credential: merchant.credential, parameters: create(paymentId, '150', 'five-1') }),
		);
		expect(error?.message).toContain('api:error.general_error');
		expect(error?.description).toContain(
			'running this node again with Order ID five-1 is safe, it never refunds an Order ID twice',
		);
		expect(await refundsOf(paymentId)).toHaveLength(0);
		const [made] = await runNode({
			credential: merchant.credential,
			parameters: create(paymentId, '150', 'five-1'),
		});
		expect(made.json).toMatchObject({ order_id: 'five-1', already_existed: false });
		expect(await refundsOf(paymentId)).toHaveLength(1);
	});

	it('more than the payment can still give back is refused before any money call', async () => {
		const merchant = await refundMerchant();
		const paymentId = await paidPayment(merchant, '500');
		const [part1] = await runNode({
			credential: merchant.credential,
			parameters: create(paymentId, '400', 'part-1'),
		});
		await control(sandbox, 'DELETE', '/calls');
		const over = await failure(
			runNode({
				credential: merchant.credential,
				parameters: create(paymentId, '100.01', 'part-2'),
			}),
		);
		expect(over?.message).toContain(
			`is more than payment ${paymentId} can still give back (100.00`,
		);
		expect(over?.description).toContain('Nothing was sent to PayPalych');
		expect(moneyCalls(await calls())).toBe(0);
		// What is left can be refunded, and then nothing is left: a whole-payment refund is refused too.
		const [part3] = await runNode({
			credential: merchant.credential,
			parameters: create(paymentId, '100', 'part-3'),
		});
		await control(sandbox, 'DELETE', '/calls');
		const earlier = [String(part1.json.id), String(part3.json.id)];
		if (profile === 'live') {
			// No Order ID shown: either refund may be an earlier run of this whole-payment refund.
			const unsure = await failure(
				runNode({ credential: merchant.credential, parameters: create(paymentId, '', 'part-4') }),
			);
			expect(unsure?.message).toContain('cannot be told from this refund');
			expect(unsure?.message).toContain('the payment has nothing left to give back');
			expect(unsure?.message).toContain(String(part3.json.id)); // the last made
		}
		const nothingLeft = await failure(
			runNode({
				credential: merchant.credential,
				parameters: create(paymentId, '', 'part-4', { otherRefundIds: earlier.join(', ') }),
			}),
		);
		expect(nothingLeft?.message).toContain('can still give back (0.00');
		expect(moneyCalls(await calls())).toBe(0);
		expect(await refundsOf(paymentId)).toHaveLength(2);
	});

	it('a chargeback is taken off what can go back: by its amount where the record shows one; one shown without an amount stops every refund, naming it', async () => {
		const merchant = await refundMerchant();
		const paymentId = await paidPayment(merchant, '100');
		const made = await control(sandbox, 'POST', `/payments/${paymentId}/chargeback`, {
			amount: '30.00',
		});
		const chargebackId = made.chargeback.id as string;
		await control(sandbox, 'DELETE', '/calls');
		// `live` lists the chargeback under `chargeback` without an amount (the service's record):
		// what it took cannot be told, so the node refunds nothing; `spec` shows its 30.00.
		const over = await failure(
			runNode({ credential: merchant.credential, parameters: create(paymentId, '70.01', 'cb-1') }),
		);
		expect(over?.message).toContain(
			profile === 'live'
				? `Payment ${paymentId} has a chargeback whose amount the service does not show (${chargebackId} (SUCCESS))`
				: `is more than payment ${paymentId} can still give back (70.00 RUB: 100.00 paid, 0.00 refunded, 30.00 charged back)`,
		);
		// A refund within what is left: refused in `live`, made in `spec`.
		const small = await failure(
			runNode({ credential: merchant.credential, parameters: create(paymentId, '1.00', 'cb-2') }),
		);
		expect(small?.message).toEqual(
			profile === 'live'
				? expect.stringContaining('whose amount the service does not show')
				: undefined,
		);
		expect(moneyCalls(await calls())).toBe(profile === 'live' ? 0 : 1);
		expect(await refundsOf(paymentId)).toHaveLength(profile === 'live' ? 0 : 1);
	});

	it('Max Amount: above it is refused before any request (partial) or before any money call (whole payment)', async () => {
		const merchant = await refundMerchant();
		const paymentId = await paidPayment(merchant, '800');
		await control(sandbox, 'DELETE', '/calls');
		const partial = await failure(
			runNode({
				credential: merchant.credential,
				parameters: create(paymentId, '500.01', 'max-1', { maxAmount: '500' }),
			}),
		);
		expect(partial?.message).toBe(
			`Refused: the refund of 500.01 of payment ${paymentId} is above Max Amount 500.00`,
		);
		expect(await calls()).toEqual({});
		const whole = await failure(
			runNode({
				credential: merchant.credential,
				parameters: create(paymentId, '', 'max-2', { maxAmount: '500' }),
			}),
		);
		expect(whole?.message).toContain('is above Max Amount 500.00');
		expect(moneyCalls(await calls())).toBe(0);
		expect(await refundsOf(paymentId)).toHaveLength(0);
	});

	it('Dry Run calls nothing that moves money and says what it would do', async () => {
		const merchant = await refundMerchant();
		const paymentId = await paidPayment(merchant, '600');
		await control(sandbox, 'DELETE', '/calls');
		const [plan] = await runNode({
			credential: merchant.credential,
			parameters: create(paymentId, '', 'dry-1', { dryRun: true }),
		});
		expect(plan.json).toMatchObject({
			dry_run: true,
			would_refund: true,
			payment_id: paymentId,
			full: true,
			order_id: 'dry-1',
			order_id_exists: false,
			refunded_amount: '0.00',
		});
		expect(plan.json.amount).toBe(plan.json.refundable_amount);
		expect(String(plan.json.summary)).toContain('nothing was sent');
		expect(moneyCalls(await calls())).toBe(0);
		expect(await refundsOf(paymentId)).toHaveLength(0);
		// Over the refundable amount: the same refusal as a real run.
		const over = await failure(
			runNode({
				credential: merchant.credential,
				parameters: create(paymentId, '600.01', 'dry-2', { dryRun: true }),
			}),
		);
		expect(over?.message).toContain('can still give back');
		expect(moneyCalls(await calls())).toBe(0);
	});

	it('as an AI tool: refused without an Order ID before any request; the refund carries a summary', async () => {
		const merchant = await refundMerchant();
		const paymentId = await paidPayment(merchant, '300');
		await control(sandbox, 'DELETE', '/calls');
		const refused = await failure(
			runNode({
				credential: merchant.credential,
				nodeType: TOOL_TYPE,
				parameters: create(paymentId, '50', ''),
			}),
		);
		expect(refused?.message).toBe(
			`Refused: no refund of 50.00 of payment ${paymentId} without an explicit Order ID`,
		);
		expect(await calls()).toEqual({});
		const [made] = await runNode({
			credential: merchant.credential,
			nodeType: TOOL_TYPE,
			parameters: create(paymentId, '50', 'agent-1'),
		});
		expect(made.json.summary).toMatch(
			new RegExp(`^Refunded 50\\.00 RUB of payment ${paymentId} under Order ID agent-1: refund `),
		);
	});

	it('refunds not switched on: the service answer and "ask the service\'s support to enable refunds", nothing refunded', async () => {
		const merchant = await newMerchant(sandbox);
		const paymentId = await paidPayment(merchant, '200');
		const runs: INodeParameters[] = [
			create(paymentId, '50', 'off-1'),
			{ resource: 'refund', operation: 'get', refundId: 'any' },
			{ resource: 'refund', operation: 'search', searchBy: 'paymentId', paymentId },
		];
		for (const parameters of runs) {
			const error = await failure(runNode({ credential: merchant.credential, parameters }));
			expect(error?.message).toBe(
				'api:error.refunds_not_enabled: The refund API is not switched on for your merchant account',
			);
			expect(error?.description?.toLowerCase()).toContain(
				"ask the service's support to enable refunds",
			);
			expect(error?.httpCode).toBe('403');
		}
		expect(await refundsOf(paymentId)).toHaveLength(0);
	});

	it('Get and Search return what Create made; Search reads every page, by payment and by dates', async () => {
		const merchant = await refundMerchant();
		const paymentId = await paidPayment(merchant, '1000');
		const [made] = await runNode({
			credential: merchant.credential,
			parameters: create(paymentId, '10', 'gs-1'),
		});
		const [got] = await runNode({
			credential: merchant.credential,
			parameters: { resource: 'refund', operation: 'get', refundId: made.json.id as string },
		});
		expect(got.json).toMatchObject({
			id: made.json.id,
			payment_id: paymentId,
			...(profile === 'spec' ? { order_id: 'gs-1' } : {}),
			amount: 10,
		});
		const missing = await failure(
			runNode({
				credential: merchant.credential,
				parameters: { resource: 'refund', operation: 'get', refundId: 'no-such-refund' },
			}),
		);
		expect(missing?.message).toBe('api:error.refund_not_found: No refund has this ID');

		// More refunds than one page holds (the node asks for 100 a page).
		for (let i = 0; i < 104; i++)
			await control(sandbox, 'POST', `/payments/${paymentId}/refund`, { amount: '1.00' });
		const byPayment = await runNode({
			credential: merchant.credential,
			parameters: {
				resource: 'refund',
				operation: 'search',
				searchBy: 'paymentId',
				paymentId,
				returnAll: true,
			},
		});
		expect(byPayment).toHaveLength(105);
		expect(new Set(byPayment.map((i) => i.json.id)).size).toBe(105);
		expect(byPayment.find((i) => i.json.id === made.json.id)?.json.order_id ?? null).toBe(
			profile === 'spec' ? 'gs-1' : null,
		);
		const limited = await runNode({
			credential: merchant.credential,
			parameters: {
				resource: 'refund',
				operation: 'search',
				searchBy: 'paymentId',
				paymentId,
				returnAll: false,
				limit: 7,
			},
		});
		expect(limited).toHaveLength(7);
		const byDates = await runNode({
			credential: merchant.credential,
			parameters: {
				resource: 'refund',
				operation: 'search',
				searchBy: 'dates',
				startDate: serviceDay(profile),
				finishDate: serviceDay(profile),
				returnAll: true,
			},
		});
		expect(byDates).toHaveLength(105);
		expect(byDates.some((i) => i.json.id === made.json.id)).toBe(true);
	});
});

// A service that refuses the refund API with its generic 403 (no refund key): the same advice.
describe('a refund API refused without the refunds_not_enabled key', () => {
	it('403 "This action is unauthorized." and a bare 403: the answer plus "ask the service\'s support to enable refunds"', async () => {
		const { createServer } = await import('node:http');
		let body = JSON.stringify({ message: 'This action is unauthorized.' });
		const server = createServer((_request, response) => {
			response.writeHead(403, { 'content-type': 'application/json' });
			response.end(body);
		});
		await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
		const { port } = server.address() as { port: number };
		const credential = { apiToken: 'token', baseUrl: `http://127.0.0.1:${port}` };
		try {
			for (const answer of [body, JSON.stringify({ message: 'Forbidden' })]) {
				body = answer;
				const error = await runNode({
					credential,
					parameters: { resource: 'refund', operation: 'get', refundId: 'r1' },
				}).then(
					() => undefined,
					(e: Error & { description?: string; httpCode?: string }) => e,
				);
				expect(error?.httpCode).toBe('403');
				expect(error?.description?.toLowerCase()).toContain(
					"ask the service's support to enable refunds",
				);
				expect(error?.description).not.toContain('direct payouts');
			}
		} finally {
			await new Promise((resolve) => server.close(resolve));
		}
	});
});
