// The import rules of relay/src (`scripts/lint-imports.ts`, in npm run lint:packages): no runtime
// circle (a type-only one is allowed), nothing outside console/ imports from it but app.ts's
// registration of the console's entry, the layers import only downward, no HTTP or zod under
// store/ and none of HTTP in the bottom. Each rule on a small tree of files, then on relay/src.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileTrees } from '../helpers/file-tree.ts';
import { importFindings } from '../../scripts/lint-imports.ts';

const tree = fileTrees('lint-imports-');

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

	it('refuses HTTP and zod under store/, a static, type-only or dynamic import alike', () => {
		const root = tree({
			'store/sqlite.ts': "import { request } from 'undici';\nexport const s = request;\n",
			'store/input.ts': "import { z } from 'zod';\nexport const i = z;\n",
			'store/sub/pg.ts':
				"import type { FastifyInstance } from 'fastify';\nexport type P = FastifyInstance;\n",
			'store/open.ts':
				"export const o = async () => (await import('fastify-type-provider-zod')).toString();\n",
			'store/web.ts': "import { STATUS_CODES } from 'node:http';\nexport const w = STATUS_CODES;\n",
			// Packages that are neither are the store's to use.
			'store/postgres.ts':
				"import pg from 'pg';\nimport type { Logger } from 'pino';\nexport const p = pg;\nexport type L = Logger;\n",
		});
		expect(importFindings(root).sort()).toEqual([
			'store/input.ts imports zod: nothing under store/ imports HTTP or zod',
			'store/open.ts imports fastify-type-provider-zod: nothing under store/ imports HTTP or zod',
			'store/sqlite.ts imports undici: nothing under store/ imports HTTP or zod',
			'store/sub/pg.ts imports fastify: nothing under store/ imports HTTP or zod',
			'store/web.ts imports node:http: nothing under store/ imports HTTP or zod',
		]);
	});

	it('keeps the bottom plain: errors, contract and policies import no HTTP and no zod; config may use zod, not HTTP', () => {
		const root = tree({
			'errors.ts': "import type { FastifyError } from 'fastify';\nexport type E = FastifyError;\n",
			'contract.ts': "import { z } from 'zod';\nexport const c = z;\n",
			'retry-policy.ts': "import { Agent } from 'undici';\nexport const r = Agent;\n",
			'config.ts': "import { z } from 'zod';\nexport const c = z;\n",
			'config-fields.ts': "import cookie from '@fastify/cookie';\nexport const f = cookie;\n",
		});
		expect(importFindings(root).sort()).toEqual([
			'config-fields.ts imports @fastify/cookie: config reads the environment (with zod) and imports no HTTP',
			'contract.ts imports zod: plain errors, the contract and pure policies import no HTTP and no zod',
			'errors.ts imports fastify: plain errors, the contract and pure policies import no HTTP and no zod',
			'retry-policy.ts imports undici: plain errors, the contract and pure policies import no HTTP and no zod',
		]);
	});

	it('the bottom imports nothing above it, type-only too; it may import itself', () => {
		const root = tree({
			'errors.ts': "import type { ReplayPlan } from './reads.ts';\nexport type E = ReplayPlan;\n",
			'reads.ts': 'export type ReplayPlan = number;\n',
			'config.ts':
				"import { f } from './config-fields.ts';\nimport type { S } from './store/types.ts';\nexport const c = f as S;\n",
			'config-fields.ts': 'export const f = 1;\n',
			'store/types.ts': 'export type S = number;\n',
			'contract.ts': "import { kick } from './forwarder.ts';\nexport const c = kick;\n",
			'forwarder.ts': 'export const kick = 1;\n',
			'retry-policy.ts':
				"import { c } from './contract.ts';\nimport { r } from './routes/admin.ts';\nexport const p = [c, r];\n",
			'routes/admin.ts': 'export const r = 1;\n',
		});
		expect(importFindings(root).sort()).toEqual([
			'config.ts imports store/types.ts: layers import only downward (the bottom below the store)',
			'contract.ts imports forwarder.ts: layers import only downward (the bottom below the middle)',
			'errors.ts imports reads.ts: layers import only downward (the bottom below the services)',
			'retry-policy.ts imports routes/admin.ts: layers import only downward (the bottom below the surfaces)',
		]);
	});

	it('every layer imports only downward; a file no layer names is in the middle', () => {
		const root = tree({
			'app.ts': "import { r } from './routes/admin.ts';\nexport const app = r;\n",
			'routes/admin.ts': "import { o } from '../operations.ts';\nexport const r = o;\n",
			'routes/health.ts': "import { app } from '../app.ts';\nexport const h = app;\n",
			'operations.ts':
				"import { r } from './routes/admin.ts';\nexport const o = 1;\nexport const or = r;\n",
			'intake.ts':
				"import { o } from './operations.ts';\nimport { s } from './service-api.ts';\nexport const i = [o, s];\n",
			'service-api.ts': "import type { I } from './catchup/runner.ts';\nexport const s = 1 as I;\n",
			'catchup/runner.ts':
				"import { i } from '../intake.ts';\nexport type I = number;\nexport const c = i;\n",
			'forwarder.ts': "import { i } from './intake.ts';\nexport const f = i;\n",
			'store/queue.ts':
				"import { s } from '../service-api.ts';\nimport { E } from '../errors.ts';\nexport const q = [s, E];\n",
			'errors.ts': 'export class E extends Error {}\n',
		});
		expect(
			importFindings(root)
				.filter((f) => !f.startsWith('runtime circle'))
				.sort(),
		).toEqual([
			'forwarder.ts imports intake.ts: layers import only downward (the middle below the services)',
			'operations.ts imports routes/admin.ts: layers import only downward (the services below the surfaces)',
			'routes/health.ts imports app.ts: layers import only downward (the surfaces below the composition root)',
			'service-api.ts imports catchup/runner.ts: layers import only downward (the middle below the surfaces)',
			'store/queue.ts imports service-api.ts: layers import only downward (the store below the middle)',
		]);
	});

	it('relay/src breaks no import rule', () => {
		expect(importFindings(join(__dirname, '..', '..', 'relay', 'src'))).toEqual([]);
	});
});
