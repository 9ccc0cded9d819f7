// The relay's alerts on their own: each cause once, a JSON message to every target, a target that
// fails is retried and then given up without stopping anything.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Alerter } from '../../relay/src/alerts.ts';
import { Target } from './helpers.ts';

describe('relay alerts', () => {
	const a = new Target();
	const b = new Target();
	beforeAll(async () => {
		await a.listen();
		await b.listen();
	});
	afterAll(async () => {
		await a.close();
		await b.close();
	});

	it('posts each cause once, to every target, and keeps the alerts for the console', async () => {
		const alerter = new Alerter({
			targets: [a.url('/hook'), b.url('/bot?secret=s')],
			logger: pino({ level: 'silent' }),
			sleep: async () => {},
		});
		expect(await alerter.raise('catch-up', ['catch-up:e1', 'catch-up:e2'], 'found 2')).toBe(true);
		expect(a.received).toHaveLength(1);
		expect(b.received).toHaveLength(1);
		const body = JSON.parse(a.received[0].body);
		expect(body).toMatchObject({
			source: 'paypalych-relay',
			alert: 'catch-up',
			message: 'found 2',
		});
		expect(a.received[0].headers['content-type']).toBe('application/json');
		// The same cause again: nothing; a new cause among old ones: one alert naming only it.
		expect(await alerter.raise('catch-up', 'catch-up:e1', 'found 1')).toBe(false);
		expect(await alerter.raise('catch-up', ['catch-up:e2', 'catch-up:e1'], 'found 2')).toBe(false);
		expect(a.received).toHaveLength(1);
		expect(await alerter.raise('catch-up', ['catch-up:e1', 'catch-up:e3'], 'found 2')).toBe(true);
		expect(JSON.parse(a.received[1].body).cause).toBe('catch-up:e3');
		expect(alerter.recent.map((x) => x.cause)).toEqual(['catch-up:e3', 'catch-up:e1,catch-up:e2']);
	});

	it('tries a failing target three times, then gives up without throwing', async () => {
		a.received = [];
		a.responder = () => ({ status: 502 });
		const alerter = new Alerter({
			targets: [a.url('/hook')],
			logger: pino({ level: 'silent' }),
			sleep: async () => {},
		});
		expect(await alerter.raise('dead', 'dead:1', 'went dead')).toBe(true);
		expect(a.received).toHaveLength(3);
		a.responder = () => ({ status: 200 });
	});
});
