import { z } from 'zod';
import { defaultDatabasePath, fields, resolveDatabase } from './config-fields.ts';

/** Everything the relay needs, read from environment variables (see relay/README.md). */
export interface RelayConfig {
	host: string;
	port: number;
	/** Accepted API tokens, newest last or first: any of them verifies a call (rotation). */
	apiTokens: string[];
	/**
	 * The lists as configured. `redirect` receives both success and fail redirects, `success` and
	 * `fail` only their own; `targetsByKind` (targets.ts) resolves what each kind fans out to.
	 */
	targets: {
		payment: string[];
		payout: string[];
		redirect: string[];
		success: string[];
		fail: string[];
		/** Refund and chargeback postbacks; empty: they go to `payment` (targets.ts). */
		refund: string[];
		chargeback: string[];
	};
	/**
	 * true: a 2xx (or a redirect event's 3xx) counts as delivered only with an X-PayPalych-Receipt
	 * header, which the PayPalych Trigger sets on every answer it writes; n8n answers 200 to every
	 * request while it starts up. false: any 2xx is a delivery (targets that are not the trigger).
	 */
	requireReceipt: boolean;
	successUrl: string | undefined;
	failUrl: string | undefined;
	/** A file path for the embedded SQLite store, or a postgres:// URL for the PostgreSQL store. */
	database: string;
	/** Delivered events older than this many days are pruned; 0 keeps everything. */
	retentionDays: number;
	adminToken: string;
	bodyLimit: number;
	retryBudgetMs: number;
	baseDelayMs: number;
	maxDelayMs: number;
	deliveryTimeoutMs: number;
	leaseMs: number;
	concurrency: number;
	pollIntervalMs: number;
	shutdownGraceMs: number;
	/**
	 * Redirect events are never deduplicated (one signed pair may be reloaded without end), so
	 * each client IP and each InvId+OutSum pair may send at most this many per window (0: no
	 * limit). Postbacks are never limited.
	 */
	redirectLimit: { perClient: number; perPayment: number; windowMs: number; perPaymentDay: number };
	/** Look-ups incoming postbacks cause: all pairs together per minute; refusals remembered (ms). */
	lookUpLimit: { globalPerMinute: number; refusalMemoryMs: number };
	/**
	 * Distinct payment or payout postback events one signed pair (kind, cents of the signed
	 * amount, signed id) may store per window; 0: no limit. Duplicates (the service's retries of
	 * an event already stored) are always acknowledged.
	 */
	pairLimit: { max: number; windowMs: number };
	/** 'service': a payout postback is stored only when payout/status knows its TrsId. */
	payoutCheck: 'service' | 'off';
	/** The service's API address (payout look-ups). */
	apiBaseUrl: string;
	/**
	 * Which proxies are believed about the client address (X-Forwarded-For): false (none), a hop
	 * count, or a list of proxy addresses and CIDR ranges.
	 */
	trustProxy: false | number | string[];
	/**
	 * Wrong admin tokens (admin API bearer or console login) per client (an IPv6 /64 is one) per
	 * window, then 429; and from all clients together (globalMax), then 429 for every client that
	 * has not given the right token in the last 24 hours.
	 */
	authLimit: { max: number; windowMs: number; globalMax: number };
	/** HTTP server timeouts, in milliseconds. */
	timeouts: { request: number; headers: number; keepAlive: number; connection: number };
	logLevel: string;
	/** The relay's catch-up: reading the service for final payments and payouts no postback brought. */
	catchup: {
		/** Seconds between runs; 0: off. */
		intervalS: number;
		/** How many days back bills and payouts are read. */
		days: number;
		/** Most API calls one run makes (the rest waits for the next run). */
		maxCalls: number;
		/** Most bytes of the service's list rows one run holds, across every page (RELAY_CATCHUP_MAX_BYTES). */
		maxBytes: number;
		/** How many days back a deep run searches bills by their creation date. */
		billDays: number;
		/** How many days back a deep run lists paid payments to read their chargebacks. */
		chargebackDays: number;
		/** Seconds between deep runs (the first run after start is deep). */
		deepIntervalS: number;
		/** The service's address (PAYPALYCH_API_BASE_URL), without a trailing slash. */
		apiBaseUrl: string;
		/** PAYPALYCH_SHOP_ID: sent as shop_id on bill/search and payment/search when set. */
		shopId?: string;
	};
	/** The daily statement (docs/operator/statement.md). */
	statement: {
		timeZone: string;
		/** Seconds between looks at the day boundary; 0: no snapshots and no statement alert. */
		checkS: number;
		maxCalls: number;
		/** Most calls a second; 0: no pace of its own. */
		callsPerS: number;
	};
	alerts: {
		/** Where alert messages are POSTed as JSON. */
		targets: string[];
		/** An undelivered event older than this many seconds raises an alert; 0: never. */
		backlogS: number;
	};
}

type Fields = z.output<typeof fields>;

/** The variables of which at least one must name a target. */
export const TARGET_VARIABLES = [
	'RELAY_PAYMENT_TARGETS',
	'RELAY_PAYOUT_TARGETS',
	'RELAY_REDIRECT_TARGETS',
	'RELAY_SUCCESS_TARGETS',
	'RELAY_FAIL_TARGETS',
] as const;

/**
 * The rules between variables, each checked when the variables it reads are valid themselves (an
 * invalid one is already named), so one start-up reports every problem at once.
 */
function crossFieldIssues(c: Partial<Fields>): Array<[string, string]> {
	const issues: Array<[string, string]> = [];
	const lists = TARGET_VARIABLES.map((name) => c[name]);
	if (lists.every((list) => list !== undefined && list.length === 0)) {
		issues.push([
			'RELAY_PAYMENT_TARGETS',
			`no target at all: set at least one of ${TARGET_VARIABLES.join(', ')}`,
		]);
	}
	const both = <A, B>(a: A | undefined, b: B | undefined): [A, B] | undefined =>
		a === undefined || b === undefined ? undefined : [a, b];
	const lease = both(c.RELAY_LEASE_MS, c.RELAY_DELIVERY_TIMEOUT_MS);
	if (lease && lease[0] <= lease[1])
		issues.push(['RELAY_LEASE_MS', 'must be longer than RELAY_DELIVERY_TIMEOUT_MS']);
	const headers = both(c.RELAY_HEADERS_TIMEOUT_MS, c.RELAY_REQUEST_TIMEOUT_MS);
	if (headers && headers[0] > headers[1])
		issues.push(['RELAY_HEADERS_TIMEOUT_MS', 'must not be above RELAY_REQUEST_TIMEOUT_MS']);
	const delays = both(c.RELAY_MAX_DELAY_MS, c.RELAY_BASE_DELAY_MS);
	if (delays && delays[0] < delays[1])
		issues.push(['RELAY_MAX_DELAY_MS', 'must not be below RELAY_BASE_DELAY_MS']);
	if (
		c.PAYPALYCH_API_BASE_URL !== undefined &&
		!/^https:\/\//i.test(c.PAYPALYCH_API_BASE_URL) &&
		c.RELAY_ALLOW_PLAIN_HTTP_API === false
	) {
		issues.push([
			'PAYPALYCH_API_BASE_URL',
			'must be an https:// URL: the API token is sent with every call (set RELAY_ALLOW_PLAIN_HTTP_API=1 for a local sandbox or tests)',
		]);
	}
	return issues;
}

/** Error thrown for an unusable environment; the message names every bad variable, never a value. */
export class ConfigError extends Error {
	readonly variables: string[];
	constructor(variables: string[], lines: string[]) {
		super(`Invalid relay configuration:\n${lines.map((l) => `  ${l}`).join('\n')}`);
		this.name = 'ConfigError';
		this.variables = variables;
	}
}

/** A start-up failure caused by one variable's value (a database that cannot be reached, a busy port). */
export class StartupError extends Error {
	readonly variable: string;
	constructor(variable: string, message: string, options?: { cause?: unknown }) {
		super(`${variable}: ${message}`, options);
		this.name = 'StartupError';
		this.variable = variable;
	}
}

/** The names of every variable the relay reads. */
export const VARIABLES: readonly string[] = Object.keys(fields.shape);

/** Variables of the relay's own namespaces: one of these that the relay does not read is a typo. */
const OWN_PREFIX = /^(RELAY|PAYPALYCH)_/;

/**
 * Edits between two names: a letter added, removed or changed, or two neighbours swapped
 * (`PROT` is one edit from `PORT`).
 */
function distance(a: string, b: string): number {
	const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
		Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
	);
	for (let i = 1; i <= a.length; i++) {
		for (let j = 1; j <= b.length; j++) {
			const cost = a[i - 1] === b[j - 1] ? 0 : 1;
			d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
				d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
		}
	}
	return d[a.length][b.length];
}

/** The known variable closest to `name`, when it is close enough to be a misspelling. */
export function suggestVariable(name: string): string | undefined {
	let best: string | undefined;
	let bestDistance = Infinity;
	for (const known of VARIABLES) {
		const d = distance(name.toUpperCase(), known);
		if (d < bestDistance) {
			best = known;
			bestDistance = d;
		}
	}
	return bestDistance <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined;
}

/**
 * The variable the relay reads that `name` (outside RELAY_* and PAYPALYCH_*) is one edit from, in
 * any case: `PROT`, `LOG_LEVL`, `port` are the relay's PORT and LOG_LEVEL mistyped, not another
 * program's. Undefined for every other name of the environment.
 */
export function lookalikeOf(name: string): string | undefined {
	if (VARIABLES.includes(name)) return undefined;
	const upper = name.toUpperCase();
	return VARIABLES.find((known) => distance(upper, known) <= 1);
}

/**
 * Variables in `env` the relay does not read but that are its own: any RELAY_* or PAYPALYCH_*
 * name, and any other name one edit from one it reads. One line each.
 */
function unknownVariables(env: Record<string, string | undefined>): Array<[string, string]> {
	const issues: Array<[string, string]> = [];
	for (const name of Object.keys(env).sort()) {
		if (VARIABLES.includes(name)) continue;
		if (OWN_PREFIX.test(name)) {
			const suggestion = suggestVariable(name);
			issues.push([
				name,
				`unknown variable${suggestion ? `; did you mean ${suggestion}?` : ' (see paypalych-relay --help)'}`,
			]);
			continue;
		}
		const lookalike = lookalikeOf(name);
		if (lookalike)
			issues.push([
				name,
				`unknown variable, one letter from the relay's ${lookalike}; did you mean ${lookalike}? (rename it, or unset it if it belongs to another program)`,
			]);
	}
	return issues;
}

export interface VariableHelp {
	name: string;
	description: string;
	/** The value used when the variable is unset, as one would write it; undefined: required. */
	default: string | undefined;
	/** Set when the variable must be set: why (alone, or as one of the target lists). */
	required?: string;
}

/** Each variable with its description and default, read from the schema itself. */
export function variableHelp(
	env: Record<string, string | undefined> = process.env,
): VariableHelp[] {
	return Object.entries(fields.shape).map(([name, field]) => {
		const parsed = (field as z.ZodType).safeParse(undefined);
		let shown: string | undefined;
		let required: string | undefined;
		if (name === 'RELAY_DATABASE') shown = defaultDatabasePath(env);
		else if (parsed.success) {
			const value: unknown = parsed.data;
			if (value === undefined || (Array.isArray(value) && value.length === 0)) shown = '(none)';
			else shown = Array.isArray(value) ? value.join(',') : String(value);
		} else required = 'required';
		if ((TARGET_VARIABLES as readonly string[]).includes(name))
			required = 'at least one of the five *_TARGETS lists is required';
		return {
			name,
			description: (field as z.ZodType).description ?? '',
			default: shown,
			...(required ? { required } : {}),
		};
	});
}

export function loadConfig(env: Record<string, string | undefined> = process.env): RelayConfig {
	// Every variable on its own, then the rules between them: all problems in one message.
	const values: Record<string, unknown> = {};
	const issues: Array<[string, string]> = unknownVariables(env);
	for (const [name, field] of Object.entries(fields.shape)) {
		const parsed = (field as z.ZodType).safeParse(env[name]);
		if (parsed.success) values[name] = parsed.data;
		else for (const issue of parsed.error.issues) issues.push([name, issue.message]);
	}
	issues.push(...crossFieldIssues(values as Partial<Fields>));
	if (issues.length > 0) {
		const variables = [...new Set(issues.map(([name]) => name))];
		throw new ConfigError(
			variables,
			issues.map(([name, message]) => `${name}: ${message}`),
		);
	}
	const c = values as Fields;
	return {
		host: c.HOST,
		port: c.PORT,
		apiTokens: c.PAYPALYCH_API_TOKEN,
		targets: {
			payment: c.RELAY_PAYMENT_TARGETS,
			payout: c.RELAY_PAYOUT_TARGETS,
			redirect: c.RELAY_REDIRECT_TARGETS,
			success: c.RELAY_SUCCESS_TARGETS,
			fail: c.RELAY_FAIL_TARGETS,
			refund: c.RELAY_REFUND_TARGETS,
			chargeback: c.RELAY_CHARGEBACK_TARGETS,
		},
		requireReceipt: c.RELAY_REQUIRE_RECEIPT,
		successUrl: c.RELAY_SUCCESS_URL,
		failUrl: c.RELAY_FAIL_URL,
		// Absolute: the start-up log names the file wherever the relay was started from.
		database: resolveDatabase(c.RELAY_DATABASE, env),
		retentionDays: c.RELAY_RETENTION_DAYS,
		adminToken: c.RELAY_ADMIN_TOKEN,
		bodyLimit: c.RELAY_BODY_LIMIT,
		retryBudgetMs: c.RELAY_RETRY_BUDGET_MS,
		baseDelayMs: c.RELAY_BASE_DELAY_MS,
		maxDelayMs: c.RELAY_MAX_DELAY_MS,
		deliveryTimeoutMs: c.RELAY_DELIVERY_TIMEOUT_MS,
		leaseMs: c.RELAY_LEASE_MS,
		concurrency: c.RELAY_CONCURRENCY,
		pollIntervalMs: c.RELAY_POLL_INTERVAL_MS,
		shutdownGraceMs: c.RELAY_SHUTDOWN_GRACE_MS,
		redirectLimit: {
			perClient: c.RELAY_REDIRECT_LIMIT_PER_CLIENT,
			perPayment: c.RELAY_REDIRECT_LIMIT_PER_PAYMENT,
			windowMs: c.RELAY_REDIRECT_LIMIT_WINDOW_MS,
			perPaymentDay: c.RELAY_REDIRECT_LIMIT_PER_PAYMENT_DAY,
		},
		lookUpLimit: {
			globalPerMinute: c.RELAY_LOOKUP_GLOBAL_LIMIT,
			refusalMemoryMs: c.RELAY_LOOKUP_REFUSAL_MEMORY_MS,
		},
		pairLimit: { max: c.RELAY_PAIR_LIMIT, windowMs: c.RELAY_PAIR_LIMIT_WINDOW_MS },
		payoutCheck: c.RELAY_PAYOUT_CHECK,
		apiBaseUrl: c.PAYPALYCH_API_BASE_URL,
		trustProxy: c.RELAY_TRUST_PROXY,
		authLimit: {
			max: c.RELAY_AUTH_LIMIT,
			windowMs: c.RELAY_AUTH_LIMIT_WINDOW_MS,
			globalMax: c.RELAY_AUTH_GLOBAL_LIMIT,
		},
		timeouts: {
			request: c.RELAY_REQUEST_TIMEOUT_MS,
			headers: c.RELAY_HEADERS_TIMEOUT_MS,
			keepAlive: c.RELAY_KEEP_ALIVE_TIMEOUT_MS,
			connection: c.RELAY_CONNECTION_TIMEOUT_MS,
		},
		logLevel: c.LOG_LEVEL,
		catchup: catchupOf(c),
		statement: statementOf(c),
		alerts: { targets: c.RELAY_ALERT_TARGETS, backlogS: c.RELAY_ALERT_BACKLOG_S },
	};
}

/** The statement's settings. */
function statementOf(c: Fields): RelayConfig['statement'] {
	return {
		timeZone: c.RELAY_STATEMENT_TIME_ZONE,
		checkS: c.RELAY_STATEMENT_CHECK_S,
		maxCalls: c.RELAY_STATEMENT_MAX_CALLS,
		callsPerS: c.RELAY_STATEMENT_CALLS_PER_S,
	};
}

/** The catch-up's settings. */
function catchupOf(c: Fields): RelayConfig['catchup'] {
	return {
		intervalS: c.RELAY_CATCHUP_INTERVAL_S,
		days: c.RELAY_CATCHUP_DAYS,
		maxCalls: c.RELAY_CATCHUP_MAX_CALLS,
		maxBytes: c.RELAY_CATCHUP_MAX_BYTES,
		billDays: c.RELAY_CATCHUP_BILL_DAYS,
		chargebackDays: c.RELAY_CATCHUP_CHARGEBACK_DAYS,
		deepIntervalS: c.RELAY_CATCHUP_DEEP_INTERVAL_S,
		apiBaseUrl: c.PAYPALYCH_API_BASE_URL,
		shopId: c.PAYPALYCH_SHOP_ID,
	};
}
