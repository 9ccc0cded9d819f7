/**
 * The relay on the open internet: what the attack suites of this folder share. Each attack is
 * replayed as an outside attacker would, on both stores (a real SQLite file and a real PostgreSQL
 * database of the test's own), with real HTTP against the sandbox (the service's stand-in) and the
 * real trigger. One file per thing attacked: forged postbacks and the twin check, the limits,
 * the admin API and console, the network in front (proxies, slow bodies), hostile bytes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe } from 'vitest';
import { startSandbox } from '../../../sandbox/src/index.ts';
import { start } from '../../../relay/src/server.ts';
import type { RunningRelay } from '../../../relay/src/server.ts';
import type { Store } from '../../../relay/src/store/types.ts';
import {
	ADMIN_TOKEN,
	TOKEN,
	Target,
	baseEnv,
	form,
	md5,
	redirectFields,
	tempDir,
} from '../helpers.ts';
import { createTestDatabase } from '../pg.ts';

type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
export const MINUTE = 60_000;

/** The service stand-in, with the relay's API token as its merchant's (payout look-ups, trigger). */
export let sb: Sandbox;
/** Where the sandbox's own postbacks go: each test sends what it wants, in the order it wants. */
export let sink: Target;

export async function control(method: string, path: string, body?: unknown) {
	const response = await fetch(`${sb.url}/_sandbox/${path}`, {
		method,
		...(body === undefined
			? {}
			: { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
	});
	const data = (await response.json()) as any;
	if (!response.ok) throw new Error(`control ${method} ${path}: HTTP ${response.status}`);
	return data;
}

export async function api(path: string, params: Record<string, string>) {
	const response = await fetch(`${sb.url}/api/v1/${path}`, {
		method: 'POST',
		headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' },
		body: new URLSearchParams(params),
	});
	const data = (await response.json()) as any;
	if (!response.ok) throw new Error(`api ${path}: HTTP ${response.status}`);
	return data;
}

/** API requests the sandbox received for one endpoint since the last `DELETE /_sandbox/calls`. */
export async function sandboxCalls(endpoint: string): Promise<number> {
	return ((await control('GET', 'calls')).calls[endpoint] as number | undefined) ?? 0;
}

/**
 * A server of the test's own on a free loopback port (a target or a service that misbehaves),
 * closed after the test with its connections; answers its base URL.
 */
export async function ownServer(
	cleanups: Array<() => Promise<void>>,
	handler: Parameters<typeof createServer>[1],
): Promise<string> {
	const server: Server = createServer(handler);
	await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
	cleanups.push(
		() =>
			new Promise<void>((r) => {
				server.closeAllConnections();
				server.close(() => r());
			}),
	);
	return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A payout of 120.00 the service knows (made through its API under `orderId`), and the SUCCESS
 * postback the service would sign for it.
 */
export async function knownPayout(orderId: string) {
	const created = await api('payout/personal/create', {
		amount: '120.00',
		payout_account_id: sb.payoutAccountId,
		order_id: orderId,
	});
	const id = String(created.data[0].id);
	const amount = String(created.data[0].amount);
	const genuine = {
		TrsId: id,
		Amount: amount,
		Status: 'SUCCESS',
		SignatureValue: md5(`${amount}:${id}:${TOKEN}`),
	};
	return { id, genuine };
}

/** The value of one Prometheus counter line of /metrics (0 when absent). */
export const metric = async (r: RunningRelay, line: string) => {
	const text = (await r.app.inject({ method: 'GET', url: '/metrics' })).body;
	const found = text.split('\n').find((l) => l.startsWith(`${line} `));
	return found ? Number(found.slice(line.length + 1)) : 0;
};

/** A payout postback under a redirect's signature (Amount=OutSum, TrsId=InvId). */
export const asPayout = (invId: string, outSum = '120.00') => {
	const seen = redirectFields(invId, { outSum });
	return {
		TrsId: seen.InvId,
		Amount: seen.OutSum,
		Status: 'SUCCESS',
		SignatureValue: seen.SignatureValue,
	};
};

/** What a case gets for one store kind: its databases, relays and requests, cleaned up after it. */
export interface StoreWorld {
	storeKind: 'sqlite' | 'postgresql';
	/** Run after each case, last first. */
	cleanups: Array<() => Promise<void>>;
	/** A database of this test's own: a file, or a PostgreSQL database dropped afterwards. */
	database(): Promise<string>;
	/** A relay on a database of its own (or the one given), forwarding to the sink. */
	relay(
		extra?: Record<string, string>,
		options?: { database?: string; targets?: string[]; store?: Store },
	): Promise<RunningRelay & { database: string }>;
	post(
		r: RunningRelay,
		path: string,
		fields: Record<string, string>,
		headers?: Record<string, string>,
	): Promise<Awaited<ReturnType<RunningRelay['app']['inject']>>>;
	admin(
		r: RunningRelay,
		url: string,
		method?: 'GET' | 'POST',
		body?: unknown,
	): Promise<Awaited<ReturnType<RunningRelay['app']['inject']>>>;
	/** How many events the relay stored. */
	events(r: RunningRelay): Promise<number>;
}

/**
 * `cases` under `<title> (sqlite store)` and `<title> (postgresql store)`, with the sandbox and
 * the sink started once for the file.
 */
export function onEveryStoreKind(title: string, cases: (world: StoreWorld) => void): void {
	beforeAll(async () => {
		sb = await startSandbox({ port: 0, token: TOKEN, timeFactor: 0.001, liveExtras: true });
		sink = await new Target().listen();
		await control('PATCH', `shops/${sb.shopId}`, { resultUrl: sink.url('/result') });
	});
	afterAll(async () => {
		await sink?.close();
		await sb?.close();
	});

	for (const storeKind of ['sqlite', 'postgresql'] as const) {
		describe(`${title} (${storeKind} store)`, () => {
			const cleanups: Array<() => Promise<void>> = [];
			afterEach(async () => {
				for (const c of cleanups.splice(0).reverse()) await c();
			});

			async function database(): Promise<string> {
				if (storeKind === 'sqlite') {
					const tmp = tempDir();
					cleanups.push(async () => tmp.cleanup());
					return join(tmp.dir, 'relay.sqlite');
				}
				const db = await createTestDatabase();
				cleanups.push(() => db.drop());
				return db.url;
			}

			async function relay(
				extra: Record<string, string> = {},
				options: { database?: string; targets?: string[]; store?: Store } = {},
			): Promise<RunningRelay & { database: string }> {
				const db = options.database ?? (await database());
				const env = baseEnv(
					'/unused',
					{ payment: options.targets ?? [sink.url('/pay')], payout: [sink.url('/payout')] },
					{
						RELAY_DATABASE: db,
						PAYPALYCH_API_BASE_URL: sb.url,
						RELAY_PAYOUT_CHECK: 'service',
						LOG_LEVEL: 'silent',
						...extra,
					},
				);
				const running = await start(env, { deps: options.store ? { store: options.store } : {} });
				cleanups.push(() => running.close());
				return { ...running, database: db };
			}

			const post = (
				r: RunningRelay,
				path: string,
				fields: Record<string, string>,
				headers: Record<string, string> = {},
			) =>
				r.app.inject({
					method: 'POST',
					url: path,
					headers: { ...FORM, ...headers },
					payload: form(fields),
				});
			const admin = (
				r: RunningRelay,
				url: string,
				method: 'GET' | 'POST' = 'GET',
				body?: unknown,
			) =>
				r.app.inject({
					method,
					url,
					headers: {
						authorization: `Bearer ${ADMIN_TOKEN}`,
						...(body === undefined ? {} : { 'content-type': 'application/json' }),
					},
					payload: body === undefined ? undefined : JSON.stringify(body),
				});
			const events = async (r: RunningRelay) =>
				(JSON.parse((await admin(r, '/admin/events?limit=1000')).body) as { data: unknown[] }).data
					.length;

			cases({ storeKind, cleanups, database, relay, post, admin, events });
		});
	}
}
