// The first `npm start` installs n8n: scripts/install-n8n.sh pipes npm's http log through
// scripts/install-progress.ts, which counts what is done of a known total and estimates the rest.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fetchedUrl, isFetch, progressLine } from '../../scripts/install-progress.ts';

const TARBALL =
	'npm http fetch GET 200 https://registry.npmjs.org/is-odd/-/is-odd-3.0.1.tgz 298ms (cache miss)';
const CACHED =
	'npm http cache is-number@https://registry.npmjs.org/is-number/-/is-number-6.0.0.tgz 0ms (cache hit)';
const DOCUMENT = 'npm http fetch GET 200 https://registry.npmjs.org/is-odd 132ms (cache miss)';
// The same tarball again, as npm logs it for a second path of the tree that uses it.
const TARBALL_AGAIN =
	'npm http cache is-odd@https://registry.npmjs.org/is-odd/-/is-odd-3.0.1.tgz 0ms (cache hit)';
const OTHER =
	'npm http fetch GET 200 https://registry.npmjs.org/uuid/-/uuid-10.0.0.tgz 12ms (cache miss)';

describe('install progress', () => {
	it('counts package documents and tarballs (downloaded or from the cache) apart', () => {
		expect([TARBALL, CACHED, DOCUMENT].map((l) => isFetch(l, 'tarballs'))).toEqual([
			true,
			true,
			false,
		]);
		expect([TARBALL, CACHED, DOCUMENT].map((l) => isFetch(l, 'documents'))).toEqual([
			false,
			false,
			true,
		]);
		expect(isFetch('npm warn deprecated glob@7.2.3', 'tarballs')).toBe(false);
	});

	it('names a tarball by its URL, however npm logged it, so one used at several paths counts once', () => {
		expect(fetchedUrl(TARBALL, 'tarballs')).toBe(fetchedUrl(TARBALL_AGAIN, 'tarballs'));
		expect(fetchedUrl(CACHED, 'tarballs')).toBe(
			'https://registry.npmjs.org/is-number/-/is-number-6.0.0.tgz',
		);
		expect(fetchedUrl(DOCUMENT, 'tarballs')).toBeUndefined();
	});

	it('says how much of the total is done and, once there is a rate, how long the rest takes', () => {
		expect(progressLine('n8n 2.41.1: packages downloaded', 50, 2372, 1000)).toBe(
			'n8n 2.41.1: packages downloaded: 50 of 2,372 (2%)',
		);
		expect(progressLine('n8n 2.41.1: packages downloaded', 1186, 2372, 120_000)).toBe(
			'n8n 2.41.1: packages downloaded: 1,186 of 2,372 (50%), about 2 min left',
		);
		expect(progressLine('x', 2400, 2372, 120_000)).toBe('x: 2,372 of 2,372 (100%)');
		expect(progressLine('x', 7, undefined, 1000)).toBe('x: 7 so far');
		// A total measured on an earlier install is an estimate, and may be passed.
		expect(progressLine('docs', 800, 1585, 30_000, true)).toBe(
			'docs: 800 of about 1,585 (50%), about 29 s left',
		);
		expect(progressLine('docs', 1600, 1585, 60_000, true)).toBe(
			'docs: 1,600 (about 1,585 expected; nearly done)',
		);
	});

	it('reads npm output on stdin and passes errors through', () => {
		const out = spawnSync(
			process.execPath,
			[
				join(__dirname, '..', '..', 'scripts', 'install-progress.ts'),
				'n8n 9.9.9: packages downloaded',
				'tarballs',
				'3',
			],
			{
				input: [
					DOCUMENT,
					TARBALL,
					CACHED,
					'npm error notarget No matching version found for @n8n/api-types@0.17.0.',
					TARBALL_AGAIN,
					TARBALL,
					OTHER,
				].join('\n'),
				encoding: 'utf8',
				env: { ...process.env, INSTALL_PROGRESS_EVERY_MS: '0' },
			},
		);
		expect(out.status).toBe(0);
		const lines = out.stdout.trim().split('\n');
		expect(lines).toContain(
			'npm error notarget No matching version found for @n8n/api-types@0.17.0.',
		);
		expect(lines.at(-2)).toBe('install-n8n: n8n 9.9.9: packages downloaded: 3 of 3 (100%)');
		expect(lines.at(-1)).toBe('install-n8n: n8n 9.9.9: packages downloaded: 3, done');
		expect(lines.filter((l) => l.startsWith('install-n8n:'))).toHaveLength(4);
	});
});
