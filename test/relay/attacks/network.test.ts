/**
 * The relay on the open internet. RELAY_TRUST_PROXY and X-Forwarded-For, and a client that sends its body a byte at a time.
 * Each case replays an attack of the security review on both stores; cases that fixed a finding
 * say in a `Before:` comment what the relay did before.
 */
import { connect } from 'node:net';
import { expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../relay/src/config.ts';
import { start } from '../../../relay/src/server.ts';
import { submitLogin } from '../console-login.ts';
import { baseEnv, form, redirectFields } from '../helpers.ts';
import { FORM, sb, sink, onEveryStoreKind } from './world.ts';

onEveryStoreKind(
	'the network in front: proxies and slow clients',
	({ cleanups, database, relay }) => {
		// Security review, finding 2.
		it('RELAY_TRUST_PROXY takes a hop count or proxy addresses, refuses true, and a spoofed X-Forwarded-For picks no address', async () => {
			expect(() =>
				loadConfig(baseEnv('/unused', { payment: ['http://a/'] }, { RELAY_TRUST_PROXY: 'true' })),
			).toThrow(/hop count|proxy hops.*CIDR/);
			try {
				loadConfig(baseEnv('/unused', { payment: ['http://a/'] }, { RELAY_TRUST_PROXY: 'true' }));
			} catch (error) {
				expect(error).toBeInstanceOf(ConfigError);
				expect((error as Error).message).toMatch(/for example 1/);
				expect((error as Error).message).toMatch(/CIDR/);
			}
			for (const trust of ['1', '127.0.0.1/8']) {
				const r = await relay({
					RELAY_TRUST_PROXY: trust,
					RELAY_REDIRECT_LIMIT_PER_CLIENT: '5',
					RELAY_REDIRECT_LIMIT_PER_PAYMENT: '0',
					RELAY_AUTH_LIMIT: '5',
				});
				// One proxy hop (127.0.0.1) in front: it appends the real client to what the client sent.
				const via = (client: string, spoofed: string) => ({
					'x-forwarded-for': `${spoofed}, ${client}`,
				});
				const codes: number[] = [];
				for (let i = 0; i < 60; i++) {
					const res = await r.app.inject({
						method: 'POST',
						url: '/redirect/success',
						headers: { ...FORM, ...via('203.0.113.7', `198.51.100.${i}`) },
						payload: form(redirectFields(`order-xff-${i}`)),
						remoteAddress: '127.0.0.1',
					});
					codes.push(res.statusCode);
				}
				expect(codes.filter((c) => c === 200)).toHaveLength(5);
				expect(codes.filter((c) => c === 429)).toHaveLength(55);
				// The victim whose address the attacker wrote is not limited.
				const victim = await r.app.inject({
					method: 'POST',
					url: '/redirect/success',
					headers: { ...FORM, ...via('198.51.100.3', '203.0.113.7') },
					payload: form(redirectFields('order-victim')),
					remoteAddress: '127.0.0.1',
				});
				expect(victim.statusCode).toBe(200);
				// Wrong console logins with rotating spoofed addresses are throttled all the same.
				const logins: number[] = [];
				for (let i = 0; i < 30; i++) {
					const res = await submitLogin(
						r.app,
						{ token: 'wrong-token-0000000000' },
						{
							...via('203.0.113.9', `192.0.2.${i}`),
						},
					);
					logins.push(res.statusCode);
				}
				expect(logins.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
				expect(logins.slice(5).every((c) => c === 429)).toBe(true);
			}
		});

		// Security review, finding 17.
		it('a hop count above the real number of proxies: RELAY_TRUST_PROXY above 10 is refused at start, naming the setting; 10 is accepted', async () => {
			// Before: 99999 was accepted, and X-Forwarded-For chose the client address.
			const db = await database();
			const env = (trust: string) =>
				baseEnv(
					'/unused',
					{ payment: [sink.url('/pay')] },
					{
						RELAY_DATABASE: db,
						PAYPALYCH_API_BASE_URL: sb.url,
						RELAY_TRUST_PROXY: trust,
						LOG_LEVEL: 'silent',
					},
				);
			for (const trust of ['99999', '11']) {
				const refused = await start(env(trust)).then(
					async (r) => {
						await r.close();
						return undefined;
					},
					(e: unknown) => e,
				);
				expect(refused, trust).toBeInstanceOf(ConfigError);
				expect((refused as ConfigError).variables).toEqual(['RELAY_TRUST_PROXY']);
				expect((refused as Error).message).toContain('RELAY_TRUST_PROXY');
			}
			const r = await start(env('10'));
			cleanups.push(() => r.close());
			const seen = await r.app.inject({
				method: 'GET',
				url: '/healthz',
				headers: { 'x-forwarded-for': '203.0.113.7' },
			});
			expect(seen.statusCode).toBe(200);
		});

		// Security review, finding 4.
		it('a slow body is cut off within the request timeout', async () => {
			const r = await relay({
				RELAY_REQUEST_TIMEOUT_MS: '1000',
				RELAY_HEADERS_TIMEOUT_MS: '500',
				RELAY_CONNECTION_TIMEOUT_MS: '5000',
			});
			const { port } = new URL(r.url);
			const socket = connect(Number(port), '127.0.0.1');
			const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
			socket.on('error', () => {});
			socket.write(
				'POST /postback/payment HTTP/1.1\r\nHost: relay\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n',
			);
			// One byte every 100 ms (never idle): at most 200 bytes, then the test gives up.
			let sent = 0;
			let isClosed = false;
			void closed.then(() => (isClosed = true));
			while (!isClosed && sent < 200) {
				socket.write('a');
				sent += 1;
				await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 100))]);
			}
			expect(isClosed).toBe(true);
			socket.destroy();
		});
	},
);
