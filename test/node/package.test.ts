import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { PayPalych } from '../helpers/n8n-context.ts';

// What `npm pack` would publish: only the compiled nodes and credential (plus package.json and
// the README), nothing of the relay, the sandbox or the tests, no runtime dependencies.
const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
	name: string;
	dependencies?: Record<string, string>;
	n8n: { nodes: string[]; credentials: string[] };
};

function packedFiles(): string[] {
	const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
		cwd: root,
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'ignore'],
	});
	return (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0].files.map(
		(file) => file.path,
	);
}

describe('package contents', () => {
	const files = packedFiles();

	it('ships only package.json, the README/licence and dist/nodes, dist/credentials', () => {
		expect(files.length).toBeGreaterThan(10);
		for (const file of files) {
			expect(file).toMatch(
				/^(package\.json|README\.md|LICEN[SC]E(\.md)?|dist\/(nodes|credentials|icons)\/.+)$/,
			);
			expect(file).not.toMatch(/(^|\/)(relay|sandbox|test|examples|scripts)\//);
			expect(file).not.toMatch(/\.test\.|\.spec\./);
			// No TypeScript sources: compiled JavaScript, declarations, maps, codex JSON, icons.
			expect(file).toMatch(/(\.js|\.d\.ts|\.js\.map|\.json|\.svg|\.png|\.md)$|^LICEN/);
		}
	});

	it('ships exactly package.json, the README and the MIT licence outside dist/', () => {
		expect(files.filter((file) => !file.startsWith('dist/')).sort()).toEqual([
			'LICENSE.md',
			'README.md',
			'package.json',
		]);
	});

	it('contains every node and credential package.json declares, with the icons and the codex file', () => {
		for (const entry of [...pkg.n8n.nodes, ...pkg.n8n.credentials].filter(
			(e) => e.includes('PayPalych.node') || e.includes('credentials'),
		)) {
			expect(files).toContain(entry);
		}
		for (const file of [
			'dist/nodes/PayPalych/PayPalych.node.js',
			'dist/nodes/PayPalych/PayPalych.node.json',
			'dist/icons/paypalych.svg',
			'dist/icons/paypalych.dark.svg',
			'dist/credentials/PayPalychApi.credentials.js',
		]) {
			expect(files).toContain(file);
		}
	});

	it('ships no stale build output: every compiled file of the action node has its source', () => {
		const compiled = files.filter(
			(file) => file.startsWith('dist/nodes/PayPalych/') && file.endsWith('.js'),
		);
		expect(compiled.length).toBeGreaterThan(10);
		for (const file of compiled) {
			expect(
				existsSync(join(root, file.replace(/^dist\//, '').replace(/\.js$/, '.ts'))),
				file,
			).toBe(true);
		}
	});

	it("ships an output schema for every operation of the action node, where n8n's editor asks for it", () => {
		const schemas = files.filter((file) => file.startsWith('dist/nodes/PayPalych/__schema__/'));
		const operations = new PayPalych().description.properties
			.filter((p) => p.name === 'operation')
			.flatMap((p) =>
				((p.displayOptions?.show?.resource ?? []) as string[]).flatMap((resource) =>
					(p.options as Array<{ value: string }>).map(
						(o) => `dist/nodes/PayPalych/__schema__/v1.0.0/${resource}/${o.value}.json`,
					),
				),
			);
		expect(operations.length).toBeGreaterThanOrEqual(16);
		expect(schemas.sort()).toEqual(operations.sort());
	});

	it('has no runtime dependencies', () => {
		expect(pkg.dependencies ?? {}).toEqual({});
	});

	it('has a codex file naming the node and a documentation link', () => {
		const codex = JSON.parse(
			readFileSync(join(root, 'dist/nodes/PayPalych/PayPalych.node.json'), 'utf8'),
		);
		expect(codex.node).toBe(`${pkg.name}.payPalych`);
		expect(codex.categories).toContain('Finance & Accounting');
		expect(codex.resources.primaryDocumentation[0].url).toMatch(/^https:\/\//);
	});
});
