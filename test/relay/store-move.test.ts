// Moving the relay from a SQLite file to PostgreSQL as docs/operator/stores.md says ("Moving to
// PostgreSQL") sends nothing twice and loses nothing: the new store's first start puts what came
// before behind its baseline, the old relay drains what it holds, and a payment lost after the
// switch is found by the new relay's catch-up.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { catchupSetup } from './catchup-setup.ts';
import { createTestDatabase, type TestDatabase } from './pg.ts';
import { sandboxMerchant } from './sandbox-merchant.ts';
import { waitFor } from '../../scripts/harness/wait.ts';
import type { RunningRelay } from '../../relay/src/server.ts';

type Json = Record<string, any>;

describe('moving the store from SQLite to PostgreSQL', () => {
	const dbs: TestDatabase[] = [];
	/** n8n: down (503) or up; the TrsIds it accepted, one entry per accepted delivery. */
	const n8n = { down: false, accepted: [] as string[] };
	const rig = catchupSetup(
		{
			database: async () => {
				const db = await createTestDatabase();
				dbs.push(db);
				return db.url;
			},
			cleanup: async () => {
				for (const db of dbs.splice(0)) await db.drop();
			},
		},
		async () => {
			await rig.control('POST', '/clock', { now: null });
		},
	);
	const { target, control, admin } = rig;
	const undelivered = async (r: RunningRelay) =>
		(await admin(r, 'GET', '/deliveries?status=pending')).data.length +
		(await admin(r, 'GET', '/deliveries?status=delivering')).data.length;

	it('new relay first (its baseline), then the Result URL, then the old relay drained: each payment reaches n8n once, a loss after the switch is found', async () => {
		target.responder = (rec) => {
			if (n8n.down) return { status: 503 };
			n8n.accepted.push(new URLSearchParams(rec.body).get('TrsId') ?? '');
			return { status: 200 };
		};
		const m = await sandboxMerchant(rig.sandboxUrl(), 'live');
		const pay = async (lose: boolean) =>
			(await m.pay((await m.bill('10.00')).billId, lose)).paymentId;
		// The old relay has run for a while (its store's baseline two minutes back); the payments
		// before the move are made a minute back (the sandbox's clock), so that their times, written
		// to the second, are before the new store's baseline whatever the second.
		const old = await rig.relay(
			m.token,
			{},
			{ catchupNow: () => Date.now() - 120_000 },
			join(rig.tmp.dir, 'old.sqlite'),
		);
		await control('PATCH', `/shops/${m.shopId}`, { resultUrl: `${old.url}/postback/payment` });
		// n8n is down: the old relay holds what it received and what its catch-up found.
		n8n.down = true;
		await control('POST', '/clock', { offsetMs: -60_000 });
		const a = await pay(false);
		const b = await pay(true);
		await control('POST', '/clock', { now: null });
		await waitFor('the postback stored', async () => (await rig.events(old)).length === 1);
		expect((await admin(old, 'POST', '/catchup')).found.map((f: Json) => f.trsId)).toEqual([b]);

		// 1. The new relay starts on PostgreSQL: its store's baseline is now.
		const fresh = await rig.relay(m.token);
		// 2. The Result URL moves to it.
		await control('PATCH', `/shops/${m.shopId}`, { resultUrl: `${fresh.url}/postback/payment` });
		// 3. The old relay's last catch-up run, then it drains (n8n back) and stops.
		expect((await admin(old, 'POST', '/catchup')).found).toEqual([]);
		const c = await pay(false);
		await waitFor('the new relay stored it', async () => (await rig.events(fresh)).length === 1);
		n8n.down = false;
		await waitFor('the old relay drained', async () => (await undelivered(old)) === 0);
		await old.close();
		// A payment whose postback is lost after the switch.
		const d = await pay(true);
		const run = await admin(fresh, 'POST', '/catchup');
		expect(run.found.map((f: Json) => f.trsId)).toEqual([d]);
		expect(run.beforeBaseline).toBe(2);
		await waitFor('the new relay drained', async () => (await undelivered(fresh)) === 0);
		expect((await admin(fresh, 'POST', '/catchup')).found).toEqual([]);
		expect(n8n.accepted.sort()).toEqual([a, b, c, d].sort());
	});
});
