// The relay benchmark's runs (BENCH_ONLY), its closing table (markdown, the figures measured
// before the relay's first performance work beside this run's) and the relay's performance
// targets with the measured figures. See relay.bench.ts.

/** The runs, in order; BENCH_ONLY picks among them (bare always runs: the ratios need it). */
export const RUNS = [
	'bare',
	'sqlite',
	'sqlite-paused',
	'drain',
	'pg1',
	'pg2',
	'pg2-paused',
	'rate-bare',
	'rate-sqlite',
	'rate-pg',
	'growth',
] as const;
export type RunName = (typeof RUNS)[number];
export type LoadRunName = Exclude<RunName, 'drain' | 'growth'>;

/**
 * BENCH_QUICK=1: the runs the closing targets need and no others (bare, SQLite ingest, one
 * PostgreSQL instance, the growth run on smaller stores: growth.ts), unless BENCH_ONLY names runs.
 */
export const QUICK = process.env.BENCH_QUICK === '1';
const QUICK_RUNS: readonly RunName[] = ['bare', 'sqlite-paused', 'pg1', 'growth'];

/** BENCH_ONLY: a comma list of runs (all when empty); bare always runs. Exits 2 on a wrong name. */
export function selectRuns(only = ''): Set<RunName> {
	const names = only
		.split(',')
		.map((s) => s.trim())
		.filter(Boolean);
	const unknown = names.filter((run) => !(RUNS as readonly string[]).includes(run));
	if (unknown.length > 0) {
		console.error(`BENCH_ONLY: no run called ${unknown.join(', ')} (the runs: ${RUNS.join(',')})`);
		process.exit(2);
	}
	if (names.length) return new Set<RunName>(['bare', ...(names as RunName[])]);
	return new Set<RunName>(QUICK ? QUICK_RUNS : RUNS);
}

/** A load run's name in the output and the table (the names the first round's figures use). */
export function runLabel(run: LoadRunName, rate: number): string {
	const fixed = `fixed rate ${rate.toLocaleString('en-US')}/s`;
	return {
		bare: 'bare Fastify',
		sqlite: 'SQLite, delivering',
		'sqlite-paused': 'SQLite, ingest only',
		pg1: 'PostgreSQL, 1 instance',
		pg2: 'PostgreSQL, 2 instances',
		'pg2-paused': 'PostgreSQL, 2 instances, delivery paused',
		'rate-bare': `${fixed}, bare Fastify`,
		'rate-sqlite': `${fixed}, SQLite`,
		'rate-pg': `${fixed}, PostgreSQL`,
	}[run];
}

/** A load run's figures. */
export interface Figures {
	reqPerSec: number;
	/** To bare Fastify in the same run; none for a fixed-rate run. */
	ratio?: number;
	p99: number;
	/** CPU per request, µs: over the load and the delivery of its backlog where delivery is on. */
	relayUs: number;
	postgresUs: number;
	/** CPU per request during the load only, µs. */
	duringRelayUs: number;
	duringPostgresUs: number;
	/** The relay's HTTP thread alone (its main thread) during the load, µs per request. */
	httpThreadUs: number;
	/** false: the backlog was not all delivered within the wait, so the CPU figures are too low. */
	backlogDelivered: boolean;
}
export type AllFigures = Partial<Record<LoadRunName, Figures>>;

/**
 * Measured before the first performance work on the relay, on the 2-core development VM (CPU:
 * during the load).
 */
const BEFORE: Partial<Record<LoadRunName, Partial<Figures>>> = {
	bare: { reqPerSec: 22_073, ratio: 1, p99: 7, relayUs: 38 },
	sqlite: { reqPerSec: 5_654, ratio: 0.26, p99: 29 },
	'sqlite-paused': { reqPerSec: 7_294, ratio: 0.33, p99: 19, relayUs: 138 },
	pg1: { reqPerSec: 2_450, ratio: 0.11, p99: 56, relayUs: 295, postgresUs: 297 },
	pg2: { reqPerSec: 1_265, ratio: 0.06, p99: 156, relayUs: 696, postgresUs: 653 },
};

const int = (x: number) => Math.round(x).toLocaleString('en-US');
const ms = (x: number) => (x < 10 && !Number.isInteger(x) ? x.toFixed(1) : int(x));
const us = (x: number) => `${int(x)} µs`;

/** "138 → 61 µs", "– → 61 µs", "138 µs → not run". */
function beforeNow(
	ran: boolean,
	before: number | undefined,
	now: number | undefined,
	format: (x: number) => string,
	unit = '',
): string {
	const b = before === undefined ? '–' : format(before);
	if (!ran) return `${b}${before === undefined ? '' : unit} → not run`;
	return `${b} → ${now === undefined ? '–' : `${format(now)}${unit}`}`;
}

/** The table, markdown, its columns padded; a line under it says what was measured. */
export function table(figures: AllFigures, rate: number): string[] {
	const header = [
		'run',
		'req/s (before → now)',
		'ratio',
		'p99',
		'relay CPU/request',
		'PostgreSQL CPU/request',
	];
	const runs = RUNS.filter((run): run is LoadRunName => run !== 'drain' && run !== 'growth');
	const rows = runs.map((run) => {
		const b = BEFORE[run] ?? {};
		const f = figures[run];
		const ran = f !== undefined;
		return [
			runLabel(run, rate) + (f && !f.backlogDelivered ? ' (backlog not all delivered)' : ''),
			beforeNow(ran, b.reqPerSec, f?.reqPerSec, int),
			beforeNow(ran, b.ratio, f?.ratio, (x) => x.toFixed(2)),
			beforeNow(ran, b.p99, f?.p99, ms, ' ms'),
			beforeNow(ran, b.relayUs, f?.relayUs, int, ' µs'),
			beforeNow(ran, b.postgresUs, f?.postgresUs, int, ' µs'),
		];
	});
	const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
	const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
	return [
		line(header),
		line(widths.map((w) => '-'.repeat(w))),
		...rows.map(line),
		'',
		'before: the figures measured before the first performance work on the relay, on the same machine (CPU during the load only).',
		'now: this run. CPU per request of a run with delivery on: over the load and the delivery of its backlog',
		'(the cost of a postback with delivery on); with delivery paused, and for bare Fastify: during the load.',
	];
}

const verdict = (ok: boolean) => (ok ? 'met' : 'NOT met');
const notRun = (run: LoadRunName, rate: number) =>
	`not measured (${runLabel(run, rate)} did not run)`;
const incomplete = (f: Figures) =>
	f.backlogDelivered ? '' : ' (backlog not all delivered within the wait: CPU figures too low)';

/** The relay's targets on its CPU per postback (the lines the run prints last). */
export const TARGETS = {
	/** SQLite ingest: the relay's CPU per request at most this × bare Fastify's, same run. */
	ingestRatio: 2.5,
	/** The same run's HTTP thread alone at most this × bare Fastify's whole request. */
	httpThreadRatio: 1.5,
	/** PostgreSQL, one instance, delivery on, over the load and its backlog: µs per postback. */
	pgRelayUs: 250,
	pgDatabaseUs: 250,
} as const;

/**
 * The relay's performance targets, each with the figures measured in this run and met / NOT met:
 * `cost`, the CPU per postback (SQLite ingest and its HTTP thread against bare Fastify measured in
 * the same run, PostgreSQL with delivery on), the lines the run prints last with the growth run's;
 * `scaling`, two PostgreSQL instances and the latency at a fixed rate. CPU figures are compared as
 * printed, in whole µs.
 */
export function targets(
	f: AllFigures & { bare: Figures },
	rate: number,
): { scaling: string[]; cost: string[] } {
	const r = Math.round;
	const { bare, pg1, pg2 } = f;
	const ingest = f['sqlite-paused'];
	const times = (a: number, b: number) => `${(r(a) / Math.max(1, r(b))).toFixed(2)}×`;
	const { ingestRatio, httpThreadRatio, pgRelayUs, pgDatabaseUs } = TARGETS;
	// The CPU a postback costs: the last lines the run prints.
	const cost = [
		`SQLite ingest (delivery paused): relay CPU per request ≤ ${ingestRatio} × bare Fastify’s (same run): ` +
			(ingest
				? `${us(ingest.relayUs)} vs ${ingestRatio} × ${us(bare.relayUs)} = ${us(ingestRatio * r(bare.relayUs))} ` +
					`(${times(ingest.relayUs, bare.relayUs)}): ` +
					verdict(r(ingest.relayUs) <= ingestRatio * r(bare.relayUs))
				: notRun('sqlite-paused', rate)),
		`SQLite ingest, the HTTP thread alone ≤ ${httpThreadRatio} × bare Fastify’s whole request (same run): ` +
			(ingest
				? `${us(ingest.httpThreadUs)} vs ${httpThreadRatio} × ${us(bare.relayUs)} = ` +
					`${us(httpThreadRatio * r(bare.relayUs))} (${times(ingest.httpThreadUs, bare.relayUs)}): ` +
					verdict(r(ingest.httpThreadUs) <= httpThreadRatio * r(bare.relayUs))
				: notRun('sqlite-paused', rate)),
		`PostgreSQL, 1 instance, delivery on: relay ≤ ${pgRelayUs} µs and PostgreSQL ≤ ${pgDatabaseUs} µs per request ` +
			'(load + delivery of its backlog): ' +
			(pg1
				? `relay ${us(pg1.relayUs)}, PostgreSQL ${us(pg1.postgresUs)}: ` +
					verdict(
						pg1.backlogDelivered &&
							r(pg1.relayUs) <= pgRelayUs &&
							r(pg1.postgresUs) <= pgDatabaseUs,
					) +
					`${incomplete(pg1)} (during the load: relay ${us(pg1.duringRelayUs)}, ` +
					`PostgreSQL ${us(pg1.duringPostgresUs)})`
				: notRun('pg1', rate)),
	];
	const lines: string[] = [];
	const total = (x: Figures) => r(x.relayUs) + r(x.postgresUs);
	lines.push(
		'PostgreSQL, 2 instances, delivery on: CPU per request (relays + PostgreSQL, load + delivery ' +
			'of its backlog) ≤ 1.2 × 1 instance’s: ' +
			(!pg2
				? notRun('pg2', rate)
				: !pg1
					? notRun('pg1', rate)
					: `${us(total(pg2))} vs 1.2 × ${us(total(pg1))} = ${us(1.2 * total(pg1))}: ` +
						verdict(
							pg1.backlogDelivered && pg2.backlogDelivered && total(pg2) <= r(1.2 * total(pg1)),
						) +
						incomplete(pg2)),
	);
	for (const [run, limit] of [
		['rate-sqlite', 10],
		['rate-pg', 20],
	] as const) {
		const x = f[run];
		const reference = f['rate-bare'];
		lines.push(
			`${runLabel(run, rate)}: p99 < ${limit} ms: ` +
				(x ? `${ms(x.p99)} ms: ${verdict(x.p99 < limit)}${incomplete(x)}` : notRun(run, rate)) +
				(reference
					? ` (bare Fastify at the same rate: p99 ${ms(reference.p99)} ms, ${us(reference.relayUs)} CPU per request)`
					: ''),
		);
	}
	return { scaling: lines, cost };
}
