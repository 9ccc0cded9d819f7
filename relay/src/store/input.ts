import { StoreInputError } from '../errors.ts';
import { RECEIPTS, receiptOf } from '../contract.ts';
import { SNAPSHOT_KINDS } from './balances.ts';
import type { BalanceSnapshot } from './balances.ts';
import { MAX_ACTIVITY_BUCKETS } from './types.ts';
import type { DeliveryFilter, DeliveryResult, EventFilter, NewEvent, Store } from './types.ts';

/**
 * Every value a store method gets from outside (a postback, the admin API, the console) is checked
 * here before it reaches SQL, the same way for both stores: SQLite would take a NUL byte or a
 * number beyond 64 bits where PostgreSQL fails (text cannot hold NUL; bigint stops at 2^63), and
 * an error text from the database must never be what a client sees. A bad value throws a
 * StoreInputError (the routes answer 400) and nothing is changed.
 */
export { StoreInputError };
/** Longest field name or value of a postback, filter or id (the body has its own limit). */
export const MAX_TEXT = 16_384;
/** Longest stored body (RELAY_BODY_LIMIT cannot usefully exceed it). */
export const MAX_BODY = 16 * 1024 * 1024;
/** Most ids one call may carry (requeue, replay, attempts). */
export const MAX_IDS = 10_000;

/**
 * No lone surrogate: String.prototype.isWellFormed (ES2024, in every Node the relay runs on; the
 * relay's ES2023 lib does not type it), one native scan where a regular expression took two.
 */
const wellFormed = (value: string): boolean =>
	(value as string & { isWellFormed(): boolean }).isWellFormed();

export function checkText(name: string, value: unknown, max = MAX_TEXT): string {
	if (typeof value !== 'string') throw new StoreInputError(`${name} must be text`);
	if (value.length > max) throw new StoreInputError(`${name} is longer than ${max} characters`);
	if (value.includes('\u0000')) throw new StoreInputError(`${name} contains a NUL character`);
	// A lone surrogate cannot be stored as UTF-8 by PostgreSQL.
	if (!wellFormed(value)) throw new StoreInputError(`${name} is not well-formed Unicode`);
	return value;
}

export function checkOptionalText(name: string, value: unknown, max = MAX_TEXT): void {
	if (value !== undefined && value !== null) checkText(name, value, max);
}

/** A whole number PostgreSQL's bigint and JavaScript both hold exactly, at least `min`. */
export function checkInt(name: string, value: unknown, min = 0): number {
	if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
		throw new StoreInputError(`${name} must be a whole number from ${min} to 2^53`);
	}
	return value;
}

export function checkOptionalInt(name: string, value: unknown, min = 0): void {
	if (value !== undefined && value !== null) checkInt(name, value, min);
}

export function checkIds(name: string, ids: readonly unknown[], check: (v: unknown) => void): void {
	if (!Array.isArray(ids)) throw new StoreInputError(`${name} must be a list`);
	if (ids.length > MAX_IDS) throw new StoreInputError(`${name} has more than ${MAX_IDS} entries`);
	for (const id of ids) check(id);
}

export const checkEventId = (value: unknown) => checkText('event id', value, 64);
export const checkLinkId = (value: unknown) => checkText('link id', value, 256);
export const checkDeliveryId = (value: unknown) => checkInt('delivery id', value, 1);

export function checkNewEvent(event: NewEvent): void {
	checkText('kind', event.kind, 16);
	checkOptionalText('dedupe key', event.dedupeKey);
	checkText('content type', event.contentType, 1024);
	checkText('body', event.body, MAX_BODY);
	checkInt('receivedAt', event.receivedAt);
	if (typeof event.fields !== 'object' || event.fields === null) {
		throw new StoreInputError('fields must be an object');
	}
	for (const [name, value] of Object.entries(event.fields)) {
		checkText('field name', name, 256);
		checkText(`field ${name.slice(0, 40)}`, value);
	}
	for (const target of event.targets) checkText('target', target, 2048);
	if (event.pairLimit !== undefined) {
		checkInt('pair limit', event.pairLimit.max, 1);
		checkInt('pair limit since', event.pairLimit.since);
	}
	if (event.lease !== undefined) {
		checkText('lease owner', event.lease.owner, 64);
		checkInt('lease until', event.lease.until);
	}
	if (event.twinCheck !== undefined) checkText('twin check TrsId', event.twinCheck);
}

export function checkEventFilter(filter: EventFilter): void {
	checkOptionalText('kind', filter.kind, 16);
	checkOptionalText('trsId', filter.trsId);
	checkOptionalText('invId', filter.invId);
	checkOptionalText('status', filter.status, 16);
	checkOptionalInt('from', filter.from);
	checkOptionalInt('to', filter.to);
	checkOptionalInt('before', filter.before);
	if (filter.cursor !== undefined) {
		checkInt('cursor time', filter.cursor.receivedAt);
		checkEventId(filter.cursor.id);
	}
	checkInt('limit', filter.limit, 1);
}

export function checkDeliveryFilter(filter: DeliveryFilter): void {
	checkOptionalText('status', filter.status, 16);
	checkOptionalText('target', filter.target, 2048);
	if (filter.eventId !== undefined) checkEventId(filter.eventId);
	checkOptionalInt('from', filter.from);
	checkOptionalInt('to', filter.to);
	checkOptionalInt('beforeId', filter.beforeId);
	checkInt('limit', filter.limit, 1);
}

const OUTCOMES: ReadonlySet<unknown> = new Set(['delivered', 'retry', 'dead']);
const ORIGINS: ReadonlySet<unknown> = new Set([undefined, null, 'scheduled', 'manual']);

/**
 * A text the relay itself took down (a network error, the start of a target's answer): checked
 * for its type and length only. It is stored as it comes, as the single marks always stored it
 * (a message cut at 200 characters may end in half a surrogate pair; refusing it would leave the
 * delivery unrecorded and sent again and again).
 */
function checkTakenText(name: string, value: unknown, max: number): void {
	if (typeof value !== 'string') throw new StoreInputError(`${name} must be text`);
	if (value.length > max) throw new StoreInputError(`${name} is longer than ${max} characters`);
}

/** The results recordResults gets from the forwarder. */
export function checkResults(results: readonly DeliveryResult[]): void {
	checkIds('results', results, (value) => {
		if (typeof value !== 'object' || value === null)
			throw new StoreInputError('a result must be an object');
		const r = value as DeliveryResult;
		checkDeliveryId(r.id);
		if (!OUTCOMES.has(r.outcome))
			throw new StoreInputError('outcome must be delivered, retry or dead');
		checkInt('now', r.now);
		if (r.outcome === 'delivered') {
			checkOptionalText('owner', r.owner, 256);
			checkInt('http status', r.httpStatus);
		} else {
			checkText('owner', r.owner, 256);
			checkOptionalInt('http status', r.httpStatus);
			checkTakenText('error', r.error, MAX_TEXT);
			if (r.outcome === 'retry') checkInt('next attempt time', r.nextAttemptAt);
		}
		const t = r.timing as unknown;
		if (typeof t !== 'object' || t === null) throw new StoreInputError('timing must be an object');
		checkInt('attempt', r.timing.attempt);
		checkInt('startedAt', r.timing.startedAt);
		checkInt('durationMs', r.timing.durationMs);
		if (!ORIGINS.has(r.timing.origin))
			throw new StoreInputError('origin must be scheduled or manual');
		if (r.timing.response !== undefined && r.timing.response !== null)
			checkTakenText('response', r.timing.response, MAX_BODY);
		const receipt = r.timing.receipt;
		if (receipt !== undefined && receipt !== null && receiptOf(receipt) !== receipt)
			throw new StoreInputError(`receipt must be one of ${RECEIPTS.join(', ')}`);
	});
}

/** Bad activity arguments get a clear error before any query runs. */
export function checkActivityRange(from: number, to: number, bucketMs: number): void {
	for (const [name, v] of [
		['from', from],
		['to', to],
		['bucketMs', bucketMs],
	] as const) {
		if (!Number.isSafeInteger(v))
			throw new RangeError(`activity: ${name} must be an integer (epoch ms), got ${v}`);
	}
	if (bucketMs <= 0) throw new RangeError('activity: bucketMs must be positive');
	if (to <= from) throw new RangeError('activity: from must be before to');
	const buckets = Math.ceil((to - from) / bucketMs);
	if (buckets > MAX_ACTIVITY_BUCKETS)
		throw new RangeError(`activity: ${buckets} buckets asked for; at most ${MAX_ACTIVITY_BUCKETS}`);
}

/** The check of each store operation's arguments (an operation without one takes none from outside). */
type Checks = {
	[Op in keyof Store]?: (...args: Parameters<NonNullable<Store[Op]>>) => void;
};

const CHECKS: Checks = {
	insertEvent: (event) => checkNewEvent(event),
	recordResults: (results) => checkResults(results),
	replayEvents: (ids, _targets, now) => {
		checkIds('event ids', ids, checkEventId);
		checkInt('now', now);
	},
	requeueDead: (ids, now) => {
		if (ids !== undefined) checkIds('delivery ids', ids, checkDeliveryId);
		checkInt('now', now);
	},
	listEvents: (filter) => checkEventFilter(filter),
	getEvent: (id) => checkEventId(id),
	getDelivery: (id) => checkDeliveryId(id),
	listDeliveries: (filter) => checkDeliveryFilter(filter),
	deliveriesOfEvents: (ids) => checkIds('event ids', ids, checkEventId),
	deadDeliveries: (target) => checkOptionalText('target', target, 2048),
	eventIdsInRange: (from, to, kind) => {
		checkInt('from', from);
		checkInt('to', to);
		checkOptionalText('kind', kind, 16);
	},
	listAttempts: (ids) => checkIds('delivery ids', ids, checkDeliveryId),
	activity: (from, to, bucketMs) => {
		checkInt('from', from);
		checkInt('to', to);
		checkActivityRange(from, to, bucketMs);
	},
	targetHealth: (since) => checkInt('since', since),
	prune: (before, limit) => {
		checkInt('before', before);
		checkInt('limit', limit, 1);
	},
	revokeSession: (id, expiresAt, now) => {
		checkText('session id', id, 64);
		checkInt('expiresAt', expiresAt);
		checkInt('now', now);
	},
	sessionRevoked: (id) => checkText('session id', id, 64),
	rememberLinks: (ids, now) => {
		checkIds('link ids', ids, checkLinkId);
		checkInt('now', now);
	},
	linksToRead: (limit, excludeIds) => {
		checkInt('limit', limit, 1);
		if (excludeIds !== undefined) checkIds('link ids', excludeIds, checkLinkId);
	},
	markLinksRead: (ids, now) => {
		checkIds('link ids', ids, checkLinkId);
		checkInt('now', now);
	},
	keepBalanceSnapshot: (s) => checkSnapshot(s),
	balanceSnapshots: (zone, from, to) => {
		checkText('time zone', zone, 64);
		checkDay('from', from);
		checkDay('to', to);
	},
	firstSnapshotDay: (zone) => checkText('time zone', zone, 64),
	movementTraces: (trsIds, keys) => {
		checkIds('TrsIds', trsIds, (v) => checkText('TrsId', v, 256));
		checkIds('dedupe keys', keys, (v) => checkText('dedupe key', v, 1024));
	},
};

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function checkDay(name: string, value: unknown): void {
	if (typeof value !== 'string' || !DAY.test(value))
		throw new StoreInputError(`${name} must be a date, YYYY-MM-DD`);
}

/** A balance snapshot (store/balances.ts): its zone, day, kind, time and at most 100 currencies. */
function checkSnapshot(s: BalanceSnapshot): void {
	checkText('time zone', s.timeZone, 64);
	checkDay('day', s.day);
	if (!SNAPSHOT_KINDS.includes(s.kind)) throw new StoreInputError('unknown snapshot kind');
	checkInt('takenAt', s.takenAt);
	if (!Array.isArray(s.balances) || s.balances.length > 100)
		throw new StoreInputError('balances must be a list of at most 100 currencies');
	for (const line of s.balances)
		for (const key of ['currency', 'available', 'locked', 'hold'] as const)
			checkText(`balance ${key}`, line[key], 64);
}

/**
 * The store's edge, the same for both engines: `engine` as its callers get it, each operation's
 * arguments checked (CHECKS) before the engine runs a statement. A bad one rejects with a
 * StoreInputError and the engine never sees the call. Everything else of the engine (its own
 * methods, its fields) is passed through unchanged, so an opened store is still its class.
 */
export function checkedAtEdge<S extends Store>(engine: S): S {
	// By the method itself, not its name: a method replaced on the store (a test's spy) is wrapped anew.
	const checked = new WeakMap<object, unknown>();
	return new Proxy(engine, {
		get(target, key) {
			const value: unknown = Reflect.get(target, key, target);
			if (typeof value !== 'function') return value;
			let fn = checked.get(value);
			if (fn === undefined) {
				const method = value as (...args: unknown[]) => unknown;
				const check = CHECKS[key as keyof Store] as ((...args: unknown[]) => void) | undefined;
				fn = check
					? (...args: unknown[]) => {
							try {
								check(...args);
							} catch (error) {
								return Promise.reject(error as Error);
							}
							return method.apply(target, args);
						}
					: method.bind(target);
				checked.set(value, fn);
			}
			return fn;
		},
	});
}
