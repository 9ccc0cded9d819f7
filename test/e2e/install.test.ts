// Both packages as people install them: `npm pack` of each, installed with npm into an empty
// folder, then used the way the README says.
// - n8n-nodes-paypalych: `npm install` in an empty <user folder>/.n8n/nodes (the manual install
//   of the README), then a real n8n 2.41.1 loads it and runs a workflow with the action node
//   against the sandbox (`n8n execute`).
// - paypalych-relay: installed into an empty folder; its bin answers --help and --version and
//   refuses to start with a misspelt variable.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { N8n, nodeOutput } from '../../scripts/harness/n8n.ts';
import { ensureN8nInstalled, nodeBinary } from '../../scripts/harness/n8n-install.ts';
import { newMerchant, start, type Sandbox } from '../helpers/sandbox.ts';

const root = join(__dirname, '..', '..');
const PATH = `${dirname(nodeBinary())}:${process.env.PATH ?? ''}`;
const npm = (args: string[], cwd: string) =>
	execFileSync('npm', args, {
		cwd,
		encoding: 'utf8',
		env: { ...process.env, PATH },
		stdio: ['ignore', 'pipe', 'pipe'],
		timeout: 300_000,
	});
/** `npm pack` of the package in `dir` into `into`; the path of the tarball. */
const pack = (dir: string, into: string) => {
	const out = npm(['pack', '--json', '--ignore-scripts', '--pack-destination', into], dir);
	const [info] = JSON.parse(out.slice(out.indexOf('['))) as Array<{ filename: string }>;
	return join(into, info.filename);
};

let work: string;
let sandbox: Sandbox;
beforeAll(async () => {
	work = mkdtempSync(join(tmpdir(), 'paypalych-install-'));
	sandbox = await start();
	await ensureN8nInstalled();
});
afterAll(async () => {
	await sandbox?.close();
	if (work && !process.env.PAYPALYCH_E2E_KEEP) rmSync(work, { recursive: true, force: true });
});

describe('installed from the packed tarballs', () => {
	it('n8n-nodes-paypalych: npm install into an empty ~/.n8n/nodes, loaded by a real n8n, runs a workflow', async () => {
		const tarball = pack(root, work);
		const userFolder = join(work, 'n8n-user');
		const nodesDir = join(userFolder, '.n8n', 'nodes');
		mkdirSync(nodesDir, { recursive: true });
		// The README's manual install (n8n brings n8n-workflow itself: peers are left out).
		npm(['install', '--omit=peer', '--no-audit', '--no-fund', tarball], nodesDir);
		const installed = JSON.parse(
			readFileSync(join(nodesDir, 'node_modules', 'n8n-nodes-paypalych', 'package.json'), 'utf8'),
		) as { name: string };
		expect(installed.name).toBe('n8n-nodes-paypalych');

		const merchant = await newMerchant(sandbox);
		const n8n = new N8n({ userFolder });
		await n8n.importCredentials([
			{
				id: 'installCred01',
				name: 'PayPalych sandbox',
				type: 'payPalychApi',
				data: { apiToken: merchant.credential.apiToken, baseUrl: merchant.credential.baseUrl },
			},
		]);
		await n8n.importWorkflows([
			{
				id: 'installWf0001',
				name: 'Installed package',
				active: false,
				nodes: [
					{
						id: 'a0000000-0000-4000-8000-000000000001',
						name: 'Start',
						type: 'n8n-nodes-base.manualTrigger',
						typeVersion: 1,
						position: [0, 0],
						parameters: {},
					},
					{
						id: 'a0000000-0000-4000-8000-000000000002',
						name: 'Banks',
						type: 'n8n-nodes-paypalych.payPalych',
						typeVersion: 1,
						position: [200, 0],
						parameters: { resource: 'sbpBank', operation: 'getMany', returnAll: false, limit: 3 },
						credentials: { payPalychApi: { id: 'installCred01', name: 'PayPalych sandbox' } },
					},
				],
				connections: { Start: { main: [[{ node: 'Banks', type: 'main', index: 0 }]] } },
				settings: {},
			} as unknown as Parameters<N8n['importWorkflows']>[0][number],
		]);
		const run = await n8n.execute('installWf0001');
		const banks = nodeOutput(run, 'Banks');
		expect(banks).toHaveLength(3);
		for (const bank of banks) expect(bank).toHaveProperty('member_id');
	}, 600_000);

	it('paypalych-relay: installed into an empty folder, answers --help and --version, refuses a misspelt variable', () => {
		const tarball = pack(join(root, 'relay'), work);
		const app = join(work, 'relay-app');
		mkdirSync(app);
		npm(['install', '--no-audit', '--no-fund', tarball], app);
		const bin = join(app, 'node_modules', '.bin', 'paypalych-relay');
		const relay = (args: string[], env: Record<string, string> = {}) =>
			spawnSync(bin, args, { cwd: app, env: { PATH, ...env }, encoding: 'utf8', timeout: 60_000 });

		const help = relay(['--help']);
		expect(help.status).toBe(0);
		expect(help.stdout).toContain('Usage: paypalych-relay');
		expect(help.stdout).toMatch(/RELAY_DATABASE +.*\[default: \.relay-data\/relay\.sqlite\]/);
		expect(help.stdout).toMatch(/PAYPALYCH_API_TOKEN +.*\[required\]/);

		const version = relay(['--version']);
		const pkg = JSON.parse(
			readFileSync(join(app, 'node_modules', 'paypalych-relay', 'package.json'), 'utf8'),
		) as { version: string };
		expect(version.stdout).toBe(`${pkg.version}\n`);

		const misspelt = relay([], {
			PAYPALYCH_API_TOKEN: 'token-0123456789',
			RELAY_ADMIN_TOKEN: 'admin-token-0123456789',
			RELAY_PAYMENT_TARGETS: 'http://127.0.0.1:9/webhook/pay',
			RELAY_DATABSE: join(app, 'relay.sqlite'),
		});
		expect(misspelt.status).toBe(2);
		expect(misspelt.stderr).toContain(
			'RELAY_DATABSE: unknown variable; did you mean RELAY_DATABASE?',
		);
	}, 600_000);
});
