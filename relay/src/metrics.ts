import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DeliveryCounts } from './store/types.ts';

/**
 * The relay's Prometheus metrics (prom-client), in a registry of their own per app: the event and
 * delivery counters, the delivery latency histogram, the delivery states read from the store at
 * each scrape, the build information, and prom-client's default process metrics.
 */

/** The states of the `paypalych_relay_deliveries` gauge (retrying: pending after a failed attempt). */
const GAUGE_STATES = [
	'pending',
	'retrying',
	'delivering',
	'delivered',
	'dead',
] as const satisfies ReadonlyArray<keyof DeliveryCounts>;

const LATENCY_BUCKETS = [
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400,
];

/** What the build-info gauge says besides the relay's version and Node's. */
export interface BuildInfo {
	/** The store the relay runs on: `sqlite` or `postgresql`. */
	store: string;
}

export class Metrics {
	readonly registry = new Registry();
	readonly received = this.#counter(
		'paypalych_relay_received_total',
		'Verified calls stored, by event kind (duplicates included).',
		['kind'],
	);
	readonly rejected = this.#counter(
		'paypalych_relay_rejected_total',
		'Calls rejected before storage, by event kind and reason.',
		['kind', 'reason'],
	);
	readonly p2pDeals = this.#counter(
		'paypalych_relay_p2p_deals_total',
		'Verified P2P deal postbacks: answered OK, never stored or forwarded (neither a payment nor a payout of the shop), by route.',
		['route'],
	);
	readonly duplicates = this.#counter(
		'paypalych_relay_duplicates_total',
		'Verified postbacks already stored (same TrsId and Status).',
		['kind'],
	);
	readonly delivered = this.#counter(
		'paypalych_relay_delivered_total',
		'Deliveries a target accepted.',
		['kind'],
	);
	readonly receipts = this.#counter(
		'paypalych_relay_receipts_total',
		"Delivery attempts answered, by event kind and the PayPalych Trigger's receipt (accepted, duplicate, ignored, rejected, retry; none: the target gave none).",
		['kind', 'receipt'],
	);
	readonly retries = this.#counter(
		'paypalych_relay_delivery_retries_total',
		'Failed delivery attempts scheduled for another try.',
		['kind'],
	);
	readonly dead = this.#counter(
		'paypalych_relay_dead_total',
		'Deliveries given up (retry budget spent or permanent refusal).',
		['kind'],
	);
	readonly lookUps = this.#counter(
		'paypalych_relay_lookups_total',
		'Look-ups of an incoming postback with the service (payout/status, payment/status, refund/status), by kind and outcome (known, refused, failed; remembered: a refusal repeated without a call).',
		['kind', 'outcome'],
	);
	readonly lookUpsThrottled = this.#counter(
		'paypalych_relay_lookups_throttled_total',
		'Postbacks answered 503 with Retry-After because the look-ups of all signed pairs this minute were spent (RELAY_LOOKUP_GLOBAL_LIMIT).',
		['kind'],
	);
	readonly catchupRuns = this.#counter(
		'paypalych_relay_catchup_runs_total',
		'Catch-up runs, by outcome (done, partial: the call budget ran out, skipped: another instance was running one, failed).',
		['outcome'],
	);
	readonly catchupApiCalls = this.#counter(
		'paypalych_relay_catchup_api_calls_total',
		'Calls the catch-up made to the service API, by endpoint.',
		['endpoint'],
	);
	readonly catchupEvents = this.#counter(
		'paypalych_relay_catchup_events_total',
		'Events stored by the catch-up (source catch-up): final payments and payouts no postback brought.',
		['kind'],
	);
	readonly alerts = this.#counter(
		'paypalych_relay_alerts_total',
		'Alerts raised (each cause once), by cause.',
		['cause'],
	);
	readonly statementApiCalls = this.#counter(
		'paypalych_relay_statement_api_calls_total',
		'Calls the statement and the balance snapshots made to the service API, by endpoint.',
		['endpoint'],
	);
	readonly balanceSnapshots = this.#counter(
		'paypalych_relay_balance_snapshots_total',
		'Balance snapshots (merchant/balance) recorded, by kind (boundary, first-start) and outcome (kept, known: another instance kept it, failed).',
		['kind', 'outcome'],
	);
	readonly statementUnexplained = new Gauge({
		name: 'paypalych_relay_statement_unexplained',
		help: "The last closed day's unexplained change of the balance (closing - opening - the day's balance effects), by currency; no sample where it is unknown.",
		labelNames: ['currency'],
		registers: [this.registry],
	});
	readonly statementNotDelivered = new Gauge({
		name: 'paypalych_relay_statement_not_delivered',
		help: 'Movements the service lists for the last closed day that n8n never got, by kind.',
		labelNames: ['kind'],
		registers: [this.registry],
	});
	readonly latency = new Histogram({
		name: 'paypalych_relay_delivery_latency_seconds',
		help: 'Time from receiving a call to its successful delivery to a target.',
		buckets: LATENCY_BUCKETS,
		registers: [this.registry],
	});
	#readCounts: (() => Promise<DeliveryCounts>) | undefined;
	#onCountsError: (error: unknown) => void = () => {};

	constructor(build: BuildInfo = { store: 'sqlite' }) {
		collectDefaultMetrics({ register: this.registry });
		new Gauge({
			name: 'paypalych_relay_build_info',
			help: 'Always 1; the labels say which relay runs: its version, the Node.js version and the store.',
			labelNames: ['version', 'node_version', 'store'],
			registers: [this.registry],
		}).set({ version: RELAY_VERSION, node_version: process.version, store: build.store }, 1);
		// collect() runs with the gauge as `this`: reach the fields through arrows, read at each call.
		const readCounts = () => this.#readCounts;
		const onCountsError = (error: unknown) => this.#onCountsError(error);
		new Gauge({
			name: 'paypalych_relay_deliveries',
			help: 'Deliveries in the store by state (retrying: pending after at least one failed attempt).',
			labelNames: ['status'],
			registers: [this.registry],
			// Read from the store at each scrape; no sample when the store does not answer.
			async collect() {
				const read = readCounts();
				this.reset();
				if (!read) return;
				try {
					const counts = await read();
					for (const status of GAUGE_STATES) this.set({ status }, counts[status]);
				} catch (error) {
					onCountsError(error);
				}
			},
		});
	}

	/**
	 * The `paypalych_relay_deliveries` gauge reads `read()` (the store's counts) at every scrape;
	 * when it fails, `onError` is told and the scrape goes on without that gauge.
	 */
	readDeliveriesFrom(read: () => Promise<DeliveryCounts>, onError: (error: unknown) => void): void {
		this.#readCounts = read;
		this.#onCountsError = onError;
	}

	/** Content type of `render()`'s text (Prometheus exposition format 0.0.4). */
	get contentType(): string {
		return this.registry.contentType;
	}

	render(): Promise<string> {
		return this.registry.metrics();
	}

	#counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
		return new Counter({ name, help, labelNames, registers: [this.registry] });
	}
}

/** The relay package's version: the nearest package.json above this module, in a clone or installed. */
function packageVersion(): string {
	let dir = dirname(fileURLToPath(import.meta.url));
	for (;;) {
		try {
			return (
				(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string })
					.version ?? 'unknown'
			);
		} catch {
			const parent = dirname(dir);
			if (parent === dir) return 'unknown';
			dir = parent;
		}
	}
}

export const RELAY_VERSION = packageVersion();
