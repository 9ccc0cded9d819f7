import type { RelayConfig } from './config.ts';
import type { PostbackEvent } from './contract.ts';

/** The targets of every event kind, as one configuration resolves them. */
export type Targets = Record<PostbackEvent, readonly string[]>;

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

const resolved = new WeakMap<RelayConfig, Targets>();

/**
 * The fan-out rule: the targets each event kind goes to (resolved once per configuration), also
 * for the store's replay. Success redirects go to RELAY_SUCCESS_TARGETS and RELAY_REDIRECT_TARGETS,
 * fail redirects to RELAY_FAIL_TARGETS and RELAY_REDIRECT_TARGETS. Refunds go to
 * RELAY_REFUND_TARGETS, chargebacks to RELAY_CHARGEBACK_TARGETS; either unset, to the payment
 * targets (the event header names the kind; a Payment trigger takes them with Also Accept).
 */
export function targetsByKind(config: RelayConfig): Targets {
	let r = resolved.get(config);
	if (!r) {
		const t = config.targets;
		r = {
			payment: unique(t.payment),
			payout: unique(t.payout),
			success: unique(t.success, t.redirect),
			fail: unique(t.fail, t.redirect),
			refund: unique(t.refund.length > 0 ? t.refund : t.payment),
			chargeback: unique(t.chargeback.length > 0 ? t.chargeback : t.payment),
		};
		resolved.set(config, r);
	}
	return r;
}
