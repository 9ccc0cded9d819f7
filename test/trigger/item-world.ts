// Real items of every event, from the sandbox (the service's stand-in signs and sends each call):
// a trigger of version 1 and one of version 2 per event take the very same call, so the two items
// differ only by the version. Shared by item-versions.test.ts and schemas.test.ts.
import type { IDataObject } from 'n8n-workflow';
import { startSandbox } from '../../sandbox/src/index.ts';
import type { Profile } from '../helpers/sandbox.ts';
import type { WebhookHarness } from '../helpers/webhook-harness.ts';
import { postForm, startTrigger } from '../helpers/trigger-harness.ts';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
export const EVENTS = ['payment', 'refund', 'chargeback', 'payout', 'success', 'fail'] as const;
export type Event = (typeof EVENTS)[number];
export type Items = Record<Event, IDataObject>;

const TOKEN = '93|itemWorldToken0123456789abcdefGHIJKLMN';

interface Delivery {
	status: number | null;
	body: Record<string, string>;
	contentType: string;
}

export interface ItemWorld {
	v1: Items;
	v2: Items;
	/** The same payment taken on its signature alone (Confirm With PayPalych API off). */
	unconfirmed: { v1: IDataObject; v2: IDataObject };
	close(): Promise<void>;
}

async function call(sb: Sandbox, path: string, init: RequestInit): Promise<any> {
	const response = await fetch(`${sb.url}${path}`, init);
	const text = await response.text();
	if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
	return JSON.parse(text);
}

const control = (sb: Sandbox, method: string, path: string, body?: unknown) =>
	call(sb, `/_sandbox/${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});

const api = (sb: Sandbox, path: string, params: Record<string, string>) =>
	call(sb, `/api/v1/${path}`, {
		method: 'POST',
		headers: { authorization: `Bearer ${sb.token}`, accept: 'application/json' },
		body: new URLSearchParams(params),
	});

/** The sandbox's finished delivery of a call (it sends in the background). */
async function delivered(sb: Sandbox, kind: string, id: string): Promise<Delivery> {
	for (let i = 0; i < 500; i++) {
		const { data } = await control(sb, 'GET', `deliveries?kind=${kind}&trsId=${id}`);
		const done = (data as Delivery[]).find((d) => d.status !== null);
		if (done) return done;
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
	throw new Error(`no ${kind} delivery for ${id}`);
}

/** Posts a delivery's body again, as the service sent it (form or JSON). */
async function repost(url: string, delivery: Delivery): Promise<number> {
	if (!delivery.contentType.startsWith('application/json')) {
		return (await postForm(url, delivery.body)).status;
	}
	const res = await fetch(url, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(delivery.body),
	});
	await res.text();
	return res.status;
}

const last = (h: WebhookHarness): IDataObject => {
	const run = h.executions.at(-1);
	if (!run) throw new Error('the trigger started nothing');
	return run[0][0].json;
};

export async function startItemWorld(profile: Profile): Promise<ItemWorld> {
	const sb = await startSandbox({
		port: 0,
		token: TOKEN,
		timeFactor: 0.001,
		liveExtras: true,
		profile,
	});
	const credentials = { apiToken: sb.token, baseUrl: sb.url };
	// spec: the service shows no bill's order ID (Order Check: Bill ID Only).
	const check = profile === 'spec' ? { orderCheck: 'billId' } : {};
	const open: WebhookHarness[] = [];
	const start = async (typeVersion: number, parameters: Record<string, unknown>) => {
		const h = await startTrigger(parameters, credentials, { typeVersion });
		open.push(h);
		return h;
	};
	const triggers = {} as Record<1 | 2, Record<Event, WebhookHarness>>;
	for (const version of [1, 2] as const) {
		triggers[version] = {} as Record<Event, WebhookHarness>;
		for (const event of EVENTS) {
			triggers[version][event] = await start(version, { event, ...check });
		}
	}
	const v2 = triggers[2];
	await control(sb, 'PATCH', `shops/${sb.shopId}`, {
		resultUrl: v2.payment.url,
		successUrl: v2.success.url,
		failUrl: v2.fail.url,
		refundUrl: v2.refund.url,
		chargebackUrl: v2.chargeback.url,
	});
	await control(sb, 'PATCH', `merchants/${sb.merchantId}`, { payoutWebhookUrl: v2.payout.url });
	const again = async (event: Event, delivery: Delivery) => {
		if ((await repost(triggers[1][event].url, delivery)) >= 400) {
			throw new Error(`version 1 ${event} trigger refused the call`);
		}
	};

	const bill = await api(sb, 'bill/create', {
		amount: '1500.00',
		shop_id: sb.shopId,
		order_id: `order-${profile}-1`,
	});
	const paid = await control(sb, 'POST', `bills/${bill.bill_id}/pay`, { outcome: 'full' });
	await again('payment', await delivered(sb, 'payment', paid.postback.TrsId));
	const unconfirmedV1 = await start(1, { event: 'payment', confirmWithApi: false });
	const unconfirmedV2 = await start(2, { event: 'payment', confirmWithApi: false });
	for (const h of [unconfirmedV1, unconfirmedV2]) await postForm(h.url, paid.postback);
	for (const event of ['success'] as const) {
		for (const version of [1, 2] as const) {
			await postForm(triggers[version][event].url, paid.redirect.fields);
		}
	}
	const failedBill = await api(sb, 'bill/create', {
		amount: '99.99',
		shop_id: sb.shopId,
		order_id: `order-${profile}-2`,
	});
	const failed = await control(sb, 'POST', `bills/${failedBill.bill_id}/pay`, { outcome: 'fail' });
	for (const version of [1, 2] as const) {
		await postForm(triggers[version].fail.url, failed.redirect.fields);
	}
	const paymentId = paid.payment.id as string;
	const refund = await control(sb, 'POST', `payments/${paymentId}/refund`, { amount: '500.00' });
	await again('refund', await delivered(sb, 'refund', refund.refund.id));
	const chargeback = await control(sb, 'POST', `payments/${paymentId}/chargeback`, {});
	await again('chargeback', await delivered(sb, 'chargeback', chargeback.chargeback.id));
	const payout = await api(sb, 'payout/personal/create', {
		amount: '120.00',
		payout_account_id: sb.payoutAccountId,
		order_id: `payout-${profile}-1`,
	});
	const payoutId = payout.data[0].id as string;
	await control(sb, 'POST', `payouts/${payoutId}/advance`, { status: 'SUCCESS' });
	await again('payout', await delivered(sb, 'payout', payoutId));

	const itemsOf = (version: 1 | 2) =>
		Object.fromEntries(EVENTS.map((event) => [event, last(triggers[version][event])])) as Items;
	return {
		v1: itemsOf(1),
		v2: itemsOf(2),
		unconfirmed: { v1: last(unconfirmedV1), v2: last(unconfirmedV2) },
		async close() {
			await Promise.all(open.map((h) => h.close()));
			await sb.close();
		},
	};
}
