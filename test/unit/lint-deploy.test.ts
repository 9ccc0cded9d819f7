// The deploy lint (`npm run lint:deploy`, in npm test) stands in for `docker compose config` and a
// look at what the stack publishes, for both sizes of compose.yaml: it passes the files as they
// are, and each broken promise below is a finding naming the size and the service.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caddyRoutes, lintCompose, lintDockerfile } from '../../scripts/lint-deploy.ts';

const root = join(__dirname, '..', '..');
const compose = readFileSync(join(root, 'compose.yaml'), 'utf8');
const caddyfile = readFileSync(join(root, 'relay', 'deploy', 'Caddyfile'), 'utf8');
const files =
	(overrides: Record<string, string> = {}) =>
	(path: string) =>
		overrides[path] ?? readFileSync(join(root, path), 'utf8');

/** compose.yaml with `from` replaced by `to` (which must be there once). */
function changed(from: string, to: string): string {
	expect(compose.split(from)).toHaveLength(2);
	return compose.replace(from, to);
}

describe('npm run lint:deploy', () => {
	it('finds nothing in the Dockerfile and compose.yaml as they are', () => {
		expect(lintDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8'))).toEqual([]);
		expect(lintCompose(compose, files())).toEqual([]);
	});

	it('the proxy forwards the postback and redirect routes to the relay, and not /admin or /metrics', () => {
		const routes = caddyRoutes(caddyfile);
		expect(routes.problems).toEqual([]);
		expect(routes.upstreamOf('/postback/payment')).toBe('relay:8080');
		expect(routes.upstreamOf('/redirect/fail')).toBe('relay:8080');
		for (const path of ['/admin', '/admin/console', '/metrics', '/healthz'])
			expect(routes.upstreamOf(path)).toBeUndefined();
	});

	it('a relay port published on every address is a finding in both sizes', () => {
		const findings = lintCompose(changed("- '127.0.0.1:8080:8080'", "- '8080:8080'"), files());
		expect(findings).toEqual([
			'compose.yaml (single): relay publishes port 8080 on every address; bind it to 127.0.0.1',
			'compose.yaml (queue): relay publishes port 8080 on every address; bind it to 127.0.0.1',
		]);
	});

	it('a proxy that forwards everything makes /admin reachable from outside', () => {
		const open = caddyfile.replace(
			/\{\$RELAY_DOMAIN\} \{[\s\S]*\n\}/,
			'{$RELAY_DOMAIN} {\n\thandle {\n\t\treverse_proxy relay:8080\n\t}\n}',
		);
		const findings = lintCompose(compose, files({ 'relay/deploy/Caddyfile': open }));
		expect(findings).toContain(
			'compose.yaml (single): the proxy forwards /admin to relay:8080: reachable from outside',
		);
		expect(findings).toContain(
			'compose.yaml (queue): the proxy forwards /metrics to relay:8080: reachable from outside',
		);
	});

	it('queue: the relay must post to the webhook process, every process has the package and one key', () => {
		const aliasOnMain = changed(
			"    environment: *n8n-queue-environment\n    ports:\n      - '127.0.0.1:5678:5678'",
			"    environment: *n8n-queue-environment\n    networks:\n      default:\n        aliases: [n8n-webhooks]\n    ports:\n      - '127.0.0.1:5678:5678'",
		).replace(
			'    command: webhook\n    depends_on: *n8n-queue-depends\n    environment: *n8n-queue-environment\n    networks:\n      default:\n        aliases: [n8n-webhooks]\n',
			'    command: webhook\n    depends_on: *n8n-queue-depends\n    environment: *n8n-queue-environment\n',
		);
		expect(lintCompose(aliasOnMain, files())).toEqual([
			'compose.yaml (queue): n8n-webhooks is not the webhook process: the relay must post to it',
		]);

		const ownKey = changed(
			'    command: worker\n    depends_on: *n8n-queue-depends\n    environment: *n8n-queue-environment\n',
			"    command: worker\n    depends_on: *n8n-queue-depends\n    environment:\n      <<: *n8n-queue-environment\n      N8N_ENCRYPTION_KEY: 'another-key'\n",
		);
		expect(lintCompose(ownKey, files())).toEqual([
			'compose.yaml (queue): the n8n processes do not share one N8N_ENCRYPTION_KEY',
		]);

		const noPackage = changed(
			'    command: worker\n',
			'    command: worker\n    volumes: [worker-data:/home/node/.n8n]\n',
		);
		expect(lintCompose(noPackage, files())).toContain(
			'compose.yaml (queue): n8n-worker does not mount the installed package (n8n-nodes:/home/node/.n8n/nodes)',
		);
	});

	it('single: one n8n process, not in queue mode, serving the webhooks', () => {
		const twoProfiles = changed(
			"    profiles: ['queue']\n    command: worker",
			"    profiles: ['single', 'queue']\n    command: worker",
		);
		expect(lintCompose(twoProfiles, files())).toContain(
			'compose.yaml (single): 2 n8n processes, one expected',
		);
	});
});
