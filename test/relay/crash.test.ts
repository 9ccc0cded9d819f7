import { afterAll, describe, expect, it } from 'vitest';
import { Target, baseEnv, form, paymentFields, spawnRelay, stopRelays, tempDir, waitFor } from './helpers.ts';
import type { RelayProcess } from './helpers.ts';

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
			{ LOG_LEVEL: 'info', RELAY_LEASE_MS: '1500', RELAY_DELIVERY_TIMEOUT_MS: '1000', RELAY_CONCURRENCY: '8' },
		);
		const first = await spawnRelay(env);
		children.push(first);

		const total = 600;
		const killAfterAcks = 200;
		const acked = new Set<string>();
		let failed = 0;
		let killed = false;
		let next = 0;
		const worker = async () => {
			while (next < total) {
				const trsId = `T-crash-${next++}`;
				try {
					const res = await fetch(`${first.url}/postback/payment`, {
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
				if (!killed && acked.size >= killAfterAcks) {
					killed = true;
					first.proc.kill('SIGKILL');
				}
			}
		};
		await Promise.all(Array.from({ length: 24 }, worker));
		expect(killed).toBe(true);
		await first.exited;
		expect(first.proc.signalCode).toBe('SIGKILL');
		const deliveredBeforeRestart = new Set(target.received.map((r) => new URLSearchParams(r.body).get('TrsId'))).size;

		const second = await spawnRelay(env);
		children.push(second);
		const receivedIds = () => new Set(target.received.map((r) => new URLSearchParams(r.body).get('TrsId') ?? ''));
		await waitFor(() => [...acked].every((id) => receivedIds().has(id)), 'every acknowledged postback at the target', 60_000, 100);

		const got = receivedIds();
		const missing = [...acked].filter((id) => !got.has(id));
		const unackedDelivered = [...got].filter((id) => !acked.has(id)).length;
		const duplicates = target.received.length - got.size;
		console.log(
			`crash test: sent=${total} acked=${acked.size} failed/unanswered=${failed} ` +
				`delivered-before-kill=${deliveredBeforeRestart} delivered-unique=${got.size} ` +
				`delivered-but-not-acked=${unackedDelivered} duplicate-deliveries=${duplicates} missing=${missing.length}`,
		);
		expect(missing).toEqual([]);
		expect(acked.size).toBeGreaterThanOrEqual(killAfterAcks);
		expect(acked.size).toBeLessThan(total);

		second.proc.kill('SIGTERM');
		expect(await second.exited).toBe(0);
	}, 90_000);
});
