// The store's rooms in the import rules (`scripts/lint-imports.ts`): the engines (store-sqlite/,
// store-postgres/) never import each other, what they share (store/) imports neither engine nor
// the opener, and none of them imports HTTP or zod. Each rule on a small tree of files.
import { describe, expect, it } from 'vitest';
import { fileTrees } from '../helpers/file-tree.ts';
import { importFindings } from '../../scripts/lint-imports.ts';

const tree = fileTrees('lint-store-imports-');

/** A store laid out as relay/src lays it out: both engines over the shared store, the opener above. */
const store = {
	'store/types.ts': 'export type Store = { ping(): Promise<void> };\n',
	'store-sqlite/store.ts':
		"import type { Store } from '../store/types.ts';\nexport const sqlite = (s: Store) => s;\n",
	'store-postgres/store.ts':
		"import type { Store } from '../store/types.ts';\nexport const postgres = (s: Store) => s;\n",
	'store-open.ts':
		"import { sqlite } from './store-sqlite/store.ts';\nimport { postgres } from './store-postgres/store.ts';\nexport const open = [sqlite, postgres];\n",
};

describe('npm run lint:packages: the store keeps its rooms apart', () => {
	it('accepts both engines over the shared store, and the opener over both', () => {
		expect(importFindings(tree(store))).toEqual([]);
	});

	it('refuses an engine importing the other, type-only too', () => {
		const root = tree({
			...store,
			'store-sqlite/statements.ts':
				"import type { X } from '../store-postgres/statements.ts';\nexport const s = 1 as X;\n",
			'store-postgres/statements.ts':
				"import { s } from '../store-sqlite/store.ts';\nexport type X = number;\nexport const p = s;\n",
		});
		expect(importFindings(root)).toEqual([
			'store-postgres/statements.ts imports store-sqlite/store.ts: the PostgreSQL engine does not import the SQLite one',
			'store-sqlite/statements.ts imports store-postgres/statements.ts: the SQLite engine does not import the PostgreSQL one',
		]);
	});

	it('refuses the shared store importing an engine or the opener', () => {
		const root = tree({
			...store,
			'store/rows.ts':
				"import type { open } from '../store-open.ts';\nexport type R = typeof open;\n",
			'store/input.ts':
				"import { postgres } from '../store-postgres/store.ts';\nexport const i = postgres;\n",
		});
		expect(importFindings(root)).toEqual([
			'store/input.ts imports store-postgres/store.ts: what both engines share imports neither engine nor the opener',
			'store/rows.ts imports store-open.ts: what both engines share imports neither engine nor the opener',
		]);
	});

	it('refuses HTTP or zod in an engine or the opener', () => {
		const root = tree({
			...store,
			'store-sqlite/worker.ts': "import { z } from 'zod';\nexport const w = z;\n",
			'store-open.ts': "import { request } from 'undici';\nexport const o = request;\n",
		});
		expect(importFindings(root)).toEqual([
			"store-open.ts imports undici: the store's engines and its opener import no HTTP and no zod",
			"store-sqlite/worker.ts imports zod: the store's engines and its opener import no HTTP and no zod",
		]);
	});

	it('counts the engines and the opener in the store layer: a store file importing a service is refused', () => {
		const root = tree({
			...store,
			'reads.ts': 'export const r = 1;\n',
			'store-sqlite/queries.ts': "import { r } from '../reads.ts';\nexport const q = r;\n",
		});
		expect(importFindings(root)).toEqual([
			'store-sqlite/queries.ts imports reads.ts: layers import only downward (the store below the services)',
		]);
	});
});
