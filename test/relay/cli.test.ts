import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
	ConfigError,
	VARIABLES,
	loadConfig,
	suggestVariable,
	variableHelp,
} from '../../relay/src/config.ts';
import { ADMIN_TOKEN, NODE, RELAY_BIN, ROOT, TOKEN, tempDir } from './helpers.ts';

// The relay's command line as an operator meets it: --help, --version, a misspelt variable, a
// Node.js that is too old, a database or port that does not work.
const minimal = {
	PAYPALYCH_API_TOKEN: TOKEN,
	RELAY_ADMIN_TOKEN: ADMIN_TOKEN,
	RELAY_PAYMENT_TARGETS: 'http://127.0.0.1:9/webhook/pay',
};
const relayVersion = (
	JSON.parse(readFileSync(join(ROOT, 'relay', 'package.json'), 'utf8')) as { version: string }
).version;

const runRelay = (args: string[], env: Record<string, string>, node = NODE) =>
	spawnSync(node, [RELAY_BIN, ...args], {
		env: { PATH: process.env.PATH ?? '', ...env },
		encoding: 'utf8',
		timeout: 30_000,
	});

describe('paypalych-relay command line', () => {
	it('--help lists every variable of the schema, each with its description and its default', () => {
		const run = runRelay(['--help'], {});
		expect(run.status).toBe(0);
		expect(VARIABLES.length).toBeGreaterThan(20);
		const lines = run.stdout.split('\n');
		for (const v of variableHelp()) {
			expect(v.description, `${v.name} has no .describe() in relay/src/config.ts`).not.toBe('');
			const line = lines.find((l) => l.trimStart().startsWith(`${v.name} `));
			expect(line, v.name).toBeDefined();
			expect(line).toContain(v.description);
			expect(line).toContain(v.default === undefined ? '[required]' : `[default: ${v.default}]`);
		}
		// The defaults shown are the ones the relay applies.
		const applied = loadConfig(minimal);
		expect(run.stdout).toMatch(/PORT +port to listen on .*\[default: 8080\]/);
		expect(applied.port).toBe(8080);
		expect(run.stdout).toContain(`[default: ${applied.database}]`);
		expect(run.stdout).toMatch(/PAYPALYCH_API_TOKEN .*\[required\]/);
		expect(run.stdout).toMatch(/RELAY_ADMIN_TOKEN .*\[required\]/);
		expect(runRelay(['-h'], {}).stdout).toBe(run.stdout);
	});

	it('--version prints the package version', () => {
		const run = runRelay(['--version'], {});
		expect(run.status).toBe(0);
		expect(run.stdout).toBe(`${relayVersion}\n`);
	});

	it('refuses an unknown argument', () => {
		const run = runRelay(['--port=1'], minimal);
		expect(run.status).toBe(2);
		expect(run.stderr).toContain('unknown argument --port=1');
	});

	it('refuses a misspelt RELAY_* or PAYPALYCH_* variable with the name it resembles', () => {
		const run = runRelay([], { ...minimal, RELAY_DATABSE: '/tmp/should-not-be-used.sqlite' });
		expect(run.status).toBe(2);
		expect(run.stderr).toContain('RELAY_DATABSE: unknown variable; did you mean RELAY_DATABASE?');

		let error: unknown;
		try {
			loadConfig({ ...minimal, PAYPALYCH_API_TOKN: 'x', RELAY_COLOUR: 'blue', OTHER_VAR: '1' });
		} catch (e) {
			error = e;
		}
		expect(error).toBeInstanceOf(ConfigError);
		expect((error as ConfigError).variables).toEqual(['PAYPALYCH_API_TOKN', 'RELAY_COLOUR']);
		expect((error as ConfigError).message).toContain('did you mean PAYPALYCH_API_TOKEN?');
		expect((error as ConfigError).message).toContain(
			'RELAY_COLOUR: unknown variable (see paypalych-relay --help)',
		);
		expect(suggestVariable('relay_trust_proxy')).toBe('RELAY_TRUST_PROXY');
		expect(suggestVariable('RELAY_CONCURENCY')).toBe('RELAY_CONCURRENCY');
		// Every known variable is accepted as it is spelt.
		expect(() =>
			loadConfig({ ...minimal, RELAY_TRUST_PROXY: '1', RELAY_RETENTION_DAYS: '0' }),
		).not.toThrow();
	});

	it('says in one sentence that it needs Node.js 24 when started by an older Node.js', () => {
		const old = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
		const major = Number(/^v(\d+)/.exec(old.stdout ?? '')?.[1] ?? 'NaN');
		if (!(major < 24)) {
			// The check is exercised wherever an older Node.js is installed (this machine has Node 20).
			console.warn('no Node.js older than 24 at /usr/bin/node: the old-Node check is not run');
			return;
		}
		const run = runRelay(['--help'], minimal, '/usr/bin/node');
		expect(run.status).toBe(1);
		expect(run.stderr.trim()).toBe(
			`paypalych-relay: needs Node.js 24 or newer (this is Node.js ${old.stdout.trim().slice(1)}); install Node.js 24 and run it again.`,
		);
	});

	it('names RELAY_DATABASE when its PostgreSQL host does not resolve', () => {
		const run = runRelay([], {
			...minimal,
			RELAY_DATABASE: 'postgres://relay:secret-pw@no-such-host.invalid:5432/relay',
		});
		expect(run.status).toBe(1);
		expect(run.stderr).toContain(
			'paypalych-relay: cannot start: RELAY_DATABASE: cannot open the PostgreSQL store postgres://relay:***@no-such-host.invalid:5432/relay',
		);
		expect(run.stderr).toContain('ENOTFOUND');
		expect(run.stderr).not.toContain('secret-pw');
	});

	it('names PORT when the port is taken', async () => {
		const tmp = tempDir();
		const busy = createServer();
		await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
		const port = (busy.address() as { port: number }).port;
		try {
			const run = runRelay([], {
				...minimal,
				PORT: String(port),
				RELAY_DATABASE: join(tmp.dir, 'relay.sqlite'),
			});
			expect(run.status).toBe(1);
			expect(run.stderr).toContain(`cannot start: PORT: cannot listen on port ${port}`);
			expect(run.stderr).toContain('EADDRINUSE');
		} finally {
			busy.close();
			tmp.cleanup();
		}
	});
});
