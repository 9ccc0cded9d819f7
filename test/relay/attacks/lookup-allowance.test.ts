/**
 * The look-up allowances against a buyer of a MULTI link (every buyer holds the link's signed
 * pair: their own redirect shows it). Over the pair limit each payment postback of the link is
 * looked up with the service; the allowances are counted per sender's network, so a buyer's forged
 * calls do not spend what the service's own postbacks need, and a refusal is remembered only for
 * the postback it refused, never for the genuine one beside a forged copy. On both stores.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../relay/src/app.ts';
import { loadConfig } from '../../../relay/src/config.ts';
import type { Source } from '../../../relay/src/intake.ts';
import { networkOf } from '../../../relay/src/limits.ts';
import { openStore } from '../../../relay/src/store-open.ts';
import type { Store } from '../../../relay/src/store/types.ts';
import { onEveryStore } from '../fresh-store.ts';
import {
	Target,
	baseEnv,
	form,
	lookUpIntake,
	md5,
	paymentFields,
	TOKEN,
	tempDir,
} from '../helpers.ts';

const BUYER = '203.0.113.0/24';
const SERVICE = '198.51.100.0/24';

describe('networkOf', () => {
	it('groups IPv4 by /24 and IPv6 by /48, an IPv4-mapped address as IPv4, loopback as none', () => {
		expect(networkOf('203.0.113.77')).toBe('203.0.113.0/24');
		expect(networkOf('::ffff:203.0.113.9')).toBe('203.0.113.0/24');
		expect(networkOf('2001:db8:1:2::5')).toBe('2001:db8:1::/48');
		expect(networkOf('2001:db8:1:ff00::1')).toBe(networkOf('2001:0db8:0001:0::9'));
		expect(networkOf('2001:db8:2::1')).not.toBe(networkOf('2001:db8:1::1'));
		expect(networkOf('2001:db8::1')).toBe('2001:db8:0::/48');
		// Loopback (a proxy the relay does not trust) is no network: everyone shares as before.
		expect(networkOf('::1')).toBe('');
		expect(networkOf('127.0.0.1')).toBe('');
		expect(networkOf(undefined)).toBe('');
	});
});

onEveryStore('look-up allowances against a buyer of a MULTI link', (suiteStore) => {
	const cleanups: Array<() => Promise<void>> = [];
	afterEach(async () => {
		for (const c of cleanups.splice(0).reverse()) await c();
	});

	/** The service: `payment/status` knows `known`, answers 404 for anything else. */
	async function service(known: Record<string, Record<string, unknown>>) {
		const api = await new Target().listen();
		cleanups.push(() => api.close());
		api.responder = (req) => {
			const id = new URL(req.path, 'http://x').searchParams.get('id') ?? '';
			const record = known[id];
			return record
				? { status: 200, body: JSON.stringify({ success: true, ...record }) }
				: { status: 404, body: '{"success":false,"message":"api:error.payment_not_found"}' };
		};
		return api;
	}

	async function intakeOn(apiUrl: string, global = 60) {
		const store: Store = await openStore(await suiteStore.database());
		cleanups.push(() => store.close());
		const intake = lookUpIntake(store, apiUrl, {
			pairMax: 2,
			lookUpLimit: { globalPerMinute: global, refusalMemoryMs: 60_000 },
		});
		return { intake, store };
	}

	/** A sale of the MULTI link `link-1` for 10.50: one signed pair for every buyer. */
	const sale = (trsId: string, extra: Record<string, string> = {}) => ({
		...paymentFields(trsId, { invId: 'link-1', outSum: '10.50' }),
		...extra,
	});
	const from = (network: string, fields: Record<string, string>): Source => ({
		via: 'postback',
		body: form(fields),
		contentType: 'application/x-www-form-urlencoded',
		tokenIndex: 0,
		network,
	});
	const record = (id: string, amount = '10.50') => ({
		id,
		status: 'SUCCESS',
		amount,
		bill_id: 'B-1',
		currency_in: 'RUB',
	});

	it("36.2 a buyer spending the pair's look-ups from their network leaves the service's postbacks theirs", async () => {
		const api = await service({ G1: record('G1'), G2: record('G2') });
		const { intake, store } = await intakeOn(api.url(''));
		// Two sales fill the pair limit (RELAY_PAIR_LIMIT 2): every later sale is looked up.
		for (const id of ['S1', 'S2'])
			expect(await intake.admit('payment', sale(id), from(SERVICE, sale(id)))).toMatchObject({
				outcome: 'stored',
			});
		// The buyer spends their network's look-ups of the pair (2 a minute) and is then answered 429.
		for (const id of ['F1', 'F2'])
			expect(await intake.admit('payment', sale(id), from(BUYER, sale(id)))).toMatchObject({
				status: 403,
			});
		expect(await intake.admit('payment', sale('F3'), from(BUYER, sale('F3')))).toMatchObject({
			status: 429,
			reason: 'pair_limit',
		});
		// The service's genuine postbacks of the same link are still looked up and stored.
		for (const id of ['G1', 'G2'])
			expect(await intake.admit('payment', sale(id), from(SERVICE, sale(id)))).toMatchObject({
				outcome: 'stored',
				duplicate: false,
			});
		const stored = (await store.listEvents({ limit: 100 })).map((e) => e.fields.TrsId).sort();
		expect(stored).toEqual(['G1', 'G2', 'S1', 'S2']);
	});

	it('36.2 one network takes at most half of the look-ups of a minute; another network keeps the rest', async () => {
		const api = await service({ G1: record('G1') });
		const { intake } = await intakeOn(api.url(''), 4);
		for (const id of ['S1', 'S2']) await intake.admit('payment', sale(id), from(SERVICE, sale(id)));
		// Each forged call from its own pair (another InvId), so the per-pair allowance is not what stops them.
		const forged = (n: number) => {
			const f = { ...sale(`F${n}`), InvId: `other-${n}` };
			return { ...f, SignatureValue: md5(`${f.OutSum}:${f.InvId}:${TOKEN}`) };
		};
		const answers = [];
		for (let n = 1; n <= 4; n++) {
			// Fill each forged pair's limit, so that the forged call needs a look-up.
			for (const filler of ['a', 'b']) {
				const f = { ...forged(n), TrsId: `F${n}${filler}` };
				await intake.admit('payment', f, from(BUYER, f));
			}
			answers.push((await intake.admit('payment', forged(n), from(BUYER, forged(n)))).outcome);
		}
		// Half of 4: two looked up (refused, unknown), then the buyer's network's share is spent.
		expect(answers).toEqual(['refused', 'refused', 'unavailable', 'unavailable']);
		expect(await intake.admit('payment', sale('G1'), from(SERVICE, sale('G1')))).toMatchObject({
			outcome: 'stored',
		});
	});

	it("36.1 a refusal remembered for a forged copy is never the genuine postback's", async () => {
		// The genuine payment G1 succeeded; a copy under its TrsId saying FAIL is forged.
		const api = await service({ G1: record('G1') });
		const { intake, store } = await intakeOn(api.url(''));
		for (const id of ['S1', 'S2']) await intake.admit('payment', sale(id), from(SERVICE, sale(id)));
		const forgery = sale('G1', { Status: 'FAIL' });
		expect(await intake.admit('payment', forgery, from(BUYER, forgery))).toMatchObject({
			outcome: 'refused',
			status: 403,
		});
		// The same forgery again is refused from memory, without a call.
		const calls = api.received.length;
		expect(await intake.admit('payment', forgery, from(BUYER, forgery))).toMatchObject({
			status: 403,
		});
		expect(api.received.length).toBe(calls);
		// The genuine postback, same TrsId and signed pair, is looked up and stored.
		const genuine = sale('G1');
		expect(await intake.admit('payment', genuine, from(SERVICE, genuine))).toMatchObject({
			outcome: 'stored',
			duplicate: false,
		});
		expect(api.received.length).toBe(calls + 1);
		expect((await store.listEvents({ limit: 100 })).map((e) => e.fields.TrsId)).toContain('G1');
	});

	afterAll(() => suiteStore.cleanup());
});

describe('look-up allowances through the postback route', () => {
	it("36.2 the route counts by the sender's address: a buyer's 429 is not the service's", async () => {
		const api = await new Target().listen();
		api.responder = (req) => {
			const id = new URL(req.path, 'http://x').searchParams.get('id') ?? '';
			return id === 'G1'
				? {
						status: 200,
						body: JSON.stringify({
							success: true,
							id,
							status: 'SUCCESS',
							amount: '10.50',
							bill_id: 'B-1',
							currency_in: 'RUB',
						}),
					}
				: { status: 404, body: '{"success":false,"message":"api:error.payment_not_found"}' };
		};
		const tmp = tempDir();
		const config = loadConfig(
			baseEnv(
				tmp.dir,
				{ payment: ['http://127.0.0.1:9/pay'] },
				{ LOG_LEVEL: 'silent', PAYPALYCH_API_BASE_URL: api.url(''), RELAY_PAIR_LIMIT: '2' },
			),
		);
		const store = await openStore(config.database);
		const app = await buildApp(config, { store, forwarder: false });
		try {
			const post = (fields: Record<string, string>, remoteAddress: string) =>
				app.inject({
					method: 'POST',
					url: '/postback/payment',
					headers: { 'content-type': 'application/x-www-form-urlencoded' },
					payload: form(fields),
					remoteAddress,
				});
			const sale = (trsId: string) => paymentFields(trsId, { invId: 'link-1', outSum: '10.50' });
			for (const id of ['S1', 'S2'])
				expect((await post(sale(id), '198.51.100.7')).statusCode).toBe(200);
			const buyer = [];
			for (const id of ['F1', 'F2', 'F3'])
				buyer.push((await post(sale(id), '203.0.113.9')).statusCode);
			expect(buyer).toEqual([403, 403, 429]);
			expect((await post(sale('G1'), '198.51.100.8')).statusCode).toBe(200);
		} finally {
			await app.close();
			await store.close();
			await api.close();
			tmp.cleanup();
		}
	});
});
