/**
 * Publishes a release: what publish.yml runs on a version tag, after the build, the lint and the
 * service-free tests. `npm run release:dry-run` runs it with `--dry-run` (nothing is uploaded or
 * published; every command is shown or run dry).
 *
 * 1. Checks: the tag is v<version> of both packages (on a tag), and the package metadata
 *    (scripts/release-check.ts): author and repository not placeholders, repository the one the
 *    workflow runs in. Any problem stops it, naming every field (a dry run reports them and goes
 *    on, to show the rest).
 * 2. Packs both packages (`npm pack`) into release-assets/: `<name>-<version>.tgz`, and a copy
 *    under a name without the version (`<name>.tgz`) for the `releases/latest/download/` address
 *    docs/merchant/install.md gives.
 * 3. The GitHub release of the tag, with the four tarballs attached (`gh`, with the workflow's
 *    GITHUB_TOKEN): made when missing, its tarballs replaced when it exists (a re-run).
 * 4. Each package that is not on the npm registry at this version yet is published from its
 *    tarball (the file attached to the release) with a provenance statement; one that is already
 *    there is left alone. A re-run of the tag therefore finishes whatever a failed run left.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { versionSection } from './changelog.ts';
import { PACKAGE_FILES, ROOT, packageProblems, readManifest, report } from './release-check.ts';

export const ASSETS_DIR = 'release-assets';

interface Options {
	dryRun: boolean;
	/** The GitHub repository (`owner/name`) and tag the workflow runs for (GitHub sets both). */
	repository?: string;
	tag?: string;
	root?: string;
	log?: (line: string) => void;
}

function run(
	command: string,
	args: string[],
	cwd: string,
	env: Record<string, string> = {},
): SpawnSyncReturns<string> {
	return spawnSync(command, args, {
		cwd,
		// This Node first (scripts run through npm or by publish.yml's Node 24).
		env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, ...env },
		encoding: 'utf8',
		timeout: 600_000,
	});
}

/** Whether `name@version` is on the registry (E404 means it is not; other failures stop). */
export function isPublished(name: string, version: string, cwd = ROOT): boolean {
	const view = run('npm', ['view', `${name}@${version}`, 'version', '--json'], cwd);
	if (view.status === 0) return view.stdout.trim() !== '';
	if (/E404|404 Not Found/.test(view.stderr)) return false;
	throw new Error(`npm view ${name}@${version} failed: ${view.stderr.slice(-500)}`);
}

/** The release notes: the CHANGELOG section of this version and the install lines. */
export function releaseNotes(changelog: string, version: string, repository: string): string {
	const base = `https://github.com/${repository}/releases/download/v${version}`;
	return [
		versionSection(changelog, version) ?? '',
		'',
		'### Install this release',
		'',
		"In n8n's user folder (`~/.n8n/nodes`; `/home/node/.n8n/nodes` in Docker), then restart n8n:",
		'```',
		`npm install --omit=peer ${base}/n8n-nodes-paypalych-${version}.tgz`,
		'```',
		'The relay (Node 24):',
		'```',
		`npm install -g ${base}/paypalych-relay-${version}.tgz`,
		'```',
	].join('\n');
}

export function publish(options: Options): number {
	const root = options.root ?? ROOT;
	const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
	const manifests = PACKAGE_FILES.map((file) => ({
		file,
		manifest: readManifest(file, root),
		dir: dirname(join(root, file)),
	}));
	const version = manifests[0].manifest.version;
	if (!options.dryRun && (!options.repository || !options.tag)) {
		log(
			'publish runs in publish.yml on a version tag (GITHUB_REPOSITORY, GITHUB_REF_NAME); here: --dry-run',
		);
		return 2;
	}

	// 1. Checks.
	const problems = packageProblems(
		root,
		options.repository ? `https://github.com/${options.repository}` : undefined,
	);
	if (options.tag !== undefined && options.tag !== `v${version}`)
		problems.push(`tag ${options.tag} is not v${version}, the version of both packages`);
	if (problems.length > 0) {
		report(problems, options.dryRun ? 'a real publish (this is a dry run: going on)' : 'publish');
		if (!options.dryRun) return 1;
	}

	// 2. The tarballs.
	const assets = join(root, ASSETS_DIR);
	rmSync(assets, { recursive: true, force: true });
	mkdirSync(assets);
	const tarballs: Array<{ name: string; file: string }> = [];
	for (const { manifest, dir } of manifests) {
		const packed = run('npm', ['pack', '--json', '--pack-destination', assets], dir);
		if (packed.status !== 0) {
			log(`npm pack of ${manifest.name} failed:\n${packed.stderr.slice(-2000)}`);
			return 1;
		}
		const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{
			filename: string;
		}>;
		const file = join(assets, info.filename);
		copyFileSync(file, join(assets, `${manifest.name}.tgz`));
		tarballs.push({ name: manifest.name, file });
		log(`packed ${info.filename} (and ${manifest.name}.tgz)`);
	}
	const files = tarballs.flatMap(({ name, file }) => [file, join(assets, `${name}.tgz`)]);

	// 3. The GitHub release with the tarballs.
	const tag = options.tag ?? `v${version}`;
	const repository = options.repository ?? 'OWNER/REPOSITORY';
	const notes = join(assets, 'notes.md');
	writeFileSync(
		notes,
		releaseNotes(readFileSync(join(root, 'CHANGELOG.md'), 'utf8'), version, repository),
	);
	const exists = !options.dryRun && run('gh', ['release', 'view', tag], root).status === 0;
	const gh = exists
		? ['release', 'upload', tag, ...files, '--clobber']
		: ['release', 'create', tag, ...files, '--title', tag, '--notes-file', notes, '--verify-tag'];
	if (options.dryRun) log(`would run: gh ${gh.map((a) => a.replace(`${root}/`, '')).join(' ')}`);
	else {
		const release = run('gh', gh, root);
		if (release.status !== 0) {
			log(`gh ${gh[1]} failed:\n${release.stderr.slice(-2000)}`);
			return 1;
		}
		log(
			`GitHub release ${tag}: ${exists ? 'tarballs replaced' : 'made'} with ${files.length} tarballs`,
		);
	}

	// 4. npm, each package once.
	for (const { name, file } of tarballs) {
		if (isPublished(name, version, root)) {
			log(`${name}@${version} is on the registry already: left alone`);
			continue;
		}
		const args = ['publish', file, '--access', 'public'];
		args.push(options.dryRun ? '--dry-run' : '--provenance');
		const published = run('npm', args, root, { RELEASE_MODE: 'true' });
		if (published.status !== 0) {
			log(`npm ${args.join(' ')} failed:\n${published.stderr.slice(-2000)}`);
			return 1;
		}
		log(
			`${options.dryRun ? 'would publish' : 'published'} ${name}@${version} (npm ${args.join(' ').replace(`${root}/`, '')})`,
		);
	}
	return 0;
}

if (import.meta.main) {
	const dryRun = process.argv.includes('--dry-run');
	const onTag = process.env.GITHUB_REF_TYPE === 'tag';
	process.exit(
		publish({
			dryRun,
			repository: process.env.GITHUB_REPOSITORY,
			tag: onTag ? process.env.GITHUB_REF_NAME : undefined,
		}),
	);
}
