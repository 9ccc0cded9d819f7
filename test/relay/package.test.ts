import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
	ADMIN_TOKEN,
	NODE,
	ROOT,
	Target,
	baseEnv,
	form,
	paymentFields,
	spawnRelay,
	stopRelays,
	tempDir,
} from './helpers.ts';
import type { RelayProcess } from './helpers.ts';
import { waitFor } from '../../scripts/harness/wait.ts';

// The installable relay: `npm pack` of relay/ installed into an empty folder, its bin started
// from there. The relay's own dependencies come from the registry. npm runs under the project's
// Node 24. The pack skips the prepack build (`--ignore-scripts`): other test files run the
// compiled relay at the same time, and `npm run build` has built it before the tests.
const PATH = `${dirname(NODE)}:${process.env.PATH ?? ''}`;
const npm = (args: string[], cwd: string) =>
	execFileSync('npm', args, {
		cwd,
		encoding: 'utf8',
		env: { ...process.env, PATH },
		stdio: ['ignore', 'pipe', 'pipe'],
		timeout: 300_000,
	});

describe('the relay package', () => {
	it('reads the wire contract only through src/contract.ts: no file of relay/src imports a build output', () => {
		const sources = (
			readdirSync(join(ROOT, 'relay', 'src'), { recursive: true }) as string[]
		).filter((file) => file.endsWith('.ts'));
		expect(sources.length).toBeGreaterThan(20);
		const offenders = sources.filter((file) =>
			/from '[^']*dist\//.test(readFileSync(join(ROOT, 'relay', 'src', file), 'utf8')),
		);
		expect(offenders).toEqual([]);
	});

	const tmp = tempDir();
	const target = new Target();
	let relay: RelayProcess | undefined;

	afterAll(async () => {
		await stopRelays(relay ? [relay] : [], 'SIGKILL');
		await target.close();
		tmp.cleanup();
	});

	it('packs compiled JavaScript with the contract, installs into an empty folder and runs as paypalych-relay', async () => {
		const packed = JSON.parse(
			npm(
				['pack', '--json', '--ignore-scripts', '--pack-destination', tmp.dir],
				join(ROOT, 'relay'),
			),
		) as Array<{
			filename: string;
			files: Array<{ path: string }>;
		}>;
		const files = packed[0].files.map((f) => f.path);
		for (const file of [
			'package.json',
			'README.md',
			'deploy/paypalych-relay.service',
			'dist/relay/src/bin.js',
			'dist/nodes/shared/index.js',
			'dist/nodes/package.json',
		]) {
			expect(files, file).toContain(file);
		}
		for (const file of files) {
			expect(file).not.toMatch(/\.ts$/);
			expect(file).not.toMatch(/^(src|bench|scripts)\/|^dist\/relay\/bench\//);
		}

		const app = join(tmp.dir, 'app');
		mkdirSync(app);
		npm(['install', '--no-audit', '--no-fund', join(tmp.dir, packed[0].filename)], app);
		const installed = join(app, 'node_modules', 'paypalych-relay');
		const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
			version: string;
		};
		// The bin is the packed copy, not a link into this checkout.
		expect(realpathSync(join(app, 'node_modules', '.bin', 'paypalych-relay'))).toBe(
			join(realpathSync(installed), 'dist/relay/src/bin.js'),
		);

		await target.listen();
		const data = join(tmp.dir, 'data');
		relay = await spawnRelay(
			{ ...baseEnv(data, { payment: [target.url('/n8n/pay')] }), PATH },
			{ command: join(app, 'node_modules', '.bin', 'paypalych-relay'), args: [], cwd: app },
		);
		expect((await fetch(`${relay.url}/healthz`)).status).toBe(200);
		const body = form(paymentFields('T-installed'));
		const res = await fetch(`${relay.url}/postback/payment`, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body,
		});
		expect(res.status).toBe(200);
		await waitFor('the postback forwarded', () => target.received.length === 1);
		expect(target.received[0].body).toBe(body);
		expect(target.received[0].headers['x-paypalych-event']).toBe('payment');
		const events = await fetch(`${relay.url}/admin/events`, {
			headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
		});
		expect(
			((await events.json()) as { data: Array<{ fields: { TrsId: string } }> }).data.map(
				(e) => e.fields.TrsId,
			),
		).toEqual(['T-installed']);
		const metrics = await (await fetch(`${relay.url}/metrics`)).text();
		const nodeVersion = execFileSync(NODE, ['--version'], { encoding: 'utf8' }).trim();
		expect(metrics).toContain(
			`paypalych_relay_build_info{version="${pkg.version}",node_version="${nodeVersion}",store="sqlite"} 1`,
		);

		relay.proc.kill('SIGTERM');
		expect(await relay.exited).toBe(0);
	}, 300_000);
});
