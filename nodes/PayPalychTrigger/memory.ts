import { createHash, randomBytes } from 'crypto';
import type { IDataObject } from 'n8n-workflow';
import { forgetAllCredentials } from './credential';

/**
 * The trigger's memory of postbacks that already started an execution: what makes each postback
 * start its workflow once, across retries, replays and n8n processes.
 */

/**
 * How many recent postback keys each trigger node remembers. A confirmed postback leaves two (the
 * postback's key and the key of the service's record), so this is about 3000 postbacks.
 */
export const SEEN_KEYS_LIMIT = 6000;

/**
 * Where the memory lived before it was hashed: a JSON list of whole keys. Read to upgrade (its
 * keys are kept, hashed), and removed with the next write.
 */
export const SEEN_KEYS_FIELD = 'seenPostbacks';

/** Where the memory lives inside the node's workflow static data: one string of fixed-width hashes. */
export const SEEN_HASHES_FIELD = 'seenPostbackHashes';

/** Which process memory wrote the hashes (see SeenPostbacks): a random tag, never a secret. */
export const SEEN_TAG_FIELD = 'seenPostbackTag';

/**
 * Characters per remembered key: the first 72 bits of its SHA-256 in base64url. Two different
 * postbacks share a hash with a chance of about 6,000 / 2^72 (1 in 10^18) per new postback.
 */
export const KEY_HASH_WIDTH = 12;

/** A remembered key as stored: KEY_HASH_WIDTH characters of its SHA-256. */
export function keyHash(key: string): string {
	return createHash('sha256').update(key, 'utf8').digest('base64url').slice(0, KEY_HASH_WIDTH);
}

/** What one process remembers of one trigger node: the hashes in order, as a set, and its tag. */
interface Remembered {
	text: string;
	set: Set<string>;
	tag: string;
}

/**
 * Keys this n8n process has remembered, per workflow and trigger node. n8n loads a workflow's
 * static data afresh for each webhook call and writes the whole object back after it, so two
 * postbacks arriving close together would each save only their own key and a later redelivery of
 * the other would start a second execution. Every call therefore reads its keys through this
 * process's memory of the node, and saves the union.
 */
const processMemory = new Map<string, Remembered>();

/**
 * Keys of postbacks this process is confirming right now, per workflow and trigger node. They are
 * kept apart from the memory above: another call saves the static data it loaded together with
 * this process's memory, and a key that then failed confirmation must not be saved with it (a
 * forged call would otherwise make the genuine postback a "duplicate").
 */
const inFlight = new Map<string, Set<string>>();

/** Forgets what this process has seen: what a restarted n8n starts with (used by the tests). */
export function resetProcessMemory(): void {
	processMemory.clear();
	inFlight.clear();
	forgetAllCredentials();
}

function* hashesOf(text: string): Generator<string> {
	for (let at = 0; at + KEY_HASH_WIDTH <= text.length; at += KEY_HASH_WIDTH) {
		yield text.slice(at, at + KEY_HASH_WIDTH);
	}
}

/** The hashes a stored value holds: the hashed string, or (before the upgrade) the list of keys. */
function storedHashes(staticData: IDataObject): string[] {
	const hashes: string[] = [];
	const legacy = staticData[SEEN_KEYS_FIELD];
	if (Array.isArray(legacy)) {
		for (const key of legacy) if (typeof key === 'string') hashes.push(keyHash(key));
	}
	const text = staticData[SEEN_HASHES_FIELD];
	if (typeof text === 'string') hashes.push(...hashesOf(text));
	return hashes;
}

/**
 * The bounded memory of postbacks that already started an execution, kept in the node's workflow
 * static data (n8n stores it with the workflow, so it survives restarts) and merged with this
 * process's memory of the same node. Keys are kept as fixed-width hashes in one string: a look-up
 * is a set look-up, a write appends one hash, and the static data is written only when a key is
 * new. The set is built once per process and node: static data this process wrote itself (its
 * tag) holds nothing the process memory lacks, so only static data written elsewhere (another
 * process, a restart, the list of an older version) is read hash by hash, once. Oldest keys go
 * first.
 */
export class SeenPostbacks {
	constructor(
		private readonly staticData: IDataObject,
		private readonly scope: string,
		private readonly limit = SEEN_KEYS_LIMIT,
	) {}

	private view(): Remembered {
		let own = processMemory.get(this.scope);
		if (own === undefined) {
			own = { text: '', set: new Set(), tag: randomBytes(9).toString('base64url') };
			processMemory.set(this.scope, own);
		}
		const storedText = this.staticData[SEEN_HASHES_FIELD];
		const upToDate =
			!Array.isArray(this.staticData[SEEN_KEYS_FIELD]) &&
			(storedText === undefined ||
				storedText === '' ||
				this.staticData[SEEN_TAG_FIELD] === own.tag ||
				storedText === own.text);
		if (upToDate) return own;
		const older: string[] = [];
		const added = new Set<string>();
		for (const hash of storedHashes(this.staticData)) {
			if (own.set.has(hash) || added.has(hash)) continue;
			added.add(hash);
			older.push(hash);
		}
		if (older.length > 0) {
			// Keys stored elsewhere go before this process's own: they are at least as old.
			const text = older.join('') + own.text;
			own.text = text;
			for (const hash of older) own.set.add(hash);
			this.dropOldest(own);
		}
		return own;
	}

	private dropOldest(own: Remembered): void {
		const excess = own.text.length - this.limit * KEY_HASH_WIDTH;
		if (excess <= 0) return;
		for (const hash of hashesOf(own.text.slice(0, excess))) own.set.delete(hash);
		own.text = own.text.slice(excess);
	}

	has(key: string): boolean {
		return this.view().set.has(keyHash(key));
	}

	/** Adds a key; nothing is written when it is already remembered. */
	remember(key: string): void {
		const own = this.view();
		const hash = keyHash(key);
		if (own.set.has(hash)) return;
		own.text += hash;
		own.set.add(hash);
		this.dropOldest(own);
		this.save(own);
	}

	/**
	 * Claims a key while its postback is confirmed: false when an overlapping call is confirming it.
	 * A claim is never saved; `release` ends it, after `remember` when the postback started an
	 * execution.
	 */
	claim(key: string): boolean {
		const claims = inFlight.get(this.scope) ?? new Set<string>();
		if (claims.has(key)) return false;
		claims.add(key);
		inFlight.set(this.scope, claims);
		return true;
	}

	release(key: string): void {
		const claims = inFlight.get(this.scope);
		claims?.delete(key);
		if (claims?.size === 0) inFlight.delete(this.scope);
	}

	/** Assigning the fields marks the static data as changed, so n8n saves it. */
	private save(own: Remembered): void {
		if (Array.isArray(this.staticData[SEEN_KEYS_FIELD])) delete this.staticData[SEEN_KEYS_FIELD];
		this.staticData[SEEN_HASHES_FIELD] = own.text;
		this.staticData[SEEN_TAG_FIELD] = own.tag;
	}
}
