/**
 * Part of `npm run lint:packages`: the import rules of relay/src (docs/developer/layout.md, "The
 * relay's layers and import rules"), read from the import graph the TypeScript parser sees:
 *
 * 1. No circle of runtime imports. A circle that a type-only import closes (`import type`,
 *    `export type ... from`, or an import whose every name is `type`) is allowed: it is gone at
 *    run time.
 * 2. Nothing outside relay/src/console/ imports from it, except the composition root (app.ts)
 *    importing the console's entry (console/index.ts) to register its routes.
 * 3. The layers (`LAYERS`) import only downward, type-only imports too: the
 *    composition root, then the surfaces (routes, the console, catch-up), the services, the
 *    middle (the forwarder, alerts, the service client and every file no layer names), the
 *    store, and the bottom (plain errors, config, contract, pure policies).
 * 4. Nothing under store/ imports HTTP or zod (`PLAIN`), nor do the engines (store-sqlite/,
 *    store-postgres/) and the opener (store-open.ts); the bottom imports no HTTP package, and only
 *    config parses with zod.
 * 5. The store's rooms keep apart (`APART`): neither engine imports the other, and what both share
 *    (store/: the ports, the edge, the row mapping) imports neither engine nor the opener.
 *
 * Prints each finding and exits 1 when there is any.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One import of a file: the file it names, and whether it is gone at run time. */
export interface ImportEdge {
	from: string;
	to: string;
	typeOnly: boolean;
}

/** A package one file imports (anything not relative: `zod`, `node:http`, `@fastify/cookie`). */
export interface PackageUse {
	from: string;
	name: string;
}

const CONSOLE = 'console/';
const CONSOLE_ENTRY = { from: 'app.ts', to: 'console/index.ts' };

/**
 * The layers of relay/src, top to bottom (docs/developer/layout.md): a file imports only from its
 * own layer or a lower one. A path ending in `/` names a folder. The middle is every file that no
 * other layer names (a new helper of the forwarder or of the service client needs no entry).
 */
export const LAYERS: ReadonlyArray<{ name: string; files: readonly string[] | 'the rest' }> = [
	{ name: 'the composition root', files: ['bin.ts', 'cli.ts', 'server.ts', 'app.ts'] },
	{
		name: 'the surfaces',
		files: ['routes/', 'console/', 'catchup/', 'statement/', 'context.ts'],
	},
	{ name: 'the services', files: ['intake.ts', 'reads.ts', 'operations.ts', 'targets.ts'] },
	{ name: 'the middle', files: 'the rest' },
	{ name: 'the store', files: ['store/', 'store-sqlite/', 'store-postgres/', 'store-open.ts'] },
	{
		name: 'the bottom',
		files: ['errors.ts', 'config.ts', 'config-fields.ts', 'contract.ts', 'retry-policy.ts'],
	},
];

const HTTP =
	/^(?:fastify|fastify-[^/]+|@fastify\/[^/]+|undici|(?:node:)?https?|(?:node:)?http2)(?:\/|$)/;
const HTTP_OR_ZOD = new RegExp(`${HTTP.source}|^zod(?:\\/|$)`);

/** Packages some files never import, and the rule that says so. */
export const PLAIN: ReadonlyArray<{ files: readonly string[]; packages: RegExp; rule: string }> = [
	{ files: ['store/'], packages: HTTP_OR_ZOD, rule: 'nothing under store/ imports HTTP or zod' },
	{
		files: ['store-sqlite/', 'store-postgres/', 'store-open.ts'],
		packages: HTTP_OR_ZOD,
		rule: "the store's engines and its opener import no HTTP and no zod",
	},
	{
		files: ['errors.ts', 'contract.ts', 'retry-policy.ts'],
		packages: HTTP_OR_ZOD,
		rule: 'plain errors, the contract and pure policies import no HTTP and no zod',
	},
	{
		files: ['config.ts', 'config-fields.ts'],
		packages: HTTP,
		rule: 'config reads the environment (with zod) and imports no HTTP',
	},
];

/** Files of the store that never import others, type-only imports too, and the rule that says so. */
export const APART: ReadonlyArray<{ files: string; never: readonly string[]; rule: string }> = [
	{
		files: 'store-sqlite/',
		never: ['store-postgres/'],
		rule: 'the SQLite engine does not import the PostgreSQL one',
	},
	{
		files: 'store-postgres/',
		never: ['store-sqlite/'],
		rule: 'the PostgreSQL engine does not import the SQLite one',
	},
	{
		files: 'store/',
		never: ['store-sqlite/', 'store-postgres/', 'store-open.ts'],
		rule: 'what both engines share imports neither engine nor the opener',
	},
];

const named = (file: string, names: readonly string[]) =>
	names.some((n) => (n.endsWith('/') ? file.startsWith(n) : file === n));

/** The index of a file's layer in LAYERS (0 is the top). */
export function layerOf(file: string): number {
	const at = LAYERS.findIndex((l) => l.files !== 'the rest' && named(file, l.files));
	return at === -1 ? LAYERS.findIndex((l) => l.files === 'the rest') : at;
}

function tsFiles(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return tsFiles(path);
		return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
	});
}

/** Whether an import declaration brings in nothing but types. */
function importIsTypeOnly(node: ts.ImportDeclaration): boolean {
	const clause = node.importClause;
	if (!clause) return false; // `import './x.ts'`: run for its effects
	if (clause.isTypeOnly) return true;
	if (clause.name) return false;
	const bindings = clause.namedBindings;
	if (!bindings || !ts.isNamedImports(bindings)) return false;
	return bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

/** The imports of one file, static and dynamic (`await import('./x.ts')` runs), packages too. */
export function importsOf(file: string, text: string): { spec: string; typeOnly: boolean }[] {
	const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
	const found: { spec: string; typeOnly: boolean }[] = [];
	const visit = (node: ts.Node): void => {
		if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
			found.push({ spec: node.moduleSpecifier.text, typeOnly: importIsTypeOnly(node) });
		} else if (
			ts.isExportDeclaration(node) &&
			node.moduleSpecifier &&
			ts.isStringLiteral(node.moduleSpecifier)
		) {
			found.push({ spec: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
		} else if (
			ts.isCallExpression(node) &&
			node.expression.kind === ts.SyntaxKind.ImportKeyword &&
			node.arguments[0] &&
			ts.isStringLiteral(node.arguments[0])
		) {
			found.push({ spec: node.arguments[0].text, typeOnly: false });
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return found;
}

/**
 * The import graph of the .ts files under `root`, paths relative to it with `/`, and the packages
 * each imports (a relative import of a file outside `root` is neither).
 */
export function importGraph(root: string): {
	files: string[];
	edges: ImportEdge[];
	packages: PackageUse[];
} {
	const name = (path: string) => relative(root, path).split(sep).join('/');
	const paths = tsFiles(root);
	const files = paths.map(name);
	const known = new Set(files);
	const edges: ImportEdge[] = [];
	const packages: PackageUse[] = [];
	for (const path of paths) {
		for (const i of importsOf(path, readFileSync(path, 'utf8'))) {
			if (!i.spec.startsWith('.')) {
				packages.push({ from: name(path), name: i.spec });
				continue;
			}
			const to = name(resolve(dirname(path), i.spec));
			if (known.has(to)) edges.push({ from: name(path), to, typeOnly: i.typeOnly });
		}
	}
	return { files, edges, packages };
}

/** The circles of runtime imports (Tarjan's strongly connected components), each as a path. */
export function runtimeCircles(files: readonly string[], edges: readonly ImportEdge[]): string[][] {
	const next = new Map<string, string[]>(files.map((f) => [f, []]));
	for (const e of edges) if (!e.typeOnly) next.get(e.from)?.push(e.to);
	const index = new Map<string, number>();
	const low = new Map<string, number>();
	const stack: string[] = [];
	const onStack = new Set<string>();
	const circles: string[][] = [];
	const connect = (v: string): void => {
		index.set(v, index.size);
		low.set(v, index.get(v)!);
		stack.push(v);
		onStack.add(v);
		for (const w of next.get(v) ?? []) {
			if (!index.has(w)) {
				connect(w);
				low.set(v, Math.min(low.get(v)!, low.get(w)!));
			} else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
		}
		if (low.get(v) !== index.get(v)) return;
		const component: string[] = [];
		let w: string;
		do {
			w = stack.pop()!;
			onStack.delete(w);
			component.push(w);
		} while (w !== v);
		const selfLoop = (next.get(v) ?? []).includes(v);
		if (component.length > 1 || selfLoop) circles.push(component.sort());
	};
	for (const f of [...files].sort()) if (!index.has(f)) connect(f);
	return circles.map((component) => loopThrough(component, next));
}

/** One loop through a component, from its first file back to it (a readable witness). */
function loopThrough(component: string[], next: Map<string, string[]>): string[] {
	const inside = new Set(component);
	const start = component[0];
	const seen = new Map<string, string>();
	const queue = [start];
	while (queue.length > 0) {
		const v = queue.shift()!;
		for (const w of next.get(v) ?? []) {
			if (!inside.has(w)) continue;
			if (w === start) {
				const path = [v];
				while (path[0] !== start) path.unshift(seen.get(path[0])!);
				return [...path, start];
			}
			if (!seen.has(w)) {
				seen.set(w, v);
				queue.push(w);
			}
		}
	}
	return [...component, start];
}

/** The rule one import breaks, if any: the console's door first, then the store's rooms, then the layers. */
function edgeFinding(e: ImportEdge): string | undefined {
	if (!e.from.startsWith(CONSOLE) && e.to.startsWith(CONSOLE)) {
		if (e.from === CONSOLE_ENTRY.from && e.to === CONSOLE_ENTRY.to) return undefined;
		return `${e.from} imports ${e.to}: only console/ may import from console/`;
	}
	const apart = APART.find((a) => named(e.from, [a.files]) && named(e.to, a.never));
	if (apart) return `${e.from} imports ${e.to}: ${apart.rule}`;
	const [from, to] = [layerOf(e.from), layerOf(e.to)];
	if (to >= from) return undefined;
	const [below, above] = [LAYERS[from].name, LAYERS[to].name];
	return `${e.from} imports ${e.to}: layers import only downward (${below} below ${above})`;
}

/** Every broken rule, one line each. */
export function importFindings(root: string): string[] {
	const { files, edges, packages } = importGraph(root);
	const findings = runtimeCircles(files, edges).map((c) => `runtime circle: ${c.join(' -> ')}`);
	const add = (finding: string | undefined) => {
		if (finding !== undefined && !findings.includes(finding)) findings.push(finding);
	};
	for (const e of edges) add(edgeFinding(e));
	for (const p of packages)
		for (const plain of PLAIN)
			if (named(p.from, plain.files) && plain.packages.test(p.name))
				add(`${p.from} imports ${p.name}: ${plain.rule}`);
	return findings;
}

if (process.argv[1] === import.meta.filename) {
	const root = join(import.meta.dirname, '..', 'relay', 'src');
	const findings = importFindings(root);
	for (const f of findings) process.stdout.write(`relay/src: ${f}\n`);
	if (findings.length > 0) process.exit(1);
}
