// A load run's figures as relay.bench.ts measures them, printed and turned into table rows.
import type { LoadResult } from './common.ts';
import { describeCpu } from './cpu.ts';
import type { CpuUse } from './cpu.ts';
import { runLabel } from './table.ts';
import type { Figures, LoadRunName } from './table.ts';

const fmt = (x: number, digits = 0) =>
	x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** A load run: autocannon's result, the CPU per request during the load, and its deliveries. */
export interface Measured {
	run: LoadRunName;
	result: LoadResult;
	during: CpuUse;
	delivery?: {
		/** Deliveries the target received during the load. */
		duringLoad: number;
		/** Deliveries the run made (its accepted postbacks), and how many the target received in all. */
		expected: number;
		received: number;
		/** Seconds from the end of the load until the backlog was delivered (or the wait gave up). */
		seconds: number;
		complete: boolean;
		/** CPU per request over the load and the delivery of its backlog. */
		cpu: CpuUse;
	};
}

/** Prints a load run: its rate and latencies, then where the CPU went (and its deliveries). */
export function printRun(
	m: Measured,
	servers: string,
	o: { extra?: string[]; label?: string; rate: number; waitS: number },
): void {
	const { extra = [], label, rate: RATE, waitS: DELIVERY_WAIT_S } = o;
	const { result: r, delivery: d } = m;
	const ms = (x: number) => `${fmt(x, x < 10 && !Number.isInteger(x) ? 1 : 0)} ms`;
	console.log(
		`${(label ?? runLabel(m.run, RATE)).padEnd(40)} ${fmt(r.requests.average).padStart(6)} req/s   p50 ${ms(r.latency.p50)}   ` +
			`p99 ${ms(r.latency.p99)}   max ${ms(r.latency.max)}   (${fmt(r.requests.total)} requests, ` +
			`non-2xx ${r.non2xx}, errors ${r.errors})`,
	);
	console.log(`  CPU during the load: ${describeCpu(m.during, servers)}`);
	if (d) {
		console.log(
			`  deliveries received by the target during the load: ${fmt(d.duringLoad)} of the ${fmt(d.expected)} ` +
				'postbacks answered 2xx (those still in flight when the load stopped can add a few)',
		);
		const backlog = d.complete
			? `${fmt(d.received - d.duringLoad)} more deliveries in ${fmt(d.seconds, 1)} s after the load`
			: `gave up after ${DELIVERY_WAIT_S} s: ${fmt(d.expected - d.received)} deliveries still not received, the figures are too low`;
		console.log(
			`  CPU over the load + delivery of its backlog (${backlog}): ${describeCpu(d.cpu, servers)}`,
		);
	}
	for (const line of extra) console.log(`  ${line}`);
}

export function figures(m: Measured, bare: Measured): Figures {
	const cpu = m.delivery?.cpu ?? m.during;
	const fixedRate = m.run.startsWith('rate-');
	return {
		reqPerSec: m.result.requests.average,
		ratio: fixedRate ? undefined : m.result.requests.average / bare.result.requests.average,
		p99: m.result.latency.p99,
		relayUs: cpu.serversUs,
		postgresUs: cpu.postgresUs,
		duringRelayUs: m.during.serversUs,
		httpThreadUs: m.during.mainUs,
		duringPostgresUs: m.during.postgresUs,
		backlogDelivered: m.delivery?.complete ?? true,
	};
}
