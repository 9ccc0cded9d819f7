import type { QueryResultRow } from 'pg';
import { uuidV7 } from '../store/ids.ts';
import { pairKeyOf } from '../store/pair-key.ts';
import { leasedDelivery } from '../store/rows.ts';
import {
	DEDUPE_LOOKUP_MANY,
	INSERT_BATCH,
	INSERT_EVENTS,
	INSERTS_IN_FLIGHT,
} from './statements.ts';
import type { QueuedInsert } from './statements.ts';
import type { InsertResult, NewEvent } from '../store/types.ts';

type Run = <T extends QueryResultRow>(sql: string, params: unknown[]) => Promise<T[]>;

/** INSERT_EVENTS' parallel arrays for a batch. */
function insertParams(batch: readonly QueuedInsert[]): unknown[] {
	const column = <T>(f: (e: NewEvent, q: QueuedInsert) => T) => batch.map((q) => f(q.event, q));
	return [
		column((_, q) => q.id),
		column((e) => e.kind),
		column((e) => e.dedupeKey),
		column((e) => e.contentType),
		column((e) => e.body),
		column((e) => JSON.stringify(e.fields)),
		column((e) => e.receivedAt),
		column((e) => JSON.stringify(e.targets)),
		column((e) => e.source ?? 'postback'),
		column((e) => pairKeyOf(e.kind, e.fields)),
		column((e) => e.pairLimit?.max ?? 0),
		column((e) => e.pairLimit?.since ?? 0),
		column((e) => e.lease?.owner ?? null),
		column((e) => e.lease?.until ?? null),
		column((e) => e.twinCheck ?? null),
	];
}

/**
 * Group commit of the PostgreSQL store's inserts: up to INSERTS_IN_FLIGHT statements at once;
 * events that arrive meanwhile queue and go together in the next statement (one round trip, one
 * commit, the pair limit checked inside it). Each promise resolves after the commit that carried
 * its event. If a batch fails, its events are inserted one by one, so one bad event fails alone.
 */
export class GroupInserter {
	#run: Run;
	#notify: () => void;
	#queue: QueuedInsert[] = [];
	#insertsInFlight = 0;

	constructor(run: Run, notify: () => void) {
		this.#run = run;
		this.#notify = notify;
	}

	/** Nothing queued or in flight. */
	get idle(): boolean {
		return this.#insertsInFlight === 0 && this.#queue.length === 0;
	}

	insert(event: NewEvent): Promise<InsertResult> {
		return new Promise<InsertResult>((resolve, reject) => {
			this.#queue.push({ id: uuidV7(event.receivedAt), event, resolve, reject });
			this.#pump();
		});
	}

	#pump(): void {
		while (this.#insertsInFlight < INSERTS_IN_FLIGHT && this.#queue.length > 0) {
			const batch = this.#queue.splice(0, INSERT_BATCH);
			this.#insertsInFlight += 1;
			void this.#insert(batch).finally(() => {
				this.#insertsInFlight -= 1;
				this.#pump();
			});
		}
	}

	async #insert(batch: QueuedInsert[]): Promise<void> {
		let outcomes: Map<string, string>;
		const leased = new Map<string, Array<{ id: number; target: string }>>();
		let existing = new Map<string, string>();
		try {
			const rows = await this.#run<{
				id: string;
				outcome: 'stored' | 'limited' | 'twins';
				delivery_id: number | null;
				target: string | null;
			}>(INSERT_EVENTS, insertParams(batch));
			outcomes = new Map(rows.map((r) => [r.id, r.outcome]));
			for (const r of rows) {
				if (r.delivery_id === null || r.target === null) continue;
				const list = leased.get(r.id) ?? [];
				list.push({ id: r.delivery_id, target: r.target });
				leased.set(r.id, list);
			}
			const duplicateKeys = batch.filter((q) => !outcomes.has(q.id)).map((q) => q.event.dedupeKey);
			if (duplicateKeys.length > 0) {
				const found = await this.#run<{ id: string; dedupe_key: string }>(DEDUPE_LOOKUP_MANY, [
					duplicateKeys,
				]);
				existing = new Map(found.map((r) => [r.dedupe_key, r.id]));
			}
		} catch (error) {
			if (batch.length === 1) {
				batch[0].reject(error as Error);
				return;
			}
			// One bad event (or a lost connection) failed the statement: each event on its own, in
			// order (of two with one key, the first is the event and the second its duplicate).
			for (const q of batch) await this.#insert([q]);
			return;
		}
		let notify = false;
		for (const q of batch) {
			const outcome = outcomes.get(q.id);
			if (outcome === 'stored') {
				const { lease } = q.event;
				if (!lease) {
					notify ||= q.event.targets.length > 0;
					q.resolve({ eventId: q.id, duplicate: false, deliveries: q.event.targets.length });
					continue;
				}
				// Leased to the instance that stored them: nobody else needs waking.
				const claimed = (leased.get(q.id) ?? [])
					.sort((a, b) => a.id - b.id)
					.map((d) => leasedDelivery(q.event, q.id, d.id, d.target, lease));
				q.resolve({ eventId: q.id, duplicate: false, deliveries: claimed.length, claimed });
				continue;
			}
			if (outcome === 'limited') {
				q.resolve({ eventId: '', duplicate: false, deliveries: 0, limited: true });
				continue;
			}
			if (outcome === 'twins') {
				q.resolve({ eventId: '', duplicate: false, deliveries: 0, twins: true });
				continue;
			}
			const id = q.event.dedupeKey === null ? undefined : existing.get(q.event.dedupeKey);
			if (id) q.resolve({ eventId: id, duplicate: true, deliveries: 0 });
			else q.reject(new Error('the event was neither stored nor found as a duplicate'));
		}
		if (notify) this.#notify();
	}
}
