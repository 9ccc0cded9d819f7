// scripts/publish.ts, what publish.yml runs on a tag, against stand-ins for the registry and
// GitHub: an `npm` that packs for real but answers `view` from a list and records `publish`, and a
// `gh` that records what it is asked. Two small packages named like ours stand in for the
// repository (packing the real ones would build the relay each time).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { publish } from '../../scripts/publish.ts';

const scratch = mkdtempSync(join(tmpdir(), 'paypalych-publish-'));
const bin = join(scratch, 'bin');
const calls = join(scratch, 'calls.log');
// The real npm, found before the stand-ins go first on PATH.
const realNpm = execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim();
const REPOSITORY = 'merchant-tools/n8n-nodes-paypalych';
const author = { name: 'Merchant Tools', email: 'dev@merchant-tools.ru' };

function fixture(overrides: { author?: unknown; version?: string } = {}): string {
	const root = mkdtempSync(join(scratch, 'repo-'));
	mkdirSync(join(root, 'relay'));
	const manifest = (name: string, directory?: string) => ({
		name,
		version: overrides.version ?? '1.2.3',
		license: 'MIT',
		author: overrides.author ?? author,
		repository: {
			type: 'git',
			url: `git+https://github.com/${REPOSITORY}.git`,
			...(directory ? { directory } : {}),
		},
	});
	writeFileSync(join(root, 'package.json'), JSON.stringify(manifest('n8n-nodes-paypalych')));
	writeFileSync(
		join(root, 'relay', 'package.json'),
		JSON.stringify(manifest('paypalych-relay', 'relay')),
	);
	writeFileSync(
		join(root, 'CHANGELOG.md'),
		'# Changelog\n\n## [Unreleased]\n\n## [1.2.3] - 2026-11-24\n\n### Fixed\n- A thing.\n',
	);
	return root;
}

/** Stand-ins on PATH: `published` lists name@version the registry has; `release` whether it exists. */
function standIns(published: string[], release: boolean): void {
	mkdirSync(bin, { recursive: true });
	writeFileSync(calls, '');
	const npm = `#!/bin/sh
echo "npm $* RELEASE_MODE=\${RELEASE_MODE:-}" >> ${calls}
case "$1" in
  view) for p in ${published.join(' ')}; do [ "$p" = "$2" ] && { echo '"'\${2##*@}'"'; exit 0; }; done
        echo "npm error code E404" >&2; exit 1 ;;
  publish) exit 0 ;;
  *) exec "${realNpm}" "$@" ;;
esac
`;
	const gh = `#!/bin/sh
echo "gh $*" >> ${calls}
[ "$2" = view ] && { ${release ? 'exit 0' : 'exit 1'}; }
exit 0
`;
	writeFileSync(join(bin, 'npm'), npm);
	writeFileSync(join(bin, 'gh'), gh);
	chmodSync(join(bin, 'npm'), 0o755);
	chmodSync(join(bin, 'gh'), 0o755);
}

const recorded = () =>
	readFileSync(calls, 'utf8')
		.split('\n')
		.filter((line) => /^(gh |npm (publish|view))/.test(line));

const PATH = process.env.PATH;
beforeEach(() => {
	process.env.PATH = `${bin}:${PATH ?? ''}`;
});
afterAll(() => {
	process.env.PATH = PATH;
	rmSync(scratch, { recursive: true, force: true });
});

const lines: string[] = [];
const options = (root: string) => ({
	dryRun: false,
	repository: REPOSITORY,
	tag: 'v1.2.3',
	root,
	log: (line: string) => lines.push(line),
});

describe('scripts/publish.ts (publish.yml)', () => {
	it('a first run: the GitHub release with both tarballs, then both packages with provenance', () => {
		standIns([], false);
		expect(publish(options(fixture()))).toBe(0);
		const done = recorded();
		const create = done.find((line) => line.startsWith('gh release create v1.2.3 '));
		expect(create).toBeDefined();
		for (const file of [
			'n8n-nodes-paypalych-1.2.3.tgz',
			'n8n-nodes-paypalych.tgz',
			'paypalych-relay-1.2.3.tgz',
			'paypalych-relay.tgz',
		])
			expect(create).toContain(`release-assets/${file}`);
		const publishes = done.filter((line) => line.startsWith('npm publish'));
		expect(publishes).toHaveLength(2);
		for (const line of publishes) {
			expect(line).toMatch(/--provenance/);
			expect(line).toMatch(/RELEASE_MODE=true$/);
		}
		expect(publishes[0]).toContain('n8n-nodes-paypalych-1.2.3.tgz');
		expect(publishes[1]).toContain('paypalych-relay-1.2.3.tgz');
	});

	it('a re-run after the relay failed: the release is refreshed, only the relay is published', () => {
		standIns(['n8n-nodes-paypalych@1.2.3'], true);
		expect(publish(options(fixture()))).toBe(0);
		const done = recorded();
		expect(done.some((line) => line.startsWith('gh release upload v1.2.3 '))).toBe(true);
		expect(done.some((line) => line.startsWith('gh release create'))).toBe(false);
		const publishes = done.filter((line) => line.startsWith('npm publish'));
		expect(publishes).toHaveLength(1);
		expect(publishes[0]).toContain('paypalych-relay-1.2.3.tgz');
	});

	it('everything on the registry already: nothing is published again', () => {
		standIns(['n8n-nodes-paypalych@1.2.3', 'paypalych-relay@1.2.3'], true);
		expect(publish(options(fixture()))).toBe(0);
		expect(recorded().filter((line) => line.startsWith('npm publish'))).toEqual([]);
	});

	it('a placeholder author or another repository stops it before anything, naming each field', () => {
		standIns([], false);
		lines.length = 0;
		const stderr: string[] = [];
		const write = process.stderr.write.bind(process.stderr);
		process.stderr.write = ((chunk: string) => {
			stderr.push(String(chunk));
			return true;
		}) as typeof process.stderr.write;
		try {
			const root = fixture({ author: { name: 'Your Name', email: 'you@example.com' } });
			expect(publish({ ...options(root), repository: 'someone-else/fork' })).toBe(1);
		} finally {
			process.stderr.write = write;
		}
		const message = stderr.join('');
		expect(message).toContain(
			'package.json author: "Your Name <you@example.com>" is a placeholder',
		);
		expect(message).toContain('relay/package.json author:');
		expect(message).toContain(
			`package.json repository.url: "git+https://github.com/${REPOSITORY}.git" is not https://github.com/someone-else/fork`,
		);
		expect(recorded()).toEqual([]);
	});

	it('a tag that is not the version of both packages stops it', () => {
		standIns([], false);
		expect(publish({ ...options(fixture()), tag: 'v1.2.4' })).toBe(1);
		expect(recorded()).toEqual([]);
	});
});
