// The documentation holds together: every relative link in every Markdown file of the repository
// points at a file that exists and, with an anchor, at a heading that exists (GitHub's anchors);
// every page under docs/ is listed in the index docs/README.md; and the root README's set-up
// section starts with the two commands a newcomer runs.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_N8N_VERSION } from '../../scripts/harness/n8n-install.ts';

const root = join(__dirname, '..', '..');
const SKIP = new Set(['node_modules', 'dist', '.git', '.n8n-demo', '.relay-data', 'coverage']);

function markdownFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		if (SKIP.has(entry.name)) return [];
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return markdownFiles(path);
		return entry.name.endsWith('.md') ? [path] : [];
	});
}

/** The text outside fenced code blocks and inline code (links there are not links). */
function prose(text: string): string {
	return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchor of a heading (github-slugger): the rendered text, lower case, spaces as '-'. */
export function anchorOf(heading: string): string {
	const text = heading
		.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
		.replace(/[`*]/g, '')
		.trim()
		.toLowerCase();
	return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
	const text = readFileSync(file, 'utf8').replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
	const seen = new Map<string, number>();
	const anchors = new Set<string>();
	for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
		const base = anchorOf(heading);
		const count = seen.get(base) ?? 0;
		seen.set(base, count + 1);
		anchors.add(count === 0 ? base : `${base}-${count}`);
	}
	return anchors;
}

/** Relative link targets of a Markdown file: `[text](target)` and `![alt](target)`. */
function linksOf(file: string): string[] {
	const text = prose(readFileSync(file, 'utf8'));
	return [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
		.map((m) => m[1])
		.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

const files = markdownFiles(root);

describe('documentation links', () => {
	it('finds the documents', () => {
		const names = files.map((f) => relative(root, f));
		expect(names).toEqual(
			expect.arrayContaining([
				'README.md',
				'docs/README.md',
				'relay/README.md',
				'sandbox/README.md',
				'examples/README.md',
			]),
		);
	});

	it('every relative link points at a file or folder that exists, and at a heading there', () => {
		const broken: string[] = [];
		for (const file of files) {
			for (const target of linksOf(file)) {
				const [path, anchor] = target.split('#', 2) as [string, string | undefined];
				const resolved = path === '' ? file : resolve(dirname(file), decodeURI(path));
				const where = `${relative(root, file)} -> ${target}`;
				if (!existsSync(resolved)) {
					broken.push(`${where}: no such file`);
					continue;
				}
				if (anchor === undefined || anchor === '') continue;
				if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
					broken.push(`${where}: an anchor into something that is not a Markdown file`);
					continue;
				}
				if (!anchorsOf(resolved).has(anchor)) broken.push(`${where}: no such heading`);
			}
		}
		expect(broken).toEqual([]);
	});

	it('docs/README.md lists every page under docs/', () => {
		const index = join(root, 'docs', 'README.md');
		const listed = new Set(linksOf(index).map((t) => resolve(root, 'docs', t.split('#')[0])));
		const pages = files.filter((f) => f.startsWith(join(root, 'docs')) && f !== index);
		expect(pages.length).toBeGreaterThan(10);
		expect(pages.filter((p) => !listed.has(p)).map((p) => relative(root, p))).toEqual([]);
	});

	it("documentation URLs in the packages' code point at files and headings of this repository", () => {
		const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
			repository: { url: string };
		};
		const repo = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
		const escaped = repo.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
		const url = new RegExp(
			`${escaped}(?:/(?:blob|tree)/main/([^\\s'"\`#)\\\\]*))?(?:#([\\w-]+))?`,
			'g',
		);
		const sources = ['nodes', 'credentials', 'relay/src', 'relay/deploy'].flatMap((dir) =>
			(readdirSync(join(root, dir), { recursive: true }) as string[])
				.filter((f) => /\.(ts|json|service)$/.test(f))
				.map((f) => join(root, dir, f)),
		);
		const broken: string[] = [];
		let seen = 0;
		for (const source of sources) {
			for (const [found, path = '', anchor] of readFileSync(source, 'utf8').matchAll(url)) {
				seen += 1;
				let target = join(root, path);
				if (existsSync(target) && statSync(target).isDirectory() && anchor)
					target = join(target, 'README.md');
				const where = `${relative(root, source)}: ${found}`;
				if (!existsSync(target)) broken.push(`${where}: no such file`);
				else if (anchor && !anchorsOf(target).has(anchor)) broken.push(`${where}: no such heading`);
			}
		}
		expect(seen).toBeGreaterThanOrEqual(5);
		expect(broken).toEqual([]);
	});

	it("the root README's set-up section starts with the test command, then the demo", () => {
		const readme = readFileSync(join(root, 'README.md'), 'utf8');
		const setUp = /^## Set up[^\n]*\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1] ?? '';
		const block = /```bash\n([\s\S]*?)```/.exec(setUp)?.[1] ?? '';
		const commands = block
			.split('\n')
			.map((line) => line.replace(/#.*$/, '').trim())
			.filter(Boolean);
		expect(commands.slice(0, 2)).toEqual(['npm install && npm test', 'npm start']);
		// ...and they are the first commands of the README (its first shell block).
		const first = /```(?:bash|sh)\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
		expect(first).toBe(block);
		const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
			scripts: Record<string, string>;
		};
		expect(pkg.scripts.test).toBeDefined();
		expect(pkg.scripts.start).toContain('scripts/start.ts');
	});
});

describe('the versions tables', () => {
	const ci = readFileSync(join(root, '.ci', 'run'), 'utf8');
	const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
		scripts: Record<string, string>;
		devDependencies: Record<string, string>;
	};
	const installer = readFileSync(join(root, 'scripts', 'install-n8n.sh'), 'utf8');

	/** What `.ci/run` runs: each end-to-end script's n8n version and the Node it runs on. */
	function whatCiRuns(): string[] {
		const runs: string[] = [];
		for (const [, script] of ci.matchAll(/^npm run (test:e2e\S*)\s*$/gm)) {
			const command = pkg.scripts[script];
			const version = /N8N_VERSION=(\S+)/.exec(command)?.[1] ?? DEFAULT_N8N_VERSION;
			const line = version.split('.')[0];
			const node =
				/RUNTIME_NODE_VERSION=(\d+\.\d+\.\d+)/.exec(
					installer.slice(installer.indexOf(`  ${line}.*)`)),
				)?.[1] ?? pkg.devDependencies.node;
			runs.push(`${version} on Node ${node}`);
		}
		return runs.sort();
	}

	/** The rows of the Markdown table whose header starts with `| n8n | Node |`. */
	function tableOf(file: string): string[] {
		const text = readFileSync(join(root, file), 'utf8');
		const table = /^\| n8n \| Node \|.*\n\|[-| ]+\|\n((?:\|.*\n)+)/m.exec(text)?.[1] ?? '';
		return table
			.trim()
			.split('\n')
			.map((row) => row.split('|').map((cell) => cell.trim()))
			.map(([, n8n, node]) => `${n8n.split(' ')[0]} on Node ${node}`)
			.sort();
	}

	it('CI runs the end-to-end suites on two n8n lines', () => {
		expect(whatCiRuns()).toEqual(['1.123.81 on Node 22.23.3', '2.41.1 on Node 24.21.0']);
	});

	it.each(['README.md', 'docs/merchant/install.md'])('%s lists exactly what CI runs', (file) => {
		expect(tableOf(file)).toEqual(whatCiRuns());
	});
});
