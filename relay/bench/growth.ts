// The growth run of the relay benchmark (BENCH_ONLY=growth): the store pre-filled with delivered
// events (each with its delivery and its attempt, as 30 days of retention leave them), then the
// same load and drain as on an empty store. Here: the fast pre-fill (one statement, not HTTP), and
// the table and targets of the run. See relay.bench.ts.
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';

/**
 * BENCH_GROWTH_SIZES: the delivered events the store holds before each load (default 0, 100,000,
 * 1,000,000; BENCH_QUICK=1: 0 and 200,000, and the closing line says the target's 1,000,000 was
 * not measured).
 */
export const GROWTH_TARGET_SIZE = 1_000_000;
export const GROWTH_SIZES = (
	process.env.BENCH_GROWTH_SIZES ??
	(process.env.BENCH_QUICK === '1' ? '0,200000' : '0,100000,1000000')
)
	.split(',')
	.map((s) => Number(s.trim()))
	.filter((n) => Number.isInteger(n) && n >= 0);

/** The delivered events' timestamps: spread over the 29 days before, oldest first (inside the 30 days' retention). */
const DAY = 86_400_000;

/**
 * `size` delivered events, one delivery and one attempt each, in one transaction (SQL only:
 * generate_series). Then VACUUM ANALYZE, as autovacuum leaves a store that has been running for
 * weeks. The store's schema must exist (open the store once before).
 */
export async function prefillPostgres(url: string, size: number, target: string): Promise<void> {
	if (size === 0) return;
	const client = new pg.Client({ connectionString: url });
	await client.connect();
	try {
		const start = Date.now() - 29.5 * DAY;
		const step = (29 * DAY) / size;
		await client.query('BEGIN');
		await client.query(
			`INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at, source)
			SELECT 'grow-' || g, 'payment', 'payment:GROW-' || g || ':SUCCESS', 'application/x-www-form-urlencoded',
				'InvId=G' || g || '&TrsId=GROW-' || g || '&Status=SUCCESS&OutSum=100.00&CurrencyIn=RUB',
				jsonb_build_object('InvId', 'G' || g, 'TrsId', 'GROW-' || g, 'Status', 'SUCCESS', 'OutSum', '100.00'),
				$2::bigint + (g * $3::float8)::bigint, 'postback'
			FROM generate_series(1, $1::int) AS g`,
			[size, start, step],
		);
		await client.query(
			`INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at,
				last_status, delivered_at)
			SELECT id, $1, 'delivered', 1, received_at, received_at, received_at, 200, received_at + 40
			FROM events WHERE id LIKE 'grow-%' ORDER BY received_at`,
			[target],
		);
		await client.query(
			`INSERT INTO attempts (delivery_id, target, attempt, started_at, duration_ms, http_status, outcome)
			SELECT id, target, 1, delivered_at - 30, 30, 200, 'delivered' FROM deliveries ORDER BY id`,
		);
		await client.query('COMMIT');
		await client.query('VACUUM ANALYZE');
	} finally {
		await client.end();
	}
}

/**
 * The same on the SQLite file (closed by every store): a recursive CTE per table in one
 * transaction. No ANALYZE: the relay never runs it, a real store has no statistics.
 */
export function prefillSqlite(file: string, size: number, target: string): void {
	if (size === 0) return;
	const db = new DatabaseSync(file);
	try {
		const start = Date.now() - 29.5 * DAY;
		const step = (29 * DAY) / size;
		db.exec('BEGIN IMMEDIATE');
		db.prepare(
			`WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
			INSERT INTO events (id, kind, dedupe_key, content_type, body, fields_json, received_at, source)
			SELECT 'grow-' || n, 'payment', 'payment:GROW-' || n || ':SUCCESS', 'application/x-www-form-urlencoded',
				'InvId=G' || n || '&TrsId=GROW-' || n || '&Status=SUCCESS&OutSum=100.00&CurrencyIn=RUB',
				json_object('InvId', 'G' || n, 'TrsId', 'GROW-' || n, 'Status', 'SUCCESS', 'OutSum', '100.00'),
				? + CAST(n * ? AS INTEGER), 'postback'
			FROM g`,
		).run(size, start, step);
		db.prepare(
			`INSERT INTO deliveries (event_id, target, status, attempts, created_at, budget_start, next_attempt_at,
				last_status, delivered_at)
			SELECT id, ?, 'delivered', 1, received_at, received_at, received_at, 200, received_at + 40
			FROM events WHERE id LIKE 'grow-%' ORDER BY received_at`,
		).run(target);
		db.exec(
			`INSERT INTO attempts (delivery_id, target, attempt, started_at, duration_ms, http_status, outcome)
			SELECT id, target, 1, delivered_at - 30, 30, 200, 'delivered' FROM deliveries ORDER BY id`,
		);
		db.exec('COMMIT');
		db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
	} finally {
		db.close();
	}
}

/** One store size's figures. */
export interface GrowthFigures {
	store: 'SQLite' | 'PostgreSQL';
	size: number;
	prefillSeconds: number;
	postbacksPerSec: number;
	/** Deliveries per second of the backlog left after the load, and of the standalone drain. */
	backlogPerSec: number;
	drainPerSec: number;
	/** CPU per postback over the load and the delivery of its backlog, µs. */
	postbackRelayUs: number;
	postbackDbUs: number;
	/** CPU per delivery of the standalone drain, µs. */
	deliveryRelayUs: number;
	deliveryDbUs: number;
	complete: boolean;
}

const int = (x: number) => Math.round(x).toLocaleString('en-US');

export function growthTable(rows: readonly GrowthFigures[]): string[] {
	const header = [
		'store',
		'delivered events',
		'postbacks/s',
		'backlog drain/s',
		'CPU/postback relay + db',
		'drain/s',
		'CPU/delivery relay + db',
	];
	const cells = rows.map((g) => [
		g.store,
		int(g.size),
		int(g.postbacksPerSec),
		int(g.backlogPerSec) + (g.complete ? '' : ' (not all delivered)'),
		`${int(g.postbackRelayUs)} + ${int(g.postbackDbUs)} µs`,
		int(g.drainPerSec),
		`${int(g.deliveryRelayUs)} + ${int(g.deliveryDbUs)} µs`,
	]);
	const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
	const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i])).join(' | ')} |`;
	return [
		line(header),
		line(widths.map((w) => '-'.repeat(w))),
		...cells.map(line),
		'',
		'CPU/postback: over the load and the delivery of its backlog; CPU/delivery: the standalone drain of',
		"BENCH_BACKLOG deliveries committed while no relay ran. db: PostgreSQL's processes (SQLite runs inside the relay).",
	];
}

/** A store's figures at the largest size against the empty store's: per postback, per delivery. */
function flatness(rows: readonly GrowthFigures[], store: GrowthFigures['store']) {
	const mine = rows.filter((g) => g.store === store);
	const empty = mine.find((g) => g.size === 0);
	const big = mine.filter((g) => g.size > 0).sort((a, b) => b.size - a.size)[0];
	if (!empty || !big) return undefined;
	const total = (a: number, b: number) => Math.round(a) + Math.round(b);
	const p0 = total(empty.postbackRelayUs, empty.postbackDbUs);
	const p1 = total(big.postbackRelayUs, big.postbackDbUs);
	const d0 = total(empty.deliveryRelayUs, empty.deliveryDbUs);
	const d1 = total(big.deliveryRelayUs, big.deliveryDbUs);
	return { empty, big, p0, p1, d0, d1, ok: big.complete && p1 <= 1.2 * p0 && d1 <= 1.2 * d0 };
}

/** The targets of the growth run (a store that fills), one line each, met / NOT met. */
export function growthTargets(rows: readonly GrowthFigures[]): string[] {
	const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
	const lines: string[] = [];
	for (const store of ['SQLite', 'PostgreSQL'] as const) {
		const f = flatness(rows, store);
		if (!f) {
			lines.push(
				`${store}, a filled store vs empty: not measured (size 0 and a larger one must run)`,
			);
			continue;
		}
		const at = `at ${int(f.big.size)} events`;
		lines.push(
			`${store}, CPU per postback ${at} ≤ 1.2 × empty store's: ${int(f.p1)} vs 1.2 × ${int(f.p0)} = ` +
				`${int(1.2 * f.p0)} µs (${(f.p1 / f.p0).toFixed(2)}×): ${verdict(f.big.complete && f.p1 <= 1.2 * f.p0)}`,
		);
		lines.push(
			`${store}, CPU per delivery ${at} ≤ 1.2 × empty store's: ${int(f.d1)} vs 1.2 × ${int(f.d0)} = ` +
				`${int(1.2 * f.d0)} µs (${(f.d1 / f.d0).toFixed(2)}×): ${verdict(f.d1 <= 1.2 * f.d0)}`,
		);
	}
	for (const g of rows.filter((x) => x.store === 'PostgreSQL')) {
		lines.push(
			`PostgreSQL at ${int(g.size)} events, load + backlog: relay ≤ 250 µs and PostgreSQL ≤ 250 µs per postback: ` +
				`relay ${int(g.postbackRelayUs)} µs, PostgreSQL ${int(g.postbackDbUs)} µs: ` +
				verdict(
					g.complete && Math.round(g.postbackRelayUs) <= 250 && Math.round(g.postbackDbUs) <= 250,
				),
		);
	}
	return lines;
}

/**
 * The closing line of the growth target: CPU per postback and per delivery on a store of
 * GROWTH_TARGET_SIZE delivered events at most 1.2 × the empty store's, SQLite and PostgreSQL.
 * A run whose largest size is smaller (BENCH_QUICK) says so, and its verdict is for that size.
 */
export function growthFlatLine(rows: readonly GrowthFigures[]): string {
	const head = `growth to ${int(GROWTH_TARGET_SIZE)} events still flat (CPU per postback and per delivery ≤ 1.2 × the empty store's, both stores): `;
	const stores = (['SQLite', 'PostgreSQL'] as const).map((s) => [s, flatness(rows, s)] as const);
	const measured = stores.filter(([, f]) => f !== undefined);
	if (measured.length === 0) return `${head}not measured (BENCH_ONLY without growth)`;
	const parts = measured.map(
		([s, f]) => `${s} ${(f!.p1 / f!.p0).toFixed(2)}× · ${(f!.d1 / f!.d0).toFixed(2)}×`,
	);
	const largest = Math.max(...measured.map(([, f]) => f!.big.size));
	const quick =
		largest < GROWTH_TARGET_SIZE
			? ` (quick mode: measured at ${int(largest)} events, not ${int(GROWTH_TARGET_SIZE)})`
			: '';
	const missing = stores.length > measured.length ? ' (PostgreSQL not measured)' : '';
	const ok = measured.length === stores.length && measured.every(([, f]) => f!.ok);
	return `${head}${parts.join('; ')}${quick}${missing}: ${ok ? 'met' : 'NOT met'}`;
}
