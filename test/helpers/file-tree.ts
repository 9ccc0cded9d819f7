// A small tree of files in a temp folder for a test, removed after each test.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';

/** Registers the clean-up; answers `tree(files)`, which writes them under a new temp folder and answers it. */
export function fileTrees(prefix: string): (files: Record<string, string>) => string {
	let dir = '';
	afterEach(() => {
		if (dir) rmSync(dir, { recursive: true, force: true });
		dir = '';
	});
	return (files) => {
		dir = mkdtempSync(join(tmpdir(), prefix));
		for (const [path, text] of Object.entries(files)) {
			mkdirSync(dirname(join(dir, path)), { recursive: true });
			writeFileSync(join(dir, path), text);
		}
		return dir;
	};
}
