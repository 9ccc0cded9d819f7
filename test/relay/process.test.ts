import { afterAll, describe, expect, it, vi } from 'vitest';
import { CLOSE_MARGIN_MS } from '../../relay/src/server.ts';
import {
	Target,
	baseEnv,
	form,
	paymentFields,
	spawnRelay,
	stopRelays,
	tempDir,
} from './helpers.ts';
import type { RelayProcess } from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

// The relay as a process: what SIGTERM does (close-with-grace).
describe('relay process shutdown', () => {
	const tmp = tempDir();
	const target = new Target();
	const children: RelayProcess[] = [];

	afterAll(async () => {
		await stopRelays(children, 'SIGKILL');
		await target.close();
		tmp.cleanup();
	});

	it('closes gracefully on SIGTERM and exits 0', async () => {
		await target.listen();
		const relay = await spawnRelay(baseEnv(tmp.dir, { payment: [target.url('/pay')] }));
		children.push(relay);
		const res = await fetch(`${relay.url}/postback/payment`, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body: form(paymentFields('T-term')),
		});
		expect(res.status).toBe(200);
		await waitFor('delivery', () => target.received.length === 1);
		relay.proc.kill('SIGTERM');
		expect(await relay.exited).toBe(0);
		expect(relay.stdout()).toContain('"msg":"shutting down"');
		expect(relay.stdout()).toContain('"msg":"store closing"');
	});

	it('still exits on SIGTERM when close() hangs, once the grace time is over, with exit code 1', async () => {
		const relay = await spawnRelay(
			baseEnv(tmp.dir, { payment: [target.url('/pay')] }, { RELAY_SHUTDOWN_GRACE_MS: '100' }),
			{
				args: [`${__dirname}/fixtures/hanging-close.mjs`],
			},
		);
		children.push(relay);
		expect((await fetch(`${relay.url}/healthz`)).status).toBe(200);
		relay.proc.kill('SIGTERM');
		// Without close-with-grace the process would never exit: the test would time out here.
		expect(await relay.exited).toBe(1);
		expect(relay.stdout()).toContain('"msg":"shutting down"');
		expect(relay.stdout()).toContain(`"graceMs":${100 + CLOSE_MARGIN_MS}`);
		expect(relay.stdout()).toContain('shutdown did not finish within the grace time; exiting');
	}, 60_000);

	// The start timeout of spawnRelay (15 s) once killed every relay that had been running that long:
	// under CPU load the crash tests outlived it and lost both relays mid-test.
	it('spawnRelay leaves a relay that started running after its start timeout', async () => {
		vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
		let relay: RelayProcess;
		try {
			relay = await spawnRelay(baseEnv(tmp.dir, { payment: [target.url('/pay')] }));
			children.push(relay);
			vi.advanceTimersByTime(60_000);
		} finally {
			vi.useRealTimers();
		}
		expect(relay.proc.killed).toBe(false);
		expect(relay.proc.signalCode).toBeNull();
		expect((await fetch(`${relay.url}/healthz`)).status).toBe(200);
		relay.proc.kill('SIGTERM');
		expect(await relay.exited).toBe(0);
	});
});
