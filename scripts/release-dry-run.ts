/**
 * `npm run release:dry-run` (part of `npm test`): the release a maintainer runs and the publish
 * publish.yml runs, exercised as they run. Exits 1 on any failure.
 *
 * 1. `npm run release -- --ci <next version>` (RELEASE_ARGS: package.json's `release` script,
 *    .release-it.json and its hooks; `--ci` only answers the prompts) in a scratch git
 *    repository holding the files a release reads and writes. Its `origin` is a GitHub address
 *    that git redirects to a local bare repository, so everything runs for real: the release
 *    check, the bump of both packages, the dated CHANGELOG, the commit, the tag and the push.
 *    The scratch's package.json files name that scratch repository and a dry-run author (the
 *    release check refuses placeholders; the real values are checked in step 3). Checked: what
 *    the bare repository received (the tag, both versions, the CHANGELOG), that every hook of
 *    .release-it.json ran, and that publish.yml starts on the tag.
 * 2. `npm publish --dry-run` of the community package without RELEASE_MODE is refused
 *    (prepublishOnly: `n8n-node prerelease`): a stray publish from a laptop skips the workflow.
 * 3. `node scripts/publish.ts --dry-run` (PUBLISH_ARGS: what publish.yml runs, dry): the metadata
 *    check on the real package.json files (its findings are printed: a tag push stops there
 *    until they are fixed), both tarballs packed, the GitHub release it would make, and
 *    `npm publish --dry-run` of each package not on the registry yet.
 */
import { spawnSync } from 'node:child_process';
import {
	cpSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	readdirSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { versionSection, unreleasedEntries } from './changelog.ts';

/** How the dry run starts the release: `npm` with these arguments, then the version. */
export const RELEASE_ARGS = ['run', 'release', '--', '--ci'];
/** How the dry run starts the publish: `node` with these arguments (publish.yml: without --dry-run). */
export const PUBLISH_ARGS = ['scripts/publish.ts', '--dry-run'];
/** The files of the repository a release reads or writes (scripts/: its hooks). */
export const RELEASE_FILES = [
	'package.json',
	'package-lock.json',
	'.npmrc',
	'.gitignore',
	'.release-it.json',
	'CHANGELOG.md',
	'relay/package.json',
	'sandbox/package.json',
	'scripts',
];
const DRY_RUN_REPOSITORY = 'https://github.com/release-dry-run/n8n-nodes-paypalych';
const DRY_RUN_AUTHOR = {
	name: 'Release Dry Run',
	email: 'release-dry-run@users.noreply.github.com',
};

const root = join(import.meta.dirname, '..');
// Node 24 and this project's tools first, as `npm run` gives them.
const PATH = `${join(root, 'node_modules', '.bin')}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`;

/** A GitHub Actions tag filter (`*` is any run of characters but `/`) as a regular expression. */
export function tagFilter(glob: string): RegExp {
	const escaped = glob
		.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
		.replace(/\*\*?/g, (m) => (m === '**' ? '.*' : '[^/]*'));
	return new RegExp(`^${escaped}$`);
}

/** The next patch version of `version`. */
export function nextPatch(version: string): string {
	return version.replace(/(\d+)(\D*)$/, (_m, n: string) => String(Number(n) + 1));
}

function main(): void {
	const failures: string[] = [];
	const check = (ok: boolean, what: string) => {
		process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
		if (!ok) failures.push(what);
	};
	const run = (command: string, args: string[], cwd: string, env: Record<string, string> = {}) => {
		const base: NodeJS.ProcessEnv = { ...process.env, PATH, ...env };
		// RELEASE_MODE must come only from where it is set on purpose; no CI variables either.
		if (!('RELEASE_MODE' in env)) delete base.RELEASE_MODE;
		for (const name of [
			'GITHUB_ACTIONS',
			'GITHUB_REPOSITORY',
			'GITHUB_REF_NAME',
			'GITHUB_REF_TYPE',
		])
			delete base[name];
		return spawnSync(command, args, { cwd, env: base, encoding: 'utf8', timeout: 600_000 });
	};
	const json = <T>(dir: string, file: string) =>
		JSON.parse(readFileSync(join(dir, file), 'utf8')) as T;

	// 1. The release, for real, into a local bare repository.
	const pkg = json<{ name: string; version: string }>(root, 'package.json');
	const config = json<{ hooks: Record<string, string | string[]> }>(root, '.release-it.json');
	const workflow = parse(readFileSync(join(root, '.github/workflows/publish.yml'), 'utf8')) as {
		on: { push: { tags: string[] } };
	};
	const next = nextPatch(pkg.version);
	const scratch = mkdtempSync(join(tmpdir(), 'paypalych-release-'));
	try {
		const work = join(scratch, 'work');
		const bare = join(scratch, 'remote.git');
		for (const file of RELEASE_FILES)
			cpSync(join(root, file), join(work, file), {
				recursive: true,
				filter: (source) => !source.includes(`${join(root, 'scripts', 'harness')}`),
			});
		for (const file of ['package.json', 'relay/package.json']) {
			const manifest = json<Record<string, unknown>>(work, file);
			manifest.author = DRY_RUN_AUTHOR;
			manifest.repository = {
				type: 'git',
				url: `git+${DRY_RUN_REPOSITORY}.git`,
				...(file.startsWith('relay') ? { directory: 'relay' } : {}),
			};
			writeFileSync(join(work, file), `${JSON.stringify(manifest, null, '\t')}\n`);
		}
		const git = (...args: string[]) => {
			const out = run('git', args, work);
			if (out.status !== 0) throw new Error(`git ${args.join(' ')}: ${out.stderr}`);
			return out.stdout.trim();
		};
		mkdirSync(bare);
		run('git', ['init', '-q', '--bare', '-b', 'main'], bare);
		git('init', '-q', '-b', 'main');
		git('config', 'user.name', DRY_RUN_AUTHOR.name);
		git('config', 'user.email', DRY_RUN_AUTHOR.email);
		git('config', 'commit.gpgsign', 'false');
		git('config', 'tag.gpgsign', 'false');
		git('add', '.');
		git('commit', '-qm', 'The files a release reads and writes');
		git('remote', 'add', 'origin', `${DRY_RUN_REPOSITORY}.git`);
		git('config', `url.${bare}.insteadOf`, `${DRY_RUN_REPOSITORY}.git`);
		git('push', '-q', '-u', 'origin', 'main');

		const release = run('npm', [...RELEASE_ARGS, next], work);
		const output = `${release.stdout}${release.stderr}`;
		check(release.status === 0, `npm ${RELEASE_ARGS.join(' ')} ${next} (exit ${release.status})`);
		const remote = (...args: string[]) =>
			run('git', ['--git-dir', bare, ...args], work).stdout.trim();
		const tags = remote('tag', '--list');
		check(tags === `v${next}`, `the push brought tag v${next} (the remote has: ${tags || 'none'})`);
		check(
			workflow.on.push.tags.map(tagFilter).some((f) => f.test(`v${next}`)),
			`publish.yml starts on v${next} (filters ${workflow.on.push.tags.join(', ')})`,
		);
		const pushed = (file: string) => remote('show', `v${next}:${file}`);
		const version = (file: string) =>
			(JSON.parse(pushed(file) || '{}') as { version?: string }).version;
		check(version('package.json') === next, `n8n-nodes-paypalych is ${next} at the tag`);
		check(version('relay/package.json') === next, `paypalych-relay is ${next} at the tag`);
		const lock = JSON.parse(pushed('package-lock.json') || '{}') as {
			packages?: Record<string, { version?: string }>;
		};
		check(
			lock.packages?.['']?.version === next && lock.packages?.relay?.version === next,
			`package-lock.json names ${next} for both`,
		);
		const before = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
		const after = pushed('CHANGELOG.md');
		check(
			(versionSection(after, next) ?? '').includes(unreleasedEntries(before)[0] ?? '\0') &&
				unreleasedEntries(after).length === 0,
			`CHANGELOG.md: the Unreleased entries are dated ${next}, Unreleased is empty again`,
		);
		check(
			remote('log', '-1', '--format=%s', `v${next}`) === `Release v${next}`,
			'one release commit',
		);
		// Every hook ran and succeeded: release-it ticks each one (✔ <command>).
		const ticked = output.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '');
		for (const [event, commands] of Object.entries(config.hooks))
			for (const command of [commands].flat())
				check(
					ticked.includes(`✔ ${command.replace('${version}', next)}`),
					`hook ${event} ran and succeeded: ${command}`,
				);
		if (failures.length > 0 || process.env.RELEASE_DRY_RUN_VERBOSE) process.stdout.write(output);
	} finally {
		rmSync(scratch, { recursive: true, force: true });
	}

	// 2. A publish that skips the workflow is refused.
	const refused = run('npm', ['publish', '--dry-run'], root);
	check(
		refused.status !== 0 && `${refused.stdout}${refused.stderr}`.includes('npm run release'),
		'npm publish without RELEASE_MODE is refused (prepublishOnly: n8n-node prerelease)',
	);

	// 3. The publish, dry.
	const published = run('node', PUBLISH_ARGS, root);
	const publishOutput = `${published.stdout}${published.stderr}`;
	process.stdout.write(publishOutput.trimEnd().replace(/^/gm, '     ') + '\n');
	check(published.status === 0, `node ${PUBLISH_ARGS.join(' ')} (exit ${published.status})`);
	const assets = readdirSync(join(root, 'release-assets')).filter((f) => f.endsWith('.tgz'));
	check(
		['n8n-nodes-paypalych', 'paypalych-relay'].every(
			(name) => assets.includes(`${name}.tgz`) && assets.includes(`${name}-${pkg.version}.tgz`),
		),
		`both tarballs packed, with and without the version (${assets.join(', ')})`,
	);
	check(
		/would run: gh release create v\S+ /.test(publishOutput),
		'the GitHub release it would make',
	);
	rmSync(join(root, 'release-assets'), { recursive: true, force: true });

	if (failures.length > 0) {
		process.stdout.write(`\nrelease dry run: ${failures.length} failure(s)\n`);
		process.exit(1);
	}
	process.stdout.write('\nrelease dry run: the release and the publish run as they will\n');
}

if (import.meta.main) main();
