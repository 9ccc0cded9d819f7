/**
 * Part of `npm run lint:packages`: the import rules of relay/src (relay/README.md, "Layout"), read
 * from the import graph the TypeScript parser sees:
 *
 * 1. No circle of runtime imports. A circle that a type-only import closes (`import type`,
 *    `export type ... from`, or an import whose every name is `type`) is allowed: it is gone at
 *    run time.
 * 2. Nothing outside relay/src/console/ imports from it, except the composition root (app.ts)
 *    importing the console's entry (console/index.ts) to register its routes.
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

const CONSOLE = 'console/';
const CONSOLE_ENTRY = { from: 'app.ts', to: 'console/index.ts' };

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

/** The relative imports of one file, static and dynamic (`await import('./x.ts')` runs). */
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
	return found.filter((i) => i.spec.startsWith('.'));
}

/** The import graph of the .ts files under `root`, paths relative to it with `/`. */
export function importGraph(root: string): { files: string[]; edges: ImportEdge[] } {
	const name = (path: string) => relative(root, path).split(sep).join('/');
	const paths = tsFiles(root);
	const files = paths.map(name);
	const known = new Set(files);
	const edges: ImportEdge[] = [];
	for (const path of paths) {
		for (const i of importsOf(path, readFileSync(path, 'utf8'))) {
			const to = name(resolve(dirname(path), i.spec));
			if (known.has(to)) edges.push({ from: name(path), to, typeOnly: i.typeOnly });
		}
	}
	return { files, edges };
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

/** Every broken rule, one line each. */
export function importFindings(root: string): string[] {
	const { files, edges } = importGraph(root);
	const findings = runtimeCircles(files, edges).map((c) => `runtime circle: ${c.join(' -> ')}`);
	const seen = new Set<string>();
	for (const e of edges) {
		if (e.from.startsWith(CONSOLE) || !e.to.startsWith(CONSOLE)) continue;
		if (e.from === CONSOLE_ENTRY.from && e.to === CONSOLE_ENTRY.to) continue;
		const finding = `${e.from} imports ${e.to}: only console/ may import from console/`;
		if (!seen.has(finding)) findings.push(finding);
		seen.add(finding);
	}
	return findings;
}

if (process.argv[1] === import.meta.filename) {
	const root = join(import.meta.dirname, '..', 'relay', 'src');
	const findings = importFindings(root);
	for (const f of findings) process.stdout.write(`relay/src: ${f}\n`);
	if (findings.length > 0) process.exit(1);
}
