/**
 * The size rules of the product code (docs/developer/layout.md): no file of the package, the relay
 * or the sandbox (`nodes/`, `credentials/`, `relay/src/`, `sandbox/src/`) over 400 lines, and no
 * function of the sandbox over 80 lines: a file that grows past that is split by what it holds,
 * never squeezed. Functions are read with the TypeScript parser: declarations, expressions, arrow
 * functions, methods, accessors and constructors, each measured from its first line to its last
 * (an inner function counts in its outer one too). `test/unit/line-cap.test.ts` runs it.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** Most lines of a product file. */
export const MAX_FILE_LINES = 400;
/** Most lines of a function in the sandbox. */
export const MAX_FUNCTION_LINES = 80;
/** The folders of product files, from the repository root. */
export const PRODUCT_DIRS = ['nodes', 'credentials', 'relay/src', 'sandbox/src'] as const;
/** The folders whose functions are held to MAX_FUNCTION_LINES. */
export const FUNCTION_DIRS = ['sandbox/src'] as const;

/** Every file under `dir` (relative to `root`, with `/`), in name order. */
function filesUnder(root: string, dir: string): string[] {
	const out: string[] = [];
	let entries;
	try {
		entries = readdirSync(join(root, dir), { withFileTypes: true });
	} catch {
		return out;
	}
	for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
		const path = `${dir}/${entry.name}`;
		if (entry.isDirectory()) out.push(...filesUnder(root, path));
		else if (entry.isFile()) out.push(path);
	}
	return out;
}

/** Lines of a text: a last line without a newline counts, a final newline adds none. */
export function lineCount(text: string): number {
	if (text === '') return 0;
	const newlines = text.split('\n').length - 1;
	return text.endsWith('\n') ? newlines : newlines + 1;
}

/** What a function is called in a finding: its name, or where it is assigned or passed. */
function functionName(node: ts.Node, source: ts.SourceFile): string {
	const named = node as { name?: ts.Node };
	if (named.name !== undefined) return named.name.getText(source);
	if (ts.isConstructorDeclaration(node)) return 'constructor';
	const parent = node.parent;
	if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent))
		return parent.name.getText(source);
	if (ts.isCallExpression(parent)) {
		const callee = parent.expression.getText(source).slice(0, 40);
		const first = parent.arguments[0];
		const route = first && ts.isStringLiteralLike(first) ? ` ${first.text}` : '';
		return `(a function passed to ${callee}${route})`;
	}
	return '(an anonymous function)';
}

/** The functions of a TypeScript text longer than `max` lines: name, first line, lines. */
export function longFunctions(
	text: string,
	fileName: string,
	max: number = MAX_FUNCTION_LINES,
): { name: string; line: number; lines: number }[] {
	const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
	const found: { name: string; line: number; lines: number }[] = [];
	const visit = (node: ts.Node) => {
		if (ts.isFunctionLike(node) && (node as { body?: ts.Node }).body !== undefined) {
			const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
			const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
			const lines = end - start + 1;
			if (lines > max) found.push({ name: functionName(node, source), line: start + 1, lines });
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return found;
}

/** Every breach of the size rules under `root`, one sentence each (none: an empty list). */
export function lineCapFindings(root: string): string[] {
	const findings: string[] = [];
	for (const dir of PRODUCT_DIRS) {
		for (const path of filesUnder(root, dir)) {
			const text = readFileSync(join(root, path), 'utf8');
			const lines = lineCount(text);
			if (lines > MAX_FILE_LINES)
				findings.push(`${path} has ${lines} lines (at most ${MAX_FILE_LINES})`);
			const inFunctionDir = FUNCTION_DIRS.some((d) => path.startsWith(`${d}/`));
			if (!inFunctionDir || !/\.[cm]?tsx?$/.test(path)) continue;
			for (const fn of longFunctions(text, path))
				findings.push(
					`${path}:${fn.line} function ${fn.name} has ${fn.lines} lines (at most ${MAX_FUNCTION_LINES})`,
				);
		}
	}
	return findings;
}
