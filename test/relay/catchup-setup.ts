// The start-up the catch-up suites share (catchup-suite.ts, catchup-deep-suite.ts): a temp folder,
// the n8n and alert targets, a real sandbox over HTTP, the hooks that start and stop them, and the
// relay, admin API and postback calls the suites make against them.
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startSandbox } from '../../sandbox/src/index.ts';
import type { RunningSandbox } from '../../sandbox/src/index.ts';
import { start } from '../../relay/src/server.ts';
import type { RunningRelay } from '../../relay/src/server.ts';
import { ADMIN_TOKEN, Target, baseEnv, form, tempDir } from './helpers.ts';
import type { SuiteStore } from './fresh-store.ts';
import { sandboxControl } from './sandbox-merchant.ts';

type Json = Record<string, any>;
const DAY_MS = 86_400_000;

/**
 * Registers the suite's hooks and answers what its tests use. After each test the relays it
 * started are closed, then `reset` runs, then both targets forget what they received.
 */
export function catchupSetup(store: SuiteStore, reset: () => Promise<void>) {
	const tmp = tempDir();
	const target = new Target();
	const alerts = new Target();
	let sandbox: RunningSandbox;
	const relays: RunningRelay[] = [];

	beforeAll(async () => {
		await target.listen();
		await alerts.listen();
		sandbox = await startSandbox({ port: 0, timeFactor: 0.001, liveExtras: true });
	});
	afterEach(async () => {
		await Promise.all(relays.splice(0).map((r) => r.close()));
		await reset();
		target.received = [];
		alerts.received = [];
	});
	afterAll(async () => {
		await sandbox?.close();
		await target.close();
		await alerts.close();
		await store.cleanup();
		tmp.cleanup();
	});

	const sandboxUrl = () => sandbox.url;
	const control = (method: string, path: string, body?: unknown) =>
		sandboxControl(sandbox.url)(method, path, body);
	/** Bills, payments and payouts made inside `fn` are dated `days` days ago (the sandbox's clock). */
	const daysAgo = async <T>(days: number, fn: () => Promise<T>): Promise<T> => {
		await control('POST', '/clock', { offsetMs: -days * DAY_MS });
		try {
			return await fn();
		} finally {
			await control('POST', '/clock', { now: null });
		}
	};

	/** A relay on the suite's store (or `database`), catching up from the sandbox on demand. */
	const relay = async (
		token: string,
		extra: Record<string, string> = {},
		deps: Record<string, unknown> = {},
		database?: string,
	) => {
		const r = await start(
			baseEnv(
				tmp.dir,
				{ payment: [target.url('/n8n/payment')], payout: [target.url('/n8n/payout')] },
				{
					PAYPALYCH_API_TOKEN: token,
					PAYPALYCH_API_BASE_URL: sandbox.url,
					RELAY_DATABASE: database ?? (await store.database()),
					// Runs through the admin API; the timer's first run would come an hour later.
					RELAY_CATCHUP_INTERVAL_S: '3600',
					LOG_LEVEL: 'silent',
					...extra,
				},
			),
			{ deps: { catchupBackoffMs: 5, alertCheckMs: 50, ...deps } },
		);
		relays.push(r);
		return r;
	};
	const admin = async (r: RunningRelay, method: string, path: string, body?: unknown) => {
		const res = await fetch(`${r.url}/admin${path}`, {
			method,
			headers: {
				authorization: `Bearer ${ADMIN_TOKEN}`,
				...(body === undefined ? {} : { 'content-type': 'application/json' }),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		return { status: res.status, ...((await res.json()) as Json) } as Json;
	};
	const events = async (r: RunningRelay, query = '') =>
		(await admin(r, 'GET', `/events?limit=1000${query}`)).data as Json[];
	const postback = (r: RunningRelay, kind: string, fields: Record<string, string>) =>
		fetch(`${r.url}/postback/${kind}`, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body: form(fields),
		});

	return { tmp, target, alerts, sandboxUrl, control, daysAgo, relay, admin, events, postback };
}
