import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
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
import { ADMIN_TOKEN, NODE, RELAY_BIN, ROOT, TOKEN, childEnv, tempDir } from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

// The relay's command line as an operator meets it: --help, --version, a misspelt variable, a
// Node.js that is too old, a database or port that does not work.
const minimal = {
	PAYPALYCH_API_TOKEN: TOKEN,
	RELAY_ADMIN_TOKEN: ADMIN_TOKEN,
	RELAY_PAYMENT_TARGETS: 'http://127.0.0.1:9/webhook/pay',
	// No balance snapshot at start: it would call the real service with a made-up token.
	RELAY_STATEMENT_CHECK_S: '0',
};
const relayVersion = (
	JSON.parse(readFileSync(join(ROOT, 'relay', 'package.json'), 'utf8')) as { version: string }
).version;

const runRelay = (args: string[], env: Record<string, string>, node = NODE) =>
	spawnSync(node, [RELAY_BIN, ...args], {
		env: childEnv(env),
		encoding: 'utf8',
		timeout: 30_000,
	});

describe('paypalych-relay command line', () => {
	it('--help lists every variable of the schema, each with its description and its default', () => {
		const run = runRelay(['--help'], {});
		expect(run.status).toBe(0);
		expect(VARIABLES.length).toBeGreaterThan(20);
		const lines = run.stdout.split('\n');
		// The child's environment (childEnv): its defaults are read from the same HOME.
		const childSees = childEnv();
		for (const v of variableHelp(childSees)) {
			expect(v.description, `${v.name} has no .describe() in relay/src/config.ts`).not.toBe('');
			const line = lines.find((l) => l.trimStart().startsWith(`${v.name} `));
			expect(line, v.name).toBeDefined();
			expect(line).toContain(v.description);
			const marks = [v.required, v.default === undefined ? undefined : `default: ${v.default}`];
			expect(line).toContain(`[${marks.filter(Boolean).join('; ')}]`);
		}
		// The defaults shown are the ones the relay applies.
		const applied = loadConfig({ ...minimal, HOME: childSees.HOME });
		expect(run.stdout).toMatch(/PORT +port to listen on .*\[default: 8080\]/);
		expect(applied.port).toBe(8080);
		expect(run.stdout).toContain(`[default: ${applied.database}]`);
		expect(run.stdout).toMatch(/PAYPALYCH_API_TOKEN .*\[required\]/);
		expect(run.stdout).toMatch(/RELAY_ADMIN_TOKEN .*\[required\]/);
		// What must be set, marked on each variable and said once at the top.
		for (const list of ['RELAY_PAYMENT_TARGETS', 'RELAY_FAIL_TARGETS'])
			expect(run.stdout).toMatch(
				new RegExp(
					`${list} .*\\[at least one of the five \\*_TARGETS lists is required; default: \\(none\\)\\]`,
				),
			);
		expect(run.stdout).toContain(
			'Required: PAYPALYCH_API_TOKEN, RELAY_ADMIN_TOKEN, and at least one of RELAY_PAYMENT_TARGETS, RELAY_PAYOUT_TARGETS, RELAY_REDIRECT_TARGETS, RELAY_SUCCESS_TARGETS, RELAY_FAIL_TARGETS.',
		);
		// The default database is an absolute path (here: under the HOME the relay ran with).
		expect(applied.database).toMatch(/^\/.*\/paypalych-relay\/relay\.sqlite$/);
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

	it('says that it needs Node.js 24 when started by an older Node.js, and how to get it', () => {
		const old = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
		const major = Number(/^v(\d+)/.exec(old.stdout ?? '')?.[1] ?? 'NaN');
		if (!(major < 24)) {
			// The check is exercised wherever an older Node.js is installed (this machine has Node 20).
			console.warn('no Node.js older than 24 at /usr/bin/node: the old-Node check is not run');
			return;
		}
		const run = runRelay(['--help'], minimal, '/usr/bin/node');
		expect(run.status).toBe(1);
		// The version, the Node that ran it, and how to get Node 24 where Node is usually too old.
		const [first, ...fix] = run.stderr.trim().split('\n');
		expect(first).toBe(
			`paypalych-relay: needs Node.js 24 or newer, and this is Node.js ${old.stdout.trim().slice(1)} (/usr/bin/node).`,
		);
		expect(fix.join('\n')).toContain(
			'curl -fsSL https://deb.nodesource.com/setup_24.x | sudo bash -',
		);
		expect(fix.join('\n')).toContain('sudo apt-get install -y nodejs');
		expect(fix.join('\n')).toContain('ExecStart');
	});

	it('makes its default SQLite store at an absolute path, folder 0700 and file 0600, and logs where', async () => {
		const tmp = tempDir();
		const relay = spawn(NODE, [RELAY_BIN], {
			env: childEnv({ HOME: tmp.dir, PORT: '0', ...minimal }),
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		try {
			let log = '';
			relay.stdout.on('data', (chunk: Buffer) => (log += chunk.toString()));
			relay.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
			await waitFor('the relay to listen', () =>
				log.includes('relay listening') ? true : undefined,
			);
			const folder = join(tmp.dir, '.local', 'state', 'paypalych-relay');
			const file = join(folder, 'relay.sqlite');
			const listening = log
				.split('\n')
				.map((line) => (line.startsWith('{') ? (JSON.parse(line) as Record<string, unknown>) : {}))
				.find((entry) => entry.msg === 'relay listening');
			expect(listening?.database).toBe(file);
			expect(log).toContain('made the SQLite store');
			expect((statSync(folder).mode & 0o777).toString(8)).toBe('700');
			expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
			for (const journal of ['-wal', '-shm'])
				expect((statSync(`${file}${journal}`).mode & 0o777).toString(8), journal).toBe('600');
		} finally {
			relay.kill('SIGTERM');
			await new Promise((resolve) => relay.once('exit', resolve));
			tmp.cleanup();
		}
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
