import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PUBLISH_ARGS, RELEASE_ARGS, RELEASE_FILES } from '../../scripts/release-dry-run.ts';
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

	it('can mint the OIDC token trusted publishing and provenance need, and make the GitHub release', () => {
		// contents: write (was read): the workflow now makes the release of the tag and attaches the
		// tarballs people install until the registry has the packages.
		expect(job.permissions).toEqual({ 'id-token': 'write', contents: 'write' });
		expect(publish).toHaveProperty('permissions', { contents: 'read' });
	});

	it('leaves npm free to use OIDC: no registry-url, no NODE_AUTH_TOKEN, a token only when one is set', () => {
		const setup = job.steps.find((s) => s.uses?.startsWith('actions/setup-node'));
		expect(setup?.with?.['registry-url']).toBeUndefined();
		expect(setup?.with?.['node-version']).toBe('24');
		expect(JSON.stringify(publish)).not.toContain('NODE_AUTH_TOKEN');
		expect(runs).toMatch(/if \[ -n "\$\{NPM_TOKEN\}" \]; then\s+npm config set/);
	});

	it('publishes through scripts/publish.ts, the script the dry run runs with --dry-run', () => {
		// Was: `npm run release` (n8n-node release in CI mode) and `npm publish --workspace relay`.
		// scripts/publish.ts publishes both, with --provenance and RELEASE_MODE (test/unit/publish.test.ts).
		const step = job.steps.find((s) => s.run?.includes('scripts/publish.ts'));
		expect(step?.run?.trim()).toBe(
			`node ${PUBLISH_ARGS.filter((a) => a !== '--dry-run').join(' ')}`,
		);
		expect(PUBLISH_ARGS).toEqual(['scripts/publish.ts', '--dry-run']);
		expect(step?.env).toEqual({ GH_TOKEN: '${{ github.token }}' });
		expect(runs).not.toContain('npm run release');
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

describe('the release the dry run exercises is the release', () => {
	const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
		scripts: Record<string, string>;
	};
	const config = JSON.parse(readFileSync(join(root, '.release-it.json'), 'utf8')) as {
		git: Record<string, unknown>;
		npm: Record<string, unknown>;
		github: Record<string, unknown>;
		hooks: Record<string, string | string[]>;
	};

	it('`npm run release` is release-it with no arguments: everything it does is in .release-it.json', () => {
		expect(pkg.scripts.release).toBe('release-it');
		expect(pkg.scripts['release:dry-run']).toBe('node scripts/release-dry-run.ts');
	});

	it('the dry run starts that script itself, answering only the prompts', () => {
		expect(RELEASE_ARGS).toEqual(['run', 'release', '--', '--ci']);
		expect(RELEASE_FILES).toEqual(
			expect.arrayContaining(['package.json', '.release-it.json', 'CHANGELOG.md', 'scripts']),
		);
	});

	it('every hook runs a script the dry run carries, and the release publishes nothing itself', () => {
		const commands = Object.values(config.hooks).flat();
		expect(commands.length).toBeGreaterThanOrEqual(2);
		for (const command of commands) {
			const script = /^node (scripts\/[\w-]+\.ts)\b/.exec(command)?.[1];
			expect(script, command).toBeDefined();
			expect(existsSync(join(root, script as string)), command).toBe(true);
		}
		expect(config.npm.publish).toBe(false);
		expect(config.github.release).toBe(false);
		expect(config.git).toMatchObject({ requireBranch: 'main', push: true, tagName: 'v${version}' });
		expect(JSON.stringify(config)).not.toContain('auto-changelog');
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
			/from '\.\/pg\.ts'|freshPostgresStore|onEveryStore|playwright|chromium/i.test(
				readFileSync(join(root, file), 'utf8'),
			),
		);
		expect(needsService.length).toBeGreaterThan(3);
		expect([...SERVICE_SUITES].sort()).toEqual(needsService.sort());
	});
});
