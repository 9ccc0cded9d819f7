import type { AuthThrottle } from './auth-throttle.ts';
import type { PostbackEvent } from './contract.ts';
import type { RelayConfig } from './config.ts';
import type { Forwarder } from './forwarder.ts';
import type { Metrics } from './metrics.ts';
import type { Store } from './store/types.ts';
import type { Alerter } from './alerts.ts';
import type { CatchupRunner } from './catchup/runner.ts';

/** What the route plugins share; passed to each plugin as its options. */
export interface RelayContext {
	config: RelayConfig;
	store: Store;
	metrics: Metrics;
	/** Told when something new is stored, so delivery starts without waiting for the next poll. */
	kick: () => void;
	/**
	 * The forwarder's hand-off (absent without a forwarder): deliveries stored leased to it are
	 * sent at once, with no claim (see Forwarder.lease/adopt).
	 */
	handOff?: Pick<Forwarder, 'lease' | 'adopt'>;
	/** Wrong admin tokens per client (admin API and console login share it). */
	authThrottle: AuthThrottle;
	/** The catch-up (present even when its interval is 0: the admin API can run it). */
	catchup?: CatchupRunner;
	/** Alerts raised, for the console and the admin API. */
	alerter?: Alerter;
}

export interface ContextOptions {
	ctx: RelayContext;
}

/** A list without repeats; two spellings of one URL (case of the host, default port) count once. */
function unique(...lists: ReadonlyArray<readonly string[]>): string[] {
	const seen = new Set<string>();
	const out: string[] = [];
	for (const url of lists.flat()) {
		const key = new URL(url).href;
		if (seen.has(key)) continue;
		seen.add(key);
		out.push(url);
	}
	return out;
}

/**
 * The targets an event kind fans out to: success redirects go to RELAY_SUCCESS_TARGETS and
 * RELAY_REDIRECT_TARGETS, fail redirects to RELAY_FAIL_TARGETS and RELAY_REDIRECT_TARGETS.
 */
export function targetsFor(config: RelayConfig, kind: PostbackEvent): readonly string[] {
	return targetsByKind(config)[kind];
}

const resolved = new WeakMap<RelayConfig, Record<PostbackEvent, readonly string[]>>();

/** Targets of every kind (resolved once per configuration), also for the store's replay. */
export function targetsByKind(config: RelayConfig): Record<PostbackEvent, readonly string[]> {
	let r = resolved.get(config);
	if (!r) {
		const t = config.targets;
		r = {
			payment: unique(t.payment),
			payout: unique(t.payout),
			success: unique(t.success, t.redirect),
			fail: unique(t.fail, t.redirect),
		};
		resolved.set(config, r);
	}
	return r;
}
