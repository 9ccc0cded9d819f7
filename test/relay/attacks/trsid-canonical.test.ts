/**
 * One canonical TrsId in the relay: trimmed, as the trigger reads it, once at the intake. A forged
 * copy of a genuine postback whose TrsId carries white space is the genuine one's twin: looked up
 * with the service and refused, never stored beside it unseen. On both stores.
 */
import { afterEach, expect, it } from 'vitest';
import type { Source } from '../../../relay/src/intake.ts';
import { openStore } from '../../../relay/src/store-open.ts';
import type { Store } from '../../../relay/src/store/types.ts';
import { onEveryStore } from '../fresh-store.ts';
import { Target, form, lookUpIntake, paymentFields } from '../helpers.ts';

onEveryStore('one canonical TrsId', (suiteStore) => {
	const cleanups: Array<() => Promise<void>> = [];
	afterEach(async () => {
		for (const c of cleanups.splice(0).reverse()) await c();
	});

	/** The service knows one payment, T-1: 18.50 of order-A. Every look-up is counted. */
	async function setUp() {
		const api = await new Target().listen();
		cleanups.push(() => api.close());
		api.responder = (req) => {
			const url = new URL(req.path, 'http://x');
			const id = url.searchParams.get('id') ?? '';
			if (url.pathname.endsWith('/payment/status') && id === 'T-1')
				return {
					status: 200,
					body: JSON.stringify({
						success: true,
						id: 'T-1',
						status: 'SUCCESS',
						amount: '18.50',
						currency_in: 'RUB',
						order_id: 'order-A',
					}),
				};
			return { status: 404, body: '{"success":false,"message":"not found"}' };
		};
		const store: Store = await openStore(await suiteStore.database());
		cleanups.push(() => store.close());
		const intake = lookUpIntake(store, api.url(''), { pairMax: 100 });
		return { api, intake, store };
	}

	const from = (fields: Record<string, string>): Source => ({
		via: 'postback',
		body: form(fields),
		contentType: 'application/x-www-form-urlencoded',
		tokenIndex: 0,
		network: '198.51.100.0/24',
	});
	const genuine = paymentFields('T-1', { invId: 'order-A', outSum: '18.50' });
	/** Signed with another order's redirect signature (order-B, 1000.00), TrsId + white space. */
	const forged = (trsId: string) => paymentFields(trsId, { invId: 'order-B', outSum: '1000.00' });

	it('36.6 a forged copy with TrsId + a trailing space after the genuine one is looked up and refused', async () => {
		const { api, intake, store } = await setUp();
		expect(await intake.admit('payment', genuine, from(genuine))).toMatchObject({
			outcome: 'stored',
			duplicate: false,
		});
		for (const spelling of ['T-1 ', ' T-1', 'T-1\t', '\nT-1 ']) {
			const copy = forged(spelling);
			expect(
				await intake.admit('payment', copy, from(copy)),
				JSON.stringify(spelling),
			).toMatchObject({
				outcome: 'refused',
				status: 403,
			});
		}
		const stored = await store.listEvents({ limit: 10 });
		expect(stored.map((e) => [e.fields.TrsId, e.fields.InvId])).toEqual([['T-1', 'order-A']]);
		expect(api.received.length).toBeGreaterThan(0);
	});

	it('stores the TrsId trimmed and finds it by its trimmed form', async () => {
		const { intake, store } = await setUp();
		const spaced = paymentFields(' T-1 ', { invId: 'order-A', outSum: '18.50' });
		const admitted = await intake.admit('payment', spaced, from(spaced));
		expect(admitted).toMatchObject({ outcome: 'stored', duplicate: false });
		const [event] = await store.listEvents({ trsId: 'T-1', limit: 10 });
		expect(event.fields.TrsId).toBe('T-1');
		// The same postback again, spelled without the spaces: its duplicate (one dedupe key).
		expect(await intake.admit('payment', genuine, from(genuine))).toMatchObject({
			outcome: 'stored',
			duplicate: true,
			eventId: admitted.outcome === 'stored' ? admitted.eventId : '',
		});
	});

	it('a forged copy with white space sent first is stored, and the genuine one after it is looked up and stored too', async () => {
		const { intake, store } = await setUp();
		const copy = forged('T-1 ');
		expect(await intake.admit('payment', copy, from(copy))).toMatchObject({ outcome: 'stored' });
		// The genuine postback has a twin (the canonical T-1): looked up, agrees, stored.
		expect(await intake.admit('payment', genuine, from(genuine))).toMatchObject({
			outcome: 'stored',
			duplicate: false,
		});
		expect((await store.listEvents({ trsId: 'T-1', limit: 10 })).length).toBe(2);
	});
});
