import type { DeliveryCounts } from './store/types.ts';

/** Counters and one latency histogram, rendered as Prometheus text (exposition format 0.0.4). */

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400];

type Labels = Record<string, string>;

const labelText = (labels: Labels) => {
	const entries = Object.entries(labels);
	if (entries.length === 0) return '';
	return `{${entries.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(',')}}`;
};

class Counter {
	readonly name: string;
	readonly help: string;
	#values = new Map<string, { labels: Labels; value: number }>();
	constructor(name: string, help: string) {
		this.name = name;
		this.help = help;
	}
	inc(labels: Labels = {}, by = 1): void {
		const key = labelText(labels);
		const entry = this.#values.get(key);
		if (entry) entry.value += by;
		else this.#values.set(key, { labels, value: by });
	}
	get(labels: Labels = {}): number {
		return this.#values.get(labelText(labels))?.value ?? 0;
	}
	render(): string {
		const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
		for (const { labels, value } of this.#values.values()) lines.push(`${this.name}${labelText(labels)} ${value}`);
		return lines.join('\n');
	}
}

class Histogram {
	readonly name: string;
	readonly help: string;
	#counts = LATENCY_BUCKETS.map(() => 0);
	#sum = 0;
	#count = 0;
	constructor(name: string, help: string) {
		this.name = name;
		this.help = help;
	}
	observe(seconds: number): void {
		this.#sum += seconds;
		this.#count += 1;
		LATENCY_BUCKETS.forEach((le, i) => {
			if (seconds <= le) this.#counts[i] += 1;
		});
	}
	get count(): number {
		return this.#count;
	}
	render(): string {
		const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
		LATENCY_BUCKETS.forEach((le, i) => lines.push(`${this.name}_bucket{le="${le}"} ${this.#counts[i]}`));
		lines.push(`${this.name}_bucket{le="+Inf"} ${this.#count}`);
		lines.push(`${this.name}_sum ${this.#sum}`);
		lines.push(`${this.name}_count ${this.#count}`);
		return lines.join('\n');
	}
}

export class Metrics {
	readonly received = new Counter('paypalych_relay_received_total', 'Verified calls stored, by event kind (duplicates included).');
	readonly rejected = new Counter('paypalych_relay_rejected_total', 'Calls rejected before storage, by event kind and reason.');
	readonly duplicates = new Counter('paypalych_relay_duplicates_total', 'Verified postbacks already stored (same TrsId and Status).');
	readonly delivered = new Counter('paypalych_relay_delivered_total', 'Deliveries a target accepted.');
	readonly retries = new Counter('paypalych_relay_delivery_retries_total', 'Failed delivery attempts scheduled for another try.');
	readonly dead = new Counter('paypalych_relay_dead_total', 'Deliveries given up (retry budget spent or permanent refusal).');
	readonly latency = new Histogram(
		'paypalych_relay_delivery_latency_seconds',
		'Time from receiving a call to its successful delivery to a target.',
	);

	render(counts: DeliveryCounts | undefined): string {
		const parts = [
			this.received.render(),
			this.rejected.render(),
			this.duplicates.render(),
			this.delivered.render(),
			this.retries.render(),
			this.dead.render(),
			this.latency.render(),
		];
		if (counts) {
			const g = 'paypalych_relay_deliveries';
			parts.push(
				[
					`# HELP ${g} Deliveries in the store by state (retrying: pending after at least one failed attempt).`,
					`# TYPE ${g} gauge`,
					...(['pending', 'retrying', 'delivering', 'delivered', 'dead'] as const).map(
						(s) => `${g}{status="${s}"} ${counts[s]}`,
					),
				].join('\n'),
			);
		}
		return `${parts.join('\n')}\n`;
	}
}
