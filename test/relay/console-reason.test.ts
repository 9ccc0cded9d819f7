// The console shows the target's answer to a failed attempt, escaped like every other value.
import { describe, expect, it } from 'vitest';
import { deadPage } from '../../relay/src/console/pages/dead.ts';
import { eventPage } from '../../relay/src/console/pages/events.ts';
import type { Delivery, DeliveryAttempt, StoredEvent } from '../../relay/src/store/types.ts';

const hostile = '{"error":"bad signature"}<script>alert(1)</script>';

const delivery: Delivery = {
	id: 7,
	eventId: 'ev-1',
	target: 'http://n8n/webhook/pay',
	status: 'dead',
	attempts: 2,
	createdAt: 1_700_000_000_000,
	budgetStart: 1_700_000_000_000,
	nextAttemptAt: 1_700_000_000_000,
	leaseUntil: null,
	lastStatus: 422,
	lastError: 'HTTP 422',
	lastResponse: hostile,
	lastReceipt: null,
	deliveredAt: null,
	attemptBase: 1,
	manual: false,
};

const attempt = (n: number, origin: DeliveryAttempt['origin']): DeliveryAttempt => ({
	id: n,
	deliveryId: 7,
	attempt: n,
	startedAt: 1_700_000_000_000 + n,
	durationMs: 3,
	httpStatus: 422,
	error: 'HTTP 422',
	outcome: n === 2 ? 'dead' : 'retry',
	origin,
	response: hostile,
	receipt: null,
});

const event: StoredEvent = {
	id: 'ev-1',
	kind: 'payment',
	source: 'postback',
	dedupeKey: 'payment:T:SUCCESS',
	contentType: 'application/x-www-form-urlencoded',
	fields: { TrsId: 'T', Status: 'SUCCESS' },
	receivedAt: 1_700_000_000_000,
};

const escaped =
	'{&quot;error&quot;:&quot;bad signature&quot;}&lt;script&gt;alert(1)&lt;/script&gt;';

describe("the console shows the target's reason", () => {
	it('on the dead letters page, escaped', () => {
		const body = deadPage({
			csrf: 'c',
			targets: [],
			configuredTargets: [],
			dead: [delivery],
			filterTarget: undefined,
			nextBeforeId: undefined,
			now: 1_700_000_100_000,
		});
		expect(body).toContain(escaped);
		expect(body).not.toContain('<script>alert(1)');
	});

	it('on the event page, per attempt with its origin, escaped', () => {
		const body = eventPage({
			csrf: 'c',
			event,
			deliveries: [delivery],
			attempts: [attempt(1, 'scheduled'), attempt(2, 'manual')],
			replayTargets: 1,
		});
		expect(body.split(escaped).length - 1).toBe(3);
		expect(body).not.toContain('<script>alert(1)');
		expect(body).toContain('<span class="origin muted"');
	});
});
