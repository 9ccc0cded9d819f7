// Compiles the relay and the wire contract it imports into relay/dist (see tsconfig.build.json):
// `npm run build -w relay`, also run by the root `npm run build` and before `npm pack`.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const relay = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(join(relay, 'dist'), { recursive: true, force: true });
const run = spawnSync(process.execPath, [tsc, '-p', join(relay, 'tsconfig.build.json')], {
	stdio: 'inherit',
});
if (run.status !== 0) process.exit(run.status ?? 1);
// The contract is CommonJS (the n8n package's format) inside this "type": "module" package.
writeFileSync(join(relay, 'dist', 'nodes', 'package.json'), '{ "type": "commonjs" }\n');
