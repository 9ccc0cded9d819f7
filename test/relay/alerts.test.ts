// The relay's alerts on their own: each cause once, a JSON message to every target, a target that
// fails is retried and then given up without stopping anything.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALERT_RESPONSE_CHARS, AlertMonitor, Alerter } from '../../relay/src/alerts.ts';
import type { Delivery, Store } from '../../relay/src/store/types.ts';
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

	it("carries the start of each dead delivery's last answer (at most 300 characters, null when none), posted and logged", async () => {
		a.received = [];
		const delivery = (id: number, lastResponse: string | null): Delivery => ({
			id,
			eventId: `e${id}`,
			target: 'https://user:secret@n8n.example/webhook/x?token=t',
			status: 'dead',
			attempts: 1,
			createdAt: 0,
			budgetStart: 0,
			nextAttemptAt: 0,
			leaseUntil: null,
			lastStatus: 422,
			lastError: 'HTTP 422',
			lastResponse,
			lastReceipt: null,
			deliveredAt: null,
			attemptBase: 0,
			manual: false,
		});
		const long = `Not confirmed by the service: ${'é'.repeat(1000)}`;
		const store = {
			listDeliveries: async () => [delivery(1, long), delivery(2, null), delivery(3, 'short')],
			oldestUndelivered: async () => null,
		} as unknown as Store;
		const lines: string[] = [];
		const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
		const alerter = new Alerter({ targets: [a.url('/hook')], logger, sleep: async () => {} });
		await new AlertMonitor({ store, alerter, backlogS: 0, logger }).check();
		expect(a.received).toHaveLength(1);
		const body = JSON.parse(a.received[0].body);
		expect(body.alert).toBe('dead');
		const responses = (body.deliveries as Array<{ response: string | null }>).map(
			(d) => d.response,
		);
		expect(responses).toEqual([
			`${Array.from(long).slice(0, ALERT_RESPONSE_CHARS).join('')}…`,
			null,
			'short',
		]);
		expect(ALERT_RESPONSE_CHARS).toBe(300);
		expect(body.deliveries[0]).toMatchObject({
			id: 1,
			eventId: 'e1',
			status: 422,
			error: 'HTTP 422',
			target: 'https://n8n.example/webhook/x',
		});
		const logged = lines.map((l) => JSON.parse(l)).find((l) => l.alert === 'dead');
		expect(logged.deliveries.map((d: { response: string | null }) => d.response)).toEqual(
			responses,
		);
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
