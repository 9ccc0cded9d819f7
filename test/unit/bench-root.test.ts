// The benchmarks measure the compiled relay of ONE checkout: relay/bench/common.ts's ROOT
// (BENCH_ROOT, or this checkout). A bench module that loads compiled relay code through a path of
// its own would measure another build in a before/after (as the queue harness once did: it loaded
// this checkout's PostgreSQL store whatever BENCH_ROOT said). Read as text: running the benchmarks
// takes minutes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childEnv } from '../relay/helpers.ts';

const REPO = join(__dirname, '..', '..');
const DIRS = ['relay/bench', 'scripts/bench'];
/** Compiled into ROOT's relay/dist (relay/tsconfig.build.json): its relative imports stay inside ROOT. */
const COMPILED = new Set(['relay/bench/relay-server.ts']);

const withoutComments = (text: string) =>
	text
		.split('\n')
		.filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
		.join('\n');

/** What in one bench module's text loads or starts relay code from anywhere but ROOT. */
export function rootFindings(file: string, text: string): string[] {
	const code = withoutComments(text);
	const found: string[] = [];
	if (file !== 'relay/bench/common.ts' && /fileURLToPath\(\s*import\.meta\.url/.test(code))
		found.push(`${file} finds a checkout of its own (import.meta.url): use common.ts's ROOT`);
	for (const m of code.matchAll(/(?<!typeof\s)\bimport\(\s*([^)]*)\)/g))
		if (!/\bcompiled\(|\bdist\(|\bROOT\b/.test(m[1]))
			found.push(`${file} imports ${m[1].trim()} at run time: not through ROOT or compiled()`);
	for (const line of code.split('\n')) {
		if (/['"`][^'"`]*\bdist\/[^'"`]*['"`]/.test(line) && !/\bROOT\b/.test(line))
			found.push(`${file} names a compiled path outside ROOT: ${line.trim()}`);
		const spec = /^\s*import\s+(?!type\b)[^'"]*from\s+['"]([^'"]+)['"]/.exec(line)?.[1];
		if (
			spec &&
			/(^|\/)src\/|\/dist\//.test(spec) &&
			!spec.includes('sandbox/src') &&
			!COMPILED.has(file)
		)
			found.push(`${file} imports ${spec}: this checkout's relay, whatever BENCH_ROOT says`);
	}
	return found;
}

describe('the benchmarks measure the relay of one checkout (common.ts ROOT, BENCH_ROOT)', () => {
	it('no bench module loads or starts relay code through a path of its own', () => {
		const found = DIRS.flatMap((dir) =>
			readdirSync(join(REPO, dir))
				.filter((f) => f.endsWith('.ts'))
				.flatMap((f) => rootFindings(`${dir}/${f}`, readFileSync(join(REPO, dir, f), 'utf8'))),
		);
		expect(found).toEqual([]);
	});

	it('the check refuses the ways a module could miss ROOT', () => {
		const file = 'relay/bench/x.ts';
		expect(
			rootFindings(
				file,
				[
					"const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');",
					"const s = await import(pathToFileURL('/elsewhere/relay/dist/relay/src/a.js').href);",
					"import { start } from '../src/server.ts';",
					"spawn(process.execPath, ['relay/dist/relay/src/bin.js']);",
					"const t = (await import(compiled('src/a.js'))) as typeof import('../src/a.ts');",
					"import type { Store } from '../src/store/types.ts';",
				].join('\n'),
			),
		).toEqual([
			`${file} finds a checkout of its own (import.meta.url): use common.ts's ROOT`,
			`${file} imports pathToFileURL('/elsewhere/relay/dist/relay/src/a.js' at run time: not through ROOT or compiled()`,
			`${file} names a compiled path outside ROOT: const s = await import(pathToFileURL('/elsewhere/relay/dist/relay/src/a.js').href);`,
			`${file} imports ../src/server.ts: this checkout's relay, whatever BENCH_ROOT says`,
			`${file} names a compiled path outside ROOT: spawn(process.execPath, ['relay/dist/relay/src/bin.js']);`,
		]);
	});

	it('the queue harness looks for the compiled store in BENCH_ROOT (an empty folder: not found there)', () => {
		const empty = mkdtempSync(join(tmpdir(), 'bench-root-'));
		try {
			const run = spawnSync(process.execPath, [join(REPO, 'relay/bench/queue-harness.ts')], {
				env: childEnv({ BENCH_ROOT: empty }),
				encoding: 'utf8',
				timeout: 60_000,
			});
			expect(run.status).not.toBe(0);
			expect(run.stderr).toContain('ERR_MODULE_NOT_FOUND');
			expect(run.stderr).toContain(join(empty, 'relay/dist/relay/src/store-postgres/store.js'));
		} finally {
			rmSync(empty, { recursive: true, force: true });
		}
	});
});
