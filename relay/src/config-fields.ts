import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';

/**
 * The relay's environment variables as one zod object: each variable's parsing, bounds, default and
 * `.describe()` sentence. `config.ts` checks them together and turns them into a RelayConfig.
 */

const HOUR = 3_600_000;

/** Whether the runtime knows this IANA time zone. */
function isTimeZone(zone: string): boolean {
	try {
		new Intl.DateTimeFormat('en-US', { timeZone: zone });
		return true;
	} catch {
		return false;
	}
}

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
/** More proxies than this in front of one relay is a mistake (RELAY_TRUST_PROXY=99999 acts like true). */
export const MAX_PROXY_HOPS = 10;

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
		if (v !== undefined && /^\d+$/.test(v) && Number(v) > MAX_PROXY_HOPS) {
			ctx.addIssue({
				code: 'custom',
				message: `a hop count above ${MAX_PROXY_HOPS} is refused: more hops than there are proxies lets every client choose its address with X-Forwarded-For, as true would. Set the real number of proxies in front of the relay (for example 1) or their addresses`,
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

/**
 * The SQLite file when RELAY_DATABASE is unset, an absolute path whatever folder the relay starts
 * in: under systemd with `StateDirectory=` (the unit in deploy/), `$STATE_DIRECTORY/relay.sqlite`;
 * otherwise `$XDG_STATE_HOME/paypalych-relay/relay.sqlite`, by default under
 * `~/.local/state`. The store makes its folder 0700 and the file 0600 (store-open.ts).
 */
export function defaultDatabasePath(env: Record<string, string | undefined>): string {
	const state = env.STATE_DIRECTORY?.split(':')[0];
	if (state) return join(resolve(state), 'relay.sqlite');
	const xdg = env.XDG_STATE_HOME?.startsWith('/') ? env.XDG_STATE_HOME : undefined;
	return join(
		xdg ?? join(env.HOME || homedir(), '.local', 'state'),
		'paypalych-relay',
		'relay.sqlite',
	);
}

/** RELAY_DATABASE as the store opens it: a PostgreSQL URL as given, a file as an absolute path. */
export function resolveDatabase(
	value: string | undefined,
	env: Record<string, string | undefined>,
): string {
	if (value === undefined) return defaultDatabasePath(env);
	return isPostgresUrl(value) || value === ':memory:' ? value : resolve(value);
}

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
export const fields = z.object({
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
	RELAY_REFUND_TARGETS: urlList.describe(
		'n8n webhook URLs that receive refund postbacks (unset: the payment targets)',
	),
	RELAY_CHARGEBACK_TARGETS: urlList.describe(
		'n8n webhook URLs that receive chargeback postbacks (unset: the payment targets)',
	),
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
		.transform((v) => (v === undefined || v === '' ? undefined : v))
		.refine(
			(v) => v === undefined || !isPostgresUrl(v) || postgresUrlOk(v),
			'must be a file path (SQLite) or a postgres://user@host:port/database URL',
		)
		.describe(
			'SQLite file path (made 0600 in a 0700 folder; default: $STATE_DIRECTORY under systemd, else ~/.local/state/paypalych-relay), or postgres://user:password@host:5432/database for the PostgreSQL store',
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
	RELAY_REDIRECT_LIMIT_PER_PAYMENT_DAY: int(0, 50).describe(
		'redirect events one InvId+OutSum pair (success and fail together) may store per 24 h; over it the customer still sees the page, nothing is stored (0: no limit)',
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
	// A deep run looks for bills paid long after they were created (a NORMAL bill sent last week, a
	// MULTI link made last month): it searches bills created this many days back.
	RELAY_CATCHUP_BILL_DAYS: int(1, 90)
		.refine((d) => d <= 365, 'must be at most 365 days')
		.describe(
			'how many days back a deep catch-up run searches bills by their creation date (at most 365)',
		),
	// Card chargebacks come months after the payment: a deep run lists the paid payments of this
	// many days and reads each one's chargebacks, least recently read first.
	RELAY_CATCHUP_CHARGEBACK_DAYS: int(1, 180)
		.refine((d) => d <= 730, 'must be at most 730 days')
		.describe(
			'how many days back a deep catch-up run lists paid payments to read their chargebacks (at most 730)',
		),
	RELAY_CATCHUP_DEEP_INTERVAL_S: int(60, 21_600).describe(
		'seconds between deep catch-up runs (the first run after start is deep; at least 60)',
	),
	RELAY_CATCHUP_MAX_CALLS: int(1, 200).describe(
		'API calls one catch-up run may make at the most (the next run goes on)',
	),
	// What one run may hold of the service's lists (bills, payouts), counted across every page.
	RELAY_CATCHUP_MAX_BYTES: int(1_048_576, 64 * 1_048_576).describe(
		"bytes of the service's list rows one catch-up run may hold, across every page (at least 1 MiB); over it the run stops partial, raises catchup-failed, and the next run goes on",
	),
	// The statement (docs/operator/statement.md): merchant/balance read at each day boundary in
	// this zone and at the first start; the day's movements read from the service's lists.
	RELAY_STATEMENT_TIME_ZONE: z
		.string()
		.trim()
		.optional()
		.transform((v) => (v === undefined || v === '' ? 'Europe/Moscow' : v))
		.refine(isTimeZone, 'must be an IANA time zone, such as Europe/Moscow or UTC')
		.describe(
			"the time zone of the statement's days: the balance is recorded at each of its midnights",
		),
	RELAY_STATEMENT_CHECK_S: int(0, 60)
		.refine((s) => s === 0 || (s >= 10 && s <= 3600), 'must be 0 (off) or 10 to 3600 seconds')
		.describe(
			'how often the relay looks whether a day boundary passed, to record the balance and check the day that closed, in seconds (0: no snapshots, no statement alert)',
		),
	RELAY_STATEMENT_MAX_CALLS: int(10, 30_000).describe(
		"API calls one statement may make at the most (its lists' pages and the day's paid payments' chargebacks); over it the statement says what it could not read",
	),
	RELAY_STATEMENT_CALLS_PER_S: int(0, 0).describe(
		"most API calls per second a statement makes (0: no pace of its own; a 429's Retry-After is always honoured)",
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
	RELAY_LOOKUP_GLOBAL_LIMIT: int(1, 60).describe(
		'look-ups (payout/status, payment/status) incoming postbacks may cause per minute, all signed pairs together; over it the postback gets 503 with Retry-After',
	),
	RELAY_LOOKUP_REFUSAL_MEMORY_MS: int(0, 15 * 60_000).describe(
		'how long a look-up the service answered "not known" (or contradicted) is remembered and refused again without a call, in ms (0: not remembered)',
	),
	PAYPALYCH_API_BASE_URL: optionalUrl
		.transform((v) => (v ?? 'https://pal24.pro').replace(/\/+$/, ''))
		.describe(
			"the service's API address (https://; http:// only with RELAY_ALLOW_PLAIN_HTTP_API=1)",
		),
	PAYPALYCH_SHOP_ID: z
		.string()
		.trim()
		.max(100)
		.regex(/^[^\s&=#?]*$/, 'a shop id: no spaces, &, =, # or ?')
		.optional()
		.transform((v) => v || undefined)
		.describe(
			"your shop's id, sent as shop_id on the catch-up's bill/search and payment/search (a deployment that requires it refuses every search without it)",
		),
	RELAY_ALLOW_PLAIN_HTTP_API: flag(false).describe(
		'1: accept an http:// PAYPALYCH_API_BASE_URL (the API token then travels in clear: a local sandbox or tests only)',
	),
	RELAY_TRUST_PROXY: trustProxy.describe(
		'proxies in front of the relay: a hop count (1) or proxy addresses/CIDRs; true is refused',
	),
	RELAY_AUTH_LIMIT: int(1, 10).describe(
		'wrong admin tokens (admin API and console login together) per client per window before 429',
	),
	RELAY_AUTH_GLOBAL_LIMIT: int(1, 1000).describe(
		'wrong admin tokens from all clients together per RELAY_AUTH_LIMIT_WINDOW_MS before every token check gets 429 (a client that gave the right token in the last 24 h excepted)',
	),
	RELAY_AUTH_LIMIT_WINDOW_MS: int(1_000, 15 * 60_000).describe(
		'window of RELAY_AUTH_LIMIT and RELAY_AUTH_GLOBAL_LIMIT, in ms',
	),
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
