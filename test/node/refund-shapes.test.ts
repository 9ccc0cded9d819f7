// Refund › Create against a stand-in answering in the record shapes the service's public record
// shows (a refund names its payment by `entity_type` and `entity_id`, with no `payment_id`,
// `bill_id` or `order_id`; `payment/status?chargeback=1` lists chargebacks under the singular key
// `chargeback`, without amount or currency). The sandbox suites cover the other shape.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { INodeParameters } from 'n8n-workflow';

import { runNode } from '../helpers/n8n-context.ts';
import { failure } from '../helpers/node-params.ts';

type Json = Record<string, unknown>;

interface StandIn {
	credential: { apiToken: string; baseUrl: string };
	refunds: Json[];
	chargebacks: Json[];
	/** Refund create requests received. */
	creates: number;
	/** Drop the connection after the next refund is made (the answer lost, the money moved). */
	loseNext: boolean;
	close(): Promise<void>;
}

const PAYMENT = 'P-1';

const serviceTime = (ms = Date.now()) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

let running: StandIn | undefined;
afterEach(async () => {
	await running?.close();
	running = undefined;
});

/** A payment of 1000.00 RUB and its refunds and chargebacks, in the public record's shapes. */
async function standIn(): Promise<StandIn> {
	const state = { refunds: [] as Json[], chargebacks: [] as Json[], creates: 0, loseNext: false };
	const server = createServer((request, response) => {
		const url = new URL(request.url ?? '/', 'http://stand-in');
		const send = (body: unknown) => {
			response.writeHead(200, { 'content-type': 'application/json' });
			response.end(JSON.stringify(body));
		};
		let body = '';
		request.on('data', (chunk: Buffer) => (body += chunk.toString()));
		request.on('end', () => {
			if (url.pathname === '/api/v1/payment/status') {
				return send({
					success: true,
					id: PAYMENT,
					bill_id: 'B-1',
					status: 'SUCCESS',
					amount: '1000.00',
					currency_in: 'RUB',
					...(url.searchParams.get('refunds') === '1' ? { refunds: state.refunds } : {}),
					...(url.searchParams.get('chargeback') === '1' ? { chargeback: state.chargebacks } : {}),
				});
			}
			if (url.pathname === '/api/v1/refund/search') {
				return send({ success: true, data: state.refunds, links: {}, meta: { next_cursor: null } });
			}
			if (url.pathname === '/api/v1/refund/partial/create') {
				const fields = new URLSearchParams(body);
				state.creates += 1;
				const refund = {
					id: `R-${state.creates}`,
					status: 'SUCCESS',
					amount: Number(fields.get('amount')).toFixed(2),
					currency: 'RUB',
					entity_type: 'payment',
					entity_id: fields.get('payment_id'),
					created_at: serviceTime(),
				};
				state.refunds.push(refund);
				if (state.loseNext) {
					state.loseNext = false;
					request.socket.destroy();
					return undefined;
				}
				return send({ success: true, ...refund });
			}
			response.writeHead(404, { 'content-type': 'application/json' });
			response.end('{"success":false,"message":"not found"}');
			return undefined;
		});
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	const made: StandIn = Object.assign(state, {
		credential: { apiToken: 'token', baseUrl: `http://127.0.0.1:${port}` },
		close: async () => {
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		},
	});
	running = made;
	return made;
}

const create = (amount: string, orderId: string, options: INodeParameters = {}) =>
	({
		resource: 'refund',
		operation: 'create',
		paymentId: PAYMENT,
		amount,
		orderId,
		options,
	}) as INodeParameters;

describe('Refund › Create with the public record shapes', () => {
	it('refunds named by entity_id: an answer lost after the money moved is recognised, and a re-run refunds nothing again', async () => {
		const service = await standIn();
		service.loseNext = true;
		const [made] = await runNode({
			credential: service.credential,
			parameters: create('250', 'ret-1'),
		});
		expect(made.json).toMatchObject({
			id: 'R-1',
			entity_id: PAYMENT,
			amount: 250,
			already_existed: false,
		});
		const rerun = await failure(
			runNode({ credential: service.credential, parameters: create('250', 'ret-1') }),
		);
		expect(rerun?.message).toBe(
			`Refused: refund R-1 (250.00 RUB of payment ${PAYMENT}, SUCCESS, created ${String(service.refunds[0].created_at)}) cannot be told from this refund (250.00 of payment ${PAYMENT} under Order ID ret-1): the service shows no Order ID on it`,
		);
		expect(service.creates).toBe(1);
		// Another amount is another refund; what the first took back is counted.
		const over = await failure(
			runNode({ credential: service.credential, parameters: create('750.01', 'ret-2') }),
		);
		expect(over?.message).toContain(
			'can still give back (750.00 RUB: 1000.00 paid, 250.00 refunded)',
		);
		expect(service.creates).toBe(1);
	});

	it('a chargeback without an amount (the singular `chargeback` list) is never computed with: refused, naming it', async () => {
		const service = await standIn();
		service.chargebacks.push({
			id: 'CB-1',
			payment_id: PAYMENT,
			status: 'SUCCESS',
			created_at: serviceTime(),
		});
		const refused = await failure(
			runNode({ credential: service.credential, parameters: create('10', 'cb-1') }),
		);
		expect(refused?.message).toBe(
			`Payment ${PAYMENT} has a chargeback whose amount the service does not show (CB-1 (SUCCESS)): what the payment can still give back cannot be worked out`,
		);
		expect(refused?.description).toContain('Nothing was refunded.');
		const dry = await failure(
			runNode({ credential: service.credential, parameters: create('', 'cb-1', { dryRun: true }) }),
		);
		expect(dry?.message).toBe(refused?.message);
		expect(service.creates).toBe(0);

		// A chargeback that failed took nothing; one with an amount is taken off.
		service.chargebacks[0].status = 'FAIL';
		service.chargebacks.push({
			id: 'CB-2',
			payment_id: PAYMENT,
			status: 'SUCCESS',
			amount: '400.00',
		});
		const over = await failure(
			runNode({ credential: service.credential, parameters: create('600.01', 'cb-2') }),
		);
		expect(over?.message).toContain(
			'can still give back (600.00 RUB: 1000.00 paid, 0.00 refunded, 400.00 charged back)',
		);
		const [made] = await runNode({
			credential: service.credential,
			parameters: create('600', 'cb-2'),
		});
		expect(made.json).toMatchObject({ id: 'R-1', amount: 600, already_existed: false });
		expect(service.creates).toBe(1);
	});
});
