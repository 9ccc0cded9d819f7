import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

import { lintWorkflows } from '../../scripts/lint-workflows.ts';

// The release workflows n8n's verification depends on: linted with actionlint, and holding the
// steps a provenance publish needs (a tag trigger, an OIDC token, the tests before the publish).
const root = join(__dirname, '..', '..');
const read = (name: string) => readFileSync(join(root, '.github', 'workflows', name), 'utf8');

describe('GitHub workflows', () => {
	const scratch = mkdtempSync(join(tmpdir(), 'paypalych-workflows-'));
	afterAll(() => rmSync(scratch, { recursive: true, force: true }));

	it('pass actionlint', async () => {
		const { files, findings } = await lintWorkflows();
		expect(files.map((file) => file.split('/').pop()).sort()).toEqual(['ci.yml', 'publish.yml']);
		expect(findings).toEqual([]);
	});

	it('the linter reports a broken workflow (the check can fail)', async () => {
		writeFileSync(
			join(scratch, 'broken.yml'),
			'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.no_such_field }}\n',
		);
		const { findings } = await lintWorkflows(scratch);
		expect(findings).toHaveLength(1);
		expect(findings[0]).toMatchObject({ line: 6, kind: 'expression' });
	});

	it('CI installs, lints and tests', () => {
		const ci = read('ci.yml');
		expect(ci).toMatch(/run: npm install\b/);
		expect(ci).toMatch(/run: npm run lint\b/);
		expect(ci).toMatch(/run: npm test\b/);
	});

	it('publish runs on a v-tag with an OIDC token, the service-free tests first, then publishes both packages with provenance', () => {
		const publish = read('publish.yml');
		expect(publish).toMatch(/tags:\s*\n\s*- 'v\*\.\*\.\*'/);
		expect(publish).toMatch(/id-token: write/);
		// contents: write, to make the GitHub release with the tarballs (scripts/publish.ts).
		expect(publish).toMatch(/contents: write/);
		const test = publish.indexOf('run: npm run test:unit');
		const release = publish.indexOf('run: node scripts/publish.ts');
		expect(test).toBeGreaterThan(0);
		expect(release).toBeGreaterThan(test);
		// An empty NODE_AUTH_TOKEN (registry-url without a secret) blocks npm's trusted publishing.
		const withoutComments = publish.replace(/^\s*#.*$/gm, '');
		expect(withoutComments).not.toMatch(/NODE_AUTH_TOKEN|registry-url/);
	});

	it('package.json carries the release scripts and the fields n8n verification reads', () => {
		const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
		expect(pkg.scripts.release).toBe('release-it');
		expect(pkg.scripts.prepublishOnly).toBe('n8n-node prerelease');
		expect(pkg.scripts.test).toContain('npm run lint:workflows');
		expect(pkg.license).toBe('MIT');
		expect(readFileSync(join(root, 'LICENSE.md'), 'utf8')).toMatch(/^MIT License/);
		expect(pkg.repository.url).toMatch(/^git\+https:\/\/github\.com\/.+\.git$/);
		expect(pkg.author.name).toBeTruthy();
	});
});
