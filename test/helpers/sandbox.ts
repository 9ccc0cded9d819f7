import { afterAll, beforeAll } from 'vitest';
import { startSandbox, type Profile } from '../../sandbox/src/index.ts';

export type Sandbox = Awaited<ReturnType<typeof startSandbox>>;
export type { Profile };

/**
 * The sandbox's two profiles (see sandbox/README.md): `live`, what public integrations see, and
 * `spec`, the other answer the interface document allows. The suites that depend on pagination,
 * dates, order IDs or amounts run on both (`describe.each(PROFILES)`).
 */
export const PROFILES: readonly Profile[] = ['live', 'spec'];

export async function start(profile: Profile = 'live'): Promise<Sandbox> {
	return await startSandbox({ port: 0, timeFactor: 0.001, profile });
}

/** The time zone the sandbox writes its times and counts its days in, per profile. */
/** A sandbox of `profile` for the enclosing describe: started before its tests (then `started` gets it), closed after. */
export function sandboxFor(profile: Profile, started: (sandbox: Sandbox) => void): void {
	let sandbox: Sandbox;
	beforeAll(async () => {
		sandbox = await start(profile);
		started(sandbox);
	});
	afterAll(async () => {
		await sandbox.close();
	});
}

export const PROFILE_TIME_ZONE: Readonly<Record<Profile, string>> = {
	live: 'UTC',
	spec: 'Europe/Moscow',
};

/** The date `offsetDays` from today on the profile's clock (UTC in live, Moscow in spec), as Y-m-d. */
export function serviceDay(profile: Profile, offsetDays = 0): string {
	const offsetMs = profile === 'spec' ? 3 * 3_600_000 : 0;
	return new Date(Date.now() + offsetMs + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

/** Calls the sandbox's control API (`/_sandbox/...`) and returns its JSON answer. */
export async function control<T = Record<string, any>>(
	sandbox: Sandbox,
	method: string,
	path: string,
	body?: unknown,
): Promise<T> {
	const response = await fetch(`${sandbox.url}/_sandbox${path}`, {
		method,
		headers: body === undefined ? {} : { 'content-type': 'application/json' },
		body: body === undefined ? undefined : JSON.stringify(body),
	});
	const text = await response.text();
	if (!response.ok) throw new Error(`control ${method} ${path}: ${response.status} ${text}`);
	return JSON.parse(text) as T;
}

export interface TestMerchant {
	merchantId: string;
	token: string;
	shopId: string;
	payoutAccountId: string;
	credential: { apiToken: string; baseUrl: string };
}

/** A fresh merchant (verified, subscribed, RUB balance, direct payouts on) with its own state. */
export async function newMerchant(
	sandbox: Sandbox,
	fields: Record<string, unknown> = {},
): Promise<TestMerchant> {
	const created = await control<Omit<TestMerchant, 'credential'>>(
		sandbox,
		'POST',
		'/merchants',
		fields,
	);
	return { ...created, credential: { apiToken: created.token, baseUrl: sandbox.url } };
}

export async function patchMerchant(
	sandbox: Sandbox,
	merchantId: string,
	fields: Record<string, unknown>,
): Promise<void> {
	await control(sandbox, 'PATCH', `/merchants/${merchantId}`, fields);
}

export async function payoutsOf(
	sandbox: Sandbox,
	merchantId: string,
): Promise<Array<Record<string, any>>> {
	return (
		await control<{ data: Array<Record<string, any>> }>(
			sandbox,
			'GET',
			`/payouts?merchantId=${merchantId}`,
		)
	).data;
}

/** The UTC date `offsetDays` from today, as Y-m-d (the sandbox keeps dates in UTC). */
export function utcDay(offsetDays = 0): string {
	return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}
