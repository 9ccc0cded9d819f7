import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from '../../relay/src/config.ts';
import { defaultDatabasePath } from '../../relay/src/config-fields.ts';
import { targetsByKind } from '../../relay/src/targets.ts';
import { ADMIN_TOKEN, NODE, RELAY_BIN, TOKEN, childEnv } from './helpers.ts';

const minimal = {
	PAYPALYCH_API_TOKEN: TOKEN,
	RELAY_ADMIN_TOKEN: ADMIN_TOKEN,
	RELAY_PAYMENT_TARGETS: 'http://n8n.local:5678/webhook/a/paypalych',
};

function errorOf(env: Record<string, string>): ConfigError {
	try {
		loadConfig(env);
	} catch (error) {
		if (error instanceof ConfigError) return error;
		throw error;
	}
	throw new Error('loadConfig accepted the environment');
}

describe('relay configuration', () => {
	it('applies defaults to a minimal environment', () => {
		const c = loadConfig(minimal);
		expect(c.host).toBe('127.0.0.1');
		expect(c.port).toBe(8080);
		expect(c.apiTokens).toEqual([TOKEN]);
		expect(c.targets).toEqual({
			payment: ['http://n8n.local:5678/webhook/a/paypalych'],
			payout: [],
			redirect: [],
			success: [],
			fail: [],
			refund: [],
			chargeback: [],
		});
		expect(c.requireReceipt).toBe(true);
		expect(c.retryBudgetMs).toBe(24 * 3_600_000);
		// Was '.relay-data/relay.sqlite' (relative: wherever the relay was started). Now absolute.
		expect(c.database).toBe(defaultDatabasePath({}));
		expect(c.database).toMatch(/^\/.+\/\.local\/state\/paypalych-relay\/relay\.sqlite$/);
		expect(c.retentionDays).toBe(30);
		expect(c.successUrl).toBeUndefined();
	});

	it('has the security limits with their documented defaults', () => {
		const c = loadConfig(minimal);
		expect(c.trustProxy).toBe(false);
		expect(c.pairLimit).toEqual({ max: 10, windowMs: 24 * 3_600_000 });
		expect(c.payoutCheck).toBe('service');
		expect(c.apiBaseUrl).toBe('https://pal24.pro');
		expect(c.authLimit).toEqual({ max: 10, windowMs: 15 * 60_000, globalMax: 1000 });
		expect(c.timeouts).toEqual({
			request: 30_000,
			headers: 10_000,
			keepAlive: 5_000,
			connection: 60_000,
		});
	});

	it('takes RELAY_TRUST_PROXY as a hop count or proxy addresses, and refuses true naming the safe forms', () => {
		expect(loadConfig({ ...minimal, RELAY_TRUST_PROXY: '1' }).trustProxy).toBe(1);
		expect(loadConfig({ ...minimal, RELAY_TRUST_PROXY: '0' }).trustProxy).toBe(false);
		expect(loadConfig({ ...minimal, RELAY_TRUST_PROXY: 'false' }).trustProxy).toBe(false);
		expect(
			loadConfig({ ...minimal, RELAY_TRUST_PROXY: '10.0.0.5, 192.168.0.0/16,::1,loopback' })
				.trustProxy,
		).toEqual(['10.0.0.5', '192.168.0.0/16', '::1', 'loopback']);
		for (const value of ['true', 'TRUE']) {
			const error = errorOf({ ...minimal, RELAY_TRUST_PROXY: value });
			expect(error.variables).toEqual(['RELAY_TRUST_PROXY']);
			expect(error.message).toMatch(/number of proxy hops/);
			expect(error.message).toMatch(/CIDR/);
		}
		expect(errorOf({ ...minimal, RELAY_TRUST_PROXY: 'proxy.example.com' }).variables).toEqual([
			'RELAY_TRUST_PROXY',
		]);
	});

	it('refuses a hop count above 10 naming RELAY_TRUST_PROXY (99999 would act like true)', () => {
		expect(loadConfig({ ...minimal, RELAY_TRUST_PROXY: '10' }).trustProxy).toBe(10);
		for (const value of ['11', '99999']) {
			const error = errorOf({ ...minimal, RELAY_TRUST_PROXY: value });
			expect(error.variables).toEqual(['RELAY_TRUST_PROXY']);
			expect(error.message).toMatch(/RELAY_TRUST_PROXY: a hop count above 10 is refused/);
		}
	});

	it('refuses a plain-http PAYPALYCH_API_BASE_URL unless RELAY_ALLOW_PLAIN_HTTP_API=1', () => {
		const error = errorOf({ ...minimal, PAYPALYCH_API_BASE_URL: 'http://pal24.pro' });
		expect(error.variables).toEqual(['PAYPALYCH_API_BASE_URL']);
		expect(error.message).toMatch(/https:\/\/.*RELAY_ALLOW_PLAIN_HTTP_API=1/);
		expect(error.message).not.toContain('pal24.pro');
		expect(
			errorOf({
				...minimal,
				PAYPALYCH_API_BASE_URL: 'http://pal24.pro',
				RELAY_ALLOW_PLAIN_HTTP_API: '0',
			}).variables,
		).toEqual(['PAYPALYCH_API_BASE_URL']);
		expect(
			loadConfig({
				...minimal,
				PAYPALYCH_API_BASE_URL: 'http://pal24.pro',
				RELAY_ALLOW_PLAIN_HTTP_API: '1',
			}).apiBaseUrl,
		).toBe('http://pal24.pro');
		expect(
			loadConfig({ ...minimal, PAYPALYCH_API_BASE_URL: 'HTTPS://pal24.pro/' }).apiBaseUrl,
		).toBe('HTTPS://pal24.pro');
	});

	it('refuses a headers timeout above the request timeout and a payout check it does not know', () => {
		expect(
			errorOf({ ...minimal, RELAY_REQUEST_TIMEOUT_MS: '1000', RELAY_HEADERS_TIMEOUT_MS: '2000' })
				.variables,
		).toEqual(['RELAY_HEADERS_TIMEOUT_MS']);
		expect(errorOf({ ...minimal, RELAY_PAYOUT_CHECK: 'maybe' }).variables).toEqual([
			'RELAY_PAYOUT_CHECK',
		]);
		expect(loadConfig({ ...minimal, RELAY_PAYOUT_CHECK: 'off' }).payoutCheck).toBe('off');
		expect(
			loadConfig({
				...minimal,
				PAYPALYCH_API_BASE_URL: 'http://127.0.0.1:9/',
				RELAY_ALLOW_PLAIN_HTTP_API: '1',
			}).apiBaseUrl,
		).toBe('http://127.0.0.1:9');
	});

	it('splits comma-separated tokens and targets', () => {
		const c = loadConfig({
			...minimal,
			PAYPALYCH_API_TOKEN: ` old|1 , ${TOKEN} `,
			RELAY_PAYOUT_TARGETS: 'https://a.example/w1, https://b.example/w2',
			PORT: '9001',
			RELAY_RETRY_BUDGET_MS: '60000',
		});
		expect(c.apiTokens).toEqual(['old|1', TOKEN]);
		expect(c.targets.payout).toEqual(['https://a.example/w1', 'https://b.example/w2']);
		expect(c.port).toBe(9001);
		expect(c.retryBudgetMs).toBe(60000);
	});

	it('names every missing or invalid variable and never echoes a value', () => {
		const e = errorOf({
			PORT: 'eighty',
			RELAY_PAYMENT_TARGETS: 'ftp://x, not a url',
			RELAY_ADMIN_TOKEN: 'short',
			RELAY_SUCCESS_URL: 'javascript:alert(1)',
			RELAY_CONCURRENCY: '0',
		});
		expect(e.variables.sort()).toEqual(
			[
				'PAYPALYCH_API_TOKEN',
				'PORT',
				'RELAY_ADMIN_TOKEN',
				'RELAY_CONCURRENCY',
				'RELAY_PAYMENT_TARGETS',
				'RELAY_SUCCESS_URL',
			].sort(),
		);
		for (const name of e.variables) expect(e.message).toContain(name);
		expect(e.message).not.toContain('short');
		expect(e.message).not.toContain('eighty');
	});

	it('reports every missing setting in one message: the tokens and the targets together', () => {
		const e = errorOf({});
		expect(e.variables).toEqual([
			'PAYPALYCH_API_TOKEN',
			'RELAY_ADMIN_TOKEN',
			'RELAY_PAYMENT_TARGETS',
		]);
		expect(e.message).toContain('PAYPALYCH_API_TOKEN: is required');
		expect(e.message).toContain('RELAY_ADMIN_TOKEN: is required');
		expect(e.message).toContain(
			'RELAY_PAYMENT_TARGETS: no target at all: set at least one of RELAY_PAYMENT_TARGETS, RELAY_PAYOUT_TARGETS, RELAY_REDIRECT_TARGETS, RELAY_SUCCESS_TARGETS, RELAY_FAIL_TARGETS',
		);
		// A misspelling, a bad value and a rule between two variables, also in the same message.
		const more = errorOf({
			RELAY_DATABSE: '/tmp/x.sqlite',
			PORT: 'eighty',
			RELAY_LEASE_MS: '500',
			RELAY_DELIVERY_TIMEOUT_MS: '1000',
		});
		expect(more.variables).toEqual([
			'RELAY_DATABSE',
			'PORT',
			'PAYPALYCH_API_TOKEN',
			'RELAY_ADMIN_TOKEN',
			'RELAY_PAYMENT_TARGETS',
			'RELAY_LEASE_MS',
		]);
	});

	it('puts the SQLite file at an absolute path: systemd state directory, XDG state home, ~/.local/state', () => {
		expect(loadConfig({ ...minimal, STATE_DIRECTORY: '/var/lib/paypalych-relay' }).database).toBe(
			'/var/lib/paypalych-relay/relay.sqlite',
		);
		expect(loadConfig({ ...minimal, XDG_STATE_HOME: '/srv/state' }).database).toBe(
			'/srv/state/paypalych-relay/relay.sqlite',
		);
		expect(loadConfig({ ...minimal, HOME: '/home/ops' }).database).toBe(
			'/home/ops/.local/state/paypalych-relay/relay.sqlite',
		);
		// A relative RELAY_DATABASE is resolved where the relay starts, so the log names the file.
		expect(loadConfig({ ...minimal, RELAY_DATABASE: 'data/relay.sqlite' }).database).toBe(
			resolve('data/relay.sqlite'),
		);
	});

	it('reads RELAY_REQUIRE_RECEIPT as a boolean and refuses anything else', () => {
		expect(loadConfig({ ...minimal, RELAY_REQUIRE_RECEIPT: 'false' }).requireReceipt).toBe(false);
		expect(loadConfig({ ...minimal, RELAY_REQUIRE_RECEIPT: '0' }).requireReceipt).toBe(false);
		expect(loadConfig({ ...minimal, RELAY_REQUIRE_RECEIPT: 'true' }).requireReceipt).toBe(true);
		expect(loadConfig({ ...minimal, RELAY_REQUIRE_RECEIPT: '' }).requireReceipt).toBe(true);
		expect(errorOf({ ...minimal, RELAY_REQUIRE_RECEIPT: 'no' }).variables).toEqual([
			'RELAY_REQUIRE_RECEIPT',
		]);
	});

	it('sends refunds and chargebacks to RELAY_REFUND_TARGETS and RELAY_CHARGEBACK_TARGETS, each unset to the payment targets', () => {
		const payment = 'http://n8n:5678/webhook/pay';
		const unset = loadConfig({ ...minimal, RELAY_PAYMENT_TARGETS: payment });
		expect(targetsByKind(unset)).toMatchObject({ refund: [payment], chargeback: [payment] });
		const set = loadConfig({
			...minimal,
			RELAY_PAYMENT_TARGETS: payment,
			RELAY_REFUND_TARGETS: 'http://n8n:5678/webhook/refund',
			RELAY_CHARGEBACK_TARGETS: 'http://n8n:5678/webhook/cb,http://n8n:5678/webhook/cb',
		});
		expect(targetsByKind(set)).toMatchObject({
			payment: [payment],
			refund: ['http://n8n:5678/webhook/refund'],
			chargeback: ['http://n8n:5678/webhook/cb'],
		});
		expect(errorOf({ ...minimal, RELAY_REFUND_TARGETS: 'nope' }).variables).toEqual([
			'RELAY_REFUND_TARGETS',
		]);
	});

	it('sends success redirects to the success and redirect lists, fail redirects to the fail and redirect lists, each URL once', () => {
		const c = loadConfig({
			PAYPALYCH_API_TOKEN: TOKEN,
			RELAY_ADMIN_TOKEN: ADMIN_TOKEN,
			RELAY_SUCCESS_TARGETS: 'http://n8n:5678/webhook/ok, http://n8n:5678/webhook/both',
			RELAY_FAIL_TARGETS: 'http://n8n:5678/webhook/ko',
			RELAY_REDIRECT_TARGETS: 'http://N8N:5678/webhook/both,http://n8n:5678/webhook/all',
		});
		expect(targetsByKind(c).success).toEqual([
			'http://n8n:5678/webhook/ok',
			'http://n8n:5678/webhook/both',
			'http://n8n:5678/webhook/all',
		]);
		expect(targetsByKind(c).fail).toEqual([
			'http://n8n:5678/webhook/ko',
			'http://N8N:5678/webhook/both',
			'http://n8n:5678/webhook/all',
		]);
		expect(targetsByKind(c)).toEqual({
			payment: [],
			payout: [],
			success: targetsByKind(c).success,
			fail: targetsByKind(c).fail,
			refund: [],
			chargeback: [],
		});
		// Only a fail list is a valid configuration; a bad URL in it is named.
		expect(
			loadConfig({
				PAYPALYCH_API_TOKEN: TOKEN,
				RELAY_ADMIN_TOKEN: ADMIN_TOKEN,
				RELAY_FAIL_TARGETS: 'http://x/y',
			}).targets.fail,
		).toEqual(['http://x/y']);
		expect(errorOf({ ...minimal, RELAY_SUCCESS_TARGETS: 'nope' }).variables).toEqual([
			'RELAY_SUCCESS_TARGETS',
		]);
	});

	it('takes a PostgreSQL URL and a retention, refuses a malformed URL, a short retention and a relay without targets', () => {
		expect(
			loadConfig({ ...minimal, RELAY_DATABASE: 'postgres://u:p@db:5432/relay' }).database,
		).toBe('postgres://u:p@db:5432/relay');
		expect(loadConfig({ ...minimal, RELAY_DATABASE: 'postgresql://db/relay' }).database).toBe(
			'postgresql://db/relay',
		);
		expect(errorOf({ ...minimal, RELAY_DATABASE: 'postgres://db' }).variables).toEqual([
			'RELAY_DATABASE',
		]);
		expect(errorOf({ ...minimal, RELAY_DATABASE: 'postgres://' }).variables).toEqual([
			'RELAY_DATABASE',
		]);
		expect(loadConfig({ ...minimal, RELAY_RETENTION_DAYS: '0' }).retentionDays).toBe(0);
		expect(loadConfig({ ...minimal, RELAY_RETENTION_DAYS: '2' }).retentionDays).toBe(2);
		expect(errorOf({ ...minimal, RELAY_RETENTION_DAYS: '1' }).variables).toEqual([
			'RELAY_RETENTION_DAYS',
		]);
		expect(errorOf({ ...minimal, RELAY_RETENTION_DAYS: 'forever' }).variables).toEqual([
			'RELAY_RETENTION_DAYS',
		]);
		expect(errorOf({ ...minimal, RELAY_PAYMENT_TARGETS: '' }).variables).toEqual([
			'RELAY_PAYMENT_TARGETS',
		]);
		expect(errorOf({ ...minimal, PAYPALYCH_API_TOKEN: ' , ' }).variables).toEqual([
			'PAYPALYCH_API_TOKEN',
		]);
		// Checks across variables run once each variable is valid on its own.
		expect(
			errorOf({ ...minimal, RELAY_LEASE_MS: '500', RELAY_DELIVERY_TIMEOUT_MS: '1000' }).variables,
		).toEqual(['RELAY_LEASE_MS']);
		expect(
			errorOf({ ...minimal, RELAY_BASE_DELAY_MS: '5000', RELAY_MAX_DELAY_MS: '10' }).variables,
		).toEqual(['RELAY_MAX_DELAY_MS']);
	});

	it('reads the catch-up and alert settings, refusing a short interval, a long look-back and a target that is no URL', () => {
		const c = loadConfig(minimal);
		expect(c.catchup).toEqual({
			intervalS: 300,
			days: 3,
			maxCalls: 200,
			maxBytes: 64 * 1_048_576,
			billDays: 90,
			chargebackDays: 180,
			deepIntervalS: 21_600,
			apiBaseUrl: 'https://pal24.pro',
		});
		expect(c.alerts).toEqual({ targets: [], backlogS: 3600 });
		const set = loadConfig({
			...minimal,
			RELAY_CATCHUP_INTERVAL_S: '30',
			RELAY_CATCHUP_DAYS: '30',
			RELAY_CATCHUP_MAX_CALLS: '50',
			RELAY_CATCHUP_MAX_BYTES: '2097152',
			RELAY_CATCHUP_BILL_DAYS: '365',
			RELAY_CATCHUP_CHARGEBACK_DAYS: '730',
			RELAY_CATCHUP_DEEP_INTERVAL_S: '3600',
			PAYPALYCH_API_BASE_URL: 'http://127.0.0.1:9/',
			RELAY_ALLOW_PLAIN_HTTP_API: '1',
			RELAY_ALERT_TARGETS: 'http://n8n.local/webhook/alerts, https://chat.example/bot',
			RELAY_ALERT_BACKLOG_S: '600',
		});
		expect(set.catchup).toEqual({
			intervalS: 30,
			days: 30,
			maxCalls: 50,
			maxBytes: 2_097_152,
			billDays: 365,
			chargebackDays: 730,
			deepIntervalS: 3600,
			apiBaseUrl: 'http://127.0.0.1:9',
		});
		expect(set.alerts).toEqual({
			targets: ['http://n8n.local/webhook/alerts', 'https://chat.example/bot'],
			backlogS: 600,
		});
		expect(loadConfig({ ...minimal, RELAY_CATCHUP_INTERVAL_S: '0' }).catchup.intervalS).toBe(0);
		for (const [name, value] of [
			['RELAY_CATCHUP_INTERVAL_S', '1'],
			['RELAY_CATCHUP_INTERVAL_S', '29'],
			['RELAY_CATCHUP_BILL_DAYS', '366'],
			['RELAY_CATCHUP_BILL_DAYS', '0'],
			['RELAY_CATCHUP_CHARGEBACK_DAYS', '731'],
			['RELAY_CATCHUP_CHARGEBACK_DAYS', '0'],
			['RELAY_CATCHUP_DEEP_INTERVAL_S', '59'],
			['RELAY_CATCHUP_MAX_BYTES', '1048575'],
			['RELAY_CATCHUP_INTERVAL_S', 'soon'],
			['RELAY_CATCHUP_DAYS', '31'],
			['RELAY_CATCHUP_DAYS', '0'],
			['RELAY_ALERT_TARGETS', 'http://ok.example/a,not a url'],
			['RELAY_ALERT_TARGETS', 'ftp://files.example/x'],
			['PAYPALYCH_API_BASE_URL', 'pal24.pro'],
		]) {
			const error = errorOf({ ...minimal, [name]: value });
			expect(error.variables, `${name}=${value}`).toEqual([name]);
			expect(error.message).toContain(name);
		}
	});

	it('reads the statement settings with their defaults, refusing an unknown zone and a check that is too often or too rare', () => {
		expect(loadConfig(minimal).statement).toEqual({
			timeZone: 'Europe/Moscow',
			checkS: 60,
			maxCalls: 30_000,
			callsPerS: 0,
		});
		const set = loadConfig({
			...minimal,
			RELAY_STATEMENT_TIME_ZONE: 'UTC',
			RELAY_STATEMENT_CHECK_S: '0',
			RELAY_STATEMENT_MAX_CALLS: '500',
			RELAY_STATEMENT_CALLS_PER_S: '5',
		}).statement;
		expect(set).toEqual({ timeZone: 'UTC', checkS: 0, maxCalls: 500, callsPerS: 5 });
		for (const [name, value] of [
			['RELAY_STATEMENT_TIME_ZONE', 'Mars/Olympus'],
			['RELAY_STATEMENT_CHECK_S', '5'],
			['RELAY_STATEMENT_CHECK_S', '3601'],
			['RELAY_STATEMENT_MAX_CALLS', '9'],
		]) {
			const error = errorOf({ ...minimal, [name]: value });
			expect(error.variables, `${name}=${value}`).toEqual([name]);
		}
	});

	it('stops the real binary at start-up with a message naming the variable', () => {
		const run = spawnSync(NODE, [RELAY_BIN], {
			env: childEnv({
				RELAY_ADMIN_TOKEN: ADMIN_TOKEN,
				RELAY_PAYMENT_TARGETS: 'http://127.0.0.1:1/x',
			}),
			encoding: 'utf8',
			timeout: 15_000,
		});
		expect(run.status).toBe(2);
		expect(run.stderr).toContain('PAYPALYCH_API_TOKEN');
		expect(run.stderr).not.toContain(ADMIN_TOKEN);
	});

	it('refuses a variable one edit from one it reads (PROT, LOG_LEVL, port), naming the known one', () => {
		const error = errorOf({ ...minimal, PROT: '9000', LOG_LEVL: 'debug', port: '9001' });
		expect(error.variables).toEqual(['LOG_LEVL', 'PROT', 'port']);
		expect(error.message).toMatch(
			/PROT: unknown variable, one letter from the relay's PORT; did you mean PORT\?/,
		);
		expect(error.message).toMatch(/LOG_LEVL: .*did you mean LOG_LEVEL\?/);
		expect(error.message).toMatch(/port: .*did you mean PORT\?/);
		for (const typo of ['HOTS', 'HOSTS', 'LOGLEVEL', 'PORTS'])
			expect(errorOf({ ...minimal, [typo]: '1' }).variables).toEqual([typo]);
		// Every other program's variables pass, however close to each other they are.
		const machine = {
			HOME: '/home/x',
			HOSTNAME: 'box',
			PATH: '/usr/bin',
			PWD: '/',
			USER: 'relay',
			LANG: 'C.UTF-8',
			TZ: 'UTC',
			NODE_ENV: 'production',
			NODE_OPTIONS: '',
			TERM: 'xterm',
			SHELL: '/bin/sh',
			PGHOST: 'db',
			PGPORT: '5432',
			DATABASE_URL: 'postgres://x',
			KUBERNETES_PORT: 'tcp://10.0.0.1:443',
			KUBERNETES_SERVICE_HOST: '10.0.0.1',
			STATE_DIRECTORY: '/var/lib/paypalych-relay',
			INVOCATION_ID: 'x',
			JOURNAL_STREAM: '8:1',
		};
		expect(() =>
			loadConfig({ ...minimal, ...machine, PORT: '9000', LOG_LEVEL: 'warn' }),
		).not.toThrow();
	});

	it('stops the real binary at start-up on PROT, naming PORT', () => {
		const run = spawnSync(NODE, [RELAY_BIN], {
			env: { PATH: process.env.PATH ?? '', ...minimal, PROT: '9000' },
			encoding: 'utf8',
			timeout: 15_000,
		});
		expect(run.status).toBe(2);
		expect(run.stderr).toContain('PROT: unknown variable');
		expect(run.stderr).toContain('did you mean PORT?');
	});
});
