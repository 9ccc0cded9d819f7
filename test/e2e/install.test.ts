// Both packages as people install them today: from the tarballs publish.yml attaches to a GitHub
// release. `npm pack` of each is served from this machine at the release addresses GitHub uses
// (`releases/latest/download/<name>.tgz`, answered with a redirect to the versioned file, as
// GitHub does), and the install lines of the documentation run as they are written, with only
// the host replaced:
// - n8n-nodes-paypalych: the two lines of docs/merchant/install.md, *n8n on a server or a laptop*
//   (`~/.n8n/nodes` of a fresh HOME), then a real n8n (N8N_VERSION, 2.41.1 by default) loads it
//   and runs a workflow with the action node against the sandbox (`n8n execute`);
// - paypalych-relay: the npm line of relay/README.md, *Install on a server*, in an empty folder;
//   its bin answers --help and --version and refuses to start with a misspelt variable.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { N8n, nodeOutput } from '../../scripts/harness/n8n.ts';
import { run } from '../../scripts/harness/proc.ts';
import { ensureN8nInstalled, nodeBinary, packTarball } from '../../scripts/harness/n8n-install.ts';
import { newMerchant, start, type Sandbox } from '../helpers/sandbox.ts';

const root = join(__dirname, '..', '..');
const PATH = `${dirname(nodeBinary())}:${process.env.PATH ?? ''}`;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
	version: string;
	repository: { url: string };
};
/** `https://github.com/<owner>/<repository>`, from package.json. */
const REPOSITORY = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');

/** The lines of the first fenced block of `file` that contains `marker`, after `heading`. */
function documentedLines(file: string, heading: string, marker: string): string[] {
	const text = readFileSync(join(root, file), 'utf8');
	const after = text.slice(text.indexOf(heading));
	const block = [...after.matchAll(/```[a-z]*\n([\s\S]*?)```/g)]
		.map((m) => m[1])
		.find((b) => b.includes(marker));
	if (!block) throw new Error(`${file}: no code block with ${marker} after "${heading}"`);
	return block.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
}

let work: string;
let sandbox: Sandbox;
let github: Server;
let githubUrl: string;
const tarballs = new Map<string, string>();

beforeAll(async () => {
	work = mkdtempSync(join(tmpdir(), 'paypalych-install-'));
	sandbox = await start();
	for (const dir of [root, join(root, 'relay')]) {
		const file = await packTarball(work, dir);
		tarballs.set(file.split('/').pop() as string, file);
	}
	// GitHub's release downloads: `latest/download/<name>.tgz` redirects to the versioned asset.
	const owner = new URL(REPOSITORY).pathname;
	github = createServer((req, res) => {
		const path = req.url ?? '';
		const latest = new RegExp(`^${owner}/releases/latest/download/([\\w-]+)\\.tgz$`).exec(path);
		const versioned = new RegExp(`^${owner}/releases/download/v([\\d.]+)/([\\w.-]+\\.tgz)$`).exec(
			path,
		);
		if (latest) {
			res.writeHead(302, {
				location: `${owner}/releases/download/v${pkg.version}/${latest[1]}-${pkg.version}.tgz`,
			});
			res.end();
		} else if (versioned && versioned[1] === pkg.version && tarballs.has(versioned[2])) {
			const body = readFileSync(tarballs.get(versioned[2]) as string);
			res.writeHead(200, { 'content-type': 'application/octet-stream' });
			res.end(body);
		} else {
			res.writeHead(404);
			res.end('Not Found');
		}
	});
	await new Promise<void>((resolve) => github.listen(0, '127.0.0.1', resolve));
	githubUrl = `http://127.0.0.1:${(github.address() as AddressInfo).port}`;
	await ensureN8nInstalled();
});
afterAll(async () => {
	await sandbox?.close();
	await new Promise((resolve) => github?.close(resolve));
	if (work && !process.env.PAYPALYCH_E2E_KEEP) rmSync(work, { recursive: true, force: true });
});

/**
 * Runs documented shell lines with GitHub replaced by the local server. Asynchronously: the server
 * answering npm lives in this process.
 */
async function runDocumented(
	lines: string[],
	env: Record<string, string>,
	cwd: string,
): Promise<string> {
	const script = lines.map((line) => line.replaceAll('https://github.com', githubUrl)).join('\n');
	const result = await run('bash', ['-euo', 'pipefail', '-c', script], {
		cwd,
		env: { PATH, ...env },
		timeoutMs: 300_000,
	});
	if (result.code !== 0)
		throw new Error(`${script}\nfailed (exit ${result.code}):\n${result.stderr.slice(-3000)}`);
	return result.stdout;
}

describe('installed from the GitHub release tarballs, as the documentation says', () => {
	it('n8n-nodes-paypalych: the two lines of the install page into a fresh ~/.n8n/nodes, loaded by a real n8n, runs a workflow', async () => {
		const lines = documentedLines(
			'docs/merchant/install.md',
			'## n8n on a server or a laptop',
			'releases/latest/download/n8n-nodes-paypalych.tgz',
		);
		expect(lines).toEqual([
			'mkdir -p ~/.n8n/nodes && cd ~/.n8n/nodes',
			`npm install --omit=peer ${REPOSITORY}/releases/latest/download/n8n-nodes-paypalych.tgz`,
		]);
		const home = join(work, 'home');
		mkdirSync(home);
		await runDocumented(lines, { HOME: home }, work);
		const nodesDir = join(home, '.n8n', 'nodes');
		const installed = JSON.parse(
			readFileSync(join(nodesDir, 'node_modules', 'n8n-nodes-paypalych', 'package.json'), 'utf8'),
		) as { name: string; version: string };
		expect(installed).toMatchObject({ name: 'n8n-nodes-paypalych', version: pkg.version });
		expect(
			statSync(join(nodesDir, 'node_modules', 'n8n-workflow'), { throwIfNoEntry: false }),
		).toBe(undefined);

		const merchant = await newMerchant(sandbox);
		// N8N_USER_FOLDER is that HOME: n8n reads <HOME>/.n8n/nodes, where the lines installed it.
		const n8n = new N8n({ userFolder: home, installPackage: async () => undefined });
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

	it('every install line in the documentation uses that same address and flags', () => {
		const line = `npm install --omit=peer ${REPOSITORY}/releases/latest/download/n8n-nodes-paypalych.tgz`;
		for (const file of ['README.md', 'docs/merchant/install.md']) {
			const text = readFileSync(join(root, file), 'utf8');
			const installs = [...text.matchAll(/npm install[^\n'`]*n8n-nodes-paypalych\.tgz/g)].map(
				(m) => m[0],
			);
			expect(installs.length, file).toBeGreaterThan(0);
			for (const found of installs) expect(found, file).toBe(line);
		}
	});

	it('paypalych-relay: the npm line of the relay README in an empty folder; --help, --version, a misspelt variable', async () => {
		const [install] = documentedLines(
			'relay/README.md',
			'## Install on a server',
			'releases/latest/download/paypalych-relay.tgz',
		).filter((l) => l.includes('paypalych-relay.tgz'));
		const npmLine = /npm install [^#]*paypalych-relay\.tgz/.exec(install)?.[0] ?? '';
		expect(npmLine).toBe(
			`npm install --omit=dev ${REPOSITORY}/releases/latest/download/paypalych-relay.tgz`,
		);
		const app = join(work, 'relay-app');
		mkdirSync(app);
		// npm's cache and settings: those of the HOME the tests run with, said, not left to npm's
		// own look-up of the account's home folder.
		await runDocumented([npmLine], { HOME: homedir() }, app);
		const bin = join(app, 'node_modules', '.bin', 'paypalych-relay');
		const relay = (args: string[], env: Record<string, string> = {}) =>
			spawnSync(bin, args, {
				cwd: app,
				env: { PATH, HOME: app, ...env },
				encoding: 'utf8',
				timeout: 60_000,
			});

		const help = relay(['--help']);
		expect(help.status).toBe(0);
		expect(help.stdout).toContain('Usage: paypalych-relay');
		expect(help.stdout).toMatch(/PAYPALYCH_API_TOKEN +.*\[required\]/);
		// The default store is an absolute path (was .relay-data/relay.sqlite, relative).
		expect(help.stdout).toContain(
			`[default: ${join(app, '.local', 'state', 'paypalych-relay', 'relay.sqlite')}]`,
		);

		const version = relay(['--version']);
		const installed = JSON.parse(
			readFileSync(join(app, 'node_modules', 'paypalych-relay', 'package.json'), 'utf8'),
		) as { version: string };
		expect(version.stdout).toBe(`${installed.version}\n`);
		expect(installed.version).toBe(pkg.version);

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
