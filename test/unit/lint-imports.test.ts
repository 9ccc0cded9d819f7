// The import rules of relay/src (`scripts/lint-imports.ts`, in npm run lint:packages): no runtime
// circle (a type-only one is allowed), nothing outside console/ imports from it but app.ts's
// registration of the console's entry. Each rule on a small tree of files, then on relay/src.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { importFindings } from '../../scripts/lint-imports.ts';

let dir = '';
function tree(files: Record<string, string>): string {
	dir = mkdtempSync(join(tmpdir(), 'lint-imports-'));
	for (const [path, text] of Object.entries(files)) {
		mkdirSync(dirname(join(dir, path)), { recursive: true });
		writeFileSync(join(dir, path), text);
	}
	return dir;
}

afterEach(() => {
	if (dir) rmSync(dir, { recursive: true, force: true });
	dir = '';
});

describe('npm run lint:packages: relay/src import rules', () => {
	it('finds a circle of runtime imports, through any number of files', () => {
		const root = tree({
			'a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
			'b.ts': "import { c } from './sub/c.ts';\nexport const b = c;\n",
			'sub/c.ts': "import { a } from '../a.ts';\nexport const c = a;\n",
			'd.ts': "import { a } from './a.ts';\nexport const d = a;\n",
		});
		expect(importFindings(root)).toEqual(['runtime circle: a.ts -> b.ts -> sub/c.ts -> a.ts']);
	});

	it('allows a circle closed by a type-only import, in each of its spellings', () => {
		for (const typeOnly of [
			"import type { B } from './b.ts';",
			"import { type B } from './b.ts';",
			"export type { B } from './b.ts';",
		]) {
			const root = tree({
				'a.ts': `${typeOnly}\nexport const a = 1;\n`,
				'b.ts': "import { a } from './a.ts';\nexport type B = typeof a;\n",
			});
			expect(importFindings(root), typeOnly).toEqual([]);
			rmSync(root, { recursive: true, force: true });
		}
		// A mixed import runs: the circle is real.
		const root = tree({
			'a.ts': "import { type B, b } from './b.ts';\nexport const a = b;\n",
			'b.ts': "import { a } from './a.ts';\nexport type B = typeof a;\nexport const b = 1;\n",
		});
		expect(importFindings(root)).toEqual(['runtime circle: a.ts -> b.ts -> a.ts']);
	});

	it('counts a dynamic import and a re-export as runtime imports', () => {
		const root = tree({
			'a.ts': "export * from './b.ts';\n",
			'b.ts': "export const b = async () => (await import('./a.ts')).toString();\n",
		});
		expect(importFindings(root)).toEqual(['runtime circle: a.ts -> b.ts -> a.ts']);
	});

	it('refuses an import of console/ from outside it, type-only too; app.ts may register console/index.ts', () => {
		const root = tree({
			'console/index.ts': "import { q } from './queries.ts';\nexport const routes = q;\n",
			'console/queries.ts': 'export const q = 1;\nexport type Q = number;\n',
			'app.ts': "import { routes } from './console/index.ts';\nexport const app = routes;\n",
			'operations.ts': "import type { Q } from './console/queries.ts';\nexport const o = 1 as Q;\n",
			'reads.ts': "import { routes } from './console/index.ts';\nexport const r = routes;\n",
		});
		expect(importFindings(root)).toEqual([
			'operations.ts imports console/queries.ts: only console/ may import from console/',
			'reads.ts imports console/index.ts: only console/ may import from console/',
		]);
	});

	it('relay/src breaks no import rule', () => {
		expect(importFindings(join(__dirname, '..', '..', 'relay', 'src'))).toEqual([]);
	});
});
