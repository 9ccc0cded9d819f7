import { afterAll, describe, expect, it } from 'vitest';
import {
	Target,
	baseEnv,
	form,
	freePort,
	paymentFields,
	spawnRelay,
	stopRelays,
	tempDir,
} from './helpers.ts';
import type { RelayProcess } from './helpers.ts';
import {
	PG_BIN_MISSING,
	PG_MISSING,
	adminQuery,
	createTestDatabase,
	startOwnPostgres,
} from './pg.ts';
import type { OwnPostgres, TestDatabase } from './pg.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

interface BurstResult {
	acked: Set<string>;
	/** Calls that got no 200 (another status, or no answer). */
	failed: number;
}

/**
 * `total` signed payment postbacks from 24 concurrent senders, spread round-robin over `urls`.
 * Like the service, a sender tries a postback that got no 200 again (up to `tries` times, 25 ms
 * apart), on the next instance. `after(ackedSoFar)` runs after every answer (to kill or restart).
 */
async function burst(
	urls: string[],
	total: number,
	prefix: string,
	after: (acked: number) => void,
	tries = 1,
): Promise<BurstResult> {
	const acked = new Set<string>();
	let failed = 0;
	let next = 0;
	const worker = async () => {
		while (next < total) {
			const n = next++;
			const trsId = `${prefix}-${n}`;
			for (let attempt = 0; attempt < tries; attempt++) {
				try {
					const res = await fetch(`${urls[(n + attempt) % urls.length]}/postback/payment`, {
						method: 'POST',
						headers: { 'content-type': 'application/x-www-form-urlencoded' },
						body: form(paymentFields(trsId)),
					});
					await res.text();
					if (res.status === 200) acked.add(trsId);
					else failed += 1;
				} catch {
					failed += 1;
				}
				after(acked.size);
				if (acked.has(trsId)) break;
				await new Promise((r) => setTimeout(r, 25));
			}
		}
	};
	await Promise.all(Array.from({ length: 24 }, worker));
	return { acked, failed };
}

/** A burst during which `victim` is SIGKILLed once `killAfterAcks` postbacks were acknowledged. */
async function burstKilling(
	victim: RelayProcess,
	urls: string[],
	total: number,
	prefix: string,
	killAfterAcks: number,
): Promise<BurstResult> {
	let killed = false;
	const result = await burst(urls, total, prefix, (acked) => {
		if (!killed && acked >= killAfterAcks) {
			killed = true;
			victim.proc.kill('SIGKILL');
		}
	});
	expect(killed).toBe(true);
	await victim.exited;
	expect(victim.proc.signalCode).toBe('SIGKILL');
	return result;
}

const trsIdsAt = (target: Target) =>
	new Set(target.received.map((r) => new URLSearchParams(r.body).get('TrsId') ?? ''));

/** Waits until the target has every acknowledged postback, then prints and returns the counts. */
async function settle(
	label: string,
	target: Target,
	sent: number,
	result: BurstResult,
	extra: string,
) {
	await waitFor(
		'every acknowledged postback at the target',
		() => [...result.acked].every((id) => trsIdsAt(target).has(id)),
		{ timeoutMs: 90_000, everyMs: 100 },
	);
	const got = trsIdsAt(target);
	const missing = [...result.acked].filter((id) => !got.has(id));
	const duplicates = target.received.length - got.size;
	console.log(
		`${label}: sent=${sent} acked=${result.acked.size} failed-calls=${result.failed} delivered-unique=${got.size} ` +
			`delivered-but-not-acked=${[...got].filter((id) => !result.acked.has(id)).length} duplicate-deliveries=${duplicates} ` +
			`missing=${missing.length}${extra}`,
	);
	return { missing, duplicates };
}

describe('crash safety', () => {
	const tmp = tempDir();
	const target = new Target();
	const children: RelayProcess[] = [];

	afterAll(async () => {
		await stopRelays(children);
		await target.close();
		tmp.cleanup();
	});

	it('delivers every postback that got a 200 although the relay was SIGKILLed mid-burst', async () => {
		await target.listen();
		// A slow-ish target keeps deliveries in flight when the kill lands.
		target.responder = () => ({ status: 200, hangMs: 15 });
		const env = baseEnv(
			tmp.dir,
			{ payment: [target.url('/pay')] },
			{
				LOG_LEVEL: 'info',
				RELAY_LEASE_MS: '1500',
				RELAY_DELIVERY_TIMEOUT_MS: '1000',
				RELAY_CONCURRENCY: '8',
			},
		);
		const first = await spawnRelay(env);
		children.push(first);

		const total = 600;
		const killAfterAcks = 200;
		const result = await burstKilling(first, [first.url], total, 'T-crash', killAfterAcks);
		const deliveredBeforeRestart = trsIdsAt(target).size;

		const second = await spawnRelay(env);
		children.push(second);
		const { missing } = await settle(
			'crash test (SQLite)',
			target,
			total,
			result,
			` delivered-before-kill=${deliveredBeforeRestart}`,
		);
		expect(missing).toEqual([]);
		expect(result.acked.size).toBeGreaterThanOrEqual(killAfterAcks);
		expect(result.acked.size).toBeLessThan(total);

		second.proc.kill('SIGTERM');
		expect(await second.exited).toBe(0);
	}, 90_000);
});

describe.skipIf(PG_MISSING)('crash safety: two relay instances on one PostgreSQL database', () => {
	const tmp = tempDir();
	const children: RelayProcess[] = [];
	const targets: Target[] = [];
	let db: TestDatabase | undefined;
	let server: OwnPostgres | undefined;

	afterAll(async () => {
		await stopRelays(children);
		for (const t of targets) await t.close();
		await db?.drop();
		await server?.destroy();
		tmp.cleanup();
	});

	const relayEnv = (database: string, targetUrl: string) =>
		baseEnv(
			tmp.dir,
			{ payment: [targetUrl] },
			{
				RELAY_DATABASE: database,
				LOG_LEVEL: 'info',
				RELAY_LEASE_MS: '1500',
				RELAY_DELIVERY_TIMEOUT_MS: '1000',
				RELAY_CONCURRENCY: '8',
			},
		);

	it('one instance SIGKILLed mid-burst, the target down then up: every acknowledged postback delivered', async () => {
		db = await createTestDatabase();
		// The target is down while the burst runs: it comes up on this port afterwards.
		const port = await freePort();
		const target = new Target();
		targets.push(target);
		const url = `http://127.0.0.1:${port}/pay`;
		const a = await spawnRelay(relayEnv(db.url, url));
		const b = await spawnRelay(relayEnv(db.url, url));
		children.push(a, b);

		const total = 800;
		const killAfterAcks = 250;
		const result = await burstKilling(a, [a.url, b.url], total, 'T-pg-kill', killAfterAcks);
		expect(target.received).toHaveLength(0);

		await target.listen(port);
		const { missing } = await settle(
			'crash test (PostgreSQL, 2 instances, one SIGKILLed, target down then up)',
			target,
			total,
			result,
			'',
		);
		expect(missing).toEqual([]);
		expect(result.acked.size).toBeGreaterThan(killAfterAcks);
		b.proc.kill('SIGTERM');
		expect(await b.exited).toBe(0);
	}, 120_000);

	it.skipIf(PG_BIN_MISSING)(
		'PostgreSQL restarted (immediate stop, crash recovery) mid-burst: both instances recover by themselves, nothing acknowledged is lost',
		async () => {
			server = await startOwnPostgres(await freePort());
			const target = await new Target().listen();
			targets.push(target);
			target.responder = () => ({ status: 200, hangMs: 5 });
			const database = server.url.replace(/\/postgres$/, '/relay');
			const admin = server.url;
			await adminQuery('CREATE DATABASE relay', admin);
			const a = await spawnRelay(relayEnv(database, target.url('/pay')));
			const b = await spawnRelay(relayEnv(database, target.url('/pay')));
			children.push(a, b);

			const total = 1200;
			const restartAfterAcks = 300;
			let restart: Promise<void> | undefined;
			let ackedWhenBack = -1;
			let ackedNow = 0;
			const result = await burst(
				[a.url, b.url],
				total,
				'T-pg-restart',
				(acked) => {
					ackedNow = acked;
					if (!restart && acked >= restartAfterAcks) {
						restart = server!.restart('immediate').then(() => {
							ackedWhenBack = ackedNow;
						});
					}
				},
				40,
			);
			await restart;
			const { missing } = await settle(
				'crash test (PostgreSQL restarted mid-burst, 2 instances)',
				target,
				total,
				result,
				` acked-before-restart>=${restartAfterAcks} acked-when-server-back=${ackedWhenBack}`,
			);
			expect(missing).toEqual([]);
			expect(restart).toBeDefined();
			// The restart happened mid-burst: calls failed while it was down, and postbacks were acknowledged after it.
			expect(result.failed).toBeGreaterThan(0);
			expect(result.acked.size).toBeGreaterThan(ackedWhenBack);
			for (const c of [a, b]) {
				expect(c.proc.exitCode).toBeNull();
				expect((await fetch(`${c.url}/readyz`)).status).toBe(200);
				c.proc.kill('SIGTERM');
				expect(await c.exited).toBe(0);
			}
		},
		180_000,
	);
});
