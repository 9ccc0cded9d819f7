import { z } from 'zod';

/** Everything the relay needs, read from environment variables (see relay/README.md). */
export interface RelayConfig {
	host: string;
	port: number;
	/** Accepted API tokens, newest last or first: any of them verifies a call (rotation). */
	apiTokens: string[];
	/**
	 * The lists as configured. `redirect` receives both success and fail redirects, `success` and
	 * `fail` only their own; `targetsFor` (context.ts) resolves what each kind fans out to.
	 */
	targets: {
		payment: string[];
		payout: string[];
		redirect: string[];
		success: string[];
		fail: string[];
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
	redirectLimit: { perClient: number; perPayment: number; windowMs: number };
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
	/** Wrong admin tokens (admin API bearer or console login) per client per window, then 429. */
	authLimit: { max: number; windowMs: number };
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
		/** The service's address (PAYPALYCH_API_BASE_URL), without a trailing slash. */
		apiBaseUrl: string;
	};
	alerts: {
		/** Where alert messages are POSTed as JSON. */
		targets: string[];
		/** An undelivered event older than this many seconds raises an alert; 0: never. */
		backlogS: number;
	};
}

const HOUR = 3_600_000;

const int = (min: number, fallback: number) =>
	z
		.string()
		.trim()
		.regex(/^\d+$/, 'must be a whole number')
		.transform(Number)
		.pipe(z.number().int().min(min, `must be at least ${min}`))
		.optional()
		.transform((v) => v ?? fallback);

/** true/false/1/0; unset or empty gives the default. */
const flag = (fallback: boolean) =>
	z
		.enum(['true', 'false', '1', '0', ''], { error: 'must be true or false' })
		.optional()
		.transform((v) => (v === undefined || v === '' ? fallback : v === 'true' || v === '1'));

const httpUrl = (value: string) => {
	try {
		const u = new URL(value);
		return u.protocol === 'http:' || u.protocol === 'https:';
	} catch {
		return false;
	}
};

const urlList = z
	.string()
	.optional()
	.transform((v) =>
		(v ?? '')
			.split(',')
			.map((s) => s.trim())
			.filter((s) => s !== ''),
	)
	.refine((list) => list.every(httpUrl), 'must be a comma-separated list of http(s) URLs');

/** An IPv4 or IPv6 address, optionally with a /prefix (what proxy-addr accepts). */
const ADDRESS = /^(\d{1,3}(\.\d{1,3}){3}|[0-9a-f:]*:[0-9a-f:.]*)(\/\d{1,3})?$/i;

/**
 * RELAY_TRUST_PROXY: unset, empty or false: no proxy; a whole number: that many proxy hops in
 * front of the relay; otherwise a comma-separated list of proxy addresses or CIDR ranges (or the
 * names loopback, linklocal, uniquelocal). `true` would believe the left-most X-Forwarded-For
 * entry, which the client writes, so it is refused.
 */
const trustProxy = z
	.string()
	.trim()
	.optional()
	.superRefine((v, ctx) => {
		if (v !== undefined && /^true$/i.test(v)) {
			ctx.addIssue({
				code: 'custom',
				message:
					'true is refused: it lets every client choose its address with X-Forwarded-For. Set the number of proxy hops in front of the relay (for example 1) or a comma-separated list of proxy addresses or CIDR ranges (for example 10.0.0.5,192.168.0.0/16)',
			});
			return;
		}
		if (v === undefined || v === '' || /^(false|0)$/i.test(v) || /^\d+$/.test(v)) return;
		const bad = v
			.split(',')
			.map((s) => s.trim())
			.filter(
				(s) =>
					s !== '' && !ADDRESS.test(s) && !['loopback', 'linklocal', 'uniquelocal'].includes(s),
			);
		if (bad.length > 0) {
			ctx.addIssue({
				code: 'custom',
				message:
					'must be false, a number of proxy hops (for example 1) or a comma-separated list of proxy addresses or CIDR ranges',
			});
		}
	})
	.transform((v): false | number | string[] => {
		if (v === undefined || v === '' || /^(false|0)$/i.test(v)) return false;
		if (/^\d+$/.test(v)) return Number(v);
		return v
			.split(',')
			.map((s) => s.trim())
			.filter((s) => s !== '');
	})
	.describe(
		'Proxies believed about the client address: false, a hop count (1 behind one proxy) or a list of proxy addresses/CIDRs; true is refused',
	);

/** RELAY_DATABASE names the PostgreSQL store. */
export const isPostgresUrl = (value: string) => /^postgres(ql)?:\/\//i.test(value);

const postgresUrlOk = (value: string) => {
	try {
		const u = new URL(value);
		return u.hostname !== '' && u.pathname.length > 1;
	} catch {
		return false;
	}
};

const optionalUrl = z
	.string()
	.trim()
	.optional()
	.transform((v) => (v === undefined || v === '' ? undefined : v))
	.refine((v) => v === undefined || httpUrl(v), 'must be an http(s) URL');

/**
 * Every variable the relay reads, each with a `.describe()` sentence: `paypalych-relay --help` is
 * generated from this object, and a RELAY_* or PAYPALYCH_* variable that is not in it is refused.
 */
const fields = z.object({
	HOST: z
		.string()
		.trim()
		.min(1)
		.optional()
		.transform((v) => v ?? '127.0.0.1')
		.describe('address to listen on'),
	PORT: int(0, 8080)
		.refine((p) => p <= 65535, 'must be a port number (0-65535)')
		.describe('port to listen on (0: any free port)'),
	PAYPALYCH_API_TOKEN: z
		.string({ error: 'is required (the API token; comma-separated old,new during rotation)' })
		.transform((v) =>
			v
				.split(',')
				.map((s) => s.trim())
				.filter((s) => s !== ''),
		)
		.refine((list) => list.length > 0, 'must hold at least one token')
		.describe(
			"the shop's API token that signs postbacks; old,new (comma-separated) during a rotation",
		),
	RELAY_PAYMENT_TARGETS: urlList.describe(
		'n8n webhook URLs (comma-separated) that receive payment postbacks',
	),
	RELAY_PAYOUT_TARGETS: urlList.describe('n8n webhook URLs that receive payout postbacks'),
	RELAY_REDIRECT_TARGETS: urlList.describe(
		'n8n webhook URLs that receive both success and fail redirects',
	),
	RELAY_SUCCESS_TARGETS: urlList.describe('n8n webhook URLs that receive success redirects'),
	RELAY_FAIL_TARGETS: urlList.describe('n8n webhook URLs that receive fail redirects'),
	RELAY_SUCCESS_URL: optionalUrl.describe(
		"page the customer's browser is sent to after a success redirect",
	),
	RELAY_FAIL_URL: optionalUrl.describe(
		"page the customer's browser is sent to after a fail redirect",
	),
	RELAY_DATABASE: z
		.string()
		.trim()
		.optional()
		.transform((v) => (v === undefined || v === '' ? '.relay-data/relay.sqlite' : v))
		.refine(
			(v) => !isPostgresUrl(v) || postgresUrlOk(v),
			'must be a file path (SQLite) or a postgres://user@host:port/database URL',
		)
		.describe(
			'SQLite file path, or postgres://user:password@host:5432/database for the PostgreSQL store',
		),
	RELAY_ADMIN_TOKEN: z
		.string({ error: 'is required (bearer token of the admin API, at least 16 characters)' })
		.trim()
		.min(16, 'must be at least 16 characters')
		.describe('bearer token of the admin API and console (at least 16 characters)'),
	RELAY_BODY_LIMIT: int(256, 64 * 1024).describe('largest request body accepted, in bytes'),
	RELAY_RETRY_BUDGET_MS: int(0, 24 * HOUR).describe(
		'how long a delivery is retried before it becomes a dead letter, in ms',
	),
	RELAY_BASE_DELAY_MS: int(1, 5_000).describe('first retry delay, in ms (doubles with jitter)'),
	RELAY_MAX_DELAY_MS: int(1, HOUR).describe('longest retry delay, in ms'),
	RELAY_DELIVERY_TIMEOUT_MS: int(100, 10_000).describe('time one delivery to n8n may take, in ms'),
	RELAY_LEASE_MS: int(200, 60_000).describe(
		'how long a claimed delivery stays with this instance, in ms (above the delivery timeout)',
	),
	RELAY_CONCURRENCY: int(1, 16).describe('deliveries in flight at once'),
	RELAY_POLL_INTERVAL_MS: int(10, 1_000).describe(
		'how often the queue is polled for due deliveries, in ms',
	),
	RELAY_SHUTDOWN_GRACE_MS: int(0, 10_000).describe(
		'time in-flight deliveries get to finish on shutdown, in ms',
	),
	// The service retries a postback for about 31 hours (10 s … 10^5 s): pruning sooner than two
	// days could forget a dedupe key while its retries may still come. 0 disables pruning.
	RELAY_RETENTION_DAYS: int(0, 30)
		.refine((d) => d === 0 || d >= 2, 'must be 0 (keep everything) or at least 2 days')
		.describe(
			'delivered events older than this many days are pruned (0: keep everything, else at least 2)',
		),
	RELAY_REDIRECT_LIMIT_PER_CLIENT: int(0, 30).describe(
		'redirects one client IP may send per window (0: no limit)',
	),
	RELAY_REDIRECT_LIMIT_PER_PAYMENT: int(0, 10).describe(
		'redirects one InvId+OutSum pair may send per window (0: no limit)',
	),
	RELAY_REDIRECT_LIMIT_WINDOW_MS: int(1_000, 60_000).describe(
		'window of the redirect limits, in ms',
	),
	// Every RELAY_CATCHUP_INTERVAL_S seconds (0: off) the relay reads the service's last
	// RELAY_CATCHUP_DAYS days; below 30 s it would read the API more than it needs to.
	RELAY_CATCHUP_INTERVAL_S: int(0, 300)
		.refine((s) => s === 0 || s >= 30, 'must be 0 (catch-up off) or at least 30 seconds')
		.describe(
			'how often the catch-up reads the service for postbacks that never came, in seconds (0: off, else at least 30)',
		),
	RELAY_CATCHUP_DAYS: int(1, 3)
		.refine((d) => d <= 30, 'must be at most 30 days')
		.describe('how many days back each catch-up run reads (at most 30)'),
	RELAY_CATCHUP_MAX_CALLS: int(1, 200).describe(
		'API calls one catch-up run may make at the most (the next run goes on)',
	),
	RELAY_ALERT_TARGETS: urlList.describe(
		'URLs (comma-separated) the relay posts a JSON alert to: postbacks found by catch-up, dead deliveries, an old backlog',
	),
	RELAY_ALERT_BACKLOG_S: int(0, 3600).describe(
		'alert when the oldest undelivered event is older than this many seconds (0: never)',
	),
	// One signature from a customer's redirect must not mint unlimited events.
	RELAY_PAIR_LIMIT: int(0, 10).describe(
		'distinct payment/payout postback events per signed pair (kind, amount in cents, signed id) per window (0: no limit)',
	),
	RELAY_PAIR_LIMIT_WINDOW_MS: int(60_000, 24 * HOUR).describe('window of RELAY_PAIR_LIMIT, in ms'),
	RELAY_PAYOUT_CHECK: z
		.enum(['service', 'off', ''], { error: 'must be service or off' })
		.optional()
		.transform((v): 'service' | 'off' => (v === 'off' ? 'off' : 'service'))
		.describe(
			'service: a payout postback is stored only when payout/status knows its TrsId (a payment signature is refused on /postback/payout); off: signature only',
		),
	PAYPALYCH_API_BASE_URL: optionalUrl
		.transform((v) => (v ?? 'https://pal24.pro').replace(/\/+$/, ''))
		.describe("the service's API address"),
	RELAY_TRUST_PROXY: trustProxy.describe(
		'proxies in front of the relay: a hop count (1) or proxy addresses/CIDRs; true is refused',
	),
	RELAY_AUTH_LIMIT: int(1, 10).describe(
		'wrong admin tokens (admin API and console login together) per client per window before 429',
	),
	RELAY_AUTH_LIMIT_WINDOW_MS: int(1_000, 15 * 60_000).describe('window of RELAY_AUTH_LIMIT, in ms'),
	RELAY_REQUEST_TIMEOUT_MS: int(100, 30_000).describe(
		'longest time a client may take to send a whole request (headers and body), in ms',
	),
	RELAY_HEADERS_TIMEOUT_MS: int(100, 10_000).describe(
		'longest time a client may take to send the request headers, in ms',
	),
	RELAY_KEEP_ALIVE_TIMEOUT_MS: int(100, 5_000).describe(
		'how long an idle keep-alive connection stays open, in ms',
	),
	RELAY_CONNECTION_TIMEOUT_MS: int(100, 60_000).describe(
		'a connection idle (nothing received or sent) this long is closed, in ms',
	),
	RELAY_REQUIRE_RECEIPT: flag(true).describe(
		"count a delivery only with the PayPalych Trigger's receipt header (false for targets that are not the trigger)",
	),
	LOG_LEVEL: z
		.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent', ''])
		.optional()
		.transform((v) => (v === undefined || v === '' ? 'info' : v))
		.describe('fatal, error, warn, info, debug, trace or silent'),
});

const schema = fields.superRefine((c, ctx) => {
	const lists = [
		c.RELAY_PAYMENT_TARGETS,
		c.RELAY_PAYOUT_TARGETS,
		c.RELAY_REDIRECT_TARGETS,
		c.RELAY_SUCCESS_TARGETS,
		c.RELAY_FAIL_TARGETS,
	];
	if (lists.every((l) => l.length === 0)) {
		ctx.addIssue({
			code: 'custom',
			path: ['RELAY_PAYMENT_TARGETS'],
			message:
				'no target at all: set RELAY_PAYMENT_TARGETS, RELAY_PAYOUT_TARGETS, RELAY_REDIRECT_TARGETS, RELAY_SUCCESS_TARGETS or RELAY_FAIL_TARGETS',
		});
	}
	if (c.RELAY_LEASE_MS <= c.RELAY_DELIVERY_TIMEOUT_MS) {
		ctx.addIssue({
			code: 'custom',
			path: ['RELAY_LEASE_MS'],
			message: 'must be longer than RELAY_DELIVERY_TIMEOUT_MS',
		});
	}
	if (c.RELAY_HEADERS_TIMEOUT_MS > c.RELAY_REQUEST_TIMEOUT_MS) {
		ctx.addIssue({
			code: 'custom',
			path: ['RELAY_HEADERS_TIMEOUT_MS'],
			message: 'must not be above RELAY_REQUEST_TIMEOUT_MS',
		});
	}
	if (c.RELAY_MAX_DELAY_MS < c.RELAY_BASE_DELAY_MS) {
		ctx.addIssue({
			code: 'custom',
			path: ['RELAY_MAX_DELAY_MS'],
			message: 'must not be below RELAY_BASE_DELAY_MS',
		});
	}
});

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

function distance(a: string, b: string): number {
	let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
	for (let i = 1; i <= a.length; i++) {
		const row = [i];
		for (let j = 1; j <= b.length; j++) {
			row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
		}
		prev = row;
	}
	return prev[b.length];
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

/** RELAY_* and PAYPALYCH_* variables in `env` that the relay does not read, one line each. */
function unknownVariables(env: Record<string, string | undefined>): Array<[string, string]> {
	return Object.keys(env)
		.filter((name) => OWN_PREFIX.test(name) && !VARIABLES.includes(name))
		.sort()
		.map((name) => {
			const suggestion = suggestVariable(name);
			return [
				name,
				`unknown variable${suggestion ? `; did you mean ${suggestion}?` : ' (see paypalych-relay --help)'}`,
			];
		});
}

export interface VariableHelp {
	name: string;
	description: string;
	/** The value used when the variable is unset, as one would write it; undefined: required. */
	default: string | undefined;
}

/** Each variable with its description and default, read from the schema itself. */
export function variableHelp(): VariableHelp[] {
	return Object.entries(fields.shape).map(([name, field]) => {
		const parsed = (field as z.ZodType).safeParse(undefined);
		let shown: string | undefined;
		if (parsed.success) {
			const value: unknown = parsed.data;
			if (value === undefined || (Array.isArray(value) && value.length === 0)) shown = '(none)';
			else shown = Array.isArray(value) ? value.join(',') : String(value);
		}
		return { name, description: (field as z.ZodType).description ?? '', default: shown };
	});
}

export function loadConfig(env: Record<string, string | undefined> = process.env): RelayConfig {
	const result = schema.safeParse(env);
	const unknown = unknownVariables(env);
	if (!result.success || unknown.length > 0) {
		const variables: string[] = [];
		const lines: string[] = [];
		for (const [name, message] of unknown) {
			variables.push(name);
			lines.push(`${name}: ${message}`);
		}
		for (const issue of result.success ? [] : result.error.issues) {
			const name = String(issue.path[0] ?? 'environment');
			if (!variables.includes(name)) variables.push(name);
			lines.push(`${name}: ${issue.message}`);
		}
		throw new ConfigError(variables, lines);
	}
	const c = result.data;
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
		},
		requireReceipt: c.RELAY_REQUIRE_RECEIPT,
		successUrl: c.RELAY_SUCCESS_URL,
		failUrl: c.RELAY_FAIL_URL,
		database: c.RELAY_DATABASE,
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
		},
		pairLimit: { max: c.RELAY_PAIR_LIMIT, windowMs: c.RELAY_PAIR_LIMIT_WINDOW_MS },
		payoutCheck: c.RELAY_PAYOUT_CHECK,
		apiBaseUrl: c.PAYPALYCH_API_BASE_URL,
		trustProxy: c.RELAY_TRUST_PROXY,
		authLimit: { max: c.RELAY_AUTH_LIMIT, windowMs: c.RELAY_AUTH_LIMIT_WINDOW_MS },
		timeouts: {
			request: c.RELAY_REQUEST_TIMEOUT_MS,
			headers: c.RELAY_HEADERS_TIMEOUT_MS,
			keepAlive: c.RELAY_KEEP_ALIVE_TIMEOUT_MS,
			connection: c.RELAY_CONNECTION_TIMEOUT_MS,
		},
		logLevel: c.LOG_LEVEL,
		catchup: {
			intervalS: c.RELAY_CATCHUP_INTERVAL_S,
			days: c.RELAY_CATCHUP_DAYS,
			maxCalls: c.RELAY_CATCHUP_MAX_CALLS,
			apiBaseUrl: c.PAYPALYCH_API_BASE_URL,
		},
		alerts: { targets: c.RELAY_ALERT_TARGETS, backlogS: c.RELAY_ALERT_BACKLOG_S },
	};
}
