// The repository explains itself: no tracked file cites a document outside it (what the code
// relies on about the service is in docs/developer/service.md, the layers and import rules in
// docs/developer/layout.md, and both are in the documentation's index), no file names an issue
// number, the README stays a short page for users, and the rooms layout.md describes keep apart:
// the sandbox imports nothing of the nodes or the relay, and the relay reaches the nodes' code only
// through its contract.ts.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf } from '../../scripts/lint-imports.ts';

const root = join(__dirname, '..', '..');
const SKIP = new Set(['node_modules', 'dist', '.git', '.n8n-demo', '.relay-data', 'coverage']);

/** Every file under a folder, the generated and installed ones left out, relative to the root. */
function walk(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		if (SKIP.has(entry.name)) return [];
		const path = join(dir, entry.name);
		return entry.isDirectory() ? walk(path) : [relative(root, path).split(sep).join('/')];
	});
}

/** The tracked files (`git ls-files`), or every file of the tree where there is no git checkout. */
function trackedFiles(): string[] {
	try {
		const out = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' });
		return out.split('\0').filter((f) => f !== '' && existsSync(join(root, f)));
	} catch {
		return walk(root);
	}
}

/** The text of a file, or undefined for a binary one (a NUL byte in it). */
function textOf(file: string): string | undefined {
	const bytes = readFileSync(join(root, file));
	return bytes.includes(0) ? undefined : bytes.toString('utf8');
}

const texts = trackedFiles()
	.sort()
	.flatMap((file) => {
		const text = textOf(file);
		return text === undefined ? [] : [{ file, text }];
	});

// Built from parts, so that this file does not cite them itself.
const OUTSIDE_NAMES = [
	['service', 'facts'].join('-'),
	['DESIGN', 'md'].join('.'),
	['payment', 'service', 'interface'].join('-'),
];

/** The lines of a text that match, as `file:line: text`. */
function hits(file: string, text: string, match: (line: string) => boolean): string[] {
	return text
		.split('\n')
		.flatMap((line, i) => (match(line) ? [`${file}:${i + 1}: ${line.trim().slice(0, 160)}`] : []));
}

describe('the repository explains itself', () => {
	it('reads the tracked files', () => {
		expect(texts.length).toBeGreaterThan(300);
		expect(texts.map((t) => t.file)).toEqual(
			expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/developer/service.md']),
		);
	});

	it('no tracked file cites a document outside the repository by name', () => {
		const found = texts.flatMap(({ file, text }) =>
			hits(file, text, (line) => OUTSIDE_NAMES.some((name) => line.includes(name))),
		);
		expect(found).toEqual([]);
	});

	it('no tracked file points at a folder named shared outside the repository', () => {
		const upShared = /((?:\.\.\/)+)shared\//g;
		const found = texts.flatMap(({ file, text }) =>
			hits(file, text, (line) =>
				[...line.matchAll(upShared)].some(([, ups]) => {
					const target = resolve(root, dirname(file), ups, 'shared');
					const inside = !relative(root, target).startsWith('..');
					return !(inside && existsSync(target) && statSync(target).isDirectory());
				}),
			),
		);
		expect(found).toEqual([]);
	});

	it('no tracked file names an issue number', () => {
		const issue = new RegExp(['issue', '[ -]?', '[0-9]'].join(''), 'i');
		const found = texts.flatMap(({ file, text }) => hits(file, text, (line) => issue.test(line)));
		expect(found).toEqual([]);
	});

	it('the README is a page for users: at most 200 lines', () => {
		const lines = readFileSync(join(root, 'README.md'), 'utf8').replace(/\n$/, '').split('\n');
		expect(lines.length).toBeLessThanOrEqual(200);
	});

	it('docs/developer/service.md and layout.md exist and docs/README.md links both', () => {
		const index = readFileSync(join(root, 'docs', 'README.md'), 'utf8');
		for (const page of ['developer/service.md', 'developer/layout.md']) {
			expect(existsSync(join(root, 'docs', page)), page).toBe(true);
			expect(index, page).toContain(`](${page})`);
		}
	});
});

/** The relative imports of every .ts file under a folder, resolved to paths from the root. */
function importsUnder(dir: string): { from: string; to: string }[] {
	return walk(join(root, dir))
		.filter((file) => file.endsWith('.ts'))
		.flatMap((file) =>
			importsOf(file, readFileSync(join(root, file), 'utf8'))
				.filter((i) => i.spec.startsWith('.'))
				.map((i) => ({
					from: file,
					to: relative(root, resolve(root, dirname(file), i.spec))
						.split(sep)
						.join('/'),
				})),
		);
}

describe('the rooms keep apart (docs/developer/layout.md)', () => {
	it('the sandbox imports nothing of nodes/ or relay/: it is the test oracle', () => {
		const imports = importsUnder('sandbox/src');
		expect(imports.length).toBeGreaterThan(20);
		expect(imports.filter((i) => /^(nodes|relay)\//.test(i.to))).toEqual([]);
	});

	it('the relay reaches nodes/ only through relay/src/contract.ts, and only nodes/shared', () => {
		const imports = importsUnder('relay/src').filter((i) => i.to.startsWith('nodes/'));
		expect(imports.length).toBeGreaterThan(0);
		expect(imports.filter((i) => i.from !== 'relay/src/contract.ts')).toEqual([]);
		expect(imports.filter((i) => !i.to.startsWith('nodes/shared/'))).toEqual([]);
	});
});
