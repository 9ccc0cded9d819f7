/**
 * `npm run release`'s hook after release-it has bumped the root package (.release-it.json,
 * `after:bump`): the relay gets the same version (its package.json and its entry in
 * package-lock.json, edited as files: no npm install runs in the middle of a release), and
 * CHANGELOG.md's Unreleased entries are dated as this version (scripts/changelog.ts).
 * Usage: node scripts/release-version.ts <version>
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { releaseChangelog } from './changelog.ts';

/** A JSON file rewritten with `change`, keeping its indentation and final newline. */
interface Manifest {
	version?: string;
	packages?: Record<string, { version?: string }>;
}

function editJson(file: string, change: (value: Manifest) => void): void {
	const text = readFileSync(file, 'utf8');
	const indent = /^[ \t]+/m.exec(text)?.[0] ?? '\t';
	const value = JSON.parse(text) as Manifest;
	change(value);
	writeFileSync(file, `${JSON.stringify(value, null, indent)}\n`);
}

export function setVersion(root: string, version: string, date: string): void {
	editJson(join(root, 'relay', 'package.json'), (pkg) => {
		pkg.version = version;
	});
	editJson(join(root, 'package-lock.json'), (lock) => {
		if (lock.packages?.relay) lock.packages.relay.version = version;
	});
	const changelog = join(root, 'CHANGELOG.md');
	writeFileSync(changelog, releaseChangelog(readFileSync(changelog, 'utf8'), version, date));
}

if (import.meta.main) {
	const version = process.argv[2];
	if (!version || !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version)) {
		process.stderr.write('usage: node scripts/release-version.ts <version>\n');
		process.exit(2);
	}
	setVersion(join(import.meta.dirname, '..'), version, new Date().toISOString().slice(0, 10));
	process.stdout.write(
		`release ${version}: paypalych-relay at ${version}, CHANGELOG.md's Unreleased entries dated\n`,
	);
}
