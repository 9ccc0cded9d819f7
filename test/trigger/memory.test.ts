/**
 * The trigger's memory of postbacks that already started an execution: hashed keys in one string
 * of the node's static data, read through one set per process and node, written only when a key
 * is new, and an upgrade from the list an older version stored that keeps every key.
 */
import { createHash } from 'node:crypto';
import type { IDataObject } from 'n8n-workflow';
import { beforeEach, describe, expect, it } from 'vitest';
import {
	KEY_HASH_WIDTH,
	SEEN_HASHES_FIELD,
	SEEN_KEYS_FIELD,
	SEEN_TAG_FIELD,
	SeenPostbacks,
	resetProcessMemory,
} from '../../dist/nodes/PayPalychTrigger/memory.js';

const hashOf = (key: string) =>
	createHash('sha256').update(key, 'utf8').digest('base64url').slice(0, KEY_HASH_WIDTH);

/** Static data as n8n loads it from its database: a fresh object from the stored JSON. */
const load = (stored: string): IDataObject => JSON.parse(stored) as IDataObject;

/** A static data object that counts every write to it, as n8n's marks the data as changed. */
function watched(data: IDataObject): { data: IDataObject; writes: string[] } {
	const writes: string[] = [];
	const proxy = new Proxy(data, {
		set(target, name, value) {
			writes.push(`set ${String(name)}`);
			return Reflect.set(target, name, value);
		},
		deleteProperty(target, name) {
			writes.push(`delete ${String(name)}`);
			return Reflect.deleteProperty(target, name);
		},
	});
	return { data: proxy, writes };
}

describe('the memory of seen postbacks', () => {
	beforeEach(() => resetProcessMemory());

	it('upgrades the list an older version stored: every old key stays remembered, across a restart too', () => {
		const oldKeys = ['["payment","T-1","SUCCESS","100c",""]', '["payment","T-2","FAIL","5c","o"]'];
		const first = load(JSON.stringify({ [SEEN_KEYS_FIELD]: oldKeys }));
		const seen = new SeenPostbacks(first, 'wf-upgrade:Trigger');
		expect(oldKeys.map((k) => seen.has(k))).toEqual([true, true]);
		expect(seen.has('["payment","T-3","SUCCESS","100c",""]')).toBe(false);
		seen.remember('["payment","T-3","SUCCESS","100c",""]');
		expect(first[SEEN_KEYS_FIELD]).toBeUndefined();
		expect(first[SEEN_HASHES_FIELD]).toBe(
			[...oldKeys, '["payment","T-3","SUCCESS","100c",""]'].map(hashOf).join(''),
		);

		// A restarted n8n has only the stored static data, now in the new form.
		resetProcessMemory();
		const again = new SeenPostbacks(load(JSON.stringify(first)), 'wf-upgrade:Trigger');
		expect([...oldKeys, '["payment","T-3","SUCCESS","100c",""]'].map((k) => again.has(k))).toEqual([
			true,
			true,
			true,
		]);
	});

	it('a duplicate, or a look-up, writes nothing to the static data; a new key writes it once', () => {
		const scope = 'wf-writes:Trigger';
		const { data, writes } = watched({});
		const seen = new SeenPostbacks(data, scope);
		seen.remember('a');
		expect(writes).toEqual([`set ${SEEN_HASHES_FIELD}`, `set ${SEEN_TAG_FIELD}`]);
		writes.length = 0;
		expect(seen.has('a')).toBe(true);
		seen.remember('a');
		expect(writes).toEqual([]);
		// The next call loads the stored copy afresh: still nothing written for a known key.
		const next = watched(load(JSON.stringify(data)));
		const seenNext = new SeenPostbacks(next.data, scope);
		expect(seenNext.has('a')).toBe(true);
		seenNext.remember('a');
		expect(next.writes).toEqual([]);
	});

	it('takes in keys another process stored (its own tag), and saves the union', () => {
		const scope = 'wf-two:Trigger';
		const mine = load('{}');
		new SeenPostbacks(mine, scope).remember('mine');
		// Another n8n process (queue mode) wrote its own keys to the database meanwhile.
		const theirs = { [SEEN_HASHES_FIELD]: hashOf('theirs'), [SEEN_TAG_FIELD]: 'another-process' };
		const loaded = load(JSON.stringify(theirs));
		const seen = new SeenPostbacks(loaded, scope);
		expect(seen.has('theirs')).toBe(true);
		expect(seen.has('mine')).toBe(true);
		seen.remember('new');
		expect(loaded[SEEN_HASHES_FIELD]).toBe(['theirs', 'mine', 'new'].map(hashOf).join(''));
	});

	it('keeps at most the limit of keys, oldest out first, also when another process adds keys', () => {
		const scope = 'wf-limit:Trigger';
		const data = load('{}');
		const seen = new SeenPostbacks(data, scope, 3);
		for (const k of ['a', 'b', 'c']) seen.remember(k);
		const foreign = load(
			JSON.stringify({ [SEEN_HASHES_FIELD]: hashOf('x') + hashOf('y'), [SEEN_TAG_FIELD]: 'other' }),
		);
		const merged = new SeenPostbacks(foreign, scope, 3);
		merged.remember('d');
		expect(foreign[SEEN_HASHES_FIELD]).toBe(['b', 'c', 'd'].map(hashOf).join(''));
		expect(['x', 'y', 'a'].map((k) => merged.has(k))).toEqual([false, false, false]);
		expect((foreign[SEEN_HASHES_FIELD] as string).length).toBe(3 * KEY_HASH_WIDTH);
	});

	it('a copied workflow (another scope) does not take the original scope for its own', () => {
		const original = load('{}');
		new SeenPostbacks(original, 'wf-a:Trigger').remember('k');
		const copy = load(JSON.stringify(original));
		expect(new SeenPostbacks(copy, 'wf-b:Trigger').has('k')).toBe(true);
	});
});
