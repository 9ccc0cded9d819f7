/**
 * What must hold before a release starts (`npm run release`'s first hook, .release-it.json) and
 * before anything is published (scripts/publish.ts, run by publish.yml on the tag):
 * - the fields npm's provenance and n8n's verification read name real people and places: each
 *   package's `author` and `repository` are set and are not placeholders (an `.invalid` or
 *   `example.com` address, "TODO", "your name"...), and `repository` is the GitHub repository the
 *   release is pushed to (npm refuses a provenance statement from another repository);
 * - both packages carry one version;
 * - before a release: CHANGELOG.md has entries under Unreleased (the release dates them).
 * Every problem is named in one message; exit 1 when there is any.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { unreleasedEntries } from './changelog.ts';

export const ROOT = join(import.meta.dirname, '..');
export const PACKAGE_FILES = ['package.json', 'relay/package.json'] as const;

export interface Manifest {
	name: string;
	version: string;
	author?: string | { name?: string; email?: string; url?: string };
	repository?: string | { url?: string };
}

const PLACEHOLDER =
	/\.invalid\b|\bexample\.(com|org|net)\b|\blocalhost\b|\bTODO\b|\bFIXME\b|\bchangeme\b|\bplaceholder\b|your[ -]?(name|email|org)|\bacme\b/i;

export function readManifest(file: string, root = ROOT): Manifest {
	return JSON.parse(readFileSync(join(root, file), 'utf8')) as Manifest;
}

/** `git+https://github.com/a/b.git`, `git@github.com:a/b.git`, ... as `https://github.com/a/b`. */
export function normalizeRepository(url: string): string {
	return url
		.trim()
		.replace(/^git\+/, '')
		.replace(/^git@github\.com:/, 'https://github.com/')
		.replace(/^(ssh|git):\/\/(git@)?github\.com\//, 'https://github.com/')
		.replace(/\.git$/, '')
		.replace(/\/+$/, '')
		.toLowerCase();
}

function authorText(author: Manifest['author']): string {
	if (author === undefined) return '';
	if (typeof author === 'string') return author;
	return [author.name, author.email && `<${author.email}>`, author.url && `(${author.url})`]
		.filter(Boolean)
		.join(' ');
}

/**
 * The problems of one package.json's `author` and `repository`, each naming the file, the field
 * and its value. `repository`: the GitHub repository the release is pushed to, when known.
 */
export function metadataProblems(file: string, manifest: Manifest, repository?: string): string[] {
	const problems: string[] = [];
	const author = authorText(manifest.author);
	if (!author.trim()) problems.push(`${file} author: not set`);
	else if (PLACEHOLDER.test(author)) problems.push(`${file} author: "${author}" is a placeholder`);
	const url =
		typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url;
	if (!url) problems.push(`${file} repository.url: not set`);
	else if (PLACEHOLDER.test(url))
		problems.push(`${file} repository.url: "${url}" is a placeholder`);
	else if (!normalizeRepository(url).startsWith('https://github.com/'))
		problems.push(
			`${file} repository.url: "${url}" is not a GitHub repository (publish.yml runs on GitHub)`,
		);
	else if (repository && normalizeRepository(url) !== normalizeRepository(repository))
		problems.push(
			`${file} repository.url: "${url}" is not ${normalizeRepository(repository)}, the repository the release is pushed to (npm refuses provenance from another repository)`,
		);
	return problems;
}

/** Both packages: metadata, and one version between them. */
export function packageProblems(root = ROOT, repository?: string): string[] {
	const manifests = PACKAGE_FILES.map((file) => ({ file, manifest: readManifest(file, root) }));
	const problems = manifests.flatMap(({ file, manifest }) =>
		metadataProblems(file, manifest, repository),
	);
	const versions = new Set(manifests.map(({ manifest }) => manifest.version));
	if (versions.size > 1)
		problems.push(
			`versions differ: ${manifests.map(({ file, manifest }) => `${file} ${manifest.version}`).join(', ')}`,
		);
	return problems;
}

/** The URL of the git remote the release pushes to (`origin`), as configured. */
export function originUrl(root = ROOT): string | undefined {
	const out = spawnSync('git', ['config', '--get', 'remote.origin.url'], {
		cwd: root,
		encoding: 'utf8',
	});
	return out.status === 0 ? out.stdout.trim() || undefined : undefined;
}

/** Everything `npm run release` needs before it bumps anything. */
export function releaseProblems(root = ROOT): string[] {
	const origin = originUrl(root);
	const problems = packageProblems(root, origin);
	if (!origin) problems.push('git: no remote "origin" to push the release to');
	if (unreleasedEntries(readFileSync(join(root, 'CHANGELOG.md'), 'utf8')).length === 0)
		problems.push('CHANGELOG.md: nothing under "## [Unreleased]": write what this release changes');
	return problems;
}

export function report(problems: string[], what: string): void {
	if (problems.length === 0) return;
	process.stderr.write(
		`${what} stopped: ${problems.length} problem(s) to fix first:\n${problems.map((p) => `  - ${p}`).join('\n')}\n`,
	);
}

if (import.meta.main) {
	const problems = releaseProblems();
	report(problems, 'npm run release');
	if (problems.length > 0) process.exit(1);
	process.stdout.write('release check: package metadata, versions and CHANGELOG are ready\n');
}
