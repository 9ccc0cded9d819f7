import { createHash, randomBytes } from 'crypto';

/** JSON with object keys sorted, so equal data always gives the same text. */
export function stableStringify(value: unknown): string {
	if (value === undefined) return 'null';
	if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
	if (value instanceof Date) return JSON.stringify(value.toISOString());
	if (Array.isArray(value)) return `[${value.map((entry) => stableStringify(entry)).join(',')}]`;
	const entries = Object.keys(value as Record<string, unknown>)
		.sort()
		.filter((key) => (value as Record<string, unknown>)[key] !== undefined)
		.map((key) => `${JSON.stringify(key)}:${stableStringify((value as Record<string, unknown>)[key])}`);
	return `{${entries.join(',')}}`;
}

export interface OrderIdSource {
	workflowId: string;
	nodeName: string;
	itemIndex: number;
	input: unknown;
	/** The payout parameters: amount and destination. */
	payout: Record<string, string>;
}

/**
 * The payout order ID the node derives when none is given: `n8n-` and the first 24 hex digits of
 * SHA-256 over the workflow ID, the node name, the item index, the item's input JSON and the payout
 * parameters. A retried or re-run execution with the same input derives the same ID, so the service
 * (and the node's look-up) refuse to pay it twice.
 */
export function deriveOrderId(source: OrderIdSource): string {
	const text = stableStringify({
		workflowId: source.workflowId,
		nodeName: source.nodeName,
		itemIndex: source.itemIndex,
		input: source.input,
		payout: source.payout,
	});
	return `n8n-${createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 24)}`;
}

/** A fresh order ID for a merchant who asked for a deliberate duplicate payout. */
export function randomOrderId(): string {
	return `n8n-${randomBytes(12).toString('hex')}`;
}
