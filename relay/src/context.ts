import type { PostbackEvent } from '../../dist/nodes/shared/index.js';
import type { RelayConfig } from './config.ts';
import type { Metrics } from './metrics.ts';
import type { Store } from './store/types.ts';

/** What the route plugins share; passed to each plugin as its options. */
export interface RelayContext {
	config: RelayConfig;
	store: Store;
	metrics: Metrics;
	/** Told when something new is stored, so delivery starts without waiting for the next poll. */
	kick: () => void;
}

export interface ContextOptions {
	ctx: RelayContext;
}

/** The targets an event kind fans out to. */
export function targetsFor(config: RelayConfig, kind: PostbackEvent): readonly string[] {
	if (kind === 'payment') return config.targets.payment;
	if (kind === 'payout') return config.targets.payout;
	return config.targets.redirect;
}

/** Targets of every kind, for the store's replay. */
export function targetsByKind(config: RelayConfig): Record<PostbackEvent, readonly string[]> {
	return { payment: config.targets.payment, payout: config.targets.payout, success: config.targets.redirect, fail: config.targets.redirect };
}
