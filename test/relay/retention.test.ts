import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../relay/src/config.ts';
import { DAY_MS, Pruner, SERVICE_RETRY_WINDOW_MS } from '../../relay/src/store/retention.ts';
import { SqliteStore } from '../../relay/src/store-sqlite/store.ts';
import { LogSink, baseEnv, tempDir } from './helpers.ts';
import { storeEvent } from './store-suite.ts';
import { markDelivered } from './marks.ts';

describe('retention', () => {
	const tmp = tempDir();
	const sink = new LogSink();
	const logger = pino({ level: 'info' }, sink);
	let store: SqliteStore;

	beforeAll(async () => {
		store = await SqliteStore.open(join(tmp.dir, 'r.sqlite'), { mode: 'inline' });
	});
	afterAll(async () => {
		await store?.close();
		tmp.cleanup();
	});

	it('keeps every retention longer than the service retry window (about 31 hours)', () => {
		expect(SERVICE_RETRY_WINDOW_MS).toBe((10 + 100 + 1_000 + 10_000 + 100_000) * 1000);
		expect(() => new Pruner({ store, retentionDays: 1, logger })).toThrow(
			/shorter than the service's retry window/,
		);
		const env = baseEnv(tmp.dir, { payment: ['http://127.0.0.1:9/x'] });
		expect(() => loadConfig({ ...env, RELAY_RETENTION_DAYS: '1' })).toThrow(/RELAY_RETENTION_DAYS/);
		expect(2 * DAY_MS).toBeGreaterThan(SERVICE_RETRY_WINDOW_MS);
	});

	it('prunes delivered events older than the retention, batch after batch, and logs the count', async () => {
		const now = Date.now();
		const old = now - 3 * DAY_MS;
		for (let i = 0; i < 5; i++)
			await store.insertEvent(storeEvent(`R-old-${i}`, ['http://a/'], old + i));
		await store.insertEvent(storeEvent('R-old-pending', ['http://a/'], old + 10));
		await store.insertEvent(storeEvent('R-young', ['http://a/'], now - DAY_MS));
		for (const d of await store.claimDue(now, 100, 60_000, 'w')) {
			if (!d.body.includes('R-old-pending'))
				await markDelivered(store, d.id, now, 200, { attempt: 1, startedAt: now, durationMs: 1 });
		}
		const pruner = new Pruner({ store, retentionDays: 2, logger, batch: 2 });
		expect(await pruner.runOnce(now)).toBe(5);
		expect(await pruner.runOnce(now)).toBe(0);
		const left = (await store.listEvents({ limit: 10 })).map((e) => e.fields.TrsId).sort();
		expect(left).toEqual(['R-old-pending', 'R-young']);
		const line = sink.lines
			.map((l) => JSON.parse(l) as { msg: string; pruned?: number })
			.find((l) => l.msg === 'pruned delivered events');
		expect(line?.pruned).toBe(5);
		await pruner.stop();
	});
});
