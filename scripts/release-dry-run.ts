/**
 * `npm run release:dry-run` (part of `npm test`): the release as far as it can go without the
 * registry's write access.
 * 1. release-it, with this repository's .release-it.json, in a scratch clone of the version
 *    files: the tag it would make, which publish.yml's tag filter must start on.
 * 2. `npm publish --dry-run` of the community package: refused without RELEASE_MODE (a laptop's
 *    stray `npm publish` skips the workflow and its provenance), accepted with it, as the
 *    workflow's `npm run release` sets it.
 * 3. `npm publish --dry-run` of the relay workspace (its prepack builds it).
 * Needs `npm run build` first (the community package publishes dist/). Exits 1 on any failure.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';

const root = join(import.meta.dirname, '..');
const failures: string[] = [];
const check = (ok: boolean, what: string) => {
	process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
	if (!ok) failures.push(what);
};
// Node 24 and this project's tools first, as `npm run` gives them.
const PATH = `${join(root, 'node_modules', '.bin')}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`;
const run = (command: string, args: string[], cwd: string, env: Record<string, string> = {}) => {
	const base: NodeJS.ProcessEnv = { ...process.env, PATH, ...env };
	// RELEASE_MODE must come only from where this script sets it.
	if (!('RELEASE_MODE' in env)) delete base.RELEASE_MODE;
	return spawnSync(command, args, { cwd, env: base, encoding: 'utf8', timeout: 300_000 });
};
const json = <T>(file: string) => JSON.parse(readFileSync(join(root, file), 'utf8')) as T;

/** A GitHub Actions tag filter (`*` is any run of characters but `/`) as a regular expression. */
export function tagFilter(glob: string): RegExp {
	const escaped = glob
		.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
		.replace(/\*\*?/g, (m) => (m === '**' ? '.*' : '[^/]*'));
	return new RegExp(`^${escaped}$`);
}

// 1. The tag release-it makes, and the tags publish.yml starts on.
const pkg = json<{ name: string; version: string }>('package.json');
const relayPkg = json<{ name: string; version: string; private?: boolean }>('relay/package.json');
const workflow = parse(readFileSync(join(root, '.github/workflows/publish.yml'), 'utf8')) as {
	on: { push: { tags: string[] } };
};
const filters = workflow.on.push.tags.map(tagFilter);
const scratch = mkdtempSync(join(tmpdir(), 'paypalych-release-'));
try {
	writeFileSync(
		join(scratch, 'package.json'),
		JSON.stringify({ name: pkg.name, version: pkg.version, private: true }),
	);
	copyFileSync(join(root, '.release-it.json'), join(scratch, '.release-it.json'));
	mkdirSync(join(scratch, 'relay'));
	const git = (...args: string[]) => run('git', args, scratch);
	git('init', '-q', '-b', 'main');
	git('-c', 'user.name=dry run', '-c', 'user.email=dry@run.invalid', 'add', '.');
	git('-c', 'user.name=dry run', '-c', 'user.email=dry@run.invalid', 'commit', '-qm', 'start');
	const next = pkg.version.replace(/(\d+)(\D*)$/, (_m, n: string) => String(Number(n) + 1));
	const release = run(
		'release-it',
		[
			'--ci',
			'--dry-run',
			'--no-git.requireUpstream',
			'--git.pushRepo=https://github.com/example/example.git',
			'--npm.publish=false',
			'--npm.skipChecks',
			'--github.release=false',
			next,
		],
		scratch,
	);
	const output = `${release.stdout}${release.stderr}`;
	const tag = /git tag .* (\S+)\s*$/m.exec(output)?.[1];
	check(release.status === 0, `release-it dry run to ${next} (exit ${release.status})`);
	check(tag === `v${next}`, `release-it tags v${next} (it would tag ${tag ?? 'nothing'})`);
	check(
		tag !== undefined && filters.some((f) => f.test(tag)),
		`publish.yml starts on that tag (filters ${workflow.on.push.tags.join(', ')})`,
	);
	check(
		output.includes(`npm version ${next} --workspace relay`),
		'the release bumps the relay to the same version',
	);
	if (failures.length > 0) process.stdout.write(output);
} finally {
	rmSync(scratch, { recursive: true, force: true });
}
check(relayPkg.version === pkg.version, `both packages at one version (${pkg.version})`);
check(relayPkg.private !== true, 'paypalych-relay is not private');

// 2. The community package.
const refused = run('npm', ['publish', '--dry-run'], root);
check(
	refused.status !== 0 && `${refused.stdout}${refused.stderr}`.includes('npm run release'),
	'npm publish without RELEASE_MODE is refused (prepublishOnly: n8n-node prerelease)',
);
const published = run('npm', ['publish', '--dry-run', '--json'], root, { RELEASE_MODE: 'true' });
check(published.status === 0, `npm publish --dry-run of ${pkg.name} (exit ${published.status})`);
if (published.status === 0) {
	const result = JSON.parse(published.stdout) as Record<
		string,
		{ name: string; version: string; files: Array<{ path: string }> }
	>;
	const entry = result[pkg.name] ?? Object.values(result)[0];
	const files = entry.files.map((f) => f.path);
	check(entry.name === pkg.name && entry.version === pkg.version, `${entry.name}@${entry.version}`);
	for (const file of [
		'dist/nodes/PayPalych/PayPalych.node.js',
		'dist/nodes/PayPalychTrigger/PayPalychTrigger.node.js',
		'dist/credentials/PayPalychApi.credentials.js',
		'README.md',
		'LICENSE.md',
	])
		check(files.includes(file), `${pkg.name} ships ${file}`);
} else process.stdout.write(`${published.stdout}${published.stderr}`);

// 3. The relay.
const relay = run('npm', ['publish', '--dry-run', '--json', '--workspace', 'relay'], root);
check(relay.status === 0, `npm publish --dry-run of ${relayPkg.name} (exit ${relay.status})`);
if (relay.status === 0) {
	const out = JSON.parse(relay.stdout.slice(relay.stdout.indexOf('{'))) as Record<
		string,
		{ name: string; files: Array<{ path: string }> }
	>;
	const entry = out[relayPkg.name] ?? Object.values(out)[0];
	const files = entry.files.map((f) => f.path);
	check(entry.name === 'paypalych-relay', `published as ${entry.name}`);
	for (const file of ['dist/relay/src/bin.js', 'dist/relay/src/cli.js', 'LICENSE.md', 'README.md'])
		check(files.includes(file), `paypalych-relay ships ${file}`);
	check(!files.some((f) => f.endsWith('.ts')), 'paypalych-relay ships no TypeScript source');
} else process.stdout.write(`${relay.stdout}${relay.stderr}`);

if (failures.length > 0) {
	process.stdout.write(`\nrelease dry run: ${failures.length} failure(s)\n`);
	process.exit(1);
}
process.stdout.write('\nrelease dry run: everything a tag push would publish checks out\n');
