import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { POSTBACK_EVENTS } from '../contract.ts';
import type { PostbackEvent } from '../contract.ts';
import type { BalanceSnapshot, MovementTrace } from '../store/balances.ts';
import { checkedAtEdge } from '../store/input.ts';
import { moneyBackRewrite } from '../store/money-back-keys.ts';
import { fillPairKeys, pairKeyOf } from '../store/pair-key.ts';
import type { KeylessEvent } from '../store/pair-key.ts';
import { SqliteEngine } from './engine.ts';
import type { EngineCall, EngineOp, EngineResult } from './engine.ts';
import type {
	ActivityBucket,
	CatchupBaseline,
	ClaimedDelivery,
	Delivery,
	DeliveryAttempt,
	DeliveryCounts,
	DeliveryFilter,
	DeliveryResult,
	EventFilter,
	InsertResult,
	NewEvent,
	Store,
	StoredEvent,
	TargetHealth,
	TargetsByKind,
} from '../store/types.ts';

export interface SqliteStoreOptions {
	/**
	 * 'thread' (default): the connection lives in a worker thread; the HTTP loop never waits for an
	 * fsync. 'inline': same engine on the calling thread (small tools, the benchmark's filler).
	 */
	mode?: 'thread' | 'inline';
}

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/**
 * The embedded store: an SQLite file (WAL, synchronous=FULL). Calls are queued and committed
 * together (group commit); each promise settles only after the COMMIT that carried its call, so
 * an acknowledged postback is on disk.
 */
export class SqliteStore implements Store {
	readonly path: string;
	#mode: 'thread' | 'inline';
	#worker: Worker | undefined;
	#engine: SqliteEngine | undefined;
	#ready: Promise<void>;
	#nextId = 1;
	#pending = new Map<number, Pending>();
	#inlineQueue: Array<EngineCall & Pending> = [];
	#outbox: Array<EngineCall & { id: number }> = [];
	/** Calls posted to the writer thread and not answered yet (see #call). */
	#posted = 0;
	#scheduled = false;
	#closed = false;
	#catchupLocked = false;
	#failure: Error | undefined;

	private constructor(path: string, mode: 'thread' | 'inline') {
		this.path = path;
		this.#mode = mode;
		if (mode === 'inline') {
			this.#engine = new SqliteEngine(path);
			this.#ready = Promise.resolve();
			return;
		}
		// Source (tests) or compiled (relay/dist): the worker file has this module's own extension.
		const worker = new Worker(
			new URL(`./worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url),
			{ workerData: { path } },
		);
		this.#worker = worker;
		this.#ready = new Promise<void>((resolve, reject) => {
			const onFirst = (message: { ready?: boolean; error?: string }) => {
				if (message.ready) resolve();
				else reject(new Error(`cannot open the SQLite store: ${message.error ?? 'unknown error'}`));
			};
			worker.once('message', onFirst);
			worker.once('error', reject);
		});
		worker.on('message', (message: unknown) => {
			if (!Array.isArray(message)) return;
			const results = message as Array<EngineResult & { id: number }>;
			this.#posted = Math.max(0, this.#posted - results.length);
			// The calls made while the writer committed go now, in one message (see #call).
			if (this.#posted === 0) this.#post();
			for (const r of results) {
				const p = this.#pending.get(r.id);
				if (!p) continue;
				this.#pending.delete(r.id);
				if (r.ok) p.resolve(r.value);
				else p.reject(new Error(r.error));
			}
		});
		const fail = (error: Error) => {
			this.#failure = error;
			for (const p of this.#pending.values()) p.reject(error);
			this.#pending.clear();
		};
		worker.on('error', (error) => fail(error));
		worker.on('exit', (code) => {
			if (!this.#closed) fail(new Error(`the SQLite writer thread stopped (exit code ${code})`));
		});
	}

	/**
	 * Opens (creating if needed) the store file; resolves once the schema is in place, with the
	 * store's input checked at its edge (checkedAtEdge).
	 */
	static async open(path: string, options: SqliteStoreOptions = {}): Promise<SqliteStore> {
		const store = new SqliteStore(path, options.mode ?? 'thread');
		try {
			await store.#ready;
			await fillPairKeys(
				Date.now(),
				(since, limit) => store.#call<KeylessEvent[]>('eventsWithoutPairKey', since, limit),
				(ids, keys) => store.#call('setPairKeys', ids, keys),
			);
			// Schema version 9's rewrite (store/money-back-keys.ts), when it is due.
			const rows = await store.#call<Parameters<typeof moneyBackRewrite> | null>('moneyBackRows');
			if (rows) await store.#call('rewriteMoneyBack', moneyBackRewrite(...rows));
		} catch (error) {
			store.#closed = true;
			await store.#worker?.terminate();
			store.#engine?.close();
			throw error;
		}
		return checkedAtEdge(store);
	}

	#call<T>(op: EngineOp, ...args: unknown[]): Promise<T> {
		if (this.#closed) return Promise.reject(new Error('store is closed'));
		if (this.#failure) return Promise.reject(this.#failure);
		return new Promise<T>((resolve, reject) => {
			const settle = { resolve: resolve as (v: unknown) => void, reject };
			if (this.#mode === 'inline') {
				this.#inlineQueue.push({ op, args, ...settle });
				if (!this.#scheduled) {
					this.#scheduled = true;
					setImmediate(() => this.#flushInline());
				}
				return;
			}
			const id = this.#nextId++;
			this.#pending.set(id, settle);
			// One message per commit: while the writer thread works on calls posted before, the new
			// ones wait here and go together when it answers (they would wait in its queue anyway, and
			// each message costs both threads a wake-up); else they go at the end of this turn of
			// the loop, with every call made in it.
			this.#outbox.push({ id, op, args });
			if (this.#outbox.length === 1 && this.#posted === 0) setImmediate(() => this.#post());
		});
	}

	#post(): void {
		const calls = this.#outbox;
		if (calls.length === 0) return;
		this.#outbox = [];
		this.#posted += calls.length;
		this.#worker!.postMessage(calls);
	}

	#flushInline(): void {
		this.#scheduled = false;
		const batch = this.#inlineQueue;
		this.#inlineQueue = [];
		if (batch.length === 0 || !this.#engine) return;
		const results = this.#engine.runBatch(batch.map(({ op, args }) => ({ op, args })));
		batch.forEach((c, i) => {
			const r = results[i];
			if (r.ok) c.resolve(r.value);
			else c.reject(new Error(r.error));
		});
	}

	insertEvent(event: NewEvent): Promise<InsertResult> {
		// The pair key is computed here: the writer thread does not load the wire contract.
		return this.#call(
			'insertEvent',
			{ ...event, targets: [...event.targets] },
			pairKeyOf(event.kind, event.fields),
		);
	}
	claimDue(now: number, limit: number, leaseMs: number, owner: string): Promise<ClaimedDelivery[]> {
		return this.#call('claimDue', now, limit, leaseMs, owner);
	}
	/** One call (one entry of the thread's message) however many results it carries. */
	recordResults(results: readonly DeliveryResult[]): Promise<void> {
		return this.#call('recordResults', [...results]);
	}
	releaseLease(id: number, owner: string, now: number): Promise<void> {
		return this.#call('releaseLease', id, owner, now);
	}
	listEvents(filter: EventFilter): Promise<StoredEvent[]> {
		return this.#call('listEvents', filter);
	}
	getEvent(id: string): Promise<StoredEvent | undefined> {
		return this.#call('getEvent', id);
	}
	listDeliveries(filter: DeliveryFilter): Promise<Delivery[]> {
		return this.#call('listDeliveries', filter);
	}
	getDelivery(id: number): Promise<Delivery | undefined> {
		return this.#call('getDelivery', id);
	}
	deliveriesOfEvents(eventIds: readonly string[]): Promise<Delivery[]> {
		return this.#call('deliveriesOfEvents', [...eventIds]);
	}
	deadDeliveries(target?: string): Promise<Delivery[]> {
		return this.#call('deadDeliveries', target);
	}
	replayEvents(eventIds: readonly string[], targets: TargetsByKind, now: number): Promise<number> {
		return this.#call('replayEvents', [...eventIds], targets, now);
	}
	eventIdsInRange(from: number, to: number, kind?: PostbackEvent): Promise<string[]> {
		return this.#call('eventIdsInRange', from, to, kind);
	}
	requeueDead(ids: readonly number[] | undefined, now: number): Promise<number> {
		return this.#call('requeueDead', ids ? [...ids] : undefined, now);
	}
	counts(): Promise<DeliveryCounts> {
		return this.#call('counts');
	}
	listAttempts(deliveryIds: readonly number[]): Promise<DeliveryAttempt[]> {
		return this.#call('listAttempts', [...deliveryIds]);
	}
	activity(from: number, to: number, bucketMs: number): Promise<ActivityBucket[]> {
		return this.#call('activity', from, to, bucketMs, POSTBACK_EVENTS);
	}
	targetHealth(since: number): Promise<TargetHealth[]> {
		return this.#call('targetHealth', since);
	}
	oldestUndelivered(): Promise<number | null> {
		return this.#call('oldestUndelivered');
	}
	prune(before: number, limit: number): Promise<number> {
		return this.#call('prune', before, limit);
	}
	revokeSession(id: string, expiresAt: number, now: number): Promise<void> {
		return this.#call('revokeSession', id, expiresAt, now);
	}
	sessionRevoked(id: string): Promise<boolean> {
		return this.#call('sessionRevoked', id);
	}
	catchupBaseline(now: number): Promise<CatchupBaseline> {
		return this.#call('catchupBaseline', now);
	}
	backfillCatchup(since: number, now: number): Promise<CatchupBaseline> {
		return this.#call('backfillCatchup', since, now);
	}
	catchupMarks(marks: readonly string[]): Promise<string[]> {
		return this.#call('catchupMarks', [...marks]);
	}
	addCatchupMarks(marks: readonly string[], now: number, pruneBefore: number): Promise<void> {
		return this.#call('addCatchupMarks', [...marks], now, pruneBefore);
	}
	/** One SQLite file serves one relay process: the lock is this store's own flag. */
	rememberLinks(ids: readonly string[], now: number): Promise<void> {
		return this.#call('rememberLinks', [...ids], now);
	}
	linksToRead(limit: number, excludeIds: readonly string[] = []): Promise<string[]> {
		return this.#call('linksToRead', limit, [...excludeIds]);
	}
	markLinksRead(ids: readonly string[], now: number): Promise<void> {
		return this.#call('markLinksRead', [...ids], now);
	}
	keepBalanceSnapshot(snapshot: BalanceSnapshot): Promise<boolean> {
		return this.#call('keepBalanceSnapshot', snapshot);
	}
	balanceSnapshots(timeZone: string, from: string, to: string): Promise<BalanceSnapshot[]> {
		return this.#call('balanceSnapshots', timeZone, from, to);
	}
	firstSnapshotDay(timeZone: string): Promise<string | null> {
		return this.#call('firstSnapshotDay', timeZone);
	}
	movementTraces(trsIds: readonly string[], keys: readonly string[]): Promise<MovementTrace[]> {
		return this.#call('movementTraces', [...trsIds], [...keys]);
	}

	async withCatchupLock<T>(
		fn: () => Promise<T>,
	): Promise<{ ran: true; value: T } | { ran: false }> {
		if (this.#catchupLocked) return { ran: false };
		this.#catchupLocked = true;
		try {
			return { ran: true, value: await fn() };
		} finally {
			this.#catchupLocked = false;
		}
	}
	ping(): Promise<void> {
		return this.#call('ping', Date.now());
	}
	/** Commits and calls carried so far (the benchmark prints the batch size). */
	stats(): Promise<{ commits: number; calls: number; syncedCommits: number; messages: number }> {
		return this.#call('stats');
	}

	async close(): Promise<void> {
		if (this.#closed) return;
		if (this.#mode === 'inline') {
			this.#flushInline();
			this.#closed = true;
			this.#engine?.close();
			return;
		}
		const worker = this.#worker!;
		// Calls already posted are answered before the close message is handled (one FIFO port).
		const closed = new Promise<void>((resolve) => {
			const onMessage = (m: unknown) => {
				if (m && typeof m === 'object' && 'closed' in m) {
					worker.off('message', onMessage);
					resolve();
				}
			};
			worker.on('message', onMessage);
			worker.once('exit', () => resolve());
		});
		this.#post();
		worker.postMessage({ close: true });
		await closed;
		this.#closed = true;
		await worker.terminate();
	}
}
