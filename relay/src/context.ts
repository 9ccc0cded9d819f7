import type { AuthThrottle } from './auth-throttle.ts';
import type { RelayConfig } from './config.ts';
import type { Intake } from './intake.ts';
import type { Metrics } from './metrics.ts';
import type { Operations } from './operations.ts';
import type { Reads } from './reads.ts';
import type { Alerter } from './alerts.ts';
import type { CatchupRunner } from './catchup/runner.ts';
import type { Statements } from './statement/statements.ts';

/**
 * The services the route plugins share; passed to each plugin as its options. Routes reach the
 * store and the forwarder only through these: incoming events through `intake`, what the operator
 * reads through `reads`, replay and requeue through `operations`. The few plugins that need one
 * more thing of the store (readiness, the metrics' delivery counts, the console's logouts) get it
 * as a port of its own from app.ts, never the store.
 */
export interface RelayContext {
	config: RelayConfig;
	metrics: Metrics;
	/** The one door for incoming events (look-ups, pair limit, insert, hand-off, wake-up). */
	intake: Intake;
	/** Replay and requeue, the one set of rules the admin API and the console share. */
	operations: Operations;
	/** The reads the admin API and the console share (reads.ts). */
	reads: Reads;
	/** Wrong admin tokens per client (admin API and console login share it). */
	authThrottle: AuthThrottle;
	/** The catch-up (present even when its interval is 0: the admin API can run it). */
	catchup?: CatchupRunner;
	/** The daily statement and the balance snapshots it starts from. */
	statements?: Statements;
	/** Alerts raised, for the console and the admin API. */
	alerter?: Alerter;
}

export interface ContextOptions {
	ctx: RelayContext;
}
