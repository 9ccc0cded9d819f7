/**
 * Where n8n comes from and how this package gets into it: the cached n8n install (run by
 * scripts/install-n8n.sh), the Node 24 that runs it, and installing the built package the way
 * merchants install a community package, under `<user folder>/.n8n/nodes/node_modules`, so its
 * node types are `n8n-nodes-paypalych.payPalych` and `n8n-nodes-paypalych.payPalychTrigger`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run, sleep } from './proc.ts';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const PACKAGE_NAME = 'n8n-nodes-paypalych';
/** The n8n `npm start` and `npm run test:e2e` run; N8N_VERSION picks another (1.123.81: test:e2e:n8n1). */
export const DEFAULT_N8N_VERSION = '2.41.1';
export const N8N_VERSION = process.env.N8N_VERSION ?? DEFAULT_N8N_VERSION;
export const NODE_TYPE = `${PACKAGE_NAME}.payPalych`;
export const TRIGGER_TYPE = `${PACKAGE_NAME}.payPalychTrigger`;

/** The folder holding cached tools: `$PAYPALYCH_CACHE` or `~/.cache/n8n-nodes-paypalych`. */
export function cacheRoot(): string {
	return process.env.PAYPALYCH_CACHE ?? join(homedir(), '.cache', PACKAGE_NAME);
}

export function n8nInstallDir(): string {
	return join(cacheRoot(), `n8n-${N8N_VERSION}`);
}

export function n8nBinScript(): string {
	return join(n8nInstallDir(), 'node_modules', 'n8n', 'bin', 'n8n');
}

/** Node 24: the running one when it is 24+, otherwise the one the project brings. */
export function nodeBinary(): string {
	const major = Number(process.versions.node.split('.')[0]);
	if (major >= 24) return process.execPath;
	const local = join(REPO_ROOT, 'node_modules', '.bin', 'node');
	if (existsSync(local)) return local;
	throw new Error(
		`Node 24 is required (running ${process.versions.node}); run through npm so node_modules/.bin comes first`,
	);
}

/**
 * The Node that runs the installed n8n: for n8n 1.x, the Node 22 scripts/install-n8n.sh links as
 * `n8n-<version>/node`; for 2.x (no link), the project's Node 24.
 */
export function n8nNodeBinary(): string {
	const linked = join(n8nInstallDir(), 'node');
	return existsSync(linked) ? linked : nodeBinary();
}

/** The n8n line installed: 1 or 2 (what the CLI and the editor call publishing differs). */
export function n8nMajor(): number {
	return Number(N8N_VERSION.split('.')[0]);
}

export function isN8nInstalled(): boolean {
	return existsSync(join(n8nInstallDir(), '.installed')) && existsSync(n8nBinScript());
}

/**
 * Makes sure n8n is installed, running scripts/install-n8n.sh (with its progress on the terminal)
 * the first time on a machine. Later calls return at once. Whether it installed n8n now.
 */
export async function ensureN8nInstalled(
	print: (line: string) => void = (l) => process.stdout.write(l + '\n'),
): Promise<boolean> {
	if (isN8nInstalled()) return false;
	print(
		`n8n ${N8N_VERSION} is not installed yet: installing it once into ${n8nInstallDir()} (about 4 minutes, 3 GB)`,
	);
	const binDir = dirname(nodeBinary());
	const code = await new Promise<number>((resolvePromise, reject) => {
		const child = spawn('bash', [join(REPO_ROOT, 'scripts', 'install-n8n.sh')], {
			cwd: REPO_ROOT,
			stdio: ['ignore', 'inherit', 'inherit'],
			env: {
				...process.env,
				PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${binDir}:${process.env.PATH ?? ''}`,
				N8N_VERSION,
			},
		});
		child.on('error', reject);
		child.on('exit', (c) => resolvePromise(c ?? 1));
	});
	if (code !== 0 || !isN8nInstalled()) {
		throw new Error(`installing n8n failed (exit ${code}); rerun it with: npm run n8n:install`);
	}
	return true;
}

/** Files the built package must contain (the `n8n` section of package.json). */
function packageEntryFiles(): string[] {
	const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
		n8n: { nodes: string[]; credentials: string[] };
	};
	return [...manifest.n8n.nodes, ...manifest.n8n.credentials];
}

/** npm with this project's Node first (the npm running this process when there is one). */
async function npm(args: string[], cwd: string, timeoutMs = 300_000): Promise<string> {
	const npmCli =
		process.env.npm_execpath && process.env.npm_execpath.endsWith('.js')
			? process.env.npm_execpath
			: undefined;
	const result = npmCli
		? await run(nodeBinary(), [npmCli, ...args], { cwd, timeoutMs })
		: await run('npm', args, {
				cwd,
				timeoutMs,
				env: { PATH: `${dirname(nodeBinary())}:${process.env.PATH ?? ''}` },
			});
	if (result.code !== 0)
		throw new Error(
			`npm ${args.join(' ')} failed (exit ${result.code}): ${result.stderr.slice(-2000)}`,
		);
	return result.stdout;
}

/** `npm pack` of the package in `dir` (this repository by default) into `into`: the tarball's path. */
export async function packTarball(into: string, dir = REPO_ROOT): Promise<string> {
	const out = await npm(['pack', '--json', '--ignore-scripts', '--pack-destination', into], dir);
	const [info] = JSON.parse(out.slice(out.indexOf('['))) as Array<{ filename: string }>;
	return join(into, info.filename);
}

/**
 * Installs a packed package (a tarball's path or URL) into `<dataFolder>/nodes` with the line the
 * install page gives merchants (docs/merchant/install.md): `npm install --omit=peer <tarball>` in
 * an empty nodes folder (n8n brings n8n-workflow itself).
 */
export async function installTarball(dataFolder: string, tarball: string): Promise<string> {
	const nodesDir = join(dataFolder, 'nodes');
	mkdirSync(nodesDir, { recursive: true });
	await npm(['install', '--omit=peer', '--no-audit', '--no-fund', tarball], nodesDir);
	return join(nodesDir, 'node_modules', PACKAGE_NAME);
}

/**
 * Installs the built package into `<dataFolder>/nodes/node_modules/n8n-nodes-paypalych` exactly as
 * n8n's community-package installer does: the `npm pack` tarball (only what package.json's
 * `files` ships), unpacked, with dev/peer/optional dependencies removed from its package.json,
 * and recorded in `<dataFolder>/nodes/package.json`. A copy, not a link: a rebuild of dist/ in
 * the working tree does not change a running n8n.
 */
export async function installPackage(dataFolder: string): Promise<string> {
	const nodesDir = join(dataFolder, 'nodes');
	const target = join(nodesDir, 'node_modules', PACKAGE_NAME);
	const entries = packageEntryFiles();
	let lastProblem = '';
	for (let attempt = 1; attempt <= 20; attempt++) {
		const missing = entries.filter((f) => !existsSync(join(REPO_ROOT, f)));
		if (missing.length > 0) {
			lastProblem = `dist/ lacks ${missing.join(', ')} (run npm run build)`;
			await sleep(1_500);
			continue;
		}
		const packDir = mkdtempSync(join(tmpdir(), 'paypalych-pack-'));
		try {
			const tarball = await packTarball(packDir);
			rmSync(target, { recursive: true, force: true });
			mkdirSync(target, { recursive: true });
			const untar = await run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
			if (untar.code !== 0) throw new Error(`unpacking the package failed: ${untar.stderr}`);
			const stillMissing = entries.filter((f) => !existsSync(join(target, f)));
			if (stillMissing.length > 0) {
				// dist/ was being rebuilt while npm packed it: try again.
				lastProblem = `the packed package lacks ${stillMissing.join(', ')}`;
				await sleep(1_500);
				continue;
			}
			const manifestFile = join(target, 'package.json');
			const {
				devDependencies: _dev,
				peerDependencies: _peer,
				optionalDependencies: _optional,
				...manifest
			} = JSON.parse(readFileSync(manifestFile, 'utf8')) as Record<string, unknown>;
			const version = String(manifest.version);
			writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
			writeFileSync(
				join(nodesDir, 'package.json'),
				JSON.stringify(
					{
						name: 'installed-nodes',
						private: true,
						dependencies: { [PACKAGE_NAME]: version },
					},
					null,
					2,
				) + '\n',
			);
			return target;
		} finally {
			rmSync(packDir, { recursive: true, force: true });
		}
	}
	throw new Error(`could not install the package into n8n: ${lastProblem}`);
}
