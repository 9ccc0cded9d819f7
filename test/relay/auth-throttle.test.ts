import { describe, expect, it } from 'vitest';
import { AuthThrottle, clientKey } from '../../relay/src/auth-throttle.ts';

const WINDOW = 60_000;

function throttle(options: Partial<{ max: number; globalMax: number; tableSize: number }> = {}) {
	let now = 1_000_000;
	const t = new AuthThrottle(
		{
			max: options.max ?? 3,
			windowMs: WINDOW,
			globalMax: options.globalMax,
			tableSize: options.tableSize,
		},
		() => now,
	);
	return { t, advance: (ms: number) => (now += ms) };
}

describe('the admin-token limiter', () => {
	it('counts an IPv6 client by its /64, an IPv4 (mapped or not) by its address', () => {
		expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
		expect(clientKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
		expect(clientKey('2001:db8:1:2::9%eth0')).toBe('2001:db8:1:2::/64');
		expect(clientKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
		expect(clientKey('::1')).toBe('0:0:0:0::/64');
		expect(clientKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
		expect(clientKey('192.0.2.7')).toBe('192.0.2.7');
		expect(clientKey('not-an-address')).toBe('not-an-address');
	});

	it('gives a whole /64 the tries of one client', () => {
		const { t } = throttle({ max: 3 });
		for (let i = 1; i <= 3; i++) {
			expect(t.retryAfter(`2001:db8:0:7::${i.toString(16)}`)).toBeUndefined();
			t.fail(`2001:db8:0:7::${i.toString(16)}`);
		}
		// A fresh address of the same /64 is the same client: locked.
		expect(t.retryAfter('2001:db8:0:7:dead:beef:0:1')).toBeGreaterThan(0);
		expect(t.retryAfter('2001:db8:0:8::1')).toBeUndefined();
	});

	it('past the global ceiling refuses every token check, except from a client that gave the right token', () => {
		const { t, advance } = throttle({ max: 3, globalMax: 5 });
		t.clear('198.51.100.1'); // the operator signed in earlier today
		for (let i = 0; i < 5; i++) {
			expect(t.retryAfter(`203.0.113.${i}`)).toBeUndefined();
			t.fail(`203.0.113.${i}`);
		}
		// Each of 5 addresses failed once: no client is over its own limit, the relay is.
		const wait = t.retryAfter('203.0.113.200');
		expect(wait).toBeGreaterThan(0);
		expect(wait).toBeLessThanOrEqual(WINDOW / 1000);
		expect(t.retryAfter('2001:db8::1')).toBeGreaterThan(0);
		expect(t.retryAfter('198.51.100.1')).toBeUndefined();
		advance(WINDOW);
		expect(t.retryAfter('203.0.113.200')).toBeUndefined();
	});

	it('evicts the oldest entry when the table is full, so a new client is always counted', () => {
		const { t, advance } = throttle({ max: 2, tableSize: 100, globalMax: 1_000_000 });
		for (let i = 0; i < 100; i++) {
			t.fail(`10.0.${i >> 8}.${i & 255}`);
			advance(1);
		}
		// The table is full; a new client is still counted and locked after its 2 tries.
		t.fail('192.0.2.99');
		t.fail('192.0.2.99');
		expect(t.retryAfter('192.0.2.99')).toBeGreaterThan(0);
		// The oldest entry went to make room; the newest are still there.
		t.fail('10.0.0.99');
		expect(t.retryAfter('10.0.0.99')).toBeGreaterThan(0);
		t.fail('10.0.0.0');
		expect(t.retryAfter('10.0.0.0')).toBeUndefined();
	});
});
