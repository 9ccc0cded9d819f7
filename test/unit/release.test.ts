import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SERVICE_SUITES } from '../../vitest.unit.config.mts';

// The publish workflow's shape (npm run release:dry-run runs the release itself): trusted
// publishing with provenance, nothing that blocks it, and only service-free steps.
const root = join(__dirname, '..', '..');
interface Step {
	name?: string;
	uses?: string;
	run?: string;
	with?: Record<string, string>;
	env?: Record<string, string>;
}
interface Job {
	permissions?: Record<string, string>;
	services?: unknown;
	steps: Step[];
}
const workflow = (file: string) =>
	parse(readFileSync(join(root, '.github/workflows', file), 'utf8')) as {
		on: { push: { tags?: string[] } };
		jobs: Record<string, Job>;
	};

describe('publish workflow', () => {
	const publish = workflow('publish.yml');
	const job = Object.values(publish.jobs)[0];
	const runs = job.steps.map((s) => s.run ?? '').join('\n');

	it('can mint the OIDC token trusted publishing and provenance need', () => {
		expect(job.permissions).toEqual({ 'id-token': 'write', contents: 'read' });
	});

	it('leaves npm free to use OIDC: no registry-url, no NODE_AUTH_TOKEN, a token only when one is set', () => {
		const setup = job.steps.find((s) => s.uses?.startsWith('actions/setup-node'));
		expect(setup?.with?.['registry-url']).toBeUndefined();
		expect(setup?.with?.['node-version']).toBe('24');
		expect(JSON.stringify(publish)).not.toContain('NODE_AUTH_TOKEN');
		expect(runs).toMatch(/if \[ -n "\$\{NPM_TOKEN\}" \]; then\s+npm config set/);
	});

	it('publishes both packages with provenance', () => {
		// `n8n-node release` in CI publishes with NPM_CONFIG_PROVENANCE and RELEASE_MODE set.
		expect(runs).toContain('npm run release');
		const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
			scripts: Record<string, string>;
		};
		expect(pkg.scripts.release).toBe('n8n-node release');
		expect(runs).toContain('npm publish --workspace relay --provenance --access public');
	});

	it('runs only what needs no services: build, lint, the service-free tests', () => {
		expect(job.services).toBeUndefined();
		expect(runs).toContain('npm run build');
		expect(runs).toContain('npm run lint');
		expect(runs).toContain('npm run test:unit');
		expect(runs).not.toMatch(/npm (run )?test(\s|$)/m);
		expect(runs).not.toContain('test:e2e');
	});

	it('CI still runs the whole npm test with PostgreSQL', () => {
		const ci = Object.values(workflow('ci.yml').jobs)[0];
		expect(ci.services).toHaveProperty('postgres');
		expect(ci.steps.map((s) => s.run)).toContain('npm test');
	});
});

describe('npm run test:unit', () => {
	it('leaves out every suite that needs PostgreSQL or a browser, and only those', () => {
		const suites = (readdirSync(join(root, 'test'), { recursive: true }) as string[])
			.filter(
				(f) => f.endsWith('.test.ts') && !f.startsWith('e2e') && !f.endsWith('release.test.ts'),
			)
			.map((f) => `test/${f}`);
		const needsService = suites.filter((file) =>
			/from '\.\/pg\.ts'|playwright|chromium/i.test(readFileSync(join(root, file), 'utf8')),
		);
		expect(needsService.length).toBeGreaterThan(3);
		expect([...SERVICE_SUITES].sort()).toEqual(needsService.sort());
	});
});
