/**
 * Faults on the network between the relay's parts: the target behind 30 % loss and 300 ms latency,
 * PostgreSQL unreachable for 20 s while postbacks arrive, a connection cut in the middle of a
 * delivery's answer, a target that answers after the lease. Each case prints sent / acked /
 * delivered / lost / duplicate and asserts 0 lost and no duplicate beyond the README's delivery
 * semantics: at-least-once, a delivery sent again only after an attempt whose answer the relay did
 * not get (so every reception is an attempt the relay counted, never two receptions of one
 * attempt).
 *
 * Where the faults come from: `ip netns` with `tc netem` when the kernel has netem; this
 * machine's has not (`tc qdisc add dev lo root netem` answers "Specified qdisc kind is unknown"),
 * so the faults come from a TCP proxy in Node (fault-proxy.ts) that does to a connection what
 * those faults do to it.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { start, type RunningRelay } from '../../relay/src/server.ts';
import { FaultProxy, seeded } from './fault-proxy.ts';
import { ADMIN_TOKEN, Target, baseEnv, form, paymentFields, tempDir } from './helpers.ts';
import { PG_MISSING, createTestDatabase } from './pg.ts';

/** Whether this machine could use netem (reported with the table; the proxy is used either way). */
function netemHere(): string {
	try {
		execFileSync('tc', ['qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '0ms'], {
			stdio: 'pipe',
		});
		execFileSync('tc', ['qdisc', 'del', 'dev', 'lo', 'root'], { stdio: 'pipe' });
		return 'netem available (the Node fault proxy is used all the same: same faults on every machine)';
	} catch (error) {
		const why = String((error as { stderr?: Buffer }).stderr ?? error).trim();
		return `no tc netem here (${why.split('\n')[0]}): faults from the Node fault proxy`;
	}
}

interface Row {
	case: string;
	sent: number;
	acked: number;
	delivered: number;
	lost: number;
	duplicate: number;
	attempts: number;
	faults: string;
}
const table: Row[] = [];

afterAll(() => {
	if (table.length === 0) return;
	console.log(`network faults: ${netemHere()}`);
	console.table(table);
});

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
	for (const c of cleanups.splice(0).reverse()) await c();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function relayWith(
	target: string,
	database: string,
	extra: Record<string, string>,
): Promise<RunningRelay> {
	const r = await start(
		baseEnv(
			'/unused',
			{ payment: [target] },
			{ RELAY_DATABASE: database, LOG_LEVEL: 'silent', ...extra },
		),
	);
	cleanups.push(() => r.close());
	return r;
}

/** The service's side: one postback, answered or not within its own timeout. */
async function send(r: RunningRelay, trsId: string): Promise<number | 'no answer'> {
	try {
		const res = await fetch(`${r.url}/postback/payment`, {
			method: 'POST',
			headers: { 'content-type': 'application/x-www-form-urlencoded' },
			body: form(paymentFields(trsId)),
			signal: AbortSignal.timeout(10_000),
		});
		await res.text();
		return res.status;
	} catch {
		return 'no answer';
	}
}

interface DeliveryRow {
	id: number;
	status: string;
	attempts: number;
}

async function deliveries(r: RunningRelay): Promise<DeliveryRow[]> {
	const res = await fetch(`${r.url}/admin/deliveries?limit=1000`, {
		headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
	});
	return ((await res.json()) as { data: DeliveryRow[] }).data;
}

/** Waits until every delivery has ended (delivered or dead), then counts. */
async function account(
	name: string,
	r: RunningRelay,
	target: Target,
	sent: string[],
	acked: Set<string>,
	faults: () => string,
	budgetMs = 60_000,
): Promise<Row> {
	const until = Date.now() + budgetMs;
	let rows = await deliveries(r);
	while (
		Date.now() < until &&
		(rows.length < acked.size || rows.some((d) => d.status !== 'delivered' && d.status !== 'dead'))
	) {
		await sleep(100);
		rows = await deliveries(r);
	}
	const received = new Map<string, string[]>();
	for (const rec of target.received) {
		const trsId = new URLSearchParams(rec.body).get('TrsId') ?? '?';
		const attempt = String(rec.headers['x-paypalych-delivery-attempt']);
		received.set(trsId, [...(received.get(trsId) ?? []), attempt]);
	}
	const row: Row = {
		case: name,
		sent: sent.length,
		acked: acked.size,
		delivered: [...acked].filter((t) => received.has(t)).length,
		lost: [...acked].filter((t) => !received.has(t)).length,
		duplicate: [...received.values()].reduce((n, list) => n + list.length - 1, 0),
		attempts: rows.reduce((n, d) => n + d.attempts, 0),
		faults: faults(),
	};
	if (process.env.FAULTS_DEBUG)
		console.log(name, JSON.stringify([...received].filter(([, a]) => a.length > 1)));
	table.push(row);
	// Nothing acknowledged is lost: every acked postback reached the target, and its delivery ended delivered.
	expect(row.lost, `${name}: lost`).toBe(0);
	expect(
		rows.filter((d) => d.status !== 'delivered'),
		`${name}: not delivered`,
	).toEqual([]);
	expect(rows).toHaveLength(acked.size);
	// Nothing was stored that was not acknowledged (a 503 stores nothing).
	for (const trsId of received.keys()) expect(acked.has(trsId), trsId).toBe(true);
	// Duplicates only as at-least-once allows: each reception is an attempt the relay counted,
	// and no attempt of an event arrived twice (no double send under one lease).
	expect(target.received.length).toBeLessThanOrEqual(row.attempts);
	for (const [trsId, attempts] of received)
		expect(new Set(attempts).size, `${trsId} attempts ${attempts.join(',')}`).toBe(attempts.length);
	return row;
}

async function targetBehind(options: ConstructorParameters<typeof FaultProxy>[1]) {
	const target = await new Target().listen();
	const proxy = new FaultProxy({ host: '127.0.0.1', port: target.port }, options);
	const port = await proxy.listen();
	cleanups.push(() => target.close());
	cleanups.push(() => proxy.close());
	return { target, proxy, url: `http://127.0.0.1:${port}/n8n/payment` };
}

function sqliteFile(): string {
	const tmp = tempDir();
	cleanups.push(() => tmp.cleanup());
	return join(tmp.dir, 'relay.sqlite');
}

describe('faults on the network between the relay and its target', () => {
	it('30 % packet loss and 300 ms latency to the target: all delivered, none lost', async () => {
		const { target, proxy, url } = await targetBehind({
			latencyMs: 300,
			lossRate: 0.3,
			rtoMs: 200,
			random: seeded(26),
		});
		const r = await relayWith(url, sqliteFile(), {
			RELAY_DELIVERY_TIMEOUT_MS: '2000',
			RELAY_LEASE_MS: '4000',
			RELAY_BASE_DELAY_MS: '100',
			RELAY_MAX_DELAY_MS: '1000',
		});
		const sent = Array.from({ length: 30 }, (_, i) => `loss-${i}`);
		const acked = new Set<string>();
		for (const trsId of sent) if ((await send(r, trsId)) === 200) acked.add(trsId);
		expect(acked.size).toBe(sent.length);
		const row = await account(
			'target: 30 % loss, 300 ms',
			r,
			target,
			sent,
			acked,
			() => `${proxy.stats.delayedByLoss} of ${proxy.stats.chunks} chunks delayed by loss`,
		);
		expect(proxy.stats.delayedByLoss).toBeGreaterThan(0);
		expect(row.delivered).toBe(30);
	});

	it('a connection cut in the middle of the answer: sent again, none lost', async () => {
		const { target, proxy, url } = await targetBehind({
			cutAnswers: 0.4,
			cutAfterBytes: 12,
			random: seeded(7),
		});
		const r = await relayWith(url, sqliteFile(), {
			RELAY_BASE_DELAY_MS: '50',
			RELAY_MAX_DELAY_MS: '200',
		});
		const sent = Array.from({ length: 20 }, (_, i) => `cut-${i}`);
		const acked = new Set<string>();
		for (const trsId of sent) if ((await send(r, trsId)) === 200) acked.add(trsId);
		const row = await account(
			'target: answer cut mid-way',
			r,
			target,
			sent,
			acked,
			() => `${proxy.stats.cutAnswers} answers cut`,
		);
		expect(proxy.stats.cutAnswers).toBeGreaterThan(0);
		// Each cut answer is an attempt the target got but the relay could not read: sent again.
		expect(row.duplicate).toBe(proxy.stats.cutAnswers);
	});

	it('a target that answers after the lease: the attempt times out, is sent again, none lost', async () => {
		const target = await new Target().listen();
		cleanups.push(() => target.close());
		const lease = 1500;
		const firstSeen = new Set<string>();
		target.responder = (rec) => {
			const trsId = new URLSearchParams(rec.body).get('TrsId') ?? '';
			const first = !firstSeen.has(trsId);
			firstSeen.add(trsId);
			// The first attempt of each event is answered only after the lease has run out.
			return first ? { status: 200, hangMs: lease + 300 } : { status: 200 };
		};
		const r = await relayWith(target.url('/n8n/payment'), sqliteFile(), {
			RELAY_DELIVERY_TIMEOUT_MS: '1000',
			RELAY_LEASE_MS: String(lease),
			RELAY_BASE_DELAY_MS: '50',
			RELAY_MAX_DELAY_MS: '200',
		});
		const sent = Array.from({ length: 8 }, (_, i) => `late-${i}`);
		const acked = new Set<string>();
		await Promise.all(
			sent.map(async (trsId) => {
				if ((await send(r, trsId)) === 200) acked.add(trsId);
			}),
		);
		const row = await account(
			'target: answers after the lease',
			r,
			target,
			sent,
			acked,
			() => 'first answers late',
		);
		// Exactly one extra reception per event (the late one), never more.
		expect(row.duplicate).toBe(sent.length);
		expect(row.attempts).toBe(2 * sent.length);
	});
});

describe.skipIf(PG_MISSING !== undefined)(
	'faults on the network between the relay and PostgreSQL',
	() => {
		it('PostgreSQL unreachable for 20 s while postbacks arrive: they get 503, none acked and lost', async () => {
			const db = await createTestDatabase();
			cleanups.push(() => db.drop());
			const url = new URL(db.url);
			const proxy = new FaultProxy({ host: url.hostname, port: Number(url.port || 5432) });
			url.hostname = '127.0.0.1';
			url.port = String(await proxy.listen());
			cleanups.push(() => proxy.close());
			const target = await new Target().listen();
			cleanups.push(() => target.close());
			const r = await relayWith(target.url('/n8n/payment'), url.toString(), {
				RELAY_BASE_DELAY_MS: '50',
				RELAY_MAX_DELAY_MS: '500',
			});
			const sent: string[] = [];
			const acked = new Set<string>();
			const post = async (trsId: string) => {
				const answer = await send(r, trsId);
				if (answer === 200) acked.add(trsId);
				return answer;
			};
			for (let i = 0; i < 5; i++) {
				sent.push(`pg-before-${i}`);
				expect(await post(`pg-before-${i}`)).toBe(200);
			}
			proxy.down();
			const outage: Array<Promise<number | 'no answer'>> = [];
			const downAt = Date.now();
			for (let i = 0; Date.now() - downAt < 20_000; i++) {
				sent.push(`pg-during-${i}`);
				outage.push(post(`pg-during-${i}`));
				await sleep(500);
			}
			const during = await Promise.all(outage);
			proxy.up();
			// Not one postback was acknowledged while the store could not be reached.
			expect(during.filter((a) => a === 200)).toEqual([]);
			expect(during.filter((a) => a === 503).length).toBeGreaterThan(0);
			// The service sends again what was not acknowledged; the relay recovers by itself.
			for (let round = 0; round < 20 && acked.size < sent.length; round++) {
				for (const trsId of sent) if (!acked.has(trsId)) await post(trsId);
				if (acked.size < sent.length) await sleep(500);
			}
			expect(acked.size).toBe(sent.length);
			await account(
				'PostgreSQL unreachable 20 s',
				r,
				target,
				sent,
				acked,
				() =>
					`${during.filter((a) => a === 503).length} × 503, ${during.filter((a) => a === 'no answer').length} unanswered during the outage`,
			);
		}, 90_000);
	},
);
