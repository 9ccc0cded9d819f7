import type { QueryResultRow } from 'pg';
import { uuidV7 } from './ids.ts';
import {
	DEDUPE_LOOKUP,
	DEDUPE_LOOKUP_MANY,
	INSERT_BATCH,
	INSERT_EVENT,
	INSERT_EVENTS,
	INSERTS_IN_FLIGHT,
} from './pg-statements.ts';
import type { QueuedInsert } from './pg-statements.ts';
import type { InsertResult, NewEvent } from './types.ts';

type Run = <T extends QueryResultRow>(sql: string, params: unknown[]) => Promise<T[]>;

/**
 * Group commit of the PostgreSQL store's inserts: up to INSERTS_IN_FLIGHT statements at once;
 * events that arrive meanwhile queue and go together in the next statement (one round trip, one
 * commit). Each promise resolves after the commit that carried its event. If a batch fails, its
 * events are inserted one by one, so one bad event fails alone.
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
			const done = batch.length === 1 ? this.#insertOne(batch[0]) : this.#insertMany(batch);
			void done.finally(() => {
				this.#insertsInFlight -= 1;
				this.#pump();
			});
		}
	}

	async #insertOne(q: QueuedInsert): Promise<void> {
		const { event } = q;
		try {
			const [row] = await this.#run<{ id: string | null; deliveries: number }>(INSERT_EVENT, [
				q.id,
				event.kind,
				event.dedupeKey,
				event.contentType,
				event.body,
				JSON.stringify(event.fields),
				event.receivedAt,
				[...event.targets],
				event.source ?? 'postback',
			]);
			if (row.id === null) {
				const [existing] = await this.#run<{ id: string }>(DEDUPE_LOOKUP, [event.dedupeKey]);
				q.resolve({ eventId: existing.id, duplicate: true, deliveries: 0 });
				return;
			}
			if (row.deliveries > 0) this.#notify();
			q.resolve({ eventId: row.id, duplicate: false, deliveries: row.deliveries });
		} catch (error) {
			q.reject(error as Error);
		}
	}

	async #insertMany(batch: QueuedInsert[]): Promise<void> {
		let inserted: Set<string>;
		let existing = new Map<string, string>();
		try {
			const rows = await this.#run<{ id: string }>(INSERT_EVENTS, [
				batch.map((q) => q.id),
				batch.map((q) => q.event.kind),
				batch.map((q) => q.event.dedupeKey),
				batch.map((q) => q.event.contentType),
				batch.map((q) => q.event.body),
				batch.map((q) => JSON.stringify(q.event.fields)),
				batch.map((q) => q.event.receivedAt),
				batch.map((q) => JSON.stringify(q.event.targets)),
				batch.map((q) => q.event.source ?? 'postback'),
			]);
			inserted = new Set(rows.map((r) => r.id));
			const duplicateKeys = batch.filter((q) => !inserted.has(q.id)).map((q) => q.event.dedupeKey);
			if (duplicateKeys.length > 0) {
				const found = await this.#run<{ id: string; dedupe_key: string }>(DEDUPE_LOOKUP_MANY, [
					duplicateKeys,
				]);
				existing = new Map(found.map((r) => [r.dedupe_key, r.id]));
			}
		} catch {
			// One bad event (or a lost connection) failed the statement: each event on its own, in
			// order (of two with one key, the first is the event and the second its duplicate).
			for (const q of batch) await this.#insertOne(q);
			return;
		}
		let notify = false;
		for (const q of batch) {
			if (inserted.has(q.id)) {
				notify ||= q.event.targets.length > 0;
				q.resolve({ eventId: q.id, duplicate: false, deliveries: q.event.targets.length });
				continue;
			}
			const id = q.event.dedupeKey === null ? undefined : existing.get(q.event.dedupeKey);
			if (id) q.resolve({ eventId: id, duplicate: true, deliveries: 0 });
			else q.reject(new Error('the event was neither stored nor found as a duplicate'));
		}
		if (notify) this.#notify();
	}
}
