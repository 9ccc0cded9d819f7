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
	trustProxy: boolean;
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

const schema = z
	.object({
		HOST: z
			.string()
			.trim()
			.min(1)
			.optional()
			.transform((v) => v ?? '127.0.0.1'),
		PORT: int(0, 8080).refine((p) => p <= 65535, 'must be a port number (0-65535)'),
		PAYPALYCH_API_TOKEN: z
			.string({ error: 'is required (the API token; comma-separated old,new during rotation)' })
			.transform((v) =>
				v
					.split(',')
					.map((s) => s.trim())
					.filter((s) => s !== ''),
			)
			.refine((list) => list.length > 0, 'must hold at least one token'),
		RELAY_PAYMENT_TARGETS: urlList,
		RELAY_PAYOUT_TARGETS: urlList,
		RELAY_REDIRECT_TARGETS: urlList,
		RELAY_SUCCESS_TARGETS: urlList,
		RELAY_FAIL_TARGETS: urlList,
		RELAY_SUCCESS_URL: optionalUrl,
		RELAY_FAIL_URL: optionalUrl,
		RELAY_DATABASE: z
			.string()
			.trim()
			.optional()
			.transform((v) => (v === undefined || v === '' ? '.relay-data/relay.sqlite' : v))
			.refine(
				(v) => !isPostgresUrl(v) || postgresUrlOk(v),
				'must be a file path (SQLite) or a postgres://user@host:port/database URL',
			),
		RELAY_ADMIN_TOKEN: z
			.string({ error: 'is required (bearer token of the admin API, at least 16 characters)' })
			.trim()
			.min(16, 'must be at least 16 characters'),
		RELAY_BODY_LIMIT: int(256, 64 * 1024),
		RELAY_RETRY_BUDGET_MS: int(0, 24 * HOUR),
		RELAY_BASE_DELAY_MS: int(1, 5_000),
		RELAY_MAX_DELAY_MS: int(1, HOUR),
		RELAY_DELIVERY_TIMEOUT_MS: int(100, 10_000),
		RELAY_LEASE_MS: int(200, 60_000),
		RELAY_CONCURRENCY: int(1, 16),
		RELAY_POLL_INTERVAL_MS: int(10, 1_000),
		RELAY_SHUTDOWN_GRACE_MS: int(0, 10_000),
		// The service retries a postback for about 31 hours (10 s … 10^5 s): pruning sooner than two
		// days could forget a dedupe key while its retries may still come. 0 disables pruning.
		RELAY_RETENTION_DAYS: int(0, 30).refine(
			(d) => d === 0 || d >= 2,
			'must be 0 (keep everything) or at least 2 days',
		),
		RELAY_REDIRECT_LIMIT_PER_CLIENT: int(0, 30),
		RELAY_REDIRECT_LIMIT_PER_PAYMENT: int(0, 10),
		RELAY_REDIRECT_LIMIT_WINDOW_MS: int(1_000, 60_000),
		// Every RELAY_CATCHUP_INTERVAL_S seconds (0: off) the relay reads the service's last
		// RELAY_CATCHUP_DAYS days; below 30 s it would read the API more than it needs to.
		RELAY_CATCHUP_INTERVAL_S: int(0, 300).refine(
			(s) => s === 0 || s >= 30,
			'must be 0 (catch-up off) or at least 30 seconds',
		),
		RELAY_CATCHUP_DAYS: int(1, 3).refine((d) => d <= 30, 'must be at most 30 days'),
		RELAY_CATCHUP_MAX_CALLS: int(1, 200),
		PAYPALYCH_API_BASE_URL: optionalUrl.transform((v) =>
			(v ?? 'https://pal24.pro').replace(/\/+$/, ''),
		),
		RELAY_ALERT_TARGETS: urlList,
		RELAY_ALERT_BACKLOG_S: int(0, 3600),
		RELAY_TRUST_PROXY: flag(false),
		RELAY_REQUIRE_RECEIPT: flag(true),
		LOG_LEVEL: z
			.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent', ''])
			.optional()
			.transform((v) => (v === undefined || v === '' ? 'info' : v)),
	})
	.superRefine((c, ctx) => {
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

export function loadConfig(env: Record<string, string | undefined> = process.env): RelayConfig {
	const result = schema.safeParse(env);
	if (!result.success) {
		const variables: string[] = [];
		const lines: string[] = [];
		for (const issue of result.error.issues) {
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
		trustProxy: c.RELAY_TRUST_PROXY,
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
