import type { PoolClient } from 'pg';
import type { PostbackEvent } from '../contract.ts';
import { fillPairKeys } from '../store/pair-key.ts';
import { EVENTS_WITHOUT_PAIR_KEY, SET_PAIR_KEYS } from './statements.ts';

/** fillPairKeys on one connection (at open, after the migrations). */
export function fillPairKeysOn(client: PoolClient): Promise<number> {
	return fillPairKeys(
		Date.now(),
		async (since, limit) => {
			const { rows } = await client.query<{
				id: string;
				kind: PostbackEvent;
				fields_json: Record<string, string>;
			}>(EVENTS_WITHOUT_PAIR_KEY, [since, limit]);
			return rows.map((r) => ({ id: r.id, kind: r.kind, fields: r.fields_json }));
		},
		async (ids, keys) => {
			await client.query(SET_PAIR_KEYS, [ids, keys]);
		},
	);
}
