// The console shows the target's answer to a failed attempt, escaped like every other value, and
// the trigger's receipt beside each HTTP status (none for a target that gave none).
import { describe, expect, it } from 'vitest';
import { deadPage } from '../../relay/src/console/pages/dead.ts';
import { eventPage, eventsPage } from '../../relay/src/console/pages/events.ts';
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

describe("the console shows the trigger's receipt beside the HTTP status", () => {
	const rejected: Delivery = { ...delivery, lastReceipt: 'rejected' };
	const delivered = (id: number, lastReceipt: Delivery['lastReceipt']): Delivery => ({
		...delivery,
		id,
		status: 'delivered',
		lastStatus: 200,
		lastError: null,
		lastResponse: null,
		lastReceipt,
		deliveredAt: 1_700_000_000_100,
	});

	it('on the dead letters page', () => {
		const body = deadPage({
			csrf: 'c',
			targets: [],
			configuredTargets: [],
			dead: [rejected],
			filterTarget: undefined,
			nextBeforeId: undefined,
			now: 1_700_000_100_000,
		});
		expect(body).toMatch(/422 · <span class="receipt rejected"[^>]*>rejected<\/span>/);
	});

	it('per attempt and per delivery on the event page; a target that gave none shows none', () => {
		const body = eventPage({
			csrf: 'c',
			event,
			deliveries: [delivered(8, 'duplicate'), delivered(9, null)],
			attempts: [
				{ ...attempt(1, 'scheduled'), deliveryId: 8, httpStatus: 503, receipt: 'retry' },
				{ ...attempt(2, 'scheduled'), deliveryId: 8, httpStatus: 200, receipt: 'duplicate' },
				{ ...attempt(1, 'scheduled'), deliveryId: 9, httpStatus: 200, receipt: null },
			],
			replayTargets: 1,
		});
		const card = (id: number) => body.slice(body.indexOf(`id="delivery-${id}"`));
		expect(card(8)).toMatch(
			/<dd>200 · <span class="receipt duplicate"[^>]*>duplicate<\/span><\/dd>/,
		);
		expect(card(8)).toContain("<dt>Trigger's receipt</dt><dd>duplicate</dd>");
		expect(card(8)).toMatch(/503 · <span class="receipt retry"/);
		expect(card(9)).toContain('<dt>Last HTTP status</dt><dd>200</dd>');
		expect(card(9)).toContain('<dt>Trigger\'s receipt</dt><dd><span class="muted">— (none');
		expect(card(9)).not.toContain('class="receipt');
	});

	it('in the events list: delivered ones counted by receipt', () => {
		const body = eventsPage({
			csrf: 'c',
			query: {},
			raw: {},
			events: [event],
			deliveries: new Map([
				[
					event.id,
					[
						delivered(1, 'accepted'),
						delivered(2, 'duplicate'),
						delivered(3, 'duplicate'),
						delivered(4, null),
						rejected,
					],
				],
			]),
			next: undefined,
		});
		expect(body).toContain('>1 delivered · accepted<');
		expect(body).toContain('>2 delivered · duplicate<');
		expect(body).toContain('>1 delivered<');
		expect(body).toContain('>1 dead · rejected<');
	});
});
